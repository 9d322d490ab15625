"""Human approval: ``ApprovalPolicy`` defers calls to a person, ``Approval`` is the
person's decision, ``ApprovalRequest`` a call awaiting one."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from wink._error_text import safe_repr
from wink.errors import PromptValidationError
from wink.policy.decision import PolicyDecision
from wink.tools import Tool, ToolContext, ToolResult

__all__ = ["Approval", "ApprovalPolicy", "ApprovalRequest"]

_ALLOW = PolicyDecision.allow()


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """A call that awaits a person's decision."""

    call_id: str
    """The provider's id for the call: the key of its decision."""
    tool_name: str
    """The tool called."""
    arguments: str
    """The arguments the model sent, as JSON text."""
    reason: str
    """Why the policy asks (``PolicyDecision.defer``'s reason)."""


@dataclass(frozen=True, slots=True)
class Approval:
    """A person's decision on one call: ``Approval.approve()``,
    ``Approval.approve(arguments={...})`` (run it with edited arguments) or
    ``Approval.deny(reason)`` (the model is told ``reason``)."""

    approved: bool
    """Whether the call runs."""
    reason: str | None = None
    """Why it was denied, for the model."""
    arguments: Mapping[str, Any] | None = None
    """Arguments to run the call with instead of the model's."""

    def __post_init__(self) -> None:
        if type(self.approved) is not bool:
            raise TypeError(f"Approval.approved must be a bool, got {safe_repr(self.approved)}")
        if not self.approved and not (isinstance(self.reason, str) and self.reason):
            raise TypeError("a denial needs a reason for the model: Approval.deny('why')")
        if self.arguments is not None and not isinstance(self.arguments, Mapping):
            raise TypeError(
                f"Approval.arguments must be a mapping of the tool's fields, got "
                f"{safe_repr(self.arguments)[:80]}"
            )

    @classmethod
    def approve(cls, arguments: Mapping[str, Any] | None = None) -> Approval:
        """Run the call, with ``arguments`` instead of the model's when given."""
        return cls(approved=True, arguments=None if arguments is None else dict(arguments))

    @classmethod
    def deny(cls, reason: str) -> Approval:
        """Do not run the call; the model is told ``reason``."""
        return cls(approved=False, reason=reason)


def _always(tool: Tool[Any, Any], params: Any) -> bool:
    return True


@dataclass(frozen=True)
class ApprovalPolicy:
    """Defers the calls of ``tools`` (every tool it governs when ``None``) for which
    ``when(tool, params)`` is true to a person (``PolicyDecision.defer``)."""

    tools: frozenset[str] | None = None
    """The tools whose calls need approval; ``None``: all those it governs."""
    when: Callable[[Tool[Any, Any], Any], bool] = _always
    """Whether this call needs approval (e.g. an amount over a limit)."""
    name: str = "approval"
    """Names the policy in messages."""
    _tools: frozenset[str] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        tools = None if self.tools is None else frozenset(_names(self.tools))
        object.__setattr__(self, "tools", tools)
        object.__setattr__(self, "_tools", tools)

    def check_tools(self, tool_names: frozenset[str], governed: frozenset[str]) -> None:
        """Refuse tools the prompt lacks or this policy does not govern (never asked)."""
        if self._tools is None:
            return
        unknown = sorted(self._tools - governed)
        if unknown:
            raise PromptValidationError(
                f"ApprovalPolicy {self.name!r} would never be asked about "
                f"{', '.join(map(repr, unknown))}: it governs "
                f"{', '.join(sorted(governed)) or 'no tool'}; attach it where those tools are"
            )

    def check(self, tool: Tool[Any, Any], params: Any, *, context: ToolContext) -> PolicyDecision:
        """Defer a call of a listed tool that ``when`` picks; allow the others."""
        if self._tools is not None and tool.name not in self._tools:
            return _ALLOW
        if not self.when(tool, params):
            return _ALLOW
        return PolicyDecision.defer(f"policy {self.name!r} asks a person to approve {tool.name!r}")

    def on_result(
        self, tool: Tool[Any, Any], params: Any, result: ToolResult[Any], *, context: ToolContext
    ) -> None:
        """Nothing to record."""


def _names(tools: Iterable[str]) -> Iterable[str]:
    if isinstance(tools, str):
        raise PromptValidationError(
            f"ApprovalPolicy(tools=...) takes a set of tool names, got the string {tools!r}"
        )
    return tools
