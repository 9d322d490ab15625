"""``ToolExecutor``: turns a model's tool call into a ``ToolResult``, transactionally.

A call goes: take the session's turn; look the tool up among the rendered prompt's
enabled tools; parse its arguments with the tool's contract; build the
``ToolContext``; take the turns of the snapshotable resources and snapshot them and
the session; ask every policy; check the deadline and budget; run the handler;
check the deadline and budget again; check its value against the tool's declared
result type and render it through the tool's result contract; let the policies
record the success; close the call's ``TOOL_CALL`` resources; record a
``ToolInvoked`` event. Any failure after the snapshot restores it first, so a
failed call leaves no state. Every call, whatever happens, records exactly one
``ToolInvoked``. Only the errors that must stop the evaluation propagate.

Turns: a call and the sub-calls its handler makes are one call tree (see
``wink.runtime._turns``). A tree takes the session's lock, then the lock of each
snapshotable resource it snapshots (one lock per resource object, wherever it is
bound, taken in a fixed order), and of each one built during the call; it keeps
them until its top-level call ends. So calls that share a session or a resource
take turns, a failed call's rollback never undoes another tree's call, and a
handler's own sub-calls, on its thread or on threads running in its context,
never wait for it. A wait that would deadlock fails the call that would close the
cycle instead.

Async: a call is a few plain phases (``_prepare``, the handler, ``_finished``);
``execute`` runs them blocking (``_take_turn``) and ``aexecute`` awaiting
(``_atake_turn``). The two differ only in waiting for a turn and invoking the
handler, so both share every other step, failure and rollback.
``aexecute_all`` runs a model turn: the calls that may overlap (see its docstring)
each work on an O(1) fork of the session (``Session._fork``), merged in call order
once all are done; the others run alone, in order.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from wink import telemetry
from wink._error_text import describe_error, error_message, safe_repr, type_label
from wink._lazy_logging import LazyLogger
from wink.contract import ContractViolation, describe_problems, type_name
from wink.contract.instances import conforms, declared_class, plain_class
from wink.errors import (
    DeadlineExceededError,
    PromptEvaluationError,
    PromptValidationError,
    VisibilityExpansionRequired,
)
from wink.policy.decision import PolicyDecision, ToolPolicy
from wink.prompt import Prompt, RenderedPrompt, ToolBinding
from wink.resources import ResourceRegistry, Snapshotable, ToolCallScope
from wink.runtime._turns import (
    CallLock,
    CallTree,
    TurnRefused,
    current_call_tree,
    lock_of,
    reset_call_tree,
    set_call_tree,
)
from wink.runtime.budget import BudgetExceededError, BudgetTracker
from wink.runtime.call import ToolCall
from wink.runtime.deadline import Clock, Deadline, utc_now
from wink.runtime.events import ToolInvoked, _tool_invoked
from wink.runtime.session import Session
from wink.runtime.snapshot import Snapshot
from wink.tools import Tool, ToolContext, ToolResult
from wink.tools.result import _set_rendered, render_value

if TYPE_CHECKING:
    # Imported at run time only where a call awaits: a program that only calls
    # ``execute`` on plain handlers never loads asyncio.
    import asyncio

    from wink.adapters.protocol import ProviderAdapter

__all__ = ["ToolExecutor"]

logger = LazyLogger(__name__)

_PROPAGATED = (
    VisibilityExpansionRequired,
    PromptEvaluationError,
    DeadlineExceededError,
    BudgetExceededError,
)

DEFAULT_TURN_TIMEOUT = 10.0
"""Seconds a call waits for another call tree's turn before it fails (``turn_timeout``)."""

_Saved = tuple[Snapshot, Sequence[tuple[Snapshotable, object]]]
_Resources = ResourceRegistry | ToolCallScope
_Broken = list[tuple[object, BaseException]]


class _CannotStart(Exception):
    """The call could not be prepared (a snapshot failed, a wait would deadlock)."""


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
    """Whether it has a handler and the handler is a plain (not async) function."""
    awaitable: bool
    """Whether ``aexecute`` may run it inline: it has a handler, async or not in a thread."""


