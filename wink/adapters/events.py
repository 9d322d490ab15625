"""Events an evaluation records in its session, as ``LOG`` slices next to ``ToolInvoked``."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from wink.adapters.response import StopReason
from wink.errors import EvaluationPhase
from wink.runtime.budget import TokenUsage
from wink.runtime.events import RawText

__all__ = ["ModelExchange", "PromptExecuted", "PromptRendered", "ProviderToolCall"]


@dataclass(frozen=True, slots=True)
class PromptRendered:
    """A prompt was rendered for an evaluation, before its first request."""

    prompt_name: str
    """The prompt's name."""
    adapter: str
    """Which adapter evaluates it (``"openai"``, ``"anthropic"``, ``"gemini"``, ...)."""
    text: RawText
    """The rendered text sent to the model (saved escaped if it holds a lone surrogate)."""
    tool_names: tuple[str, ...]
    """The tools the model is shown, in order."""
    rendered_at: datetime
    """When the render finished (timezone-aware)."""


@dataclass(frozen=True, slots=True)
class ProviderToolCall:
    """A tool the provider ran itself within one reply (web search, code execution...):
    wink only sees it happen, and sends its result back with the model's turn."""

    name: str
    """The provider's name for it (``"web_search"``, ``"code_execution"``,
    ``"google_search"``, ``"file_search"``...)."""
    call_id: str | None
    """The provider's id for the call, if it gave one."""
    arguments: RawText
    """What the model asked of it (a query, code...), as JSON text."""


@dataclass(frozen=True, slots=True)
class ModelExchange:
    """One request of an evaluation to the model, and the reply it read."""

    requested_at: datetime
    """When the request was first sent (timezone-aware); retries are part of it."""
    replied_at: datetime
    """When the reply was read (timezone-aware): the turn's tool calls start after it."""
    usage: TokenUsage
    """Tokens this request used."""
    tool_calls: tuple[str, ...]
    """The names of the tools the model called in its reply, in order."""
    stop_reason: StopReason = "end"
    """Why the reply ended (see ``StopReason``)."""
    raw_stop_reason: str | None = None
    """The provider's own value for it, or ``None`` when it gave none."""
    provider_tools: tuple[ProviderToolCall, ...] = ()
    """The provider's own tools that ran within the reply, in order."""


@dataclass(frozen=True, slots=True)
class PromptExecuted:
    """An evaluation ended: with an answer, or stopped by ``error``."""

    prompt_name: str
    """The prompt's name."""
    adapter: str
    """Which adapter evaluated it."""
    text: RawText | None
    """The model's final text, if any, as received (saved escaped if it holds a lone
    surrogate, so a session always saves)."""
    output: Any
    """The parsed structured output; ``None`` for a text prompt or a failure."""
    turns: int
    """Requests sent to the model."""
    tool_calls: int
    """Tool calls run."""
    usage: TokenUsage
    """Tokens used by every request of the evaluation."""
    started_at: datetime
    """When the evaluation started (timezone-aware)."""
    finished_at: datetime
    """When it ended (timezone-aware)."""
    error: RawText | None = None
    """Why the evaluation stopped, or ``None`` when it succeeded."""
    phase: EvaluationPhase | None = None
    """Where it stopped (see ``PromptEvaluationError.phase``), or ``None``."""
    exchanges: tuple[ModelExchange, ...] = ()
    """Each request that got a reply, in order: the evaluation's turns."""

    @property
    def success(self) -> bool:
        """Whether the evaluation produced an answer."""
        return self.error is None

    @property
    def duration(self) -> timedelta:
        """How long the evaluation took."""
        return self.finished_at - self.started_at
