"""The transaction around a tool call's handler: save the state, run the handler,
then commit its result or roll everything back.

``_save`` takes the turns of the snapshotable resources and snapshots them and the
session; ``_invoke``/``_ainvoke`` run the handler; ``_finished`` commits a result
(``_commit``: checked against the declared result type, rendered through the result
contract, shown to the policies, recorded) or rolls the call back and records why
(``_on_error``, ``_fail``, ``_rollback``).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import threading
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from wink import telemetry
from wink._error_text import describe_error, error_message, type_label
from wink._lazy_logging import LazyLogger
from wink.contract import ContractViolation, describe_problems, type_name
from wink.contract.instances import conforms, declared_class
from wink.errors import (
    DeadlineExceededError,
    PromptEvaluationError,
    VisibilityExpansionRequired,
)
from wink.resources import ResourceRegistry, Snapshotable, ToolCallScope
from wink.runtime._recording import _Recording, _render_failure
from wink.runtime._turns import CallLock, CallTree, TurnRefused, lock_of
from wink.runtime.budget import BudgetExceededError
from wink.runtime.call import ToolCall
from wink.runtime.session import Session
from wink.runtime.snapshot import Snapshot
from wink.tools import Tool, ToolContext, ToolResult, ToolRetry
from wink.tools.controls import cut_output
from wink.tools.result import render_value

if TYPE_CHECKING:
    import asyncio

    from wink.runtime._admission import _Plan

# The executor's steps log under the name of the module users know (and configure).
logger = LazyLogger("wink.runtime.executor")

_PROPAGATED = (
    VisibilityExpansionRequired,
    PromptEvaluationError,
    DeadlineExceededError,
    BudgetExceededError,
)


_Saved = tuple[Snapshot, Sequence[tuple[Snapshotable, object]]]

_Resources = ResourceRegistry | ToolCallScope

_Broken = list[tuple[object, BaseException]]


class _CannotStart(Exception):
    """The call could not be prepared (a snapshot failed, a wait would deadlock)."""


class _WrongReturn(Exception):
    """A handler returned no ``ToolResult`` and the executor raises handler errors."""


class _NeedsAwait(Exception):
    """``execute`` met an async tool while an event loop runs in its thread."""


class _Prepared:
    """A call ready for its handler: what the phases after it need."""

    __slots__ = (
        "attempts",
        "call",
        "context",
        "earlier",
        "late",
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
        self.attempts = 1
        """Which attempt of the handler runs (``Retries``)."""
        self.earlier: tuple[str, ...] = ()
        """Why each attempt before this one failed (``ToolInvoked.earlier_attempts``)."""
        self.late: _Late | None = None
        """A sync handler that outlived its timeout and still runs: when it returns, its
        changes are undone and only then does the call's tree end."""


class _Transaction(_Recording):
    """The executor's steps from saving the state to committing or rolling back."""

    __slots__ = ()

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
                prepared.earlier,
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
        if isinstance(error, _TimedOut) and error.by_deadline:
            error = DeadlineExceededError(
                f"the deadline passed while tool {prepared.call.name!r} ran "
                f"({error.seconds:.3f}s were left)"
            )
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
        if isinstance(error, ToolRetry):
            return self._fail(prepared, ToolResult.error(error.message), render=True)
        if isinstance(error, _TimedOut):
            logger.info("tool %r timed out after %ss", tool.name, error.seconds)
            message = _timed_out(tool, error)
            if prepared.attempts > 1:
                message += f" (attempt {prepared.attempts}, the last)"
            return self._fail(prepared, ToolResult.error(message), render=True)
        if isinstance(error, Exception):
            # A bug in the handler: the model is told, and so is the developer.
            logger.warning("tool %r raised", tool.name, exc_info=error)
            telemetry.note_error(error)
            failure: ToolResult[Any] = ToolResult.error(_raised(tool, error, prepared.attempts))
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
        earlier: tuple[str, ...] = (),
    ) -> tuple[ToolResult[Any], bool]:
        """Record a successful result and return it rendered, with ``True``; or the
        failure to return, with ``False``. ``earlier``: why the attempts before this
        one failed.

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
        limit = plan.max_output
        if limit is not None and len(text) > limit:
            # Only the model's text is cut: the value is recorded whole.
            text = cut_output(text, limit, tool.more_output)
        try:
            # A new result carrying the text, so that providers need not render it again;
            # the handler's own is left as it is (the handler may keep it, or share it).
            result = returned.rendered_as(text)
            for policy in plan.policies:
                policy.on_result(tool, params, result, context=context)
            if scope is not None:
                # Closed before the call is recorded: a close that is interrupted
                # (a BaseException) must not leave a success on record.
                _close_scope(scope, call.name)
            self._record(
                call, params, result, text, started_at, value_type, earlier_attempts=earlier
            )
        except _PROPAGATED:
            raise
        except Exception as error:
            return _not_applied(tool, error), False
        return result, True

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
            earlier_attempts=prepared.earlier,
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


class _TimedOut(Exception):
    """A handler ran past its tool's timeout (or the deadline, when that came first)."""

    def __init__(self, seconds: float, by_deadline: bool, running: bool) -> None:
        super().__init__(f"timed out after {seconds:g}s")
        self.seconds = seconds
        self.by_deadline = by_deadline
        self.running = running
        """Whether the handler still runs (a sync one in its own thread)."""


