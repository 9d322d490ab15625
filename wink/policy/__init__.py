"""Tool policies: declarative constraints on when tools may run, with state in the session."""

from wink.policy.decision import PolicyDecision, ToolPolicy
from wink.policy.read_before_write import ReadBeforeWritePolicy
from wink.policy.sequential import SequentialDependencyPolicy
from wink.policy.state import PolicyState, load_policy_state, record_policy_state

__all__ = [
    "PolicyDecision",
    "PolicyState",
    "ReadBeforeWritePolicy",
    "SequentialDependencyPolicy",
    "ToolPolicy",
    "load_policy_state",
    "record_policy_state",
]
