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
    known = load_policy_state(session, policy_name)
    if tool in known.invoked_tools and (key is None or (tool, key) in known.invoked_keys):
        return  # nothing new: skip the update, which keeps repeated calls cheap

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
