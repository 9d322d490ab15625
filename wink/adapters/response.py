"""``PromptResponse``: what an evaluation returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Generic, Literal

from wink.prompt.prompt import OutputT
from wink.runtime.budget import TokenUsage
from wink.runtime.events import ToolInvoked

__all__ = ["PromptResponse", "StopReason"]

StopReason = Literal[
    "end", "max_tokens", "refusal", "content_filter", "tool_calls", "pause", "other"
]
"""Why a model's reply ended, the same for every provider: ``"end"`` (a finished answer),
``"max_tokens"`` (cut by the output token limit), ``"refusal"``, ``"content_filter"``
(blocked by the provider's safety filters), ``"tool_calls"``, ``"pause"`` (the provider
paused a long turn of its own tools; the loop continues it) or ``"other"`` (a reason no
other value names: the provider's own value is kept beside it)."""


@dataclass(frozen=True, slots=True)
class PromptResponse(Generic[OutputT]):
    """The answer to one evaluation of a prompt."""

    prompt_name: str
    """The prompt's name."""
    text: str | None
    """The model's final text (for structured output, the JSON it answered), or ``None``."""
    output: OutputT | None
    """The structured output parsed with the template's output contract; ``None`` for a
    prompt answered with text."""
    tool_results: tuple[ToolInvoked, ...]
    """Every tool call of this evaluation, in order (a nested evaluation's are its own)."""
    usage: TokenUsage
    """Tokens used, summed over every request of the evaluation."""
    turns: int
    """Requests sent to the model."""
    messages: tuple[Any, ...] = field(repr=False)
    """The conversation in the provider's message format, the final answer included:
    pass it (with a new user message) as ``messages`` to continue."""
    provider_response: Any = field(default=None, repr=False, compare=False)
    """The provider's last response, as its SDK returned it (for debugging)."""
    stop_reason: StopReason = "end"
    """Why the final reply ended: ``"end"``, or ``"max_tokens"`` for an answer cut by the
    token limit that the caller accepted with ``allow_truncated=True``."""
    raw_stop_reason: str | None = None
    """The provider's own value for it (``"stop"``, ``"end_turn"``, ``"MAX_TOKENS"``,
    ``"incomplete: max_output_tokens"``...), or ``None`` when it gave none."""
