"""What every session store does (run on SQLite and on PostgreSQL): versions, conflicts,
snapshots, what round-trips, hostile ids, pruning, faults, two writers."""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from stress.store_workload import (
    KILLED_WORKER,
    Added,
    Total,
    add_call,
    append_worker,
    executor_for,
    landed_calls,
    replayed,
)
from wink import MarkdownSection, Prompt, PromptTemplate, Tool, ToolContext, ToolResult
from wink.runtime import Session, SliceKind, SnapshotError, ToolCall, ToolExecutor, ToolInvoked
from wink.store import SessionStore, StoreError, VersionConflict, open_store

REPO = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Note:
    text: str


@dataclass(frozen=True)
class Floating:
    value: float


def _run(executor: ToolExecutor, *calls: tuple[int, int]) -> None:
    for worker, n in calls:
        result = executor.execute(add_call(worker, n))
        assert result.success, result.message


def test_a_new_session_is_stored_at_version_0_and_listed(store: SessionStore) -> None:
    session = Session.open(store, "fresh")
    assert session.stored_version == 0
    assert session.store is store
    [info] = store.sessions()
    assert (info.session_id, info.version, info.event_count, info.snapshot_version) == (
        "fresh",
        0,
        0,
        0,
    )
    assert info.created_at == info.updated_at
    assert info.created_at.tzinfo is UTC


def test_each_committed_call_is_one_version_and_loads_back(store: SessionStore) -> None:
    session = Session.open(store, "s")
    _run(executor_for(session), (0, 1), (0, 2), (0, 3))
    assert session.stored_version == 3
    loaded = Session.open(store, "s")
    assert loaded.stored_version == 3
    assert loaded[Total].all() == (Total(1), Total(3), Total(6))
    assert loaded[Added].all() == (Added(0, 1), Added(0, 2), Added(0, 3))
    assert landed_calls(loaded) == [(0, 1), (0, 2), (0, 3)]
    assert loaded[ToolInvoked].kind is SliceKind.LOG
    [info] = store.sessions()
    # Each call stored its ToolInvoked, its Added event and its Total value.
    assert (info.version, info.event_count) == (3, 9)
    assert info.updated_at > info.created_at


def test_a_rolled_back_call_stores_nothing_and_its_record_goes_with_the_next(
    store: SessionStore,
) -> None:
    session = Session.open(store, "s")
    executor = executor_for(session)
    failed = executor.execute(ToolCall("add", '{"worker": 0, "n": "not a number"}'))
    assert not failed.success
    assert session.stored_version == 0
    assert store.read("s") is not None and store.read("s").changes == ()  # type: ignore[union-attr]
    _run(executor, (0, 5))
    loaded = Session.open(store, "s")
    assert [event.success for event in loaded[ToolInvoked].all()] == [False, True]
    assert loaded[Total].all() == (Total(5),)


def test_a_second_writer_is_refused_with_version_conflict_and_rolled_back(
    store: SessionStore,
) -> None:
    first, second = Session.open(store, "s"), Session.open(store, "s")
    _run(executor_for(first), (1, 10))
    result = executor_for(second).execute(add_call(2, 20))
    assert result.message == (
        "Tool 'add' succeeded but its result could not be applied, so its changes were "
        "rolled back: VersionConflict: session 's' was changed by another writer: expected "
        "version 0, it is at version 1; open it again (Session.open) to go on from there"
    )
    assert second[Total].all() == ()
    assert second[Added].all() == ()
    assert [e.rolled_back for e in second[ToolInvoked].all()] == [True]
    assert second.stored_version == 0
    loaded = Session.open(store, "s")
    assert landed_calls(loaded) == [(1, 10)]
    assert loaded[Total].all() == (Total(10),)


def test_version_conflict_names_the_session_and_both_versions(store: SessionStore) -> None:
    first, second = Session.open(store, "s"), Session.open(store, "s")
    first[Note].seed([Note("a")])
    first.persist()
    second[Note].seed([Note("b")])
    with pytest.raises(VersionConflict) as raised:
        second.persist()
    assert (raised.value.session_id, raised.value.expected, raised.value.found) == ("s", 0, 1)


