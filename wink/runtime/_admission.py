"""Admitting a tool call: look its tool up, parse its arguments, build its context,
save the state (``_save``), then ask every policy and check the limits.

A call that is not admitted is recorded here, with why (an unknown tool, invalid
arguments, a state that could not be saved, a policy's denial); a denied call is
rolled back, since a policy may have changed state before it denied. Also here:
what each tool's calls need, resolved once per executor (``_Plan``), and the
policies' check of the prompt's tools when the executor is built.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from wink import telemetry
from wink._error_text import describe_error, error_message, safe_repr, type_label
from wink._lazy_logging import LazyLogger
from wink.contract import ContractViolation, describe_problems
from wink.contract.instances import plain_class
from wink.errors import PromptValidationError
from wink.policy.decision import PolicyDecision, ToolPolicy
from wink.prompt import Prompt, ToolBinding
from wink.resources import Snapshotable, ToolCallScope
from wink.runtime._transaction import (
    _PROPAGATED,
    _CannotStart,
    _close,
    _Controlled,
    _interrupted,
    _Prepared,
    _Resources,
    _Saved,
)
from wink.runtime._turns import CallTree, lock_of
from wink.runtime.call import ToolCall
from wink.tools import Retries, Tool, ToolContext, ToolResult

# The executor's steps log under the name of the module users know (and configure).
logger = LazyLogger("wink.runtime.executor")


@dataclass(frozen=True, slots=True)
class _Plan:
    """What ``execute`` needs for one tool, resolved once per executor."""

    tool: Tool[Any, Any]
    parse: Callable[[Any], Any]
    policies: tuple[ToolPolicy, ...]
    result_class: type[Any] | None
    """The declared result type when it is a plain class: then checks are ``isinstance``."""
    overlaps: bool
    """Whether its calls may overlap with others of a turn (a handler, not sequential,
    no policy)."""
    plain: bool
    """Whether ``execute`` may run it directly: it has a handler, a plain (not async)
    function, that its timeout (if any) does not put in a thread of its own."""
    awaitable: bool
    """Whether ``aexecute`` may run it directly: it has a handler, async or not in a thread."""
    retries: Retries | None
    """The tool's ``Retries``, or ``None``."""
    controlled: bool
    """Whether a timeout or retries govern its handler (``_invoke_controlled``)."""
    max_output: int | None
    """The most characters of its rendered value the model is shown: the tool's
    ``max_output_chars``, else the prompt's."""


