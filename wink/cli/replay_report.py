"""What ``wink replay`` found, call by call: the outcomes, their differences, and the
report as text or JSON."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from wink.cli.failure import printable

__all__ = [
    "ABSENT",
    "OUTCOMES",
    "Difference",
    "FailOn",
    "Outcome",
    "ReplayReport",
    "ReplayedCall",
    "StateSource",
    "differences",
]

Outcome = Literal["unchanged", "refused", "denied", "changed-result", "changed-state", "accepted"]
"""How a recorded call fares against the target's current tools:

- ``unchanged``: nothing compared differs;
- ``refused``: its arguments are refused by the tool's current contract (or the tool is gone);
- ``denied``: a policy now denies it;
- ``changed-result``: it runs, with a different result;
- ``changed-state``: it runs, with the same result, and changes the state differently;
- ``accepted``: it was refused when recorded, and the contract now accepts it.
"""
OUTCOMES: tuple[Outcome, ...] = (
    "unchanged",
    "refused",
    "denied",
    "changed-result",
    "changed-state",
    "accepted",
)
FailOn = Literal["refused", "changed", "any"]
"""The least severe outcome that fails ``wink replay``."""
_FAILING: dict[FailOn, frozenset[Outcome]] = {
    "refused": frozenset({"refused", "denied"}),
    "changed": frozenset({"refused", "denied", "changed-result", "changed-state"}),
    "any": frozenset(OUTCOMES) - {"unchanged"},
}
StateSource = Literal["history", "replayed"]
"""Where the state before each call came from: the session's recorded versions, or the
calls replayed in order from an empty session (a session saved without history)."""

_MAX_DIFFERENCES = 20
"""Differences listed per call; more are counted, not listed."""
_SHOWN_VALUE = 80
"""Characters of a value shown on a text report's line."""


class _Absent:
    """The side of a difference where the value does not exist."""

    def __repr__(self) -> str:
        return "absent"


ABSENT: Any = _Absent()
"""Stands for a field or slice that one side of a difference lacks."""


@dataclass(frozen=True, slots=True)
class Difference:
    """One place where the replay differs from the record."""

    path: str
    """Where: ``result.value.total``, ``state[shop:Note][0].text``."""
    recorded: Any
    """The recorded JSON value, or ``ABSENT``."""
    now: Any
    """The replayed JSON value, or ``ABSENT``."""

    def text(self) -> str:
        """``path: recorded X, now Y`` with each value cut to a line's worth."""
        return f"{self.path}: recorded {_shown(self.recorded)}, now {_shown(self.now)}"

    def to_json(self) -> dict[str, Any]:
        """The difference as JSON; a side that is absent is left out."""
        document: dict[str, Any] = {"path": self.path}
        if self.recorded is not ABSENT:
            document["recorded"] = self.recorded
        if self.now is not ABSENT:
            document["now"] = self.now
        return document


@dataclass(frozen=True, slots=True)
class ReplayedCall:
    """One recorded call and how it fares now."""

    number: int
    """Its 1-based position among the session's calls."""
    tool: str
    """The tool name the model sent."""
    call_id: str | None
    """The provider's id for the call."""
    outcome: Outcome
    """How it fares (see ``Outcome``)."""
    reason: str = ""
    """For ``refused`` and ``denied``: why, in the contract's or the policy's words."""
    differences: tuple[Difference, ...] = ()
    """For ``changed-result``, ``changed-state`` and ``accepted``: what differs."""
    more_differences: int = 0
    """Differences found beyond those listed."""
    notes: tuple[str, ...] = ()
    """What the replay of this call could not do as recorded (a slice the current types
    cannot read, left out of the state)."""

    def label(self) -> str:
        """``call-2 add_item (call_7)``, control characters escaped."""
        called = f"call-{self.number} {self.tool}"
        return printable(called if self.call_id is None else f"{called} ({self.call_id})")

    def lines(self) -> Iterator[str]:
        """The call's report lines: its outcome, then one indented line per difference."""
        head = f"{self.label()}: {self.outcome}"
        yield printable(f"{head}: {_one_line(self.reason)}") if self.reason else head
        for difference in self.differences:
            yield printable(f"  {difference.text()}")
        if self.more_differences:
            yield f"  ... and {self.more_differences} more"
        for note in self.notes:
            yield printable(f"  note: {_one_line(note)}")

    def to_json(self) -> dict[str, Any]:
        """The call's entry of the JSON report."""
        return {
            "call": self.number,
            "tool": self.tool,
            "call_id": self.call_id,
            "outcome": self.outcome,
            "reason": self.reason,
            "differences": [difference.to_json() for difference in self.differences],
            "more_differences": self.more_differences,
            "notes": list(self.notes),
        }


