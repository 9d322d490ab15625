"""``PolicyState``: what a policy remembers, kept in a session slice."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from wink.runtime.session import Session

__all__ = ["PolicyState", "load_policy_state", "record_policy_state"]


@dataclass(frozen=True, slots=True)
class PolicyState:
    """The tools (and tool, key pairs) that succeeded under one policy.

    The ``PolicyState`` slice holds one value per policy name; it is a ``STATE``
    slice, so snapshots, restores and ``session.reset()`` apply to it.
    """

    policy_name: str
    """The policy this state belongs to."""
    invoked_tools: frozenset[str] = frozenset()
    """Tools that succeeded."""
    invoked_keys: frozenset[tuple[str, str]] = frozenset()
    """``(tool, key)`` pairs that succeeded, such as ``("read_file", "docs/a.txt")``."""


def load_policy_state(session: Session | None, policy_name: str) -> PolicyState:
    """The state of ``policy_name`` in ``session`` (empty when nothing is recorded)."""
    if session is None:
        return PolicyState(policy_name)
    # The slice's values straight from the session: no accessor per call on this hot path.
    return _find(session._values(PolicyState), policy_name)


def record_policy_state(
    session: Session, policy_name: str, tool: str, key: str | None = None
) -> None:
    """Add ``tool`` (and the pair ``(tool, key)`` when given) to the policy's state."""
    if not _knows(load_policy_state(session, policy_name), tool, key):
        _add(session, policy_name, tool, key)  # else nothing new: repeated calls write nothing


class _StateReader:
    """One policy's state in a session, read in O(1) while its slice is unchanged.

    A slice's values never change once built, so the state found in the values read
    last is still the answer while the session holds those very values; any update,
    restore or reset gives the slice new values, and the next read looks again. The
    reader keeps the values it read last alive, so their identity cannot be reused
    by other values. One reader may serve any number of sessions and threads: it
    remembers one read, and a miss costs a scan of the slice, as
    ``load_policy_state`` does.
    """

    __slots__ = ("_empty", "_last", "policy_name")

    def __init__(self, policy_name: str) -> None:
        """A reader of the state of ``policy_name``."""
        self.policy_name = policy_name
        """The policy whose state this reads."""
        self._empty = PolicyState(policy_name)
        # (the slice's values, the state found in them); ``None``: nothing read yet.
        self._last: tuple[object, PolicyState] = (None, self._empty)

    def load(self, session: Session | None) -> PolicyState:
        """What ``load_policy_state(session, self.policy_name)`` returns."""
        if session is None:
            return self._empty
        values = session._values(PolicyState)
        last = self._last  # read once: another thread may replace it meanwhile
        if last[0] is values:
            return last[1]
        state = _find(values, self.policy_name)
        self._last = (values, state)
        return state

    def record(self, session: Session, tool: str, key: str | None = None) -> None:
        """What ``record_policy_state(session, self.policy_name, tool, key)`` does."""
        values = session._values(PolicyState)  # ``load``, inlined: this runs on every call
        last = self._last
        known = last[1] if last[0] is values else self.load(session)
        if not _knows(known, tool, key):
            _add(session, self.policy_name, tool, key)


def _knows(state: PolicyState, tool: str, key: str | None) -> bool:
    """Whether ``state`` already records ``tool`` (and ``(tool, key)`` when given)."""
    return tool in state.invoked_tools and (key is None or (tool, key) in state.invoked_keys)


def _add(session: Session, policy_name: str, tool: str, key: str | None) -> None:
    """Add ``tool`` (and ``(tool, key)``) to the policy's value in the slice, atomically."""

    def add(values: Iterable[PolicyState]) -> list[PolicyState]:
        others = [state for state in values if state.policy_name != policy_name]
        previous = _find(values, policy_name)
        keys = previous.invoked_keys if key is None else previous.invoked_keys | {(tool, key)}
        return [*others, PolicyState(policy_name, previous.invoked_tools | {tool}, keys)]

    session[PolicyState].update(add)


def _find(values: Iterable[PolicyState], policy_name: str) -> PolicyState:
    for state in values:
        if state.policy_name == policy_name:
            return state
    return PolicyState(policy_name)
