"""The executor's way of building ``ToolInvoked`` gives the same event as its constructor."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

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
