"""The text a model reads for one tool result, whatever the provider."""

from __future__ import annotations

from typing import Any

from wink.tools import ToolResult

__all__ = ["result_text"]


def result_text(result: ToolResult[Any]) -> str:
    """The message, then the rendered value (``result.render()``) after a blank line.

    The value is left out when ``exclude_value_from_context`` is set or there is
    none; the model then reads the message alone.
    """
    if result.exclude_value_from_context or result.value is None:
        return result.message
    rendered = result.render()
    if not rendered:
        return result.message
    if not result.message:
        return rendered
    return f"{result.message}\n\n{rendered}"