class ToolExecutor:
    """Runs tool calls for one prompt and session (``execute``, ``aexecute``, and a model
    turn's calls with ``aexecute_all``/``execute_all``); never aborts for a tool failure.

    Failures come back as ``ToolResult(success=False)`` with a message the model can
    act on. ``VisibilityExpansionRequired`` and ``PromptEvaluationError`` propagate;
    a passed deadline or budget (before or after the handler) becomes
    ``PromptEvaluationError``, and so does a resource whose ``restore()`` failed
    (its state is unknown); ``BaseException``s such as ``KeyboardInterrupt``
    propagate. Whatever leaves, the state is restored and the call recorded first.
    """

    __slots__ = (
        "_adapter",
        "_available",
        "_budget_tracker",
        "_clock",
        "_context",
        "_deadline",
        "_direct",
        "_heartbeat",
        "_locks",
        "_plans",
        "_prompt",
        "_prompt_name",
        "_raise_handler_errors",
        "_rendered",
        "_resources",
        "_scoped",
        "_session",
        "_turn_timeout",
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
        turn_timeout: float | None = DEFAULT_TURN_TIMEOUT,
    ) -> None:
        """An executor for ``prompt``'s enabled tools (rendered now unless given).

        ``turn_timeout``: the most seconds a call waits for another call tree to release
        the session or a resource; then the call fails ("could not start", naming the
        lock and why a wait lasts that long). ``None`` waits as long as it takes.

        With ``raise_handler_errors=True`` (for tests), a handler that raises or that
        returns something other than a ``ToolResult`` is still rolled back and recorded
        as a failed call, and then its exception (or a ``TypeError``) propagates.

        Raises ``PromptValidationError`` for an object that is not a policy, or when a
        policy's ``check_tools(tool_names, governed)`` refuses the prompt's tools.
        """
        if not isinstance(session, Session):
            raise TypeError(f"ToolExecutor needs a Session, got {type_label(session)}")
        if turn_timeout is not None and (
            isinstance(turn_timeout, bool)
            or not isinstance(turn_timeout, int | float)
            or not 0 < turn_timeout < float("inf")
        ):
            raise ValueError(
                "ToolExecutor(turn_timeout=...) takes a positive number of seconds or None, "
                f"got {safe_repr(turn_timeout)}"
            )
        self._turn_timeout = turn_timeout
        self._prompt = prompt
        self._prompt_name = prompt.name
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
        # Lazily built singletons are the session's own; instances passed in are shared.
        self._resources = prompt.resources.for_session(session)
        # Whether calls keep a record of singletons built during them, or have resources
        # of their own: fixed once the registry is built.
        self._scoped = self._resources.lazy_singletons or self._resources.needs_call_scope
        # Whether ``execute`` may run a plain handler's calls directly (``_run_direct``):
        # nothing is built per call, and there is no limit to check.
        self._direct = not self._scoped and deadline is None and budget_tracker is None
        self._locks: tuple[tuple[Snapshotable, ...], list[CallLock]] | None = None
        # The context of a call with no call scope: every part is this executor's, so
        # one immutable context serves all such calls.
        self._context: ToolContext | None = None
        _validate_policies(prompt)

    @property
    def rendered_prompt(self) -> RenderedPrompt:
        """The render whose tools this executor runs."""
        return self._rendered

    def execute(self, call: ToolCall) -> ToolResult[Any]:
        """Run ``call`` and return its result; see the class docstring for failures.

        An async tool's handler runs to completion on an event loop of its own; with
        a loop already running in this thread, the call is recorded as failed and
        ``RuntimeError`` says to ``await executor.aexecute(call)`` instead.
        """
        tracer = telemetry.tracer()
        if tracer is None:
            return self._take_turn(call)
        plan = self._plans.get(call.name)
        tool = None if plan is None else plan.tool
        with telemetry.tool_call_span(tracer, call, tool, self._prompt.name) as span:
            result = self._take_turn(call)
            span.finish(result)
            return result

    async def aexecute(self, call: ToolCall) -> ToolResult[Any]:
        """``execute``'s twin for a running event loop: the same steps and failures, with
        an async handler awaited, a sync one run inline (or in a worker thread when its
        tool says ``in_thread=True``), and waits for another call's turn off the loop.

        Cancelling it rolls the call back, records it as failed and re-raises
        ``CancelledError``; the executor stays usable.
        """
        tracer = telemetry.tracer()
        if tracer is None:
            return await self._atake_turn(call)
        plan = self._plans.get(call.name)
        tool = None if plan is None else plan.tool
        with telemetry.tool_call_span(tracer, call, tool, self._prompt.name) as span:
            result = await self._atake_turn(call)
            span.finish(result)
            return result

    async def aexecute_all(self, calls: Iterable[ToolCall]) -> list[ToolResult[Any]]:
        """Run the calls of one model turn, overlapping those that may; results in call order.

        Each call is its own transaction, as with ``aexecute``. Calls overlap unless
        their tool says ``sequential=True``, a policy governs it, the prompt has
        snapshotable resources (or singletons built on first use), or the session
        keeps history (``keep_history=True``): such a call runs alone, after the
        calls before it and before those after it. Each overlapping
        call works on its own copy of the session (O(1)); when all are done, their
        changes are applied to the session in call order, as if the calls had run one
        after the other, each seeing the session as it was when they started. A call
        that fails leaves only its history (``LOG`` slices, its ``ToolInvoked``).

        The turn holds the session's turn (and its resources') until it ends. An
        error that must stop the evaluation propagates once every call has finished
        and been recorded (the first one, in call order), and the calls after it are
        not run, as with ``execute`` one call after the other; cancelling rolls back
        the calls in flight, records them as failed and re-raises ``CancelledError``
        (calls not started yet are not run).
        """
        pending = tuple(calls)
        tree = current_call_tree()
        token = None
        if tree is None or tree.done:
            tree = CallTree()
            token = set_call_tree(tree)
        try:
            locks = self._locks_of(self._resources.snapshotables())
            if not tree.try_acquire_all(locks):
                try:
                    await _wait_for(tree, locks, self._turn_timeout)
                except TurnRefused as error:  # no call of the turn can start: each says why
                    return [self._not_started(call, error, self._clock()) for call in pending]
            results: list[ToolResult[Any]] = []
            index = 0
            while index < len(pending):
                end = index
                while end < len(pending) and self._overlaps(pending[end]):
                    end += 1
                if end - index > 1:
                    results.extend(await self._overlap(pending[index:end]))
                    index = end
                else:
                    results.append(await self.aexecute(pending[index]))
                    index += 1
            return results
        finally:
            if token is not None:
                tree.release_all()
                reset_call_tree(token)

    def execute_all(self, calls: Iterable[ToolCall]) -> list[ToolResult[Any]]:
        """``aexecute_all`` on an event loop of its own; with a loop already running in
        this thread, the calls run one after the other with ``execute``."""
        import asyncio

        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.aexecute_all(calls))
        return [self.execute(call) for call in calls]

    def _overlaps(self, call: ToolCall) -> bool:
        """Whether ``call`` may run alongside the other calls of its turn."""
        plan = self._plans.get(call.name)
        if plan is None or not plan.overlaps:
            return False
        resources = self._resources
        return (
            not resources.snapshotables()
            and not resources.lazy_singletons
            # Its versions name positions in one history: it is told in one order.
            and not self._session.keeps_history
        )

    async def _overlap(self, calls: tuple[ToolCall, ...]) -> list[ToolResult[Any]]:
        """Run ``calls`` at the same time, each on a fork of the session; merge in order."""
        import asyncio

        forks = [self._session._fork() for _ in calls]
        tasks = [
            asyncio.ensure_future(self._on(fork).aexecute(call))
            for call, fork in zip(calls, forks, strict=True)
        ]
        try:
            await asyncio.wait(tasks)
        except asyncio.CancelledError:
            for task in tasks:
                task.cancel()
            await _settle(tasks)
            self._merge_all(calls, forks, tasks)
            raise
        return self._merge_all(calls, forks, tasks)

    def _on(self, fork: Session) -> ToolExecutor:
        """This executor, working on ``fork`` (a copy of its session) instead."""
        clone: ToolExecutor = object.__new__(ToolExecutor)
        for name in ToolExecutor.__slots__:
            setattr(clone, name, getattr(self, name))
        clone._session = fork
        clone._locks = None
        clone._context = None  # it names the session
        return clone

    def _merge_all(
        self,
        calls: tuple[ToolCall, ...],
        forks: list[Session],
        tasks: Sequence[asyncio.Future[ToolResult[Any]]],
    ) -> list[ToolResult[Any]]:
        """Apply each finished call's changes to the session, in call order; raise the
        first error a call raised once all are applied."""
        import asyncio

        results: list[ToolResult[Any]] = []
        raised: BaseException | None = None
        for call, fork, task in zip(calls, forks, tasks, strict=True):
            result: ToolResult[Any] | None = None
            if task.cancelled():
                raised = raised or asyncio.CancelledError()
            elif task.exception() is not None:
                raised = raised or task.exception()
            else:
                result = task.result()
            try:
                self._session._merge(fork)
            except Exception as error:
                result = self._unmerged(call, fork, result, error)
            if result is not None:
                results.append(result)
        if raised is not None:
            raise raised
        return results

    def _unmerged(
        self, call: ToolCall, fork: Session, result: ToolResult[Any] | None, error: Exception
    ) -> ToolResult[Any] | None:
        """Keep the history of a call whose changes could not be applied; a success
        becomes a failure, recorded in place of its ``ToolInvoked``."""
        if result is None or not result.success:
            self._session._merge_log(fork)
            return result
        recorded = next(
            (e for e in reversed(fork[ToolInvoked].values()) if e.result is result), None
        )
        if recorded is None:
            self._session._merge_log(fork)
            return result
        self._session._merge_log(fork, leave_out=recorded)
        message = (
            f"Tool {call.name!r} succeeded but its changes could not be applied after those "
            f"of the calls before it in the same turn, so they were rolled back: "
            f"{describe_error(error)}"
        )
        failure: ToolResult[Any] = ToolResult.error(message)
        return self._record(
            call, recorded.params, failure, "", recorded.started_at, rolled_back=True
        )

    def _take_turn(self, call: ToolCall) -> ToolResult[Any]:
        """``execute`` without its tracing check: the call, blocking where it waits."""
        started_at = self._clock()
        # The running call's tree (this is a sub-call), or a new one for a top-level call.
        tree = current_call_tree()
        token = None
        if tree is None or tree.done:
            tree = CallTree()
            token = set_call_tree(tree)
        try:
            # The session's turn, and those of the resources the call will snapshot.
            locks = self._locks_of(self._resources.snapshotables())
            if not tree.try_acquire_all(locks):
                try:
                    tree.acquire_all(locks, self._turn_timeout)
                except BaseException as error:
                    return self._not_started(call, error, started_at)
            if self._direct:
                plan = self._plans.get(call.name)
                if plan is not None and plan.plain:
                    return self._run_direct(plan, tree, call, started_at)
            prepared = self._prepare(tree, call, started_at)
            if not isinstance(prepared, _Prepared):
                return prepared
            try:
                returned = _invoke(prepared)
            except BaseException as error:  # handled as the failure table says
                return self._finished(prepared, error=error)
            return self._finished(prepared, returned)
        finally:
            if token is not None:
                tree.release_all()
                reset_call_tree(token)

    async def _atake_turn(self, call: ToolCall) -> ToolResult[Any]:
        """``_take_turn``'s twin: the same phases, awaiting where it waits."""
        started_at = self._clock()
        tree = current_call_tree()
        token = None
        if tree is None or tree.done:
            tree = CallTree()
            token = set_call_tree(tree)
        try:
            locks = self._locks_of(self._resources.snapshotables())
            if not tree.try_acquire_all(locks):
                try:
                    await _wait_for(tree, locks, self._turn_timeout)
                except BaseException as error:
                    return self._not_started(call, error, started_at)
            if self._direct:
                plan = self._plans.get(call.name)
                if plan is not None and plan.awaitable:
                    return await self._arun_direct(plan, tree, call, started_at)
            prepared = self._prepare(tree, call, started_at)
            if not isinstance(prepared, _Prepared):
                return prepared
            try:
                returned = await _ainvoke(prepared)
            except BaseException as error:  # cancellation included: rolled back
                return self._finished(prepared, error=error)
            return self._finished(prepared, returned)
        finally:
            if token is not None:
                tree.release_all()
                reset_call_tree(token)

    def _not_started(
        self, call: ToolCall, error: BaseException, started_at: datetime
    ) -> ToolResult[Any]:
        """Record a call that could not take its turn; an interruption is re-raised."""
        if isinstance(error, TurnRefused):
            # Not cut: its text is wink's own, with the lock's label bounded, and ends
            # with the fix.
            message = f"Tool {safe_repr(call.name)} could not start: {error}"
            return self._record_failure(call, None, message, started_at)
        message = f"Tool {safe_repr(call.name)} was interrupted by {describe_error(error)}"
        self._record_failure(call, None, message, started_at)
        raise error

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

    def _run_direct(
        self, plan: _Plan, tree: CallTree, call: ToolCall, started_at: datetime
    ) -> ToolResult[Any]:
        """A call of a plain handler on an executor that builds nothing per call and has
        no limit to check: ``_prepare``, ``_invoke`` and ``_finished`` written out as one
        phase, with a ``_Prepared`` built only when a failure path needs it."""
        ready = self._direct_ready(plan, tree, call, started_at)
        if isinstance(ready, ToolResult):
            return ready  # the recorded failure
        params, context, _saved = ready
        refusal: str | None = None
        try:
            if plan.policies:
                refusal = self._refusal(plan, params, context)
            if refusal is None:
                returned = plan.tool.handler(params, context=context)  # type: ignore[misc]  # plain
                outcome, committed = self._commit(
                    plan, call, params, context, None, started_at, returned
                )
                if committed:
                    return outcome
        except BaseException as error:  # handled as the failure table says
            return self._on_error(self._direct_prepared(plan, ready, tree, call, started_at), error)
        prepared = self._direct_prepared(plan, ready, tree, call, started_at)
        if refusal is not None:
            return self._denied(prepared, refusal)
        return self._fail(prepared, outcome, render=True)

    async def _arun_direct(
        self, plan: _Plan, tree: CallTree, call: ToolCall, started_at: datetime
    ) -> ToolResult[Any]:
        """``_run_direct``'s twin for ``aexecute``: an async handler is awaited, a plain one
        (not ``in_thread``) runs inline."""
        ready = self._direct_ready(plan, tree, call, started_at)
        if isinstance(ready, ToolResult):
            return ready  # the recorded failure
        params, context, _saved = ready
        refusal: str | None = None
        try:
            if plan.policies:
                refusal = self._refusal(plan, params, context)
            if refusal is None:
                returned: Any = plan.tool.handler(params, context=context)  # type: ignore[misc]
                if plan.tool.is_async:
                    returned = await returned
                outcome, committed = self._commit(
                    plan, call, params, context, None, started_at, returned
                )
                if committed:
                    return outcome
        except BaseException as error:  # cancellation included: rolled back
            return self._on_error(self._direct_prepared(plan, ready, tree, call, started_at), error)
        prepared = self._direct_prepared(plan, ready, tree, call, started_at)
        if refusal is not None:
            return self._denied(prepared, refusal)
        return self._fail(prepared, outcome, render=True)

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

    def _direct_prepared(
        self,
        plan: _Plan,
        ready: tuple[Any, ToolContext, _Saved],
        tree: CallTree,
        call: ToolCall,
        started_at: datetime,
    ) -> _Prepared:
        """What the failure phases need of a direct call."""
        params, context, saved = ready
        registry = self._resources
        prepared = _Prepared(plan, params, context, registry, None, 0, tree, call, started_at)
        prepared.saved = saved
        return prepared

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
            refusal = self._refusal(plan, params, prepared.context)
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

    def _finished(
        self, prepared: _Prepared, returned: object = None, *, error: BaseException | None = None
    ) -> ToolResult[Any]:
        """The handler returned ``returned`` or raised ``error``: commit, or roll back and
        record why not; then close the call's resources."""
        try:
            if error is not None:
                return self._on_error(prepared, error)
            return self._returned(prepared, returned)
        finally:
            if self._scoped:
                _close(self._resources, prepared.scope, prepared.call.name)

    def _returned(self, prepared: _Prepared, returned: object) -> ToolResult[Any]:
        """The handler returned ``returned``: commit it, or roll back and record why not."""
        try:
            if self._deadline is not None or self._budget_tracker is not None:
                self._check_limits(f"tool {prepared.plan.tool.name!r} returned")
            outcome, committed = self._commit(
                prepared.plan,
                prepared.call,
                prepared.params,
                prepared.context,
                prepared.scope,
                prepared.started_at,
                returned,
            )
        except BaseException as error:
            return self._on_error(prepared, error)
        if committed:
            return outcome
        return self._fail(prepared, outcome, render=True)

    def _on_error(self, prepared: _Prepared, error: BaseException) -> ToolResult[Any]:
        """Roll back and record a call that raised ``error`` (in a policy, a limit check,
        the handler or while applying its result); re-raise what must stop the evaluation."""
        tool = prepared.plan.tool
        if isinstance(error, VisibilityExpansionRequired | PromptEvaluationError):
            self._fail(prepared, ToolResult.error(_raised(tool, error)))
            raise error
        if isinstance(error, DeadlineExceededError | BudgetExceededError):
            message = (
                f"Tool {prepared.call.name!r} was stopped: "
                f"{error_message(error) or type_label(error)}"
            )
            self._fail(prepared, ToolResult.error(message))
            raise PromptEvaluationError(message) from error
        if isinstance(error, _WrongReturn):
            self._fail(prepared, ToolResult.error(str(error)))
            raise TypeError(str(error)) from None
        if isinstance(error, _NeedsAwait):
            self._fail(prepared, ToolResult.error(str(error)))
            raise RuntimeError(str(error)) from None
        if isinstance(error, Exception):
            # A bug in the handler: the model is told, and so is the developer.
            logger.warning("tool %r raised", tool.name, exc_info=error)
            telemetry.note_error(error)
            failure: ToolResult[Any] = ToolResult.error(_raised(tool, error))
            if self._raise_handler_errors:
                self._fail(prepared, failure)
                raise error
            return self._fail(prepared, failure, render=True)
        interrupted: ToolResult[Any] = ToolResult.error(_interrupted(tool, error))
        # The interruption goes first; a broken resource was logged.
        with contextlib.suppress(PromptEvaluationError):
            self._fail(prepared, interrupted)
        raise error

    def _commit(
        self,
        plan: _Plan,
        call: ToolCall,
        params: Any,
        context: ToolContext,
        scope: ToolCallScope | None,
        started_at: datetime,
        returned: object,
    ) -> tuple[ToolResult[Any], bool]:
        """Record a successful result and return it rendered, with ``True``; or the
        failure to return, with ``False``.

        The value must be of the tool's declared result type; it is rendered through
        the tool's result contract, so a subclass instance shows the declared fields.
        """
        tool = plan.tool
        if not isinstance(returned, ToolResult):
            message = f"Tool {tool.name!r} returned {type_label(returned)}, not a ToolResult."
            logger.warning("%s", message)
            if self._raise_handler_errors:
                raise _WrongReturn(message)
            return ToolResult.error(message), False
        if not returned.success:
            return returned, False
        value = returned.value
        declared = plan.result_class
        if value is not None and declared is not None and isinstance(value, declared):
            value_type: type[Any] | None = declared  # ``_value_type``'s common case
        else:
            value_type = _value_type(plan, value)
            if value_type is _NONCONFORMING:
                message = (
                    f"Tool {tool.name!r} returned {type_label(value)}, expected "
                    f"{type_name(tool.result_type)}"
                )
                return ToolResult.error(message), False
        exact = type(returned) is ToolResult
        try:
            if exact:
                text = render_value(value, tool.result_contract)
            else:
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
            # Kept with the result, so that providers need not render it again. A result
            # that nothing but this call holds (see ``_UNSHARED``) takes the text itself.
            if exact and _refcount(returned) <= _UNSHARED:
                _set_rendered(returned, text)
                result: ToolResult[Any] = returned
            else:
                result = returned.rendered_as(text)
            for policy in plan.policies:
                policy.on_result(tool, params, result, context=context)
            if scope is not None:
                # Closed before the call is recorded: a close that is interrupted
                # (a BaseException) must not leave a success on record.
                _close_scope(scope, call.name)
            self._record(call, params, result, text, started_at, value_type)
        except _PROPAGATED:
            raise
        except Exception as error:
            return _not_applied(tool, error), False
        return result, True

    def _refusal(self, plan: _Plan, params: Any, context: ToolContext) -> str | None:
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
            if decision.allowed is not True:
                reason = decision.reason
                if isinstance(reason, str) and reason:
                    return reason
                return f"Policy {_policy_name(policy)} denied tool {tool.name!r}."
        if self._deadline is not None or self._budget_tracker is not None:
            self._check_limits(f"tool {tool.name!r} could start")
        return None

    def _check_limits(self, activity: str) -> None:
        if self._deadline is not None:
            self._deadline.check(activity)
        if self._budget_tracker is not None:
            self._budget_tracker.check()

    def _save(self, resources: _Resources, tree: CallTree) -> _Saved:
        """Take the resources' turns (for ``tree``), then snapshot them and the session."""
        snapshotables = resources.snapshotables()
        if not snapshotables:
            return self._session.snapshot(), ()
        cached = self._locks
        # Taken already when the call started, unless something was built since.
        if cached is None or cached[0] is not snapshotables:
            try:
                tree.acquire_all(self._locks_of(snapshotables), self._turn_timeout)
            except TurnRefused as error:
                raise _CannotStart(str(error)) from error
        tokens: list[tuple[Snapshotable, object]] = []
        for resource in snapshotables:
            try:
                tokens.append((resource, resource.snapshot()))
            except Exception as error:
                raise _CannotStart(
                    f"snapshot() of resource {type_label(resource)} raised "
                    f"{describe_error(error)}; nothing was changed"
                ) from error
        return self._session.snapshot(), tokens

    def _locks_of(self, snapshotables: tuple[Snapshotable, ...]) -> list[CallLock]:
        """The session's lock and those of ``snapshotables``."""
        # The registry hands out the same tuple while nothing new is built: reuse its locks.
        cached = self._locks
        if cached is not None and cached[0] is snapshotables:
            return cached[1]
        locks = [self._session.call_lock, *(lock_of(resource) for resource in snapshotables)]
        if snapshotables is self._resources.snapshotables():
            self._locks = (snapshotables, locks)
        return locks

    def _rollback(self, prepared: _Prepared) -> _Broken:
        """Restore everything that can be restored; return what could not be, and why."""
        assert prepared.saved is not None  # saved before anything it restores could change
        snapshot, tokens = prepared.saved
        scope = prepared.scope
        telemetry.add_event(telemetry.ROLLBACK)
        registry = self._resources
        built = registry.built_since(prepared.mark) if registry.lazy_singletons else []
        if scope is not None:
            built.extend(scope.built_during())
        broken: _Broken = []
        # Resources first built after the snapshot go back to their state right
        # after construction; the others to their snapshot.
        for resource, token in reversed([*tokens, *built]):
            try:
                resource.restore(token)
            except BaseException as error:
                broken.append((resource, error))
        try:
            # A failed call also undoes the slice declarations it made.
            self._session.restore(snapshot, declarations=True)
        except BaseException as error:
            broken.append((self._session, error))
        return broken

    def _fail(
        self,
        prepared: _Prepared,
        result: ToolResult[Any],
        *,
        render: bool = False,
        denied: bool = False,
    ) -> ToolResult[Any]:
        """Roll back, record ``result`` as the call's failure (a policy's denial when
        ``denied``, else a rolled-back failure), and return it.

        When something could not be restored, raise ``PromptEvaluationError`` naming
        it (its state is unknown), after recording the call; an interruption met on
        the way is re-raised, also after recording.
        """
        call = prepared.call
        broken = self._rollback(prepared)
        interruptions = [error for _, error in broken if not isinstance(error, Exception)]
        try:
            rendered = _render_failure(result) if render else ""
        except BaseException as error:  # only BaseExceptions leave _render_failure
            interruptions.append(error)
            rendered = ""
        self._record(
            call,
            prepared.params,
            result,
            rendered,
            prepared.started_at,
            denied=denied,
            rolled_back=not denied,
        )
        if interruptions:
            raise interruptions[0]
        if broken:
            described = "; ".join(
                f"{_what(target)}: restore() raised {describe_error(error)}"
                for target, error in broken
            )
            message = (
                f"Tool {call.name!r} failed and its changes could not all be rolled back "
                f"({described}); that state is unknown, so the evaluation stops"
            )
            logger.error(message)
            raise PromptEvaluationError(message) from broken[0][1]
        return result

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
        *,
        denied: bool = False,
        rolled_back: bool = False,
    ) -> ToolResult[Any]:
        event = _tool_invoked(
            self._prompt_name,
            call.name,
            call.call_id,
            params,
            call.arguments,
            result,
            rendered_output,
            started_at,
            self._clock(),
            denied,
            rolled_back,
        )
        try:
            self._session.dispatch(event, value_type=value_type)
        except Exception:
            if result.success:
                raise  # the caller rolls the call back and records the failure
            logger.warning("reducers failed on ToolInvoked for %r; kept unreduced", call.name)
            self._session.append_event(event)
        except BaseException:
            if result.success:
                raise  # the caller rolls the call back and records the failure
            self._session.append_event(event)  # never lose the record, then stop
            raise
        return result