def test_loading_reads_the_latest_snapshot_and_only_the_changes_after_it(
    store_backend: Any,
) -> None:
    url, options = store_backend
    store = open_store(url, snapshot_every=10, **options)
    try:
        session = Session.open(store, "s")
        _run(executor_for(session), *[(0, n) for n in range(25)])
        history = store.read("s")
        assert history is not None
        assert (history.version, history.snapshot_version) == (25, 20)
        assert [change.version for change in history.changes] == [21, 22, 23, 24, 25]
        loaded = Session.open(store, "s")
        assert loaded[Total].all() == session[Total].all()
        assert landed_calls(loaded) == [(0, n) for n in range(25)]
        report = store.prune()
        assert (report.sessions, report.changes, report.snapshots) == (0, 20, 1)
        assert landed_calls(Session.open(store, "s")) == [(0, n) for n in range(25)]
        assert store.prune() == type(report)(0, 0, 0)
    finally:
        store.close()


def test_a_writer_of_a_version_prune_removed_is_refused_and_listing_keeps_the_counts(
    store_backend: Any,
) -> None:
    url, options = store_backend
    store = open_store(url, snapshot_every=2, **options)
    try:
        session = Session.open(store, "s")
        at_0 = Session.open(store, "s")
        _run(executor_for(session), (0, 1))
        at_1 = Session.open(store, "s")
        _run(executor_for(session), (0, 2), (0, 3), (0, 4))
        report = store.prune()
        # Versions 1 to 4 are held by the snapshot at 4: all four changes go.
        assert (report.sessions, report.changes, report.snapshots) == (0, 4, 1)
        for stale, read in ((at_0, 0), (at_1, 1)):
            stale[Note].seed([Note("late")])
            with pytest.raises(VersionConflict) as raised:
                stale.persist()
            assert (raised.value.expected, raised.value.found) == (read, 4)
        [info] = store.sessions()
        assert (info.version, info.event_count, info.snapshot_version) == (4, 12, 4)
        _run(executor_for(session), (0, 5))
        assert landed_calls(Session.open(store, "s")) == [(0, n) for n in range(1, 6)]
    finally:
        store.close()


def test_declarations_replaced_cleared_and_reset_slices_round_trip(store: SessionStore) -> None:
    session = Session.open(store, "s")
    session[Note].declare(SliceKind.LOG)
    session[Note].seed([Note("a"), Note("b")])
    session[Added].seed([Added(1, 1), Added(2, 2)])
    assert session.persist() == 1
    assert session.persist() == 1  # nothing changed: no new version
    session[Added].update(lambda values: [v for v in values if v.worker == 2])
    session.persist()
    loaded = Session.open(store, "s")
    assert loaded[Note].kind is SliceKind.LOG
    assert loaded[Note].all() == (Note("a"), Note("b"))
    assert loaded[Added].all() == (Added(2, 2),)
    session[Added].clear()
    session[Note].declare(SliceKind.STATE)
    session.persist()
    loaded = Session.open(store, "s")
    assert loaded[Added].all() == ()
    assert loaded[Note].kind is SliceKind.STATE
    assert loaded[Note].all() == (Note("a"), Note("b"))
    session.reset()
    assert session.persist() == 4
    loaded = Session.open(store, "s")
    assert loaded.snapshot().state == {}
    assert loaded.snapshot().log == {}


def test_raw_arguments_and_escaped_values_round_trip(store: SessionStore) -> None:
    session = Session.open(store, "s")
    executor = executor_for(session)
    executor.execute(ToolCall("add", b"\xff\xfe not utf-8", call_id="bytes"))
    executor.execute(ToolCall("add", '{"worker": "\ud800"}', call_id="surrogate"))
    _run(executor, (0, 1))
    loaded = Session.open(store, "s")
    assert [e.arguments for e in loaded[ToolInvoked].all()] == [
        b"\xff\xfe not utf-8",
        '{"worker": "\ud800"}',
        '{"worker": 0, "n": 1}',
    ]
    assert [e.call_id for e in loaded[ToolInvoked].all()] == ["bytes", "surrogate", "0-1"]


