"""``ToolCall``: a provider's request to run one tool."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["ToolCall"]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call as a model sent it."""

    name: str
    """The tool's name."""
    arguments: str | bytes | Mapping[str, Any] | None = None
    """The arguments: the provider's JSON text, or an already-decoded mapping."""
    call_id: str | None = None
    """The provider's id for the call, echoed in the tool message."""
