"""Session: slices, reducers, O(1) snapshots, JSON snapshots and thread-safe dispatch."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, replace
from datetime import UTC, datetime

import pytest
from pydantic import BaseModel

from wink import ToolResult, WinkError
from wink.policy import PolicyState
from wink.runtime import (
    Session,
    SliceKind,
    SliceValues,
    Snapshot,
    SnapshotError,
    ToolInvoked,
    replace_latest,
    upsert_by,
)

MOMENT = datetime(2025, 1, 1, tzinfo=UTC)
HERE = __name__  # how this module's slice types are named in JSON


@dataclass(frozen=True)
class Plan:
    objective: str
    steps: tuple[str, ...] = ()


@dataclass(frozen=True)
class AddStep:
    step: str


@dataclass(frozen=True)
class Note:
    text: str


@dataclass(frozen=True)
class Audit:
    entry: str


class Ticket(BaseModel):
    ticket_id: int


def add_step(values: SliceValues[Plan], event: AddStep) -> tuple[Plan, ...]:
    plan = values.latest() or Plan(objective="")
    return (replace(plan, steps=(*plan.steps, event.step)),)


def invoked(value: object, *, success: bool = True) -> ToolInvoked:
    result = ToolResult(message="done", value=value, success=success)
    return ToolInvoked("prompt", "tool", "call-1", None, "{}", result, "", MOMENT, MOMENT)


# Reading slices


def test_empty_slice_has_no_latest_and_no_values() -> None:
    session = Session()
    assert session[Plan].latest() is None
    assert session[Plan].all() == ()
    assert len(session[Plan]) == 0


def test_event_without_reducer_is_appended_to_its_own_slice() -> None:
    session = Session()
    session.dispatch(Note("a"))
    session.dispatch(Note("b"))
    assert session[Note].all() == (Note("a"), Note("b"))
    assert session[Note].latest() == Note("b")


def test_where_keeps_matching_values_in_order() -> None:
    session = Session()
    for text in ("keep 1", "drop", "keep 2"):
        session.dispatch(Note(text))
    assert session[Note].where(lambda note: note.text.startswith("keep")) == (
        Note("keep 1"),
        Note("keep 2"),
    )


# Reducers


def test_registered_reducer_routes_event_into_its_slice() -> None:
    session = Session()
    session[Plan].register(AddStep, add_step)
    session.dispatch(AddStep("draft"))
    session.dispatch(AddStep("review"))
    assert session[Plan].all() == (Plan(objective="", steps=("draft", "review")),)


def test_event_with_a_reducer_is_not_appended_to_its_own_slice() -> None:
    session = Session()
    session[Plan].register(AddStep, add_step)
    session.dispatch(AddStep("draft"))
    assert session[AddStep].all() == ()


def test_one_event_can_feed_several_slices() -> None:
    session = Session()
    session[Plan].register(AddStep, add_step)
    session[AddStep].register(AddStep, lambda values, event: values.append(event))
    session.dispatch(AddStep("draft"))
    assert session[Plan].latest() == Plan(objective="", steps=("draft",))
    assert session[AddStep].all() == (AddStep("draft"),)


def test_registering_again_for_the_same_slice_replaces_the_reducer() -> None:
    session = Session()
    session[Plan].register(AddStep, add_step)
    session[Plan].register(AddStep, lambda values, event: (Plan(objective=event.step),))
    session.dispatch(AddStep("replaced"))
    assert session[Plan].all() == (Plan(objective="replaced"),)


def test_replace_latest_keeps_only_the_newest_value() -> None:
    session = Session()
    session[Note].register(Note, replace_latest)
    session.dispatch(Note("old"))
    session.dispatch(Note("new"))
    assert session[Note].all() == (Note("new"),)


def test_upsert_by_replaces_the_value_with_the_same_key() -> None:
    session = Session()
    session[Ticket].register(Ticket, upsert_by(lambda ticket: ticket.ticket_id % 10))
    for ticket_id in (1, 2, 11):
        session.dispatch(Ticket(ticket_id=ticket_id))
    assert session[Ticket].all() == (Ticket(ticket_id=2), Ticket(ticket_id=11))


def test_failing_reducer_leaves_every_slice_unchanged() -> None:
    session = Session()
    session[Note].register(AddStep, lambda values, event: values.append(Note(event.step)))

    def explode(values: SliceValues[Plan], event: AddStep) -> tuple[Plan, ...]:
        raise ValueError("bad step")

    session[Plan].register(AddStep, explode)
    with pytest.raises(ValueError, match="bad step") as raised:
        session.dispatch(AddStep("x"))
    assert session[Note].all() == ()
    assert raised.value.__notes__ == [
        "while reducing AddStep into the Plan slice with "
        "test_failing_reducer_leaves_every_slice_unchanged.<locals>.explode"
    ]


def test_reducer_returning_a_non_sequence_is_reported() -> None:
    session = Session()
    session[Plan].register(AddStep, lambda values, event: None)  # type: ignore[arg-type, return-value]  # the mistake under test
    with pytest.raises(TypeError, match=r"returned NoneType for the Plan slice"):
        session.dispatch(AddStep("x"))


def test_dispatch_from_inside_a_reducer_is_refused() -> None:
    session = Session()

    def impure(values: SliceValues[Note], event: AddStep) -> SliceValues[Note]:
        session.dispatch(Note("nested"))
        return values

    session[Note].register(AddStep, impure)
    with pytest.raises(WinkError, match=r"session.dispatch\(\) was called while a reducer"):
        session.dispatch(AddStep("x"))
    assert session[Note].all() == ()


# ToolInvoked


def test_tool_invoked_is_a_log_slice_and_others_default_to_state() -> None:
    session = Session()
    assert session[ToolInvoked].kind is SliceKind.LOG
    assert session[Plan].kind is SliceKind.STATE


def test_successful_tool_invoked_appends_its_dataclass_value() -> None:
    session = Session()
    session.dispatch(invoked(Note("from tool")))
    assert session[Note].all() == (Note("from tool"),)
    assert len(session[ToolInvoked]) == 1


def test_successful_tool_invoked_appends_its_pydantic_value() -> None:
    session = Session()
    session.dispatch(invoked(Ticket(ticket_id=7)))
    assert session[Ticket].all() == (Ticket(ticket_id=7),)


def test_tool_invoked_value_goes_through_its_reducers() -> None:
    session = Session()
    session[Plan].register(AddStep, add_step)
    session.dispatch(invoked(AddStep("from tool")))
    assert session[Plan].latest() == Plan(objective="", steps=("from tool",))


def test_failed_tool_invoked_does_not_append_its_value() -> None:
    session = Session()
    session.dispatch(invoked(Note("error payload"), success=False))
    assert session[Note].all() == ()
    assert len(session[ToolInvoked]) == 1


def test_tool_invoked_with_a_plain_value_only_logs_the_call() -> None:
    session = Session()
    session.dispatch(invoked("text"))
    session.dispatch(invoked([Note("in a list")]))
    assert session[str].all() == ()
    assert session[Note].all() == ()
    assert len(session[ToolInvoked]) == 2


# Slice kinds and direct updates


def test_dispatcher_is_the_session_itself() -> None:
    session = Session()
    assert session.dispatcher is session
    session.dispatcher.dispatch(Note("published"))
    assert session[Note].all() == (Note("published"),)


def test_declaring_a_slice_log_moves_its_values() -> None:
    session = Session()
    session.dispatch(Audit("before"))
    session[Audit].declare(SliceKind.LOG)
    assert session[Audit].kind is SliceKind.LOG
    assert session[Audit].all() == (Audit("before"),)
    assert Audit in session.snapshot().log
    assert Audit not in session.snapshot().state


def test_seed_replaces_values_without_reducers() -> None:
    session = Session()
    session[Note].register(Note, lambda values, event: pytest.fail("reducer ran"))
    session[Note].seed([Note("a"), Note("b")])
    assert session[Note].all() == (Note("a"), Note("b"))


def test_clear_with_predicate_removes_only_matching_values() -> None:
    session = Session()
    session[Note].seed([Note("a"), Note("b"), Note("a")])
    session[Note].clear(lambda note: note.text == "a")
    assert session[Note].all() == (Note("b"),)


def test_update_transforms_the_values() -> None:
    session = Session()
    session[Note].seed([Note("a")])
    session[Note].update(lambda values: values.append(Note("b")))
    assert session[Note].all() == (Note("a"), Note("b"))


# Snapshots


def test_snapshot_is_not_changed_by_later_dispatches() -> None:
    session = Session()
    session.dispatch(Note("a"))
    snapshot = session.snapshot()
    session.dispatch(Note("b"))
    assert tuple(snapshot.state[Note]) == (Note("a"),)


def test_snapshot_is_the_held_state_not_a_copy() -> None:
    session = Session()
    session[Note].seed(Note(str(i)) for i in range(1000))
    assert session.snapshot() is session.snapshot()


def test_update_shares_untouched_slices_with_the_previous_snapshot() -> None:
    session = Session()
    session[Note].seed(Note(str(i)) for i in range(1000))
    before = session.snapshot()
    session.dispatch(Plan(objective="other slice"))
    assert session.snapshot().state[Note] is before.state[Note]


def test_restore_puts_state_back_and_keeps_the_log() -> None:
    session = Session()
    session.dispatch(Note("kept"))
    snapshot = session.snapshot()
    session.dispatch(Note("rolled back"))
    session.dispatch(invoked(None))
    session.restore(snapshot)
    assert session[Note].all() == (Note("kept"),)
    assert len(session[ToolInvoked]) == 1


def test_restore_without_keep_log_puts_the_log_back_too() -> None:
    session = Session()
    snapshot = session.snapshot()
    session.dispatch(invoked(None))
    session.restore(snapshot, keep_log=False)
    assert session[ToolInvoked].all() == ()


def test_restore_swaps_in_the_snapshot_maps_without_copying() -> None:
    session = Session()
    session[Note].seed(Note(str(i)) for i in range(1000))
    snapshot = session.snapshot()
    session.dispatch(Note("later"))
    session.restore(snapshot)
    assert session.snapshot().state is snapshot.state


def test_restore_refuses_something_that_is_not_a_snapshot() -> None:
    with pytest.raises(TypeError, match="restore\\(\\) takes a Snapshot, got dict"):
        Session().restore({})  # type: ignore[arg-type]  # the mistake under test


def test_reset_empties_slices_and_keeps_reducers() -> None:
    session = Session()
    session[Plan].register(AddStep, add_step)
    session.dispatch(AddStep("before"))
    session.dispatch(invoked(None))
    session.reset()
    assert session[Plan].all() == ()
    assert session[ToolInvoked].all() == ()
    session.dispatch(AddStep("after"))
    assert session[Plan].latest() == Plan(objective="", steps=("after",))


def test_sessions_do_not_share_state_or_reducers() -> None:
    first, second = Session(), Session()
    first[Plan].register(AddStep, add_step)
    first.dispatch(AddStep("only first"))
    second.dispatch(AddStep("plain"))
    assert second[Plan].all() == ()
    assert second[AddStep].all() == (AddStep("plain"),)
    assert first[AddStep].all() == ()


# JSON


def test_snapshot_json_round_trip_keeps_typed_values() -> None:
    session = Session()
    session.dispatch(Plan(objective="ship", steps=("build",)))
    session.dispatch(Ticket(ticket_id=3))
    session.dispatch(PolicyState("p", frozenset({"read"}), frozenset({("read", "a.txt")})))
    loaded = Snapshot.from_json(session.snapshot().to_json())
    assert loaded == session.snapshot()


def test_snapshot_json_names_each_slice_type_and_kind() -> None:
    session = Session()
    session.dispatch(Note("a"))
    session.dispatch(invoked(None))
    document = json.loads(session.snapshot().to_json())
    assert document["version"] == 1
    assert [(s["type"], s["kind"]) for s in document["slices"]] == [
        (f"{HERE}:Note", "state"),
        ("wink.runtime.events:ToolInvoked", "log"),
    ]
    assert document["slices"][0]["items"] == [{"text": "a"}]


def test_tool_invoked_round_trips_with_any_fields_as_json_data() -> None:
    session = Session()
    session.dispatch(invoked(Note("value")))
    loaded = Snapshot.from_json(session.snapshot().to_json())
    event = loaded.log[ToolInvoked][0]
    assert event.result == ToolResult(message="done", value={"text": "value"})
    assert event.started_at == MOMENT
    assert loaded.state[Note][0] == Note("value")


def test_loaded_snapshot_restores_into_a_new_session() -> None:
    session = Session()
    session.dispatch(Note("persisted"))
    session.dispatch(invoked(None))
    fresh = Session()
    fresh.restore(Snapshot.from_json(session.snapshot().to_json()), keep_log=False)
    assert fresh[Note].all() == (Note("persisted"),)
    assert len(fresh[ToolInvoked]) == 1


def test_from_json_with_types_resolves_only_those_types() -> None:
    session = Session()
    session.dispatch(Note("a"))
    session.dispatch(Plan(objective="b"))
    text = session.snapshot().to_json()
    with pytest.raises(SnapshotError) as raised:
        Snapshot.from_json(text, types=[Note])
    assert str(raised.value) == f"slices[1]: slice type {HERE}:Plan is not among the given types"


def test_from_json_refuses_another_version() -> None:
    with pytest.raises(SnapshotError, match="snapshot version must be 1, got 2"):
        Snapshot.from_json('{"version": 2, "slices": []}')


def test_from_json_reports_items_that_do_not_match_their_type() -> None:
    slices = [{"type": f"{HERE}:Note", "kind": "state", "items": [{}]}]
    with pytest.raises(SnapshotError) as raised:
        Snapshot.from_json(json.dumps({"version": 1, "slices": slices}))
    assert str(raised.value).startswith(
        f"slices[0] ({HERE}:Note): items do not match the type: invalid list[{HERE}.Note]:\n"
        "[0].text: required field is missing"
    )


def test_from_json_asks_for_types_defined_in_functions() -> None:
    @dataclass
    class Local:
        x: int

    session = Session()
    session.dispatch(Local(1))
    text = session.snapshot().to_json()
    with pytest.raises(SnapshotError, match="defined inside a function; pass it in types"):
        Snapshot.from_json(text)
    assert Snapshot.from_json(text, types=[Local]).state[Local][0] == Local(1)


def test_to_json_names_a_slice_that_cannot_be_serialized() -> None:
    class Opaque:
        pass

    session = Session()
    session.dispatch(Opaque())
    with pytest.raises(SnapshotError) as raised:
        session.snapshot().to_json()
    assert str(raised.value).startswith(
        f"slice {HERE}:test_to_json_names_a_slice_that_cannot_be_serialized.<locals>.Opaque "
        "cannot be written as JSON"
    )


# Threads


def test_concurrent_dispatches_lose_no_events() -> None:
    session = Session()
    session[Plan].register(AddStep, add_step)
    threads = [
        threading.Thread(
            target=lambda n=n: [session.dispatch(AddStep(f"{n}-{i}")) for i in range(500)]
        )
        for n in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    plan = session[Plan].latest()
    assert plan is not None
    assert len(plan.steps) == 4000
    assert len(set(plan.steps)) == 4000


def test_loaded_snapshot_brings_its_log_slices_into_a_new_session() -> None:
    session = Session()
    session[Audit].declare(SliceKind.LOG)
    session.dispatch(Audit("kept"))
    fresh = Session()
    fresh.restore(Snapshot.from_json(session.snapshot().to_json()), keep_log=False)
    assert fresh[Audit].all() == (Audit("kept"),)
    assert fresh[Audit].kind is SliceKind.LOG


def test_loaded_snapshot_contradicting_a_declared_kind_is_refused() -> None:
    session = Session()
    session[Audit].declare(SliceKind.LOG)
    session.dispatch(Audit("kept"))
    fresh = Session()
    fresh[Audit].declare(SliceKind.STATE)
    with pytest.raises(SnapshotError) as raised:
        fresh.restore(Snapshot.from_json(session.snapshot().to_json()), keep_log=False)
    assert str(raised.value) == (
        "the snapshot holds Audit as a log slice, but this session declares it state"
    )
