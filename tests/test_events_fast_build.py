"""The executor's way of building ``ToolInvoked`` gives the same event as its constructor."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from datetime import UTC, datetime

import pytest

from wink import ToolResult
from wink.runtime import ToolInvoked
from wink.runtime.events import _FIELDS, _tool_invoked


def test_fast_builder_covers_every_field_of_tool_invoked_in_order() -> None:
    assert tuple(field.name for field in dataclasses.fields(ToolInvoked)) == _FIELDS


def test_fast_builder_equals_the_constructor_field_by_field() -> None:
    started = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    finished = datetime(2026, 1, 2, 3, 4, 6, tzinfo=UTC)
    values = (
        "prompt",
        "lookup",
        "call-1",
        {"id": 1},
        '{"id": 1}',
        ToolResult.error("no"),
        "text",
        started,
        finished,
        True,
        False,
    )
    built = _tool_invoked(*values)
    assert type(built) is ToolInvoked
    assert built == ToolInvoked(*values)
    assert tuple(getattr(built, name) for name in _FIELDS) == values


def test_a_fast_built_event_is_a_frozen_tool_invoked_in_every_way() -> None:
    at = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    values = ("p", "t", None, None, "{}", ToolResult(message="ok"), "", at, at, False, True)
    built = _tool_invoked(*values)
    made = ToolInvoked(*values)
    assert type(built) is ToolInvoked
    assert hash(built) == hash(made)
    assert repr(built) == repr(made)
    assert dataclasses.replace(built, name="u") == dataclasses.replace(made, name="u")
    assert copy.copy(built) == made
    assert pickle.loads(pickle.dumps(built)) == made
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.name = "changed"  # type: ignore[misc]  # frozen, as the test shows
    assert built.rolled_back is True
    assert built.duration.total_seconds() == 0.0