class _Late:
    """A sync handler run in a thread of its own, so that its call can stop waiting."""

    __slots__ = ("_lock", "_then", "done", "error", "returned")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.returned: object = None
        self.error: BaseException | None = None
        self._lock = threading.Lock()
        self._then: Callable[[], None] | None = None

    def run(self, handler: Callable[..., Any], params: Any, context: ToolContext) -> None:
        try:
            self.returned = handler(params, context=context)
        except BaseException as error:  # handed to the waiting call, or dropped when late
            self.error = error
        finally:
            with self._lock:
                self.done.set()
                then = self._then
            if then is not None:
                then()

    def outcome(self) -> object:
        if self.error is not None:
            raise self.error
        return self.returned

    def then(self, callback: Callable[[], None]) -> bool:
        """Run ``callback`` in the handler's thread once it has returned; ``False`` (and
        nothing run) when it has returned already."""
        with self._lock:
            if self.done.is_set():
                return False
            self._then = callback
            return True


class _Controlled(_Transaction):
    """Running a handler under its tool's timeout and retries."""

    __slots__ = ()

    def _time_limit(self, plan: _Plan) -> tuple[float, bool] | None:
        """Seconds the handler may run, and whether the deadline (not the tool's
        timeout) sets them; ``None`` without a timeout."""
        seconds = plan.tool.timeout
        if seconds is None:
            return None
        deadline = self._deadline
        if deadline is not None:
            left = max(deadline.remaining().total_seconds(), 0.0)
            if left < seconds:
                return left, True
        return seconds, False

    def _invoke_controlled(
        self, prepared: _Prepared, failed: BaseException | None = None
    ) -> object:
        """``_invoke`` under the tool's timeout, attempt after attempt as its retries say;
        ``failed``: the error of a first attempt that ran already (a direct call's)."""
        error = failed
        while True:
            if error is not None:
                delay = self._next_attempt(prepared, error)
                if delay is None:
                    raise error
                time.sleep(delay)
            try:
                return self._invoke_once(prepared)
            except BaseException as raised:
                error = raised

    async def _ainvoke_controlled(
        self, prepared: _Prepared, failed: BaseException | None = None
    ) -> object:
        """``_invoke_controlled``'s twin for ``aexecute``."""
        import asyncio

        error = failed
        while True:
            if error is not None:
                delay = self._next_attempt(prepared, error)
                if delay is None:
                    raise error
                await asyncio.sleep(delay)
            try:
                return await self._ainvoke_once(prepared)
            except BaseException as raised:
                error = raised

    def _retried(self, prepared: _Prepared, failed: BaseException) -> ToolResult[Any]:
        """A direct call whose first attempt raised ``failed``: the attempts its retries
        allow, then the last one committed or rolled back."""
        try:
            returned = self._invoke_controlled(prepared, failed)
        except BaseException as error:  # handled as the failure table says
            return self._on_error(prepared, error)
        return self._returned(prepared, returned)

    async def _aretried(self, prepared: _Prepared, failed: BaseException) -> ToolResult[Any]:
        """``_retried``'s twin for ``aexecute``."""
        try:
            returned = await self._ainvoke_controlled(prepared, failed)
        except BaseException as error:  # cancellation included: rolled back
            return self._on_error(prepared, error)
        return self._returned(prepared, returned)

    def _invoke_once(self, prepared: _Prepared) -> object:
        limit = self._time_limit(prepared.plan)
        if limit is None:
            return _invoke(prepared)
        seconds, by_deadline = limit
        tool = prepared.plan.tool
        if tool.is_async:
            import asyncio

            try:
                asyncio.get_running_loop()
            except RuntimeError:
                handler: Callable[..., Any] = tool.handler  # type: ignore[assignment]  # checked
                coroutine = handler(prepared.params, context=prepared.context)
                return asyncio.run(_within(coroutine, seconds, by_deadline))
            return _invoke(prepared)  # raises _NeedsAwait, as without a timeout
        if tool.in_thread:
            return _invoke_timed(prepared, seconds, by_deadline)
        started = time.monotonic()
        returned = _invoke(prepared)
        # Run inline, it could not be stopped: a late result is discarded (rolled back).
        if time.monotonic() - started > seconds:
            raise _TimedOut(seconds, by_deadline, running=False)
        return returned

    async def _ainvoke_once(self, prepared: _Prepared) -> object:
        limit = self._time_limit(prepared.plan)
        if limit is None:
            return await _ainvoke(prepared)
        seconds, by_deadline = limit
        tool = prepared.plan.tool
        if tool.awaited_handler is not None:
            coroutine = tool.awaited_handler(prepared.params, context=prepared.context)
            return await _within(coroutine, seconds, by_deadline)
        if tool.in_thread:
            return await _in_thread(_invoke_timed, prepared, seconds, by_deadline)
        return self._invoke_once(prepared)

    def _next_attempt(self, prepared: _Prepared, error: BaseException) -> float | None:
        """After a failed attempt: roll it back, record it and return the seconds to wait
        before the next one; ``None`` when there is none (``error`` then stands)."""
        retries = prepared.plan.retries
        if retries is None or prepared.attempts >= retries.attempts:
            return None
        if not isinstance(error, Exception) or isinstance(error, _NOT_RETRIED):
            return None
        if isinstance(error, _TimedOut) and (error.running or error.by_deadline):
            return None
        tool = prepared.plan.tool
        try:
            wanted = retries.when(error)
        except Exception:
            logger.warning("Retries.when of tool %r raised; not retried", tool.name, exc_info=True)
            return None
        if wanted is not True:
            return None
        delay = retries.delay(prepared.attempts)
        if self._deadline is not None and self._deadline.remaining().total_seconds() <= delay:
            return None  # the deadline would pass before the next attempt
        if self._budget_tracker is not None:
            try:
                self._budget_tracker.check()
            except BudgetExceededError:
                return None
        if self._rollback(prepared):
            # Its state is unknown: no attempt may start on it. The call's own rollback
            # tries again and says what could not be restored.
            return None
        message = (
            f"Tool {tool.name!r} attempt {prepared.attempts} of {retries.attempts} failed: "
            f"{_attempt_error(tool, error)}; rolled back, tried again in {delay:.3f}s"
        )
        logger.info("%s", message)
        prepared.earlier += (message,)
        prepared.saved = self._save(prepared.resources, prepared.tree)
        prepared.attempts += 1
        return delay

    def _end_late(self, prepared: _Prepared, tree: CallTree, release: bool) -> None:
        """Undo what a timed-out sync handler did after its call was rolled back (it has
        just returned); then end the call's tree, which kept every lock meanwhile."""
        try:
            if not tree.done:
                broken = self._rollback(prepared)
                for target, error in broken:
                    logger.error(
                        "tool %r returned after its timeout and %s could not be restored: %s",
                        prepared.plan.tool.name,
                        _what(target),
                        describe_error(error),
                    )
        finally:
            if release:
                tree.release_all()