class _Admission(_Controlled):
    """The executor's steps before the handler runs."""

    __slots__ = ()

    def _prepare(
        self, tree: CallTree, call: ToolCall, started_at: datetime
    ) -> _Prepared | ToolResult[Any]:
        """Everything before the handler runs: the call ready to run, or its recorded
        failure (unknown tool, invalid arguments, a refused start, a policy's denial)."""
        plan = self._plans.get(call.name)
        if plan is None:
            message = f"Unknown tool {safe_repr(call.name)}. Available tools: {self._available}."
            return self._record_failure(call, None, message, started_at)
        try:
            params = plan.parse(call.arguments)
        except BaseException as error:
            return self._unparsed(call, error, started_at)
        registry = self._resources
        if not self._scoped:
            context = self._context
            if context is None:
                context = self._context = self._new_context(registry)
            prepared = _Prepared(plan, params, context, registry, None, 0, tree, call, started_at)
            # Nothing to close on the way out: no build record, no call scope.
            outcome = self._saved_and_allowed(prepared)
            return prepared if outcome is None else outcome
        return self._prepare_scoped(tree, plan, params, call, started_at)

    def _unparsed(
        self, call: ToolCall, error: BaseException, started_at: datetime
    ) -> ToolResult[Any]:
        """Record a call whose arguments could not be parsed; an interruption (from a
        validator of the params type) is re-raised."""
        if isinstance(error, ContractViolation):
            problems = describe_problems(error.problems)
            message = f"Invalid arguments for tool {call.name!r}:\n{problems}"
            return self._record_failure(call, None, message, started_at)
        if isinstance(error, Exception):  # e.g. a decoded mapping holding values JSON cannot carry
            message = f"Invalid arguments for tool {call.name!r}: {describe_error(error)}"
            return self._record_failure(call, None, message, started_at)
        message = f"Tool {call.name!r} was interrupted by {describe_error(error)}"
        self._record_failure(call, None, message, started_at)
        raise error

    def _direct_ready(
        self, plan: _Plan, tree: CallTree, call: ToolCall, started_at: datetime
    ) -> tuple[Any, ToolContext, _Saved] | ToolResult[Any]:
        """A direct call's parsed params, context and saved state; or its recorded failure."""
        try:
            params = plan.parse(call.arguments)
        except BaseException as error:
            return self._unparsed(call, error, started_at)
        context = self._context
        if context is None:
            context = self._context = self._new_context(self._resources)
        try:
            saved = self._save(self._resources, tree)
        except BaseException as error:
            return self._unsaved(plan.tool, call, params, error, started_at)
        return params, context, saved

    def _prepare_scoped(
        self, tree: CallTree, plan: _Plan, params: Any, call: ToolCall, started_at: datetime
    ) -> _Prepared | ToolResult[Any]:
        """``_prepare`` for resources built on first use or scoped to the call, which
        take their turns when built, and a context of the call's own."""
        registry = self._resources

        def guard(built: Snapshotable) -> None:
            # A snapshotable built during the call takes its turn like the others.
            tree.acquire(lock_of(built), self._turn_timeout)

        mark = registry.open_build_mark(guard) if registry.lazy_singletons else 0
        scope: ToolCallScope | None = None
        try:
            if registry.needs_call_scope:
                scope = registry.tool_call_scope(guard)
            resources: _Resources = registry if scope is None else scope
            context = self._context if scope is None else None
            if context is None:
                context = self._new_context(resources)
                if scope is None:
                    self._context = context
        except BaseException:
            _close(registry, scope, call.name)
            raise
        prepared = _Prepared(plan, params, context, resources, scope, mark, tree, call, started_at)
        return self._admit(prepared)

    def _new_context(self, resources: _Resources) -> ToolContext:
        return ToolContext(
            prompt=self._prompt,
            rendered_prompt=self._rendered,
            adapter=self._adapter,
            session=self._session,
            deadline=self._deadline,
            budget_tracker=self._budget_tracker,
            resources=resources,
            heartbeat=self._heartbeat,
        )

    def _admit(self, prepared: _Prepared) -> _Prepared | ToolResult[Any]:
        """Save the state, then ask the policies: ``prepared`` when the handler may run,
        else the recorded failure (the call's resources then closed)."""
        try:
            outcome = self._saved_and_allowed(prepared)
        except BaseException:
            _close(self._resources, prepared.scope, prepared.call.name)
            raise
        if outcome is not None:
            _close(self._resources, prepared.scope, prepared.call.name)
            return outcome
        return prepared

    def _saved_and_allowed(self, prepared: _Prepared) -> ToolResult[Any] | None:
        plan, call, params, started_at = (
            prepared.plan,
            prepared.call,
            prepared.params,
            prepared.started_at,
        )
        tool = plan.tool
        if tool.handler is None:
            message = f"Tool {tool.name!r} has no handler; it cannot be called."
            return self._record_failure(call, params, message, started_at)
        # Saved before the policies run: a policy that changes state and then denies
        # (or raises) leaves nothing behind either.
        try:
            prepared.saved = self._save(prepared.resources, prepared.tree)
        except BaseException as error:
            return self._unsaved(tool, call, params, error, started_at)
        if not plan.policies and self._deadline is None and self._budget_tracker is None:
            return None
        try:
            refusal = self._refusal(plan, params, prepared.context, call.call_id)
        except BaseException as error:
            return self._on_error(prepared, error)
        if refusal is None:
            return None
        return self._denied(prepared, refusal)

    def _unsaved(
        self,
        tool: Tool[Any, Any],
        call: ToolCall,
        params: Any,
        error: BaseException,
        started_at: datetime,
    ) -> ToolResult[Any]:
        """Record a call whose state could not be saved (nothing changed); an
        interruption is re-raised."""
        if isinstance(error, _CannotStart):
            message = f"Tool {tool.name!r} could not start: {error}"
            return self._record_failure(call, params, message, started_at)
        self._record_failure(call, params, _interrupted(tool, error), started_at)
        raise error

    def _denied(self, prepared: _Prepared, refusal: str) -> ToolResult[Any]:
        """Roll back and record a call a policy (or a limit) refused."""
        telemetry.add_event(telemetry.DENIED, {"wink.reason": refusal})
        denial: ToolResult[Any] = ToolResult.error(refusal)
        return self._fail(prepared, denial, denied=True)

    def _deferral(self, plan: _Plan, call: ToolCall) -> str | None:
        """Why a policy defers ``call`` to a person, or ``None`` (it is allowed, denied,
        or its arguments do not parse: it then fails when it runs)."""
        try:
            params = plan.parse(call.arguments)
        except Exception:
            return None
        context = self._context or self._new_context(self._resources)
        for policy in plan.policies:
            try:
                decision = policy.check(plan.tool, params, context=context)
            except Exception:
                return None  # it denies when the call runs, saying why
            if not isinstance(decision, PolicyDecision) or decision.allowed is not True:
                if isinstance(decision, PolicyDecision) and decision.deferred:
                    return decision.reason or f"policy {_policy_name(policy)} asks a person"
                return None
        return None

    def _refusal(
        self, plan: _Plan, params: Any, context: ToolContext, call_id: str | None
    ) -> str | None:
        """Why the call may not start (a denial), or ``None``; raises to stop the evaluation.

        Fails closed: a policy that raises, or returns anything but a ``PolicyDecision``
        whose ``allowed`` is ``True``, denies.
        """
        tool = plan.tool
        for policy in plan.policies:
            try:
                decision = policy.check(tool, params, context=context)
            except _PROPAGATED:
                raise
            except Exception as error:
                name = _policy_name(policy)
                logger.info("policy %s failed on tool %r", name, tool.name, exc_info=error)
                return f"Policy {name} failed on tool {tool.name!r}: {describe_error(error)}"
            if not isinstance(decision, PolicyDecision):
                returned = "None" if decision is None else f"a {type_label(decision)}"
                return (
                    f"Tool {tool.name!r} was denied: policy {_policy_name(policy)} returned "
                    f"{returned}, not a PolicyDecision."
                )
            if decision.allowed is not True and decision.deferred:
                answer = None if call_id is None else self._approvals.get(call_id)
                if answer is not None and answer.approved:
                    continue
                if answer is not None:
                    return f"A person denied this call of tool {tool.name!r}: {answer.reason}"
                return (
                    f"Tool {tool.name!r} needs a person's approval ({decision.reason}); this "
                    "call could not wait for one, so it was not run"
                )
            if decision.allowed is not True:
                reason = decision.reason
                if isinstance(reason, str) and reason:
                    return reason
                return f"Policy {_policy_name(policy)} denied tool {tool.name!r}."
        if self._deadline is not None or self._budget_tracker is not None:
            self._check_limits(f"tool {tool.name!r} could start")
        return None