@dataclass(frozen=True, slots=True)
class ReplayReport:
    """Every recorded call of a session, replayed against a target."""

    session: str
    """Which session: its file, or ``URL#ID`` in a store."""
    target: str
    """The target as given."""
    ran: bool
    """Whether the calls were run (``--run``), not only their arguments checked."""
    state: StateSource | None
    """Where the state before each call came from, when they were run."""
    calls: tuple[ReplayedCall, ...]
    """Each call, in the order recorded."""

    def counts(self) -> dict[Outcome, int]:
        """How many calls had each outcome (every outcome listed, zeros included)."""
        counts = dict.fromkeys(OUTCOMES, 0)
        for call in self.calls:
            counts[call.outcome] += 1
        return counts

    def failing(self, fail_on: FailOn) -> tuple[ReplayedCall, ...]:
        """The calls whose outcome is at or above ``fail_on``."""
        chosen = _FAILING[fail_on]
        return tuple(call for call in self.calls if call.outcome in chosen)

    def summary(self) -> str:
        """The report's first line: what was replayed against what, and the counts."""
        counted = ", ".join(f"{count} {outcome}" for outcome, count in self.counts().items())
        calls = f"{len(self.calls)} call" + ("" if len(self.calls) == 1 else "s")
        if not self.ran:
            how = "checked the arguments of"
            where = "; --run also compares results and state"
        else:
            how = "replayed"
            where = (
                "; state before each call from the recorded history"
                if self.state == "history"
                else "; no history saved: state replayed call by call from an empty session, "
                "state changes not compared"
            )
        return printable(f"{how} {calls} of {self.session} against {self.target}: {counted}{where}")

    def lines(self) -> Iterator[str]:
        """The text report: the summary, then each call."""
        yield self.summary()
        for call in self.calls:
            yield from call.lines()

    def to_json(self, fail_on: FailOn) -> dict[str, Any]:
        """The JSON report."""
        return {
            "session": self.session,
            "target": self.target,
            "run": self.ran,
            "state": self.state,
            "counts": self.counts(),
            "fail_on": fail_on,
            "failing": len(self.failing(fail_on)),
            "calls": [call.to_json() for call in self.calls],
        }


def differences(path: str, recorded: Any, now: Any) -> tuple[tuple[Difference, ...], int]:
    """Where two JSON values differ, deepest first reached, and how many more there are
    beyond the ones listed."""
    found: list[Difference] = []
    _compare(path, recorded, now, found)
    return tuple(found[:_MAX_DIFFERENCES]), max(0, len(found) - _MAX_DIFFERENCES)


def _compare(path: str, recorded: Any, now: Any, found: list[Difference]) -> None:
    if isinstance(recorded, dict) and isinstance(now, dict):
        for key in [*recorded, *(key for key in now if key not in recorded)]:
            _compare(f"{path}.{key}", recorded.get(key, ABSENT), now.get(key, ABSENT), found)
        return
    if isinstance(recorded, list) and isinstance(now, list) and len(recorded) == len(now):
        for index, (before, after) in enumerate(zip(recorded, now, strict=True)):
            _compare(f"{path}[{index}]", before, after, found)
        return
    if not _same(recorded, now):
        found.append(Difference(path, recorded, now))


def _same(first: Any, second: Any) -> bool:
    # JSON's true is not its 1, though Python's True == 1.
    return type(first) is type(second) and first == second


def _shown(value: Any) -> str:
    if value is ABSENT:
        return "absent"
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= _SHOWN_VALUE else text[: _SHOWN_VALUE - 3] + "..."


def _one_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    joined = "; ".join(lines)
    return joined if len(joined) <= 500 else joined[:497] + "..."