def _floating(params: Note, *, context: ToolContext) -> ToolResult[None]:
    assert context.session is not None
    context.session.dispatch(Floating(float(params.text)))
    return ToolResult(message="dispatched")


def test_a_value_to_json_refuses_is_refused_at_commit_with_the_same_message(
    store: SessionStore,
) -> None:
    session = Session.open(store, "s")
    tool = Tool[Note, None](name="floating", description="Dispatch a float.", handler=_floating)
    template = PromptTemplate(
        ns="tests", key="store", sections=[MarkdownSection(title="Tools", tools=[tool])]
    )
    executor = ToolExecutor(prompt=Prompt(template), session=session)
    assert executor.execute(ToolCall("floating", '{"text": "1.5"}')).success
    result = executor.execute(ToolCall("floating", '{"text": "nan"}'))
    in_memory = Session()
    in_memory[Floating].seed([Floating(1.5), Floating(float("nan"))])
    with pytest.raises(SnapshotError) as refused:
        in_memory.snapshot().to_json()
    assert str(refused.value) == (
        f"slice {__name__}:Floating cannot be written as JSON: "
        "[1].value: nan cannot be written as JSON (it has no NaN or Infinity)"
    )
    assert result.message == (
        "Tool 'floating' succeeded but its result could not be applied, so its changes "
        f"were rolled back: SnapshotError: {refused.value}"
    )
    assert session[Floating].all() == (Floating(1.5),)
    assert session.stored_version == 1
    assert Session.open(store, "s")[Floating].all() == (Floating(1.5),)


HOSTILE_IDS = [
    "x'); DROP TABLE wink_sessions;--",
    'x"; DROP TABLE wink_changes; --',
    "%s %(id)s ? :1 $1",
    "\\'; SELECT 1; --",
    "sessão ✓ \U0001f600",
]


def test_hostile_session_ids_are_only_ever_parameters(store: SessionStore) -> None:
    for index, session_id in enumerate(HOSTILE_IDS):
        session = Session.open(store, session_id)
        _run(executor_for(session), (index, index))
    assert sorted(info.session_id for info in store.sessions()) == sorted(HOSTILE_IDS)
    for index, session_id in enumerate(HOSTILE_IDS):
        assert landed_calls(Session.open(store, session_id)) == [(index, index)]
    assert store.delete(HOSTILE_IDS[0]) is True
    assert sorted(info.session_id for info in store.sessions()) == sorted(HOSTILE_IDS[1:])


@pytest.mark.parametrize(
    ("session_id", "message"),
    [
        ("", "a session id is a non-empty str, got ''"),
        ("a\x00b", "session id 'a\\x00b' holds a NUL character"),
        ("x" * 513, "is 513 characters long; a store takes at most 512"),
    ],
)
def test_an_id_a_store_cannot_keep_is_refused(
    store: SessionStore, session_id: str, message: str
) -> None:
    with pytest.raises(ValueError, match=None) as raised:
        Session.open(store, session_id)
    assert message in str(raised.value)
    assert store.sessions() == []


def test_delete_removes_the_session_and_its_history(store: SessionStore) -> None:
    _run(executor_for(Session.open(store, "s")), (0, 1))
    Session.open(store, "kept")
    assert store.delete("s") is True
    assert store.delete("s") is False
    assert store.read("s") is None
    assert [info.session_id for info in store.sessions()] == ["kept"]
    assert Session.open(store, "s")[Total].all() == ()


def test_a_writer_whose_session_was_deleted_is_refused(store: SessionStore) -> None:
    session = Session.open(store, "s")
    store.delete("s")
    session[Note].seed([Note("a")])
    with pytest.raises(VersionConflict) as raised:
        session.persist()
    assert raised.value.found is None
    assert "expected version 0, it was deleted" in str(raised.value)


