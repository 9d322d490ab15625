"""The ``ToolPolicy`` protocol and the ``PolicyDecision`` a check returns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from wink._error_text import safe_repr
from wink.tools import Tool, ToolContext, ToolResult

__all__ = ["PolicyDecision", "ToolPolicy"]


@dataclass(frozen=True, slots=True)
class PolicyDecision:
    """Whether a tool call may proceed, and why not."""

    allowed: bool
    """``True`` lets the call run."""
    reason: str | None = None
    """Why the call was denied (shown to the model), or why it awaits a person."""
    deferred: bool = False
    """A person must decide (``defer``): an evaluation stops before the call runs and
    raises ``ApprovalPending``; a call that cannot wait is denied."""

    def __post_init__(self) -> None:
        # The executor runs a call only when ``allowed is True``: refuse anything
        # that reads like a decision but is not one (``allowed="no"`` is truthy).
        if type(self.allowed) is not bool:
            raise TypeError(
                f"PolicyDecision.allowed must be a bool, got {type(self.allowed).__name__} "
                f"{safe_repr(self.allowed)[:80]}"
            )
        if type(self.deferred) is not bool or (self.deferred and self.allowed):
            raise TypeError(
                "PolicyDecision.deferred must be a bool, and a deferred decision does not allow"
            )
        if self.reason is not None and not isinstance(self.reason, str):
            raise TypeError(
                f"PolicyDecision.reason must be a str or None, got {type(self.reason).__name__}"
            )

    @classmethod
    def allow(cls) -> PolicyDecision:
        """Let the call run."""
        return _ALLOW

    @classmethod
    def deny(cls, reason: str) -> PolicyDecision:
        """Refuse the call; ``reason`` tells the model what to do instead."""
        return cls(allowed=False, reason=reason)

    @classmethod
    def defer(cls, reason: str) -> PolicyDecision:
        """Ask a person: the evaluation stops before the call runs, until a decision
        comes (``adapter.resume``); ``reason`` says why to the person."""
        return cls(allowed=False, reason=reason, deferred=True)


_ALLOW = PolicyDecision(allowed=True)


@runtime_checkable
class ToolPolicy(Protocol):
    """A constraint on when tools may run; its state lives in the session (``PolicyState``).

    A policy may also define
    ``check_tools(tool_names: frozenset[str], governed: frozenset[str]) -> None``: the
    executor calls it once, when it is built, with the names of every tool of the
    prompt's template and of the tools this policy governs (those of the sections it
    is attached to and their children, or all of them for a prompt policy), and it
    raises ``PromptValidationError`` for a configuration they cannot satisfy.
    """

    @property
    def name(self) -> str:
        """Identifies the policy and its ``PolicyState``."""
        ...

    def check(self, tool: Tool[Any, Any], params: Any, *, context: ToolContext) -> PolicyDecision:
        """Decide before the handler runs; must not change any state.

        Fail-closed: anything but a ``PolicyDecision`` whose ``allowed`` is ``True``
        (``None`` included) denies the call, and so does raising.
        """
        ...

    def on_result(
        self, tool: Tool[Any, Any], params: Any, result: ToolResult[Any], *, context: ToolContext
    ) -> None:
        """Record a successful call (rolled back with the call if it later fails)."""
        ...