class _WrongReturn(Exception):
    """A handler returned no ``ToolResult`` and the executor raises handler errors."""


class _NeedsAwait(Exception):
    """``execute`` met an async tool while an event loop runs in its thread."""


class _Prepared:
    """A call ready for its handler: what the phases after it need."""

    __slots__ = (
        "call",
        "context",
        "mark",
        "params",
        "plan",
        "resources",
        "saved",
        "scope",
        "started_at",
        "tree",
    )

    def __init__(
        self,
        plan: _Plan,
        params: Any,
        context: ToolContext,
        resources: _Resources,
        scope: ToolCallScope | None,
        mark: int,
        tree: CallTree,
        call: ToolCall,
        started_at: datetime,
    ) -> None:
        self.plan = plan
        self.params = params
        self.context = context
        self.resources = resources
        self.scope = scope
        self.mark = mark
        """Where the registry's record of singletons built during the call starts."""
        self.tree = tree
        self.call = call
        self.started_at = started_at
        self.saved: _Saved | None = None
        """The snapshots a failure restores (taken before the policies run)."""


async def _wait_for(tree: CallTree, locks: list[CallLock], timeout: float | None) -> None:
    """Wait until ``tree`` holds ``locks`` (another call tree has one).

    Waiting blocks a thread: not the event loop's, where the holder may be running.
    When the call is cancelled meanwhile, its tree ends and the thread stops waiting
    (``TurnRefused``), or its locks go when the tree ends.
    """
    import asyncio

    await asyncio.to_thread(tree.acquire_all, locks, timeout)