def test_prune_deletes_sessions_not_updated_since_a_date(store: SessionStore) -> None:
    _run(executor_for(Session.open(store, "old")), (0, 1))
    cutoff = datetime.now(UTC) + timedelta(seconds=1)
    report = store.prune(updated_before=cutoff - timedelta(days=1))
    assert report.sessions == 0
    report = store.prune(history=False, updated_before=cutoff)
    assert (report.sessions, report.changes, report.snapshots) == (1, 0, 0)
    assert store.sessions() == []
    with pytest.raises(ValueError, match="takes an aware datetime"):
        store.prune(updated_before=datetime(2020, 1, 1))


def _delegating(params: Note, *, context: ToolContext) -> ToolResult[None]:
    assert context.session is not None
    executor = executor_for(context.session)
    assert executor.execute(add_call(9, 9)).success  # a sub-call on the same session
    if params.text == "fail":
        raise RuntimeError("after the sub-call")
    return ToolResult(message="delegated")


def test_a_sub_call_is_stored_with_its_top_level_call_and_undone_with_it(
    store: SessionStore,
) -> None:
    session = Session.open(store, "s")
    tool = Tool[Note, None](name="delegate", description="Call add.", handler=_delegating)
    template = PromptTemplate(
        ns="tests", key="store", sections=[MarkdownSection(title="Tools", tools=[tool])]
    )
    executor = ToolExecutor(prompt=Prompt(template), session=session)
    assert not executor.execute(ToolCall("delegate", '{"text": "fail"}')).success
    assert session.stored_version == 0
    assert executor.execute(ToolCall("delegate", '{"text": "ok"}')).success
    assert session.stored_version == 1
    loaded = Session.open(store, "s")
    assert loaded[Total].all() == (Total(9),)
    assert [(e.name, e.success) for e in loaded[ToolInvoked].all()] == [
        ("add", True),
        ("delegate", False),
        ("add", True),
        ("delegate", True),
    ]


def test_persist_is_refused_without_a_store() -> None:
    with pytest.raises(Exception, match=r"has no store; open it with Session\.open"):
        Session(session_id="memory").persist()


def test_aexecute_and_the_async_twins_store_and_read(store: SessionStore) -> None:
    async def scenario() -> tuple[list[tuple[int, int]], int, bool]:
        session = await Session.aopen(store, "s")
        executor = executor_for(session)
        for n in range(3):
            result = await executor.aexecute(add_call(0, n))
            assert result.success, result.message
        results = await executor.aexecute_all([add_call(1, 0), add_call(1, 1)])
        assert [r.success for r in results] == [True, True]
        listed = await store.asessions()  # type: ignore[attr-defined]
        deleted = await store.adelete("other")  # type: ignore[attr-defined]
        return landed_calls(Session.open(store, "s")), listed[0].version, deleted

    calls, version, deleted = asyncio.run(scenario())
    assert calls == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1)]
    assert version == 5
    assert deleted is False


def test_a_corrupt_change_names_the_session_and_others_still_load(store: SessionStore) -> None:
    _run(executor_for(Session.open(store, "bad")), (0, 1), (0, 2))
    _run(executor_for(Session.open(store, "good")), (0, 1))
    history = store.read("bad")
    assert history is not None
    broken = replace(history.changes[1], body=history.changes[1].body[:40])
    _overwrite_change(store, "bad", broken.version, broken.body)
    with pytest.raises(StoreError) as raised:
        Session.open(store, "bad")
    assert str(raised.value).startswith("session 'bad': version 2 cannot be read: snapshot is not")
    assert Session.open(store, "good")[Total].all() == (Total(1),)


def test_a_session_stored_by_a_newer_wink_names_it_and_others_still_load(
    store: SessionStore,
) -> None:
    Session.open(store, "newer")
    Session.open(store, "current")
    _execute(store, "UPDATE {t}wink_sessions SET format = 2 WHERE session_id = 'newer'")
    with pytest.raises(StoreError) as raised:
        Session.open(store, "newer")
    assert str(raised.value) == (
        "session 'newer' was stored by a newer wink (format 2; this wink reads format 1); "
        "upgrade wink to load it"
    )
    assert Session.open(store, "current").stored_version == 0


