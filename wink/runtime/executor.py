"""``ToolExecutor``: turns a model's tool call into a ``ToolResult``, transactionally.

A call goes: look the tool up among the rendered prompt's enabled tools, parse its
arguments with the tool's contract, ask every policy, check the deadline and budget,
build the ``ToolContext``, snapshot the session and the snapshotable resources, run
the handler, check its value against the tool's declared result type, render it
through the tool's result contract, let the policies record the success, and record
a ``ToolInvoked`` event. Any failure restores the snapshot first, so a failed call
leaves no state. Only the errors that must stop the evaluation propagate.

Calls take two reentrant locks, always in this order: the ``call_lock`` of the
prompt's resource registry, then the session's ``call_lock``. A failed call restores
the session and the shared resources, so no other call may run on either meanwhile;
the fixed order keeps executors from deadlocking on each other. A handler that runs
a nested call through another prompt's executor takes that registry's lock while
holding its session's lock, against the order: such nesting must not race with
calls on that other prompt.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from wink import telemetry
from wink.contract import ContractViolation, describe_problems, type_name
from wink.contract.instances import conforms, declared_class, plain_class
from wink.errors import (
    DeadlineExceededError,
    PromptEvaluationError,
    PromptValidationError,
    VisibilityExpansionRequired,
)
from wink.policy.decision import ToolPolicy
from wink.prompt import Prompt, RenderedPrompt, ToolBinding
from wink.resources import ResourceRegistry, Snapshotable, ToolCallScope
from wink.runtime.budget import BudgetExceededError, BudgetTracker
from wink.runtime.call import ToolCall
from wink.runtime.deadline import Clock, Deadline, utc_now
from wink.runtime.events import ToolInvoked
from wink.runtime.session import Session
from wink.runtime.snapshot import Snapshot
from wink.tools import Tool, ToolContext, ToolResult

if TYPE_CHECKING:
    from wink.adapters.protocol import ProviderAdapter

__all__ = ["ToolExecutor"]

logger = logging.getLogger(__name__)

_PROPAGATED = (
    VisibilityExpansionRequired,
    PromptEvaluationError,
    DeadlineExceededError,
    BudgetExceededError,
)

_Saved = tuple[Snapshot, list[tuple[Snapshotable, object]], int]
_Resources = ResourceRegistry | ToolCallScope


@dataclass(frozen=True, slots=True)
class _Plan:
    """What ``execute`` needs for one tool, resolved once per executor."""

    tool: Tool[Any, Any]
    parse: Callable[[Any], Any]
    policies: tuple[ToolPolicy, ...]
    result_class: type[Any] | None
    """The declared result type when it is a plain class: then checks are ``isinstance``."""


class ToolExecutor:
    """Runs tool calls for one prompt and session; never aborts for a tool failure.

    Failures come back as ``ToolResult(success=False)`` with a message the model can
    act on. ``VisibilityExpansionRequired`` and ``PromptEvaluationError`` propagate,
    a passed deadline or budget becomes ``PromptEvaluationError``, and
    ``BaseException``s such as ``KeyboardInterrupt`` propagate; state is restored
    before any of them leaves.
    """

    __slots__ = (
        "_adapter",
        "_available",
        "_budget_tracker",
        "_clock",
        "_deadline",
        "_heartbeat",
        "_plans",
        "_prompt",
        "_raise_handler_errors",
        "_rendered",
        "_session",
    )

    def __init__(
        self,
        *,
        prompt: Prompt,
        session: Session,
        adapter: ProviderAdapter | None = None,
        deadline: Deadline | None = None,
        budget_tracker: BudgetTracker | None = None,
        rendered_prompt: RenderedPrompt | None = None,
        heartbeat: Callable[[], None] | None = None,
        clock: Clock = utc_now,
        raise_handler_errors: bool = False,
    ) -> None:
        """An executor for ``prompt``'s enabled tools (rendered now unless given).

        With ``raise_handler_errors=True`` (for tests), a handler that raises or that
        returns something other than a ``ToolResult`` is still rolled back and recorded
        as a failed call, and then its exception (or a ``TypeError``) propagates.

        Raises ``PromptValidationError`` for an object that is not a policy, or when a
        policy's ``check_tools(tool_names, governed)`` refuses the prompt's tools.
        """
        if not isinstance(session, Session):
            raise TypeError(f"ToolExecutor needs a Session, got {type(session).__qualname__}")
        self._prompt = prompt
        self._session = session
        self._adapter = adapter
        self._deadline = deadline
        self._budget_tracker = budget_tracker
        self._heartbeat = heartbeat
        self._clock = clock
        self._raise_handler_errors = raise_handler_errors
        self._rendered = rendered_prompt if rendered_prompt is not None else prompt.render()
        self._plans = {name: _plan_of(b) for name, b in self._rendered.bindings.items()}
        self._available = ", ".join(tool.name for tool in self._rendered.tools) or "none"
        _validate_policies(prompt)

    @property
    def rendered_prompt(self) -> RenderedPrompt:
        """The render whose tools this executor runs."""
        return self._rendered

    def execute(self, call: ToolCall) -> ToolResult[Any]:
        """Run ``call`` and return its result; see the class docstring for failures."""
        tracer = telemetry.tracer()
        if tracer is None:
            return self._execute(call)
        plan = self._plans.get(call.name)
        tool = None if plan is None else plan.tool
        with telemetry.tool_call_span(tracer, call, tool, self._prompt.name) as span:
            result = self._execute(call)
            span.finish(result)
            return result

    def _execute(self, call: ToolCall) -> ToolResult[Any]:
        started_at = self._clock()
        plan = self._plans.get(call.name)
        if plan is None:
            message = f"Unknown tool {call.name!r}. Available tools: {self._available}."
            return self._record_failure(call, None, message, started_at)
        try:
            params = plan.parse(call.arguments)
        except ContractViolation as violation:
            problems = describe_problems(violation.problems)
            message = f"Invalid arguments for tool {call.name!r}:\n{problems}"
            return self._record_failure(call, None, message, started_at)
        except Exception as error:  # e.g. a decoded mapping holding values JSON cannot carry
            message = f"Invalid arguments for tool {call.name!r}: {_describe(error)}"
            return self._record_failure(call, None, message, started_at)
        registry = self._prompt.resources
        # Registry first, then session: the order the module docstring documents. A
        # prompt without resources has nothing shared to roll back across sessions,
        # so its calls on different sessions need not take turns.
        registry_lock = registry.call_lock if registry.bound_types else _NO_LOCK
        with registry_lock, self._session.call_lock:
            mark = registry.open_build_mark()
            scope: ToolCallScope | None = None
            try:
                if registry.needs_call_scope:
                    scope = registry.tool_call_scope()
                resources: _Resources = registry if scope is None else scope
                context = ToolContext(
                    prompt=self._prompt,
                    rendered_prompt=self._rendered,
                    adapter=self._adapter,
                    session=self._session,
                    deadline=self._deadline,
                    budget_tracker=self._budget_tracker,
                    resources=resources,
                    heartbeat=self._heartbeat,
                )
                return self._run(plan, params, context, resources, mark, call, started_at)
            finally:
                registry.close_build_mark()
                if scope is not None:
                    _close_scope(scope, call.name)

    def _run(
        self,
        plan: _Plan,
        params: Any,
        context: ToolContext,
        resources: _Resources,
        mark: int,
        call: ToolCall,
        started_at: datetime,
    ) -> ToolResult[Any]:
        tool = plan.tool
        handler = tool.handler
        if handler is None:
            message = f"Tool {tool.name!r} has no handler; it cannot be called."
            return self._record_failure(call, params, message, started_at)
        # Saved before the policies run: a policy that changes state and then denies
        # (or raises) leaves nothing behind either.
        saved = self._save(resources, mark)
        try:
            refusal = self._refusal(plan, params, context)
            if refusal is not None:
                telemetry.add_event(telemetry.DENIED, {"wink.reason": refusal})
                self._restore(saved)
                return self._record_failure(call, params, refusal, started_at)
            returned = handler(params, context=context)
            outcome, committed = self._commit(plan, params, returned, context, call, started_at)
        except (VisibilityExpansionRequired, PromptEvaluationError) as error:
            self._restore(saved)
            self._record_failure(call, params, _raised(tool, error), started_at)
            raise
        except (DeadlineExceededError, BudgetExceededError) as error:
            self._restore(saved)
            raise self._stop(call, params, error, started_at) from error
        except _WrongReturn as error:
            self._restore(saved)
            self._record_failure(call, params, str(error), started_at)
            raise TypeError(str(error)) from None
        except Exception as error:
            # A bug in the handler: the model is told, and so is the developer.
            logger.warning("tool %r raised", tool.name, exc_info=error)
            telemetry.note_error(error)
            if self._raise_handler_errors:
                self._restore(saved)
                self._record_failure(call, params, _raised(tool, error), started_at)
                raise
            outcome, committed = ToolResult.error(_raised(tool, error)), False
        except BaseException:
            self._restore(saved)
            raise
        if committed:
            return outcome
        self._restore(saved)
        return self._record(call, params, outcome, _render_failure(outcome), started_at)

    def _commit(
        self,
        plan: _Plan,
        params: Any,
        returned: object,
        context: ToolContext,
        call: ToolCall,
        started_at: datetime,
    ) -> tuple[ToolResult[Any], bool]:
        """Record a successful result and return it rendered, with ``True``; or the
        failure to return, with ``False``.

        The value must be of the tool's declared result type; it is rendered through
        the tool's result contract, so a subclass instance shows the declared fields.
        """
        tool = plan.tool
        if not isinstance(returned, ToolResult):
            message = (
                f"Tool {tool.name!r} returned {type(returned).__qualname__}, not a ToolResult."
            )
            logger.warning("%s", message)
            if self._raise_handler_errors:
                raise _WrongReturn(message)
            return ToolResult.error(message), False
        if not returned.success:
            return returned, False
        value = returned.value
        value_type = _value_type(plan, value)
        if value_type is _NONCONFORMING:
            message = (
                f"Tool {tool.name!r} returned {type(value).__qualname__}, expected "
                f"{type_name(tool.result_type)}"
            )
            return ToolResult.error(message), False
        try:
            text = returned.render_with(tool.result_contract)
        except ContractViolation as violation:
            message = (
                f"Tool {tool.name!r} returned a value that does not match its result type "
                f"{type_name(tool.result_type)}:\n{describe_problems(violation.problems)}"
            )
            return ToolResult.error(message), False
        except _PROPAGATED:
            raise
        except Exception as error:
            return _not_applied(tool, error), False
        try:
            # Kept with the result, so that providers need not render it again.
            result = returned.rendered_as(text)
            for policy in plan.policies:
                policy.on_result(tool, params, result, context=context)
            self._record(call, params, result, text, started_at, value_type)
        except _PROPAGATED:
            raise
        except Exception as error:
            return _not_applied(tool, error), False
        return result, True

    def _refusal(self, plan: _Plan, params: Any, context: ToolContext) -> str | None:
        """Why the call may not start (a denial), or ``None``; raises to stop the evaluation."""
        tool = plan.tool
        for policy in plan.policies:
            try:
                decision = policy.check(tool, params, context=context)
            except _PROPAGATED:
                raise
            except Exception as error:
                logger.info("policy %r failed on tool %r", policy.name, tool.name, exc_info=error)
                # Fail closed: a policy that cannot decide denies.
                return f"Policy {policy.name!r} failed on tool {tool.name!r}: {_describe(error)}"
            if not decision.allowed:
                return decision.reason or f"Policy {policy.name!r} denied tool {tool.name!r}."
        if self._deadline is not None:
            self._deadline.check(f"tool {tool.name!r} could start")
        if self._budget_tracker is not None:
            self._budget_tracker.check()
        return None

    def _save(self, resources: _Resources, mark: int) -> _Saved:
        tokens = [(resource, resource.snapshot()) for resource in resources.snapshotables()]
        return self._session.snapshot(), tokens, mark

    def _restore(self, saved: _Saved) -> None:
        snapshot, tokens, mark = saved
        telemetry.add_event(telemetry.ROLLBACK)
        # Resources first built after the snapshot go back to their state right
        # after construction; the others to their snapshot.
        for resource, token in reversed(self._prompt.resources.built_since(mark)):
            resource.restore(token)
        for resource, token in reversed(tokens):
            resource.restore(token)
        self._session.restore(snapshot)

    def _stop(
        self, call: ToolCall, params: Any, error: Exception, started_at: datetime
    ) -> PromptEvaluationError:
        """Record a call the evaluation's limits stopped, and the error that stops it."""
        message = f"Tool {call.name!r} was stopped: {error}"
        self._record_failure(call, params, message, started_at)
        return PromptEvaluationError(message)

    def _record_failure(
        self, call: ToolCall, params: Any, message: str, started_at: datetime
    ) -> ToolResult[Any]:
        return self._record(call, params, ToolResult.error(message), "", started_at)

    def _record(
        self,
        call: ToolCall,
        params: Any,
        result: ToolResult[Any],
        rendered_output: str,
        started_at: datetime,
        value_type: type[Any] | None = None,
    ) -> ToolResult[Any]:
        event = ToolInvoked(
            self._prompt.name,
            call.name,
            call.call_id,
            params,
            call.arguments,
            result,
            rendered_output,
            started_at,
            self._clock(),
        )
        try:
            self._session.dispatch(event, value_type=value_type)
        except Exception:
            if result.success:
                raise  # the caller rolls the call back and records the failure
            logger.warning("reducers failed on ToolInvoked for %r; kept unreduced", call.name)
            self._session.append_event(event)
        return result