def _invoke(prepared: _Prepared) -> object:
    """Call the handler and return what it returns (an async one run to completion on
    an event loop of its own, when none runs in this thread)."""
    tool = prepared.plan.tool
    handler: Callable[..., Any] = tool.handler  # type: ignore[assignment]  # checked in _prepare
    returned = handler(prepared.params, context=prepared.context)
    if not tool.is_async:
        return returned
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:  # no loop in this thread: run the handler on one of its own
        return asyncio.run(_awaited(returned))
    returned.close()  # never started: nothing to undo
    raise _NeedsAwait(
        f"Tool {tool.name!r} is async and an event loop is running in this "
        "thread, so execute() cannot wait for it; use await executor.aexecute(call) "
        "(or await adapter.aevaluate(...))"
    )


async def _ainvoke(prepared: _Prepared) -> object:
    """Await an async handler; run a sync one inline, or in a worker thread when its
    tool says ``in_thread=True``."""
    tool = prepared.plan.tool
    handler: Callable[..., Any] = tool.handler  # type: ignore[assignment]  # checked in _prepare
    if tool.is_async:
        return await handler(prepared.params, context=prepared.context)
    if tool.in_thread:
        return await _in_thread(handler, prepared.params, context=prepared.context)
    return handler(prepared.params, context=prepared.context)


