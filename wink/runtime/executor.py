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

Where each step lives: this module holds the drivers, which take the turns and
run a call's steps in order, blocking or awaiting; ``_admission`` the steps before
the handler (look-up, parsing, policies, limits); ``_transaction`` saving the state,
running the handler, and committing its result or rolling back; ``_recording`` the
``ToolInvoked`` every call ends with, and the call's telemetry span. Each module's
steps are methods of a class that the next one builds on (``_Recording``, then
``_Transaction``, then ``_Admission``, then ``ToolExecutor``), over the fields
declared in ``_executor_state``.

Async: a call is a few plain steps (``_prepare``, the handler, ``_finished``);
``execute`` runs them blocking (``_take_turn``) and ``aexecute`` awaiting
(``_atake_turn``). The two differ only in waiting for a turn and invoking the
handler, so both share every other step, failure and rollback.
``aexecute_all`` runs a model turn: the calls that may overlap (see its docstring)
each work on an O(1) fork of the session (``Session._fork``), merged in call order
once all are done; the others run alone, in order.
"""

from __future__ import annotations

import contextlib
import functools
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from wink import telemetry
from wink._error_text import describe_error, safe_repr, type_label
from wink.policy.approval import Approval, ApprovalRequest
from wink.prompt import Prompt, RenderedPrompt
from wink.resources import Snapshotable
from wink.runtime._admission import _Admission, _Plan, _plan_of, _validate_policies
from wink.runtime._executor_state import _ExecutorState
from wink.runtime._transaction import (
    _afirst_attempt,
    _ainvoke,
    _AttemptFailed,
    _first_attempt,
    _in_thread,
    _invoke,
    _Prepared,
    _Saved,
)
from wink.runtime._turns import (
    CallLock,
    CallTree,
    TurnRefused,
    current_call_tree,
    reset_call_tree,
    set_call_tree,
)
from wink.runtime.budget import BudgetTracker
from wink.runtime.call import ToolCall
from wink.runtime.deadline import Clock, Deadline, utc_now
from wink.runtime.events import ToolInvoked
from wink.runtime.session import Session, entered_call, left_call
from wink.tools import ToolContext, ToolResult

if TYPE_CHECKING:
    # Imported at run time only where a call awaits: a program that only calls
    # ``execute`` on plain handlers never loads asyncio.
    import asyncio

    from wink.adapters.protocol import ProviderAdapter

__all__ = ["ToolExecutor"]

DEFAULT_TURN_TIMEOUT = 10.0
"""Seconds a call waits for another call tree's turn before it fails (``turn_timeout``)."""


