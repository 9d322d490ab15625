"""What a stress family reports: how many inputs it tried and what went wrong."""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

__all__ = ["FamilyReport"]

#: Counts that must be zero for a campaign to pass.
MUST_BE_ZERO = ("escapes", "lost_events", "uncaught", "state_leaks")


@dataclass
class FamilyReport:
    """One family's tally; every count in ``MUST_BE_ZERO`` must end at 0."""

    family: str
    inputs: int = 0
    escapes: int = 0
    """Reads, writes or deletions that reached outside the filesystem root."""
    lost_events: int = 0
    """Calls that left no ``ToolInvoked`` (or more than one), or dispatched events lost."""
    uncaught: int = 0
    """Exceptions that left ``execute`` although the failure table says they must not."""
    state_leaks: int = 0
    """Failed calls whose session or resource changes survived."""
    worst_seconds: float = 0.0
    worst_bytes: int = 0
    examples: list[str] = field(default_factory=list)
    """A few descriptions of what went wrong, for the printout."""

    def failures(self) -> dict[str, int]:
        """The must-be-zero counts that are not zero."""
        return {name: getattr(self, name) for name in MUST_BE_ZERO if getattr(self, name)}

    def note(self, kind: str, description: str) -> None:
        """Count one defect of ``kind`` (a ``MUST_BE_ZERO`` name) and keep its description."""
        setattr(self, kind, getattr(self, kind) + 1)
        if len(self.examples) < 5:
            self.examples.append(f"{kind}: {description}")

    @contextmanager
    def measure(self, *, memory: bool = False) -> Iterator[None]:
        """Count one input and keep the worst time (and, with ``memory``, peak bytes)."""
        if memory:
            tracemalloc.start()
        start = time.perf_counter()
        try:
            yield
        finally:
            self.inputs += 1
            self.worst_seconds = max(self.worst_seconds, time.perf_counter() - start)
            if memory:
                _, peak = tracemalloc.get_traced_memory()
                tracemalloc.stop()
                self.worst_bytes = max(self.worst_bytes, peak)


#: A family: ``run(scale)`` tries about ``scale`` times its quick number of inputs.
Family = Callable[[float], FamilyReport]