_NO_LOCK = contextlib.nullcontext()


class _WrongReturn(Exception):
    """A handler returned no ``ToolResult`` and the executor raises handler errors."""


def _not_applied(tool: Tool[Any, Any], error: Exception) -> ToolResult[Any]:
    logger.info("applying the result of tool %r failed", tool.name, exc_info=error)
    return ToolResult.error(
        f"Tool {tool.name!r} succeeded but its result could not be applied, so its "
        f"changes were rolled back: {_describe(error)}"
    )


def _close_scope(resources: ToolCallScope, tool_name: str) -> None:
    """Close the call's resources; a resource failing to close must not lose the result."""
    try:
        resources.close()
    except Exception:
        logger.warning("closing the resources of tool %r failed", tool_name, exc_info=True)


def _plan_of(binding: ToolBinding) -> _Plan:
    tool = binding.tool
    # A policy attached at several levels is asked once.
    unique = tuple({id(policy): policy for policy in binding.policies}.values())
    for policy in unique:
        if not isinstance(policy, ToolPolicy):
            raise PromptValidationError(
                f"tool {tool.name!r} (section {binding.section_path}): {policy!r} is not a "
                "ToolPolicy (it needs name, check(tool, params, *, context) and "
                "on_result(tool, params, result, *, context))"
            )
    return _Plan(tool, tool.params_contract.parse, unique, plain_class(tool.result_type))