def _execute(store: Any, statement: str, parameters: tuple[Any, ...] = ()) -> None:
    """Run SQL on the store's own tables, behind its back (to break them)."""
    if hasattr(store, "_pool"):
        with store._pool.connection() as connection:
            connection.execute(
                statement.replace("{t}", f'"{store.schema}".').replace("?", "%s"), parameters
            )
    else:
        with store._lock:
            store._connection.execute(statement.replace("{t}", ""), parameters)


def _overwrite_change(store: Any, session_id: str, version: int, body: str) -> None:
    _execute(
        store,
        "UPDATE {t}wink_changes SET body = ? WHERE session_id = ? AND version = ?",
        (body, session_id, version),
    )


# Faults with other processes.

WRITES_PER_PROCESS = 200


def test_two_processes_appending_to_one_session_lose_and_duplicate_nothing(
    store_backend: Any,
) -> None:
    url, options = store_backend
    options = {**options, "snapshot_every": 50}
    open_store(url, **options).close()  # the tables exist before the race
    context = multiprocessing.get_context("spawn")
    with context.Pool(2) as pool:
        outcomes = pool.starmap(
            append_worker,
            [(url, "shared", worker, WRITES_PER_PROCESS, options) for worker in (1, 2)],
        )
    store = open_store(url, **options)
    try:
        loaded = Session.open(store, "shared")
        stored = landed_calls(loaded)
        landed = {
            (worker, n)
            for worker, marks in zip((1, 2), outcomes, strict=True)
            for n, mark in enumerate(marks)
            if mark
        }
        assert len(stored) == len(set(stored))  # none twice
        assert set(stored) == landed  # every landed call, no refused one
        assert sum(len(marks) for marks in outcomes) == 2 * WRITES_PER_PROCESS
        assert loaded.stored_version == len(stored)
        sequential = replayed(stored)
        assert loaded[Total].all() == sequential[Total].all()
        assert loaded[Added].all() == sequential[Added].all()
    finally:
        store.close()


KILL_TRIALS = 3


def test_a_process_killed_mid_append_leaves_exactly_its_committed_calls(
    store_backend: Any,
) -> None:
    url, options = store_backend
    open_store(url, **options).close()
    arguments = [url, "killed", options.get("schema", "")]
    reported: list[int] = []
    for trial in range(KILL_TRIALS):
        child = subprocess.Popen(
            [sys.executable, "-c", KILLED_WORKER, *arguments],
            cwd=REPO,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert child.stdout is not None
        assert child.stdout.readline() == "ready\n"
        time.sleep(0.05 + 0.07 * trial)
        os.kill(child.pid, signal.SIGKILL)
        output, _ = child.communicate()
        reported.extend(int(line) for line in output.split() if line.isdigit())
        store = open_store(url, **options)
        try:
            stored = [n for _, n in landed_calls(Session.open(store, "killed"))]
        finally:
            store.close()
        # Every call reported landed is stored, in order, once; at most the one in
        # flight when the process died is stored unreported.
        assert stored == list(range(len(stored)))
        assert stored[: len(reported)] == reported
        assert len(stored) - len(reported) in (0, 1)
        reported = stored[:]
    assert len(reported) > KILL_TRIALS


def test_append_takes_the_json_it_is_given_without_a_session(store: SessionStore) -> None:
    from wink.store import StoredChange

    store.create("raw")
    store.create("raw")  # a second create changes nothing
    body = json.dumps({"version": 1, "slices": []})
    store.append("raw", 0, StoredChange(1, body, "", 0))
    with pytest.raises(VersionConflict):
        store.append("raw", 0, StoredChange(1, body, "", 0))
    history = store.read("raw")
    assert history is not None
    assert (history.version, [c.version for c in history.changes]) == (1, [1])