def _plan_of(binding: ToolBinding, max_output_chars: int | None = None) -> _Plan:
    tool = binding.tool
    # A policy attached at several levels is asked once.
    unique = tuple({id(policy): policy for policy in binding.policies}.values())
    for policy in unique:
        if not isinstance(policy, ToolPolicy):
            raise PromptValidationError(
                f"tool {tool.name!r} (section {binding.section_path}): {safe_repr(policy)} is "
                "not a ToolPolicy (it needs name, check(tool, params, *, context) and "
                "on_result(tool, params, result, *, context))"
            )
    retries = tool.retries if isinstance(tool.retries, Retries) else None
    controlled = tool.timeout is not None or retries is not None
    overlaps = tool.handler is not None and not tool.sequential and not unique
    # The direct phases run a handler on the caller's thread (or loop) and take the
    # general path's attempts only once one failed: a timeout or retries cost nothing
    # there until they act.
    in_thread = tool.in_thread and tool.timeout is not None
    plain = tool.handler is not None and not tool.is_async and not in_thread
    awaitable = tool.handler is not None and (
        tool.awaited_handler is not None or not tool.in_thread
    )
    limit = tool.max_output_chars if tool.max_output_chars is not None else max_output_chars
    return _Plan(
        tool,
        tool.params_contract.parse,
        unique,
        plain_class(tool.result_type),
        overlaps,
        plain,
        awaitable,
        retries,
        controlled,
        limit,
    )


def _policy_name(policy: object) -> str:
    """The policy's name as shown in messages (quoted), even when ``name`` is broken."""
    try:
        name = policy.name  # type: ignore[attr-defined]  # any object may be passed as a policy
    except Exception:
        return f"<{type_label(policy)} whose name raised>"
    return safe_repr(name)


def _validate_policies(prompt: Prompt) -> None:
    """Let each policy that has ``check_tools(tool_names, governed)`` check the prompt's tools.

    Every policy of the template is asked, wherever it is attached. The names are
    those of every tool the template declares, enabled or not: a policy may name a
    tool that another render of the prompt enables. ``governed`` holds the tools whose
    calls the policy is asked about: those of its sections and their children.
    """
    template = prompt.template
    tool_names = frozenset(tool.name for tool in template.tools)
    governed: dict[int, set[str]] = {}
    for name in tool_names:
        for policy in template.binding(name).policies:
            governed.setdefault(id(policy), set()).add(name)
    for policy, places in _attachments(prompt).values():
        # Not ``validate``: pydantic models (a natural way to write a policy) have one.
        check_tools = getattr(policy, "check_tools", None)
        if not callable(check_tools):
            continue
        where = " and ".join(places)
        try:
            check_tools(tool_names, frozenset(governed.get(id(policy), ())))
        except PromptValidationError as error:
            raise PromptValidationError(
                f"prompt {prompt.name!r}, policy attached to {where}: {error_message(error)}"
            ) from None
        except Exception as error:
            raise PromptValidationError(
                f"prompt {prompt.name!r}, policy attached to {where}: check_tools(tool_names, "
                f"governed) failed: {describe_error(error)}"
            ) from error


def _attachments(prompt: Prompt) -> dict[int, tuple[Any, list[str]]]:
    """Each distinct policy of the template, with where it is attached, in tree order."""
    found: dict[int, tuple[Any, list[str]]] = {}
    attached = [
        *((node.section.policies, f"section {node.path_text}") for node in prompt.template.nodes),
        (prompt.template.policies, "the prompt"),
    ]
    for policies, place in attached:
        for policy in policies:
            found.setdefault(id(policy), (policy, []))[1].append(place)
    return found