class ToolExecutor(_Admission):
    """Runs tool calls for one prompt and session (``execute``, ``aexecute``, and a model
    turn's calls with ``aexecute_all``/``execute_all``); never aborts for a tool failure.

    Failures come back as ``ToolResult(success=False)`` with a message the model can
    act on. ``VisibilityExpansionRequired`` and ``PromptEvaluationError`` propagate;
    a passed deadline or budget (before or after the handler) becomes
    ``PromptEvaluationError``, and so does a resource whose ``restore()`` failed
    (its state is unknown); ``BaseException``s such as ``KeyboardInterrupt``
    propagate. Whatever leaves, the state is restored and the call recorded first.
    """

    __slots__ = ()

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
        approvals: Mapping[str, Approval] | None = None,
    ) -> None:
        """An executor for ``prompt``'s enabled tools (rendered now unless given).

        ``turn_timeout``: the most seconds a call waits for another call tree to release
        the session or a resource; then the call fails ("could not start", naming the
        lock and why a wait lasts that long). ``None`` waits as long as it takes.

        With ``raise_handler_errors=True`` (for tests), a handler that raises or that
        returns something other than a ``ToolResult`` is still rolled back and recorded
        as a failed call, and then its exception (or a ``TypeError``) propagates.

        ``approvals``: a person's decisions on calls a policy defers, by call id (an
        evaluation resumed with ``adapter.resume``); a deferred call without one is denied.

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
        self._approvals = {} if approvals is None else approvals
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
        limit = getattr(prompt.template, "max_output_chars", None)
        self._plans = {name: _plan_of(b, limit) for name, b in self._rendered.bindings.items()}
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

    def awaiting_approval(self, calls: Iterable[ToolCall]) -> list[ApprovalRequest]:
        """The calls a policy defers to a person and that have no decision yet, asked
        before any of them runs (policies must not change state when asked)."""
        awaiting: list[ApprovalRequest] = []
        for call in calls:
            plan = self._plans.get(call.name)
            if plan is None or not plan.policies or call.call_id in self._approvals:
                continue
            reason = self._deferral(plan, call)
            if reason is not None:
                awaiting.append(ApprovalRequest(call.call_id or "", call.name, _text(call), reason))
        return awaiting

    def execute(self, call: ToolCall) -> ToolResult[Any]:
        """Run ``call`` and return its result; see the class docstring for failures.

        An async tool's handler runs to completion on an event loop of its own; with
        a loop already running in this thread, the call is recorded as failed and
        ``RuntimeError`` says to ``await executor.aexecute(call)`` instead.
        """
        tracer = telemetry.tracer()
        if tracer is None:
            return self._take_turn(call)
        with self._span(tracer, call) as span:
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
        with self._span(tracer, call) as span:
            result = await self._atake_turn(call)
            span.finish(result)
            return result

    async def aexecute_all(self, calls: Iterable[ToolCall]) -> list[ToolResult[Any]]:
        """Run the calls of one model turn, overlapping those that may; results in call order.

        Each call is its own transaction, as with ``aexecute``. Calls overlap unless
        their tool says ``sequential=True``, a policy governs it, the prompt has
        snapshotable resources (or singletons built on first use not built yet), or the session
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
            # Once every singleton is built, no call builds one (and a snapshotable
            # one is among the snapshotables above).
            and not resources.unbuilt_singletons
            # Its versions name positions in one history: it is told in one order.
            and not self._session.keeps_history
            # A stored session stores each call as one version, in order.
            and self._session._store is None
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
        for name in _ExecutorState.__slots__:
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
            call,
            recorded.params,
            failure,
            "",
            recorded.started_at,
            rolled_back=True,
            earlier_attempts=recorded.earlier_attempts,
        )

    def _take_turn(self, call: ToolCall) -> ToolResult[Any]:
        """``execute`` without its tracing check: the call, blocking where it waits."""
        # ``_atake_turn`` is its twin: the two differ only where they wait (for a turn,
        # for the handler), which one thread cannot do both ways.
        started_at = self._clock()
        # The running call's tree (this is a sub-call), or a new one for a top-level call.
        tree = current_call_tree()
        token = None
        if tree is None or tree.done:
            tree = CallTree()
            token = set_call_tree(tree)
        entered = entered_call(self._session)  # a stored session stores top-level calls only
        prepared: _Prepared | ToolResult[Any] | None = None
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
                if prepared.plan.controlled:
                    returned = self._invoke_controlled(prepared)
                else:
                    returned = _invoke(prepared)
            except BaseException as error:  # handled as the failure table says
                return self._finished(prepared, error=error)
            return self._finished(prepared, returned)
        finally:
            left_call(entered)
            self._end_turn(tree, token, prepared)

    async def _atake_turn(self, call: ToolCall) -> ToolResult[Any]:
        """``_take_turn``'s twin: the same phases, awaiting where it waits."""
        started_at = self._clock()
        tree = current_call_tree()
        token = None
        if tree is None or tree.done:
            tree = CallTree()
            token = set_call_tree(tree)
        entered = entered_call(self._session)
        stored = self._session._store is not None
        prepared: _Prepared | ToolResult[Any] | None = None
        try:
            locks = self._locks_of(self._resources.snapshotables())
            if not tree.try_acquire_all(locks):
                try:
                    await _wait_for(tree, locks, self._turn_timeout)
                except BaseException as error:
                    return self._not_started(call, error, started_at)
            if self._direct and not stored:
                plan = self._plans.get(call.name)
                if plan is not None and plan.awaitable:
                    return await self._arun_direct(plan, tree, call, started_at)
            prepared = self._prepare(tree, call, started_at)
            if not isinstance(prepared, _Prepared):
                return prepared
            try:
                if prepared.plan.controlled:
                    returned = await self._ainvoke_controlled(prepared)
                else:
                    returned = await _ainvoke(prepared)
            except BaseException as error:  # cancellation included: rolled back
                return self._finished(prepared, error=error)
            if stored:  # the commit writes to the store: off the event loop
                return await _in_thread(self._finished, prepared, returned)  # type: ignore[no-any-return]  # a ToolResult
            return self._finished(prepared, returned)
        finally:
            left_call(entered)
            self._end_turn(tree, token, prepared)

    def _end_turn(
        self, tree: CallTree, token: Any, prepared: _Prepared | ToolResult[Any] | None
    ) -> None:
        """End a top-level call's tree (``token`` set) once its handler is done: at once,
        or, for a sync handler still running past its timeout, when it returns and what
        it did meanwhile is undone (the tree keeps the session and resources till then)."""
        late = prepared.late if isinstance(prepared, _Prepared) else None
        if late is not None and isinstance(prepared, _Prepared):
            release = token is not None
            if late.then(functools.partial(self._end_late, prepared, tree, release)):
                if token is not None:
                    reset_call_tree(token)
                return
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

    def _run_direct(
        self, plan: _Plan, tree: CallTree, call: ToolCall, started_at: datetime
    ) -> ToolResult[Any]:
        """A call of a plain handler on an executor that builds nothing per call and has
        no limit to check: ``_prepare``, ``_invoke`` and ``_finished`` written out as one
        phase, with a ``_Prepared`` built only when a failure path needs it."""
        # Kept for speed: on bench_executor's plain call it saves about 0.4 us of 10
        # (3-4%); the conftest's ``executor_path`` fixture runs tests both ways.
        ready = self._direct_ready(plan, tree, call, started_at)
        if isinstance(ready, ToolResult):
            return ready  # the recorded failure
        params, context, _saved = ready
        refusal: str | None = None
        try:
            if plan.policies:
                refusal = self._refusal(plan, params, context, call.call_id)
            if refusal is None:
                if plan.controlled:
                    returned = _first_attempt(plan, params, context)
                else:
                    returned = plan.tool.handler(params, context=context)  # type: ignore[misc]  # plain
                outcome, committed = self._commit(
                    plan, call, params, context, None, started_at, returned
                )
                if committed:
                    return outcome
        except BaseException as error:  # handled as the failure table says
            prepared = self._direct_prepared(plan, ready, tree, call, started_at)
            if isinstance(error, _AttemptFailed):
                return self._retried(prepared, error.error)
            return self._on_error(prepared, error)
        prepared = self._direct_prepared(plan, ready, tree, call, started_at)
        if refusal is not None:
            return self._denied(prepared, refusal)
        return self._fail(prepared, outcome, render=True)

    async def _arun_direct(
        self, plan: _Plan, tree: CallTree, call: ToolCall, started_at: datetime
    ) -> ToolResult[Any]:
        """``_run_direct``'s twin for ``aexecute``: an async handler (or a sync one's
        ``async_handler``) is awaited, a plain one (not ``in_thread``) runs inline."""
        # Kept for speed: an ``aexecute`` of a plain handler costs about 18% less than
        # through ``_prepare`` and ``_finished`` (an async handler's, about 4% less).
        ready = self._direct_ready(plan, tree, call, started_at)
        if isinstance(ready, ToolResult):
            return ready  # the recorded failure
        params, context, _saved = ready
        refusal: str | None = None
        try:
            if plan.policies:
                refusal = self._refusal(plan, params, context, call.call_id)
            if refusal is None:
                returned: Any
                if plan.controlled:
                    returned = await _afirst_attempt(plan, params, context)
                elif plan.tool.awaited_handler is not None:
                    returned = await plan.tool.awaited_handler(params, context=context)
                else:
                    returned = plan.tool.handler(params, context=context)  # type: ignore[misc]
                outcome, committed = self._commit(
                    plan, call, params, context, None, started_at, returned
                )
                if committed:
                    return outcome
        except BaseException as error:  # cancellation included: rolled back
            prepared = self._direct_prepared(plan, ready, tree, call, started_at)
            if isinstance(error, _AttemptFailed):
                return await self._aretried(prepared, error.error)
            return self._on_error(prepared, error)
        prepared = self._direct_prepared(plan, ready, tree, call, started_at)
        if refusal is not None:
            return self._denied(prepared, refusal)
        return self._fail(prepared, outcome, render=True)

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


def _text(call: ToolCall) -> str:
    """A call's arguments as JSON text, for a person to read."""
    arguments = call.arguments
    if isinstance(arguments, str):
        return arguments
    if isinstance(arguments, bytes):
        return arguments.decode("utf-8", "replace")
    return json.dumps(arguments, ensure_ascii=False, default=str)


async def _wait_for(tree: CallTree, locks: list[CallLock], timeout: float | None) -> None:
    """Wait until ``tree`` holds ``locks`` (another call tree has one).

    Waiting blocks a thread: not the event loop's, where the holder may be running.
    When the call is cancelled meanwhile, its tree ends and the thread stops waiting
    (``TurnRefused``), or its locks go when the tree ends.
    """
    import asyncio

    await asyncio.to_thread(tree.acquire_all, locks, timeout)


async def _settle(tasks: Sequence[asyncio.Future[ToolResult[Any]]]) -> None:
    """Wait until every task has finished, even when cancelled again meanwhile."""
    import asyncio

    while not all(task.done() for task in tasks):
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait(tasks)
