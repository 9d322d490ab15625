"""The exception hierarchy of wink: one base, a few precise subclasses."""

from __future__ import annotations

from typing import Any, Literal

__all__ = [
    "DeadlineExceededError",
    "EvaluationPhase",
    "PromptEvaluationError",
    "PromptRenderError",
    "PromptValidationError",
    "ToolValidationError",
    "VisibilityExpansionRequired",
    "WinkError",
]


class WinkError(Exception):
    """Base class of every error wink raises on purpose."""


class PromptValidationError(WinkError):
    """A tool, section, prompt or contract is invalid; raised at construction."""


class PromptRenderError(WinkError):
    """A prompt could not be rendered (for example a required parameter is missing)."""


class ToolValidationError(WinkError):
    """A tool call's arguments or a handler's output broke the tool's contract."""


EvaluationPhase = Literal["request", "response", "tool", "budget", "deadline", "max_turns"]
"""Where an evaluation stopped: sending a request, reading a response, running a tool,
or which limit (the token budget, the deadline, the number of turns) it reached."""


class PromptEvaluationError(WinkError):
    """Evaluation of a prompt must stop; the executor re-raises it.

    ``phase`` says where the evaluation stopped (``None`` when raised outside an
    adapter's loop, for example by a handler), ``prompt_name`` which prompt, and
    ``provider_payload`` holds what the provider sent back (an error body or the
    response that could not be used), when there is one.
    """

    def __init__(
        self,
        message: str,
        *,
        phase: EvaluationPhase | None = None,
        prompt_name: str | None = None,
        provider_payload: Any = None,
    ) -> None:
        super().__init__(message)
        self.phase: EvaluationPhase | None = phase
        """Where the evaluation stopped."""
        self.prompt_name = prompt_name
        """The prompt being evaluated."""
        self.provider_payload = provider_payload
        """The provider's error body or unusable response, if any."""


class DeadlineExceededError(WinkError):
    """The deadline of an evaluation has passed."""


class VisibilityExpansionRequired(WinkError):  # the name is fixed by the spec
    """A handler asks for hidden sections to be expanded; the executor re-raises it."""
