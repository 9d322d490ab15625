"""Per-tool controls the executor applies around a handler: ``Retries`` for an
idempotent tool, the ``ToolRetry`` a handler raises to have the model try again,
and the cut of a result's text to a tool's ``max_output_chars``."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from wink._error_text import safe_repr

__all__ = ["Retries", "ToolRetry", "cut_output"]


class ToolRetry(Exception):
    """Raised by a handler to tell the model to call again differently.

    The call fails with exactly ``message`` as the model's text and is rolled back;
    the executor never retries it by itself (``Retries`` re-runs the same arguments,
    for transient errors; this asks the model for new ones).
    """

    def __init__(self, message: str) -> None:
        if not isinstance(message, str) or not message:
            raise TypeError(f"ToolRetry needs a non-empty message, got {safe_repr(message)[:80]}")
        super().__init__(message)
        self.message = message
        """What the model is told to do instead."""


def _any_error(error: BaseException) -> bool:
    return True


@dataclass(frozen=True, slots=True)
class Retries:
    """How an idempotent tool's failed attempts are tried again.

    After attempt ``n`` fails with an exception ``when(error)`` accepts (any
    ``Exception`` by default, a timeout included), the attempt is rolled back, and the
    executor waits ``backoff * 2**(n-1)`` seconds (at most ``max_backoff``), plus up to
    ``jitter`` of that at random, before the next one. The call keeps one
    ``ToolInvoked``, whose ``earlier_attempts`` say why each earlier attempt failed. A
    result the handler returns, even a failed one, is never retried; neither is
    ``ToolRetry``, an interruption, a sync handler still running in its own thread past
    its timeout, or anything that stops the evaluation. No wait outlives the deadline.
    """

    attempts: int = 3
    """Attempts in all, the first included (2 or more)."""
    backoff: float = 0.1
    """Seconds to wait after the first failed attempt."""
    max_backoff: float = 5.0
    """The longest wait between two attempts, in seconds."""
    jitter: float = 0.1
    """At most this fraction of the wait is added at random, so that callers that
    failed together do not all retry together."""
    when: Callable[[BaseException], bool] = _any_error
    """Whether an error is worth another attempt (a transient one)."""

    def __post_init__(self) -> None:
        if isinstance(self.attempts, bool) or not isinstance(self.attempts, int):
            raise TypeError(f"Retries.attempts must be an int, got {safe_repr(self.attempts)}")
        if self.attempts < 2:
            raise ValueError(
                f"Retries.attempts counts every attempt and must be 2 or more, got {self.attempts}"
            )
        for name in ("backoff", "max_backoff", "jitter"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
                raise ValueError(f"Retries.{name} must be a number >= 0, got {safe_repr(value)}")
        if not callable(self.when):
            raise TypeError(f"Retries.when must be callable, got {safe_repr(self.when)}")

    def delay(self, failed: int) -> float:
        """Seconds to wait after the ``failed``-th failed attempt (from 1), jitter included."""
        base: float = min(self.backoff * 2.0 ** (failed - 1), self.max_backoff)
        return base + base * self.jitter * random.random()


_MARKER = "\n[cut: {shown} of {total} characters shown, {left} left out. {more}]"
_NO_PAGING = "Ask for less (a narrower request) to see the rest."


def cut_output(text: str, limit: int, more: str | None = None) -> str:
    """``text`` cut to its first ``limit`` characters, with a marker saying how much was
    left out and how to get more (``more``, where ``{shown}`` is the count shown);
    ``text`` itself when it fits.

    Never cuts between the two halves of a surrogate pair (text decoded from JSON or
    UTF-16 may hold one).
    """
    if len(text) <= limit:
        return text
    shown = limit
    if shown > 0 and "\ud800" <= text[shown - 1] <= "\udbff":
        shown -= 1  # a high surrogate: its low half is past the cut
    hint = _NO_PAGING if more is None else more.replace("{shown}", str(shown))
    marker = _MARKER.format(shown=shown, total=len(text), left=len(text) - shown, more=hint)
    return text[:shown] + marker
