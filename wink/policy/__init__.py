"""Tool policies: declarative constraints on when tools may run, with state in the session.

Each name is imported on first use, so that the executor, which needs only
``PolicyDecision`` and ``ToolPolicy``, does not load the built-in policies.
"""

from typing import TYPE_CHECKING, Any

from wink._lazy_exports import exported

if TYPE_CHECKING:
    from wink.policy.approval import Approval, ApprovalPolicy, ApprovalRequest
    from wink.policy.decision import PolicyDecision, ToolPolicy
    from wink.policy.read_before_write import ReadBeforeWritePolicy
    from wink.policy.sequential import SequentialDependencyPolicy
    from wink.policy.state import PolicyState, load_policy_state, record_policy_state

__all__ = [
    "Approval",
    "ApprovalPolicy",
    "ApprovalRequest",
    "PolicyDecision",
    "PolicyState",
    "ReadBeforeWritePolicy",
    "SequentialDependencyPolicy",
    "ToolPolicy",
    "load_policy_state",
    "record_policy_state",
]

# Where each public name lives; read by ``__getattr__`` on first access.
_HOMES: dict[str, str] = {
    "Approval": "wink.policy.approval",
    "ApprovalPolicy": "wink.policy.approval",
    "ApprovalRequest": "wink.policy.approval",
    "PolicyDecision": "wink.policy.decision",
    "ToolPolicy": "wink.policy.decision",
    "ReadBeforeWritePolicy": "wink.policy.read_before_write",
    "SequentialDependencyPolicy": "wink.policy.sequential",
    "PolicyState": "wink.policy.state",
    "load_policy_state": "wink.policy.state",
    "record_policy_state": "wink.policy.state",
}


def __getattr__(name: str) -> Any:
    return exported(__name__, globals(), _HOMES, name)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
