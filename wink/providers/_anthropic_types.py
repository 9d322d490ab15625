"""The shapes of what ``wink.providers.anthropic`` returns, as ``TypedDict``s.

Each one has exactly the keys, value types and required keys of the Anthropic
SDK's param type of the same role, so that mypy accepts it wherever the SDK asks
for that type (``client.messages.create(tools=..., messages=...)``) with no cast,
while wink imports no SDK. mypy compares ``TypedDict`` values invariantly: a value
whose SDK type is a union of block types wink never sends (or names a protocol of
the SDK's own) is typed ``Any`` here.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal, Required, TypedDict

__all__ = ["CacheControl", "ToolMessage", "ToolResultBlock", "ToolSpec"]


_Caller = Literal[
    "direct", "code_execution_20250825", "code_execution_20260120", "code_execution_20260521"
]


class CacheControl(TypedDict, total=False):
    """A cache breakpoint (the SDK's ``CacheControlEphemeralParam``)."""

    type: Required[Literal["ephemeral"]]
    ttl: Literal["5m", "1h"]


class ToolSpec(TypedDict, total=False):
    """One tool of a Messages request (the SDK's ``ToolParam``).

    wink always sends ``name``, ``description`` and an object ``input_schema``,
    and ``strict`` when it is on.
    """

    input_schema: Required[Any]  # the SDK: its typed object schema, or a dict
    name: Required[str]
    allowed_callers: list[_Caller]
    cache_control: CacheControl | None
    defer_loading: bool
    description: str
    eager_input_streaming: bool | None
    input_examples: Iterable[dict[str, object]]
    strict: bool
    type: Literal["custom"] | None


class ToolResultBlock(TypedDict, total=False):
    """A ``tool_result`` content block (the SDK's ``ToolResultBlockParam``).

    wink sends ``content`` as text, and ``is_error`` only for a failure.
    """

    tool_use_id: Required[str]
    type: Required[Literal["tool_result"]]
    cache_control: CacheControl | None
    content: Any  # the SDK: text, or a list of its content blocks
    is_error: bool
    toolset_name: str | None


class ToolMessage(TypedDict, total=False):
    """A ``user`` message carrying ``tool_result`` blocks (the SDK's ``UserMessageParam``).

    Its ``content`` is always a list of ``ToolResultBlock``s.
    """

    content: Required[Any]  # the SDK: text, or a list of any of its content blocks
    role: Required[Literal["user"]]