class _AttemptFailed(Exception):
    """A direct call's first attempt raised ``error`` and its tool has retries."""

    def __init__(self, error: Exception) -> None:
        super().__init__(error)
        self.error = error


def _first_attempt(plan: _Plan, params: Any, context: ToolContext) -> object:
    """A direct call's handler, a plain one run inline under its tool's controls: a
    result later than the timeout is ``_TimedOut`` (it ran to its end, so it could not be
    stopped); an error is ``_AttemptFailed`` when the tool has retries."""
    tool = plan.tool
    handler: Callable[..., Any] = tool.handler  # type: ignore[assignment]  # checked in _plan_of
    seconds = tool.timeout
    started = time.monotonic()
    try:
        returned = handler(params, context=context)
        if seconds is not None and time.monotonic() - started > seconds:
            raise _TimedOut(seconds, by_deadline=False, running=False)
    except Exception as error:
        if plan.retries is None:
            raise
        raise _AttemptFailed(error) from None
    return returned


async def _afirst_attempt(plan: _Plan, params: Any, context: ToolContext) -> object:
    """``_first_attempt``'s twin for ``aexecute``: an async handler is awaited, cancelled
    at its tool's timeout."""
    tool = plan.tool
    handler = tool.awaited_handler
    if handler is None:
        return _first_attempt(plan, params, context)
    seconds = tool.timeout
    try:
        if seconds is None:
            return await handler(params, context=context)
        return await _within(handler(params, context=context), seconds, by_deadline=False)
    except Exception as error:
        if plan.retries is None:
            raise
        raise _AttemptFailed(error) from None


