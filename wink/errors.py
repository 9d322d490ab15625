"""The exception hierarchy of wink: one base, a few precise subclasses."""

from __future__ import annotations

__all__ = [
    "DeadlineExceededError",
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


class PromptEvaluationError(WinkError):
    """Evaluation of a prompt must stop; the executor re-raises it."""


class DeadlineExceededError(WinkError):
    """The deadline of an evaluation has passed."""


class VisibilityExpansionRequired(WinkError):  # the name is fixed by the spec
    """A handler asks for hidden sections to be expanded; the executor re-raises it."""
