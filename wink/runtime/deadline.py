"""``Deadline``: a wall-clock limit for an evaluation, with an injectable clock."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from wink.errors import DeadlineExceededError

__all__ = ["Clock", "Deadline", "utc_now"]

Clock = Callable[[], datetime]
"""Returns the current time, timezone-aware."""


utc_now: Clock = functools.partial(datetime.now, UTC)
"""The current time in UTC (``datetime.now(UTC)``, with no Python frame of its own: it
is read twice per tool call)."""


@dataclass(frozen=True, slots=True)
class Deadline:
    """The moment an evaluation must stop; checked before each tool call."""

    expires_at: datetime
    """When the deadline passes (timezone-aware)."""
    clock: Clock = field(default=utc_now, compare=False, repr=False)
    """Where the current time comes from; replace it in tests."""

    def __post_init__(self) -> None:
        if not isinstance(self.expires_at, datetime) or self.expires_at.utcoffset() is None:
            raise ValueError(
                f"Deadline.expires_at must be a timezone-aware datetime, got {self.expires_at!r}"
            )

    @classmethod
    def after(cls, duration: timedelta | float, *, clock: Clock = utc_now) -> Deadline:
        """A deadline ``duration`` (a timedelta or seconds) from now."""
        delta = duration if isinstance(duration, timedelta) else timedelta(seconds=duration)
        return cls(clock() + delta, clock)

    def remaining(self) -> timedelta:
        """Time left; negative once expired."""
        return self.expires_at - self.clock()

    @property
    def expired(self) -> bool:
        """Whether the deadline has passed."""
        return self.clock() >= self.expires_at

    def check(self, activity: str = "the evaluation") -> None:
        """Raise ``DeadlineExceededError`` naming ``activity`` when expired."""
        now = self.clock()
        if now >= self.expires_at:
            raise DeadlineExceededError(
                f"deadline {self.expires_at.isoformat()} passed before {activity} "
                f"(now {now.isoformat()})"
            )
