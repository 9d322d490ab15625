"""Events the runtime records in a session."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from wink.runtime._raw import RawArguments, RawText
from wink.tools import ToolResult

__all__ = ["ToolInvoked"]


@dataclass(frozen=True, slots=True)
class ToolInvoked:
    """One tool call and its outcome; recorded for every call, failed ones included.

    It lives in a ``LOG`` slice, so restoring a snapshot keeps it.
    """

    prompt_name: str
    """Name of the prompt whose tool was called."""
    name: RawText
    """The tool name the model sent (possibly unknown)."""
    call_id: RawText | None
    """The provider's id for the call."""
    params: Any
    """The parsed params; ``None`` when parsing failed or the tool takes none."""
    arguments: RawArguments
    """The arguments exactly as received. In JSON, text, bytes and mappings that JSON
    cannot carry as themselves (invalid UTF-8, lone surrogates, NaN) are written
    escaped, ``{"escaped": "bytes" | "text" | "mapping", "data": ...}``, and read back
    exactly."""
    result: ToolResult[Any]
    """The result returned to the model."""
    rendered_output: RawText
    """The value as the model sees it (``""`` when there is none): rendered through the
    tool's result contract on success, by ``result.render()`` on failure."""
    started_at: datetime
    """When the executor received the call (timezone-aware)."""
    finished_at: datetime
    """When the result was ready (timezone-aware)."""

    @property
    def success(self) -> bool:
        """Whether the call succeeded."""
        return self.result.success

    @property
    def duration(self) -> timedelta:
        """How long the call took."""
        return self.finished_at - self.started_at
