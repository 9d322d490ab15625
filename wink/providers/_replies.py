"""What every provider adapter checks of a reply and of its own options."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from wink._error_text import safe_repr, type_label
from wink.adapters import UnusableResponse

__all__ = ["provider_tools_of", "reply_data"]


def reply_data(reply: Any, expected: type, what: str, *, by_alias: bool = False) -> dict[str, Any]:
    """``reply`` as plain JSON data, if it is the SDK's object for ``what``.

    An SDK reads a 200 reply that is not what it expects (an HTML page, an event
    stream, ``null``, a list) into a string, ``None`` or a list; it builds its objects
    without checking their fields, so what they hold is read as plain data by the
    payload readers, which name what is wrong and where.
    """
    if not isinstance(reply, expected):
        raise UnusableResponse(
            f"the reply is not {what} but {type_label(reply)}: {safe_repr(reply)[:200]}", reply
        )
    # warnings=False: a field of an unexpected type is reported by the reader, not here.
    sdk_object: Any = reply  # an SDK model: pydantic's model_dump
    data: dict[str, Any] = sdk_object.model_dump(
        mode="json", exclude_none=True, by_alias=by_alias, warnings=False
    )
    return data


def provider_tools_of(
    adapter: str, provider_tools: Sequence[Mapping[str, Any]], options: Mapping[str, Any]
) -> tuple[dict[str, Any], ...]:
    """The provider's own tools an adapter sends after the prompt's, each a copy."""
    if "tools" in options:
        raise ValueError(
            f"{adapter}: tools are the prompt's; pass the provider's own tools (web search, "
            "code execution...) as provider_tools=[...]"
        )
    if isinstance(provider_tools, Mapping | str):
        raise TypeError(
            f"{adapter}: provider_tools must be a list of tool objects, got one "
            f"{type_label(provider_tools)}"
        )
    tools = []
    for index, tool in enumerate(provider_tools):
        if not isinstance(tool, Mapping):
            raise TypeError(
                f"{adapter}: provider_tools[{index}] must be a tool object (a mapping), got "
                f"{type_label(tool)}"
            )
        tools.append(dict(tool))
    return tuple(tools)


def offering(request: Mapping[str, Any], tools: Sequence[Any]) -> dict[str, Any]:
    """A copy of ``request`` (SDK call arguments or config) with ``tools`` as its
    ``tools``, the key left out when there are none."""
    offered = {key: value for key, value in request.items() if key != "tools"}
    if tools:
        offered["tools"] = list(tools)
    return offered
