"""A dispatch with no reducer in the way appends directly; it leaves each slice as the
general route-and-commit path does, whatever the events and slice kinds."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from wink import ToolResult
from wink.runtime import Session, SliceKind, ToolInvoked
from wink.runtime.session import _is_record

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