async def _settle(tasks: Sequence[asyncio.Future[ToolResult[Any]]]) -> None:
    """Wait until every task has finished, even when cancelled again meanwhile."""
    import asyncio

    while not all(task.done() for task in tasks):
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait(tasks)


async def _awaited(awaitable: Any) -> object:
    return await awaitable


async def _in_thread(function: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    """``function`` run in a worker thread in this context; when the awaiting task is
    cancelled, the thread is still waited for (its work is not abandoned half done),
    then the cancellation goes on."""
    import asyncio

    loop = asyncio.get_running_loop()
    context = contextvars.copy_context()
    future = loop.run_in_executor(None, functools.partial(context.run, function, *args, **kwargs))
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        with contextlib.suppress(BaseException):
            await _uncancellable(future)
        raise


async def _uncancellable(future: asyncio.Future[Any]) -> None:
    import asyncio

    while not future.done():
        try:
            await asyncio.shield(future)
        except asyncio.CancelledError:
            continue


def _not_applied(tool: Tool[Any, Any], error: Exception) -> ToolResult[Any]:
    logger.info("applying the result of tool %r failed", tool.name, exc_info=error)
    return ToolResult.error(
        f"Tool {tool.name!r} succeeded but its result could not be applied, so its "
        f"changes were rolled back: {describe_error(error)}"
    )


def _interrupted(tool: Tool[Any, Any], error: BaseException) -> str:
    return f"Tool {tool.name!r} was interrupted by {describe_error(error)}; rolled back"


def _policy_name(policy: object) -> str:
    """The policy's name as shown in messages (quoted), even when ``name`` is broken."""
    try:
        name = policy.name  # type: ignore[attr-defined]  # any object may be passed as a policy
    except Exception:
        return f"<{type_label(policy)} whose name raised>"
    return safe_repr(name)


def _what(target: object) -> str:
    """Names a restored target in a message: a resource by its class, or the session."""
    if isinstance(target, Session):
        return "the session"
    return f"resource {type_label(target)}"


def _close(registry: ResourceRegistry, scope: ToolCallScope | None, tool_name: str) -> None:
    """End a call's use of its resources: the record of singletons built during it, and
    the resources scoped to it (a no-op for those the call closed already)."""
    if registry.lazy_singletons:
        registry.close_build_mark()
    if scope is not None:
        _close_scope(scope, tool_name)


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
                f"tool {tool.name!r} (section {binding.section_path}): {safe_repr(policy)} is "
                "not a ToolPolicy (it needs name, check(tool, params, *, context) and "
                "on_result(tool, params, result, *, context))"
            )
    overlaps = tool.handler is not None and not tool.sequential and not unique
    plain = tool.handler is not None and not tool.is_async
    awaitable = tool.handler is not None and (tool.is_async or not tool.in_thread)
    return _Plan(
        tool,
        tool.params_contract.parse,
        unique,
        plain_class(tool.result_type),
        overlaps,
        plain,
        awaitable,
    )


_refcount = sys.getrefcount


class _Probe:
    """Stands for a handler's result on its way through ``_run_direct`` to ``_commit``."""

    def commit(self, plan: object, call: object, returned: object) -> int:
        return _refcount(returned)

    def run(self) -> int:
        returned = _Probe()
        return self.commit(None, None, returned)


# From 3.14, CPython may hold a local without counting it: a count could then
# miss a holder, so there every result is copied.
_UNSHARED = _Probe().run() if sys.version_info < (3, 14) else 0
"""What ``sys.getrefcount`` says in ``_commit`` of a result that nothing but the call
holds: ``_run_direct``'s variable, ``_commit``'s argument and the count's own. Measured
the same way on this interpreter, since how arguments are held differs between
versions. A handler's result with more references (kept by the handler, or met on a
longer path) is copied rather than changed."""


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


def _raised(tool: Tool[Any, Any], error: BaseException) -> str:
    return f"Tool {tool.name!r} raised {describe_error(error)}"


def _render_failure(result: ToolResult[Any]) -> str:
    """The text of a failed result's error payload; a broken ``render()`` gives ``""``."""
    try:
        return result.render()
    except Exception:  # the failure itself is what the model must see
        logger.info("rendering a failed result's value raised", exc_info=True)
        return ""