_NONCONFORMING: Any = object()  # what ``_value_type`` returns for a value of another type


def _value_type(plan: _Plan, value: object) -> type[Any] | None:
    """The declared class ``value`` is filed under (``None``: its own type, or no
    value), or ``_NONCONFORMING`` when it is not of the declared result type."""
    if value is None:
        return None  # a success without a payload, whatever the declared type
    declared = plan.result_class
    if declared is not None:
        return declared if isinstance(value, declared) else _NONCONFORMING
    tp = plan.tool.result_type
    return declared_class(value, tp) if conforms(value, tp) else _NONCONFORMING


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
                f"prompt {prompt.name!r}, policy attached to {where}: {error}"
            ) from None
        except Exception as error:
            raise PromptValidationError(
                f"prompt {prompt.name!r}, policy attached to {where}: check_tools(tool_names, "
                f"governed) failed: {_describe(error)}"
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


def _raised(tool: Tool[Any, Any], error: BaseException) -> str:
    return f"Tool {tool.name!r} raised {_describe(error)}"


def _describe(error: BaseException) -> str:
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def _render_failure(result: ToolResult[Any]) -> str:
    """The text of a failed result's error payload; a broken ``render()`` gives ``""``."""
    try:
        return result.render()
    except Exception:  # the failure itself is what the model must see
        logger.info("rendering a failed result's value raised", exc_info=True)
        return ""
