"""A dispatch with no reducer in the way appends directly; it leaves each slice as the
general route-and-commit path does, whatever the events and slice kinds."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wink import ToolResult, WinkError
from wink.runtime import Session, SliceKind, ToolInvoked
from wink.runtime.session import _RECORD_TYPES, _is_record

NOW = datetime(2026, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Found:
    key: int


@dataclass(frozen=True)
class FoundMore(Found):
    pass


@dataclass(frozen=True)
class Noted:
    text: str


def invoked(value: object, *, success: bool = True) -> ToolInvoked:
    result: ToolResult[Any] = ToolResult(message="m", value=value, success=success)
    return ToolInvoked("p", "t", "c", None, "{}", result, "", NOW, NOW)


_events = st.lists(
    st.one_of(
        st.builds(lambda k: (invoked(Found(k)), Found), st.integers(0, 9)),
        st.builds(lambda k: (invoked(FoundMore(k)), Found), st.integers(0, 9)),
        st.builds(lambda k: (invoked(FoundMore(k)), None), st.integers(0, 9)),
        st.builds(lambda k: (invoked(Found(k), success=False), Found), st.integers(0, 9)),
        st.builds(lambda k: (invoked([k]), None), st.integers(0, 9)),
        st.builds(lambda t: (Noted(t), None), st.text(max_size=3)),
        st.builds(lambda k: (Found(k), None), st.integers(0, 9)),
    ),
    max_size=40,
)


def general_dispatch(session: Session, event: object, value_type: type[Any] | None) -> None:
    """What ``dispatch`` does through its general path (routes, then one commit)."""
    changes: dict[type[Any], Any] = {}
    session._route(event, changes)
    if isinstance(event, ToolInvoked) and event.result.success and _is_record(event.result.value):
        session._route(event.result.value, changes, value_type or type(event.result.value))
    session._commit(changes, event)


@given(_events, st.booleans(), st.booleans())
def test_direct_appends_leave_the_slices_the_general_path_leaves(
    events: list[tuple[object, type[Any] | None]], noted_log: bool, found_log: bool
) -> None:
    direct, general = Session(), Session()
    for session in (direct, general):
        if noted_log:
            session[Noted].declare(SliceKind.LOG)
        if found_log:
            session[Found].declare(SliceKind.LOG)
    for event, value_type in events:
        direct.dispatch(event, value_type=value_type)
        general_dispatch(general, event, value_type)
    for slice_type in (ToolInvoked, Found, FoundMore, Noted):
        assert list(direct[slice_type]) == list(general[slice_type])
    mine, theirs = direct.snapshot(), general.snapshot()
    assert set(mine.state) == set(theirs.state)
    assert set(mine.log) == set(theirs.log)


@given(st.integers(0, 100), st.integers(0, 100), st.booleans())
def test_direct_appends_across_tail_blocks_leave_the_slices_the_general_path_leaves(
    records: int, notes: int, found_log: bool
) -> None:
    direct, general = Session(), Session()
    for session in (direct, general):
        if found_log:
            session[Found].declare(SliceKind.LOG)
    events: list[tuple[object, type[Any] | None]] = [
        (invoked(Found(k)), Found) for k in range(records)
    ]
    events += [(Noted(str(k)), None) for k in range(notes)]
    for event, value_type in events:
        direct.dispatch(event, value_type=value_type)
        general_dispatch(general, event, value_type)
    for slice_type in (ToolInvoked, Found, Noted):
        assert list(direct[slice_type]) == list(general[slice_type])
    assert len(direct[ToolInvoked]) == records
    assert len(direct[Noted]) == notes


def test_snapshots_taken_between_direct_dispatches_keep_their_values() -> None:
    session = Session()
    taken = []
    for k in range(70):
        taken.append(session.snapshot())
        session.dispatch(invoked(Found(k)), value_type=Found)
    for count, snapshot in enumerate(taken):
        assert list(snapshot.state.get(Found, ())) == [Found(k) for k in range(count)]
        assert len(snapshot.log.get(ToolInvoked, ())) == count


def test_a_snapshot_shows_its_slices_read_only_and_as_the_same_maps_each_time() -> None:
    session = Session()
    session.dispatch(Noted("a"))
    snapshot = session.snapshot()
    assert snapshot.state is snapshot.state
    assert snapshot.log is snapshot.log
    with pytest.raises(TypeError):
        snapshot.state[Noted] = snapshot.state[Noted]  # type: ignore[index]  # read-only on purpose
    assert list(snapshot.state[Noted]) == [Noted("a")]


def test_a_dispatch_that_leaves_a_kind_of_slice_alone_keeps_its_map() -> None:
    session = Session()
    session.dispatch(Noted("state"))
    state = session.snapshot().state
    session.dispatch(invoked([1]))  # only ToolInvoked, a LOG slice, changes
    log = session.snapshot().log
    assert session.snapshot().state is state
    session.dispatch(Noted("more"))  # only a STATE slice changes
    assert session.snapshot().log is log
    assert session.snapshot().state is not state


def test_dispatching_from_a_reducer_is_refused_and_leaves_the_session_usable() -> None:
    session = Session()

    def dispatching(values: Any, event: Noted) -> Any:
        session.dispatch(Found(1))
        return values.append(event)

    session[Noted].register(Noted, dispatching)
    with pytest.raises(WinkError) as raised:
        session.dispatch(Noted("x"))
    assert str(raised.value) == (
        "session.dispatch() was called while a reducer was running; "
        "reducers must be pure functions of (values, event)"
    )
    assert session[Noted].all() == ()
    assert session[Found].all() == ()
    session.dispatch(Found(2))
    assert session[Found].all() == (Found(2),)


def test_concurrent_tool_call_records_on_the_direct_path_lose_nothing() -> None:
    session = Session()

    def record(thread: int) -> None:
        for k in range(500):
            session.dispatch(invoked(Found(thread * 1000 + k)), value_type=Found)

    threads = [threading.Thread(target=record, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    keys = sorted(found.key for found in session[Found])
    assert keys == sorted(n * 1000 + k for n in range(4) for k in range(500))
    assert len(session[ToolInvoked]) == 2000


def test_classes_of_result_values_are_remembered_within_a_bound() -> None:
    session = Session()
    for _ in range(5000):
        session.dispatch(invoked(type("Made", (), {})()))
    assert len(_RECORD_TYPES) <= 4096
    assert len(session[ToolInvoked]) == 5000
    assert len(session.snapshot().state) == 0
