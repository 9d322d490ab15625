"""``SequentialDependencyPolicy``: a tool runs only after its prerequisites succeeded."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from wink.errors import PromptValidationError
from wink.policy.decision import PolicyDecision
from wink.policy.state import _StateReader
from wink.tools import Tool, ToolContext, ToolResult

__all__ = ["SequentialDependencyPolicy"]

_ALLOW = PolicyDecision.allow()


@dataclass(frozen=True)
class SequentialDependencyPolicy:
    """Tool B requires tools A1, A2... to have succeeded first.

    ``SequentialDependencyPolicy(dependencies={"deploy": frozenset({"test", "build"})})``
    denies ``deploy`` until both ``test`` and ``build`` succeeded in this session.
    Every name must be a tool of the prompt, and every tool it names, dependent or
    prerequisite, must be governed by this policy, that is sit in the section it is
    attached to (or below), unless it is attached to the prompt: the policy records only
    the successes of the tools it governs, so a prerequisite in a sibling section would
    block its dependent forever. The executor calls ``check_tools`` when it is built
    and refuses such a prompt, saying where to attach the policy.
    A prerequisite that the current render does not enable makes its dependent tool
    unavailable, and the denial says so.
    """

    dependencies: Mapping[str, frozenset[str]]
    """Tool name to the tools that must succeed before it."""
    name: str = "sequential_dependency"
    """Names the policy's ``PolicyState``; give two instances distinct names to keep
    their histories apart."""
    # Built once, read by ``check`` and ``on_result`` on every call: the dependencies
    # as a plain dict (``dependencies`` is a read-only view of it) and the state reader.
    _required: dict[str, frozenset[str]] = field(init=False, repr=False, compare=False)
    _state: _StateReader = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        frozen = {tool: frozenset(required) for tool, required in self.dependencies.items()}
        _check_acyclic(frozen)
        object.__setattr__(self, "dependencies", MappingProxyType(frozen))
        object.__setattr__(self, "_required", frozen)
        object.__setattr__(self, "_state", _StateReader(self.name))

    def check_tools(self, tool_names: frozenset[str], governed: frozenset[str]) -> None:
        """Refuse dependencies naming tools the prompt lacks (a typo would block forever),
        dependent tools this policy does not govern (it would never be asked), and
        prerequisites it does not govern (it would never see them succeed)."""
        named = set(self.dependencies).union(*self.dependencies.values())
        unknown = sorted(named - tool_names)
        if unknown:
            raise PromptValidationError(
                f"SequentialDependencyPolicy {self.name!r}: dependencies name tools the prompt "
                f"does not have: {', '.join(map(repr, unknown))} "
                f"(its tools: {', '.join(sorted(tool_names)) or 'none'})"
            )
        ungoverned = sorted(set(self.dependencies) - governed)
        if ungoverned:
            raise PromptValidationError(
                f"SequentialDependencyPolicy {self.name!r} would never be asked about "
                f"{', '.join(map(repr, ungoverned))}: a policy governs only the tools of the "
                "section it is attached to and of that section's children (it governs "
                f"{', '.join(sorted(governed)) or 'no tool'}); attach it to a section holding "
                "those tools, or to the prompt"
            )
        unseen = sorted(named - set(self.dependencies) - governed)
        if unseen:
            waiting = sorted(
                tool for tool, required in self.dependencies.items() if required & set(unseen)
            )
            raise PromptValidationError(
                f"SequentialDependencyPolicy {self.name!r} would never see "
                f"{', '.join(map(repr, unseen))} succeed, so {', '.join(map(repr, waiting))} "
                "could never run: a policy records only the tools of the section it is "
                "attached to and of that section's children (it governs "
                f"{', '.join(sorted(governed)) or 'no tool'}); attach it to a section holding "
                f"{_and(frozenset(waiting + unseen))} (a parent of their sections), or to the "
                "prompt"
            )

    def check(self, tool: Tool[Any, Any], params: Any, *, context: ToolContext) -> PolicyDecision:
        """Deny the call while a prerequisite has not succeeded."""
        required = self._required.get(tool.name)
        if not required:
            return _ALLOW
        succeeded = self._state.load(context.session).invoked_tools
        if required <= succeeded:
            return _ALLOW
        missing = required - succeeded
        rendered = context.rendered_prompt
        unavailable = (
            frozenset() if rendered is None else frozenset(missing - rendered.bindings.keys())
        )
        if unavailable:
            return PolicyDecision.deny(
                f"Tool {tool.name!r} cannot run in this prompt: it needs {_and(unavailable)} "
                f"to succeed first, which {_is_or_are(unavailable)} not available in this "
                f"prompt; do not call {tool.name!r} again (policy {self.name!r})."
            )
        return PolicyDecision.deny(
            f"Tool {tool.name!r} cannot run yet: call {_and(missing)} successfully first "
            f"(policy {self.name!r})."
        )

    def on_result(
        self, tool: Tool[Any, Any], params: Any, result: ToolResult[Any], *, context: ToolContext
    ) -> None:
        """Record that ``tool`` succeeded."""
        if result.success and context.session is not None:
            self._state.record(context.session, tool.name)


def _and(names: frozenset[str]) -> str:
    ordered = sorted(names)
    return ordered[0] if len(ordered) == 1 else ", ".join(ordered[:-1]) + " and " + ordered[-1]


def _is_or_are(names: frozenset[str]) -> str:
    return "is" if len(names) == 1 else "are"


def _check_acyclic(dependencies: Mapping[str, frozenset[str]]) -> None:
    """Refuse dependencies that would make a tool wait for itself."""
    done: set[str] = set()

    def visit(tool: str, path: tuple[str, ...]) -> None:
        if tool in path:
            cycle = " -> ".join((*path[path.index(tool) :], tool))
            raise PromptValidationError(
                f"SequentialDependencyPolicy: dependency cycle {cycle} means none of these "
                "tools could ever run"
            )
        if tool in done:
            return
        for required in sorted(dependencies.get(tool, ())):
            visit(required, (*path, tool))
        done.add(tool)

    for tool in sorted(dependencies):
        visit(tool, ())