async def _within(coroutine: Any, seconds: float, by_deadline: bool) -> object:
    """Await ``coroutine``, cancelled after ``seconds`` (then ``_TimedOut``)."""
    import asyncio

    try:
        async with asyncio.timeout(seconds) as scope:
            return await coroutine
    except TimeoutError:
        if scope.expired():
            raise _TimedOut(seconds, by_deadline, running=False) from None
        raise


def _invoke_timed(prepared: _Prepared, seconds: float, by_deadline: bool) -> object:
    """Run a sync handler in a thread of its own and wait at most ``seconds`` for it."""
    late = _Late()
    tool = prepared.plan.tool
    handler: Callable[..., Any] = tool.handler  # type: ignore[assignment]  # checked in _prepare
    context = contextvars.copy_context()  # its sub-calls belong to this call's tree
    thread = threading.Thread(
        target=context.run,
        args=(late.run, handler, prepared.params, prepared.context),
        name=f"wink tool {tool.name}",
        daemon=True,
    )
    thread.start()
    if late.done.wait(seconds):
        return late.outcome()
    prepared.late = late
    raise _TimedOut(seconds, by_deadline, running=True)


def _timed_out(tool: Tool[Any, Any], error: _TimedOut) -> str:
    return (
        f"Tool {tool.name!r} did not finish within its timeout of {error.seconds:g}s, so "
        "nothing it did was kept; try a smaller request, or another way"
    )


def _attempt_error(tool: Tool[Any, Any], error: BaseException) -> str:
    if isinstance(error, _TimedOut):
        return f"timed out after {error.seconds:g}s"
    return f"raised {describe_error(error)}"


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
    """Await an async handler (or a sync one's ``async_handler``); run a sync one inline,
    or in a worker thread when its tool says ``in_thread=True``."""
    tool = prepared.plan.tool
    if tool.awaited_handler is not None:
        return await tool.awaited_handler(prepared.params, context=prepared.context)
    handler: Callable[..., Any] = tool.handler  # type: ignore[assignment]  # checked in _prepare
    if tool.in_thread:
        return await _in_thread(handler, prepared.params, context=prepared.context)
    return handler(prepared.params, context=prepared.context)


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


def _raised(tool: Tool[Any, Any], error: BaseException, attempts: int = 1) -> str:
    if attempts > 1:
        return f"Tool {tool.name!r} raised {describe_error(error)} (attempt {attempts}, the last)"
    return f"Tool {tool.name!r} raised {describe_error(error)}"


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


# Errors no retry can help: the model must change its call, or the evaluation stops.
_NOT_RETRIED = (ToolRetry, _CannotStart, _WrongReturn, _NeedsAwait, *_PROPAGATED)
