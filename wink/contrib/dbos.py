"""Durable evaluations on DBOS: an evaluation that a crash does not lose.

One DBOS workflow runs one ``evaluate`` of one stored session. Each model request is
a step, so its reply is checkpointed and a recovered workflow never sends it again;
each tool call is a step whose checkpointed output is what the call changed in the
session (its ``ToolInvoked`` and the events it committed), so a recovered workflow
re-applies the recorded change and never runs a completed handler again. The
evaluation loop itself (rendering, parsing, limits, output retries) stays in the
workflow and runs again on recovery, deterministic given the checkpointed steps.

The session lives in a session store (``sqlite:///...`` or ``postgresql://...``):
the workflow stores each call as the session's next version, and a write a
recovering workflow finds already stored (the crash came after it) is skipped, so
the stored session ends as an uninterrupted run leaves it.

Prompts and adapters are named by reference (``"package.module:attribute"``, an
object or a function of no arguments that builds it) so that a recovering process
rebuilds them; a prompt whose tools changed since the workflow started is refused
(``DurableEvaluationError``) rather than mixed.

An evaluation that reaches a turn whose calls a policy defers (``ApprovalPolicy``)
does not fail: the workflow publishes the calls it awaits (``EvaluationHandle.awaiting``)
and waits, with DBOS's durable messages, for ``send_decisions``; it then goes on from
that turn as ``adapter.resume`` would, in this process or after a restart.

Needs the ``dbos`` extra; the application configures and launches DBOS itself
(``DBOS(config=...)``, ``DBOS.launch()``), after importing this module.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import json
from collections.abc import Generator, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from dbos import DBOS, Queue, SetWorkflowID, WorkflowHandle, WorkflowHandleAsync, WorkflowStatus

from wink._error_text import bounded, describe_error
from wink.adapters.approval import ApprovalPending
from wink.adapters.loop import (
    END_OF_STREAM,
    LoopAdapter,
    ModelRequest,
    NextChunk,
    RefreshTools,
    ToolTurn,
    Wait,
    evaluation_steps,
)
from wink.adapters.protocol import DEFAULT_MAX_TURNS, DEFAULT_OUTPUT_RETRIES
from wink.adapters.response import PromptResponse
from wink.errors import WinkError
from wink.policy.approval import Approval, ApprovalRequest
from wink.prompt import Prompt
from wink.runtime.call import ToolCall
from wink.runtime.events import ToolInvoked
from wink.runtime.executor import ToolExecutor
from wink.runtime.session import Session
from wink.runtime.snapshot import Snapshot
from wink.store import SessionStore, StoredChange, VersionConflict, open_store
from wink.store._changes import apply_change, change_between, snapshot_text
from wink.tools import ToolResult
from wink.tools.context import idempotency_key_set, idempotency_key_unset

__all__ = [
    "AWAITING_EVENT",
    "DECISIONS_TOPIC",
    "STEP_NAMES",
    "WORKFLOW_NAMES",
    "DurableEvaluation",
    "DurableEvaluationError",
    "EvaluationHandle",
    "asend_decisions",
    "astart_evaluation",
    "cancel_evaluation",
    "evaluate_durably",
    "lookup_evaluation",
    "send_decisions",
    "start_evaluation",
    "workflow_id_of",
]

WORKFLOW_NAMES = ("wink.evaluate", "wink.aevaluate")
"""The registered names of the blocking and the async evaluation workflows. Recorded in
DBOS's system database: renaming one strands the workflows started under the old name."""

STEP_NAMES = (
    "wink.session.begin",
    "wink.model.request",
    "wink.model.stream",
    "wink.tool.call",
    "wink.model.arequest",
    "wink.model.astream",
    "wink.tool.acall",
)
"""The registered names of the steps, compatibility data as the workflows' are: the
session's state at the start, a model request, a streamed model request read whole, a
tool call, and the async workflow's twins of the last three."""


AWAITING_EVENT = "wink.awaiting"
"""The workflow event listing the calls an evaluation awaits decisions on (empty when
none): compatibility data, read by ``EvaluationHandle.awaiting``."""

DECISIONS_TOPIC = "wink.decisions"
"""The topic of the messages carrying a person's decisions (``send_decisions``):
compatibility data, as the step names are."""

_DECISION_WAIT_SECONDS = 3600.0
"""How long one durable ``recv`` waits before waiting again: a person may take days."""


class DurableEvaluationError(WinkError):
    """A durable evaluation cannot start or go on: a reference that does not name a
    prompt or an adapter, or a prompt whose tools changed since the workflow started."""


@dataclass(frozen=True, slots=True)
class DurableEvaluation:
    """What a workflow evaluates: recorded as its input, so that plain strings and numbers."""

    store_url: str
    """The session store (``open_store`` URL)."""
    session_id: str
    """The stored session the evaluation runs on."""
    evaluation: str
    """Which evaluation of that session this is; with ``session_id``, the workflow id."""
    prompt: str
    """``"module:attribute"``: a ``Prompt``, or a function of no arguments returning one."""
    adapter: str
    """``"module:attribute"``: a ``LoopAdapter``, or a function of no arguments returning one."""
    tools: tuple[tuple[str, str], ...] = ()
    """Each tool's name and the digest of its schemas when the evaluation was started."""
    max_turns: int = DEFAULT_MAX_TURNS
    """As for ``evaluate``."""
    output_retries: int = DEFAULT_OUTPUT_RETRIES
    """As for ``evaluate``."""


def workflow_id_of(session_id: str, evaluation: str) -> str:
    """The workflow id of evaluation ``evaluation`` of session ``session_id``."""
    return f"wink:{session_id}:{evaluation}"


@dataclass(frozen=True, slots=True)
class EvaluationHandle:
    """A started durable evaluation: await its response, ask its status, cancel it."""

    workflow_id: str
    """The DBOS workflow's id (``workflow_id_of``)."""
    started: WorkflowHandle[Any] | None = field(default=None, compare=False, repr=False)
    """DBOS's handle when this process started the blocking workflow (its result is
    then awaited directly rather than polled for), else ``None``."""
    astarted: WorkflowHandleAsync[Any] | None = field(default=None, compare=False, repr=False)
    """The same for the async workflow."""

    def result(self) -> PromptResponse[Any]:
        """Wait for the response (re-raising the evaluation's error)."""
        started = self.started or DBOS.retrieve_workflow(self.workflow_id)
        response: PromptResponse[Any] = started.get_result()
        return response

    async def aresult(self) -> PromptResponse[Any]:
        """``result`` without blocking the event loop."""
        started = self.astarted or await DBOS.retrieve_workflow_async(self.workflow_id)
        response: PromptResponse[Any] = await started.get_result()
        return response

    def status(self) -> str:
        """DBOS's status of the workflow: ``PENDING``, ``ENQUEUED``, ``SUCCESS``, ``ERROR``,
        ``CANCELLED``..."""
        found: WorkflowStatus | None = DBOS.get_workflow_status(self.workflow_id)
        return "UNKNOWN" if found is None else found.status

    def cancel(self) -> None:
        """Stop the workflow at its next step; the steps done stay recorded."""
        DBOS.cancel_workflow(self.workflow_id)

    def awaiting(self) -> tuple[ApprovalRequest, ...]:
        """The calls the evaluation waits for a person's decisions on (``send_decisions``);
        empty when it waits for none."""
        found = DBOS.get_event(self.workflow_id, AWAITING_EVENT, timeout_seconds=0)
        return _requests_of(found)

    async def aawaiting(self) -> tuple[ApprovalRequest, ...]:
        """``awaiting`` without blocking the event loop."""
        found = await DBOS.get_event_async(self.workflow_id, AWAITING_EVENT, timeout_seconds=0)
        return _requests_of(found)


def _requests_of(found: Any) -> tuple[ApprovalRequest, ...]:
    return () if not found else tuple(ApprovalRequest(**request) for request in found)


def send_decisions(evaluation: str | EvaluationHandle, decisions: Mapping[str, Approval]) -> None:
    """Send a person's decisions to a durable evaluation waiting for them (its workflow
    id or handle): ``decisions`` maps each awaiting call id (``EvaluationHandle.awaiting``)
    to ``Approval.approve()``, ``Approval.approve(arguments=...)`` or
    ``Approval.deny(reason)``; the evaluation then goes on from its awaiting turn. Raises
    ``DurableEvaluationError`` when it awaits no decisions, a decision names a call that
    does not await one, or a call is left undecided."""
    handle = EvaluationHandle(evaluation) if isinstance(evaluation, str) else evaluation
    awaiting = handle.awaiting()
    status = "" if awaiting else handle.status()
    message = _decisions_message(handle.workflow_id, awaiting, status, decisions)
    DBOS.send(handle.workflow_id, message, DECISIONS_TOPIC)


async def asend_decisions(
    evaluation: str | EvaluationHandle, decisions: Mapping[str, Approval]
) -> None:
    """``send_decisions`` without blocking the event loop."""
    handle = EvaluationHandle(evaluation) if isinstance(evaluation, str) else evaluation
    awaiting = await handle.aawaiting()
    status = ""
    if not awaiting:
        found = await DBOS.get_workflow_status_async(handle.workflow_id)
        status = "UNKNOWN" if found is None else found.status
    message = _decisions_message(handle.workflow_id, awaiting, status, decisions)
    await DBOS.send_async(handle.workflow_id, message, DECISIONS_TOPIC)


def _decisions_message(
    workflow_id: str,
    awaiting: tuple[ApprovalRequest, ...],
    status: str,
    decisions: Mapping[str, Approval],
) -> dict[str, dict[str, Any]]:
    """The message carrying ``decisions``, checked against the calls awaiting."""
    where = f"workflow {bounded(workflow_id)!r}"
    if not awaiting:
        raise DurableEvaluationError(
            f"{where} awaits no decisions (its status is {status}); send decisions "
            "once EvaluationHandle.awaiting() lists calls"
        )
    listed = ", ".join(f"{request.call_id!r} ({request.tool_name})" for request in awaiting)
    awaited = {request.call_id for request in awaiting}
    for call_id, decision in decisions.items():
        if call_id not in awaited:
            raise DurableEvaluationError(
                f"{where}: a decision was given for call {bounded(str(call_id))!r}, which does "
                f"not await one; the calls awaiting a decision are {bounded(listed)}"
            )
        if not isinstance(decision, Approval):
            raise DurableEvaluationError(
                f"{where}: the decision for call {call_id!r} is a {type(decision).__name__}; "
                "give Approval.approve(), Approval.approve(arguments=...) or "
                "Approval.deny(reason)"
            )
    missing = [f"{r.call_id!r} ({r.tool_name})" for r in awaiting if r.call_id not in decisions]
    if missing:
        raise DurableEvaluationError(
            f"{where}: no decision was given for {bounded(', '.join(missing))}; each awaiting "
            "call needs one"
        )
    return {call_id: _decision_data(decision) for call_id, decision in decisions.items()}


def start_evaluation(
    store_url: str,
    session_id: str,
    *,
    prompt: str,
    adapter: str,
    evaluation: str = "1",
    queue: str | None = None,
    max_turns: int = DEFAULT_MAX_TURNS,
    output_retries: int = DEFAULT_OUTPUT_RETRIES,
) -> EvaluationHandle:
    """Start (or, for an id already started, find) the workflow evaluating ``prompt``
    with ``adapter`` on session ``session_id`` of ``store_url``; with ``queue``, enqueue
    it on that registered DBOS queue for whichever worker is free."""
    request = _request(
        store_url, session_id, prompt, adapter, evaluation, max_turns, output_retries
    )
    with SetWorkflowID(workflow_id_of(session_id, evaluation)):
        handle: WorkflowHandle[Any]
        if queue is None:
            handle = DBOS.start_workflow(_evaluate_workflow, request)
        else:
            handle = _queue(queue).enqueue(_evaluate_workflow, request)
    return EvaluationHandle(handle.workflow_id, handle)


async def astart_evaluation(
    store_url: str,
    session_id: str,
    *,
    prompt: str,
    adapter: str,
    evaluation: str = "1",
    queue: str | None = None,
    max_turns: int = DEFAULT_MAX_TURNS,
    output_retries: int = DEFAULT_OUTPUT_RETRIES,
) -> EvaluationHandle:
    """``start_evaluation`` with the async workflow: requests awaited (``asend``), async
    handlers awaited (``aexecute``)."""
    request = _request(
        store_url, session_id, prompt, adapter, evaluation, max_turns, output_retries
    )
    with SetWorkflowID(workflow_id_of(session_id, evaluation)):
        handle: WorkflowHandleAsync[Any]
        if queue is None:
            handle = await DBOS.start_workflow_async(_aevaluate_workflow, request)
        else:
            handle = await _queue(queue).enqueue_async(_aevaluate_workflow, request)
    return EvaluationHandle(handle.workflow_id, astarted=handle)


def evaluate_durably(
    store_url: str,
    session_id: str,
    *,
    prompt: str,
    adapter: str,
    evaluation: str = "1",
    max_turns: int = DEFAULT_MAX_TURNS,
    output_retries: int = DEFAULT_OUTPUT_RETRIES,
) -> PromptResponse[Any]:
    """``start_evaluation`` and wait for its response."""
    return start_evaluation(
        store_url,
        session_id,
        prompt=prompt,
        adapter=adapter,
        evaluation=evaluation,
        max_turns=max_turns,
        output_retries=output_retries,
    ).result()


def lookup_evaluation(session_id: str, evaluation: str = "1") -> EvaluationHandle | None:
    """The handle of that evaluation's workflow, or ``None`` when none was started."""
    workflow_id = workflow_id_of(session_id, evaluation)
    if DBOS.get_workflow_status(workflow_id) is None:
        return None
    return EvaluationHandle(workflow_id)


def cancel_evaluation(session_id: str, evaluation: str = "1") -> None:
    """Cancel that evaluation's workflow (see ``EvaluationHandle.cancel``)."""
    DBOS.cancel_workflow(workflow_id_of(session_id, evaluation))


def _queue(name: str) -> Queue:
    found = DBOS.retrieve_queue(name)
    if found is None:
        raise DurableEvaluationError(
            f"no DBOS queue named {bounded(name)!r} is registered; register it with "
            "DBOS.register_queue(name, worker_concurrency=...) once DBOS is launched"
        )
    return found


# Rebuilding by reference.


def _request(
    store_url: str,
    session_id: str,
    prompt: str,
    adapter: str,
    evaluation: str,
    max_turns: int,
    output_retries: int,
) -> DurableEvaluation:
    built = _prompt_of(prompt)
    _adapter_of(adapter)  # refused now rather than in the worker
    return DurableEvaluation(
        store_url,
        session_id,
        evaluation,
        prompt,
        adapter,
        _tool_digests(built),
        max_turns,
        output_retries,
    )


def _resolve(reference: str, what: str) -> Any:
    module_name, colon, attribute = reference.partition(":")
    if not colon or not module_name or not attribute:
        raise DurableEvaluationError(
            f"the {what} reference {bounded(reference)!r} is not of the form 'module:attribute'"
        )
    try:
        found: Any = importlib.import_module(module_name)
        for part in attribute.split("."):
            found = getattr(found, part)
    except (ImportError, AttributeError) as error:
        raise DurableEvaluationError(
            f"the {what} reference {bounded(reference)!r} cannot be resolved: "
            f"{describe_error(error)}"
        ) from error
    return found


def _prompt_of(reference: str) -> Prompt[Any]:
    found = _resolve(reference, "prompt")
    if not isinstance(found, Prompt) and callable(found):
        found = found()
    if not isinstance(found, Prompt):
        raise DurableEvaluationError(
            f"the prompt reference {bounded(reference)!r} names a {type(found).__name__}, "
            "not a Prompt or a function of no arguments returning one"
        )
    return found


def _adapter_of(reference: str) -> LoopAdapter:
    found = _resolve(reference, "adapter")
    if not isinstance(found, LoopAdapter) and callable(found):
        found = found()
    if not isinstance(found, LoopAdapter):
        raise DurableEvaluationError(
            f"the adapter reference {bounded(reference)!r} names a {type(found).__name__}, "
            "not a LoopAdapter or a function of no arguments returning one"
        )
    return found


def _tool_digests(prompt: Prompt[Any]) -> tuple[tuple[str, str], ...]:
    """Each rendered tool's name and a digest of what the model and the store see of it."""
    digests = []
    for tool in prompt.render().tools:
        text = json.dumps(
            [tool.description, tool.params_schema, tool.result_schema], sort_keys=True
        )
        digests.append((tool.name, hashlib.sha256(text.encode()).hexdigest()[:16]))
    return tuple(digests)


def _checked_prompt(request: DurableEvaluation, workflow_id: str) -> Prompt[Any]:
    prompt = _prompt_of(request.prompt)
    now = dict(_tool_digests(prompt))
    then = dict(request.tools)
    if now == then:
        return prompt
    changes = [f"{name!r} was removed" for name in then if name not in now]
    changes += [f"{name!r} was added" for name in now if name not in then]
    changes += [
        f"{name!r} changed its description or schemas"
        for name in then
        if name in now and now[name] != then[name]
    ]
    raise DurableEvaluationError(
        f"workflow {bounded(workflow_id)!r}: the tools of prompt {bounded(request.prompt)!r} "
        f"changed since it started ({bounded('; '.join(changes))}); finish or cancel it with "
        "the code it started with, then start a new evaluation"
    )


# Waiting for a person.


def _decision_data(decision: Approval) -> dict[str, Any]:
    # Plain data in the message, so that a recovering process reads it whatever
    # ``Approval`` has become.
    arguments = None if decision.arguments is None else dict(decision.arguments)
    return {"approved": decision.approved, "reason": decision.reason, "arguments": arguments}


def _decisions_of(
    message: Any, awaiting: tuple[ApprovalRequest, ...]
) -> dict[str, Approval] | None:
    """The decisions a message carries, or ``None`` for one that does not decide exactly
    the calls awaiting (sent for an earlier pause, or none before the wait ended)."""
    if not isinstance(message, dict) or set(message) != {r.call_id for r in awaiting}:
        return None
    return {
        call_id: Approval(data["approved"], data["reason"], data["arguments"])
        for call_id, data in message.items()
    }


def _awaiting_data(pending: ApprovalPending) -> list[dict[str, Any]]:
    return [asdict(request) for request in pending.requests]


def _wait_for_decisions(pending: ApprovalPending) -> dict[str, Approval]:
    """Publish the calls awaiting and wait for their decisions; both durable, so a
    recovering workflow finds the decisions it received before."""
    DBOS.set_event(AWAITING_EVENT, _awaiting_data(pending))
    while True:
        message = DBOS.recv(DECISIONS_TOPIC, _DECISION_WAIT_SECONDS)
        decisions = _decisions_of(message, pending.requests)
        if decisions is not None:
            DBOS.set_event(AWAITING_EVENT, [])
            return decisions


async def _await_decisions(pending: ApprovalPending) -> dict[str, Approval]:
    """``_wait_for_decisions`` for the async workflow."""
    await DBOS.set_event_async(AWAITING_EVENT, _awaiting_data(pending))
    while True:
        message = await DBOS.recv_async(DECISIONS_TOPIC, _DECISION_WAIT_SECONDS)
        decisions = _decisions_of(message, pending.requests)
        if decisions is not None:
            await DBOS.set_event_async(AWAITING_EVENT, [])
            return decisions


# The steps.


@dataclass(frozen=True, slots=True)
class _Begin:
    version: int
    document: str


@dataclass(frozen=True, slots=True)
class _CallOutcome:
    """What a tool call's step records: the change it made to the session, and the error
    that must end the evaluation, if one did."""

    body: str
    ops: str
    error: BaseException | None = None


@dataclass(slots=True)
class _Ran:
    """Set by a step's body, so that the workflow tells a call run now from one replayed."""

    value: bool = False
    result: ToolResult[Any] | None = None


@DBOS.step(name="wink.session.begin")
def _begin_step(store_url: str, session_id: str) -> _Begin:
    store = open_store(store_url)
    try:
        session = Session.open(store, session_id)
        version = session.stored_version or 0
        return _Begin(version, session.snapshot().to_json())
    finally:
        store.close()


@DBOS.step(name="wink.model.request")
def _request_step(adapter: LoopAdapter, request: ModelRequest) -> Any:
    return adapter.send(request)


@DBOS.step(name="wink.model.stream")
def _stream_step(adapter: LoopAdapter, request: ModelRequest) -> list[Any]:
    chunks = adapter.open_stream(request)
    try:
        return list(_chunks(chunks))
    finally:
        chunks.close()


@DBOS.step(name="wink.model.arequest")
async def _arequest_step(adapter: LoopAdapter, request: ModelRequest) -> Any:
    return await adapter.asend(request)


@DBOS.step(name="wink.model.astream")
async def _astream_step(adapter: LoopAdapter, request: ModelRequest) -> list[Any]:
    chunks = await adapter.aopen_stream(request)
    try:
        return [chunk async for chunk in chunks]
    finally:
        await chunks.aclose()


@DBOS.step(name="wink.tool.call")
def _call_step(run: _Run, executor: ToolExecutor, call: ToolCall, key: str, ran: _Ran) -> Any:
    before = run.session.snapshot()
    token = idempotency_key_set(key)
    error: BaseException | None = None
    try:
        ran.result = executor.execute(call)
    except Exception as raised:  # it ends the evaluation; its call is recorded already
        error = raised
    finally:
        idempotency_key_unset(token)
    ran.value = True
    return run.outcome(before, error)


@DBOS.step(name="wink.tool.acall")
async def _acall_step(
    run: _Run, executor: ToolExecutor, call: ToolCall, key: str, ran: _Ran
) -> Any:
    before = run.session.snapshot()
    token = idempotency_key_set(key)
    error: BaseException | None = None
    try:
        ran.result = await executor.aexecute(call)
    except Exception as raised:
        error = raised
    finally:
        idempotency_key_unset(token)
    ran.value = True
    return run.outcome(before, error)


def _chunks(chunks: Any) -> Iterator[Any]:
    while True:
        chunk = next(chunks, END_OF_STREAM)
        if chunk is END_OF_STREAM:
            return
        yield chunk


# The workflow's state.


@dataclass
class _Run:
    """One workflow run: the session it rebuilds and the store it keeps up to date."""

    request: DurableEvaluation
    workflow_id: str
    store: SessionStore
    session: Session = field(init=False)
    stored: Snapshot = field(init=False)
    version: int = 0
    keys: set[str] = field(default_factory=set)
    encoded: tuple[Snapshot, Snapshot, tuple[str, str, int] | None] | None = None
    """The last call run here: the session before and after it, and the change between
    as its step encoded it, so that storing that same change does not encode it again."""

    def begin(self, begun: _Begin) -> Session:
        """The session as it stood when the evaluation started (recorded by the first
        step, so that a recovering run starts from the same state)."""
        self.session = Session(session_id=self.request.session_id)
        self.session._load_stored(Snapshot.from_json(begun.document))
        self.stored = self.session.snapshot()
        self.version = begun.version
        return self.session

    def outcome(self, before: Snapshot, error: BaseException | None) -> _CallOutcome:
        after = self.session.snapshot()
        change = change_between(before, after)
        self.encoded = (before, after, change)
        body, ops = ("", "") if change is None else change[:2]
        return _CallOutcome(body, ops, error)

    def key(self, call: ToolCall) -> str:
        """The call's idempotency key: the same on every run of this workflow."""
        key = f"{self.workflow_id}/{call.call_id}"
        if not call.call_id or key in self.keys:
            key = f"{self.workflow_id}/call-{len(self.keys) + 1}"
        self.keys.add(key)
        return key

    def replayed(self, outcome: _CallOutcome) -> ToolResult[Any]:
        """Apply a recorded call's change; its result, as the session now records it."""
        if outcome.body or outcome.ops:
            now = self.session.snapshot()
            slices = {"state": dict(now.state), "log": dict(now.log)}
            apply_change(slices, outcome.body or _EMPTY_BODY, outcome.ops, None)
            self.session._load_stored(Snapshot(slices["state"], slices["log"]))
        if outcome.error is not None:
            raise outcome.error
        return self.session[ToolInvoked].values()[-1].result

    def applied(self, outcome: _CallOutcome, ran: _Ran) -> ToolResult[Any]:
        if not ran.value:
            return self.replayed(outcome)
        if outcome.error is not None:
            raise outcome.error
        assert ran.result is not None  # set with ``value`` when no error was raised
        return ran.result

    def change_since_stored(self, now: Snapshot) -> tuple[str, str, int] | None:
        """What ``now`` changed since the version stored last: the last call's change
        when nothing else changed the session around it (snapshots are immutable, so
        the same objects mean the same states), else encoded afresh."""
        if self.encoded is not None:
            before, after, change = self.encoded
            if before is self.stored and after is now:
                return change
        return change_between(self.stored, now)

    def store_session(self) -> None:
        """Store what changed since the version stored last, as the next version;
        skipped when that version is stored already (an earlier run wrote it)."""
        now = self.session.snapshot()
        change = self.change_since_stored(now)
        if change is None:
            return
        body, ops, events = change
        version = self.version + 1
        document = snapshot_text(now) if version % self.store.snapshot_every == 0 else None
        try:
            self.store.append(
                self.request.session_id,
                self.version,
                StoredChange(version, body, ops, events),
                document,
            )
        except VersionConflict:
            stored = self.store.read(self.request.session_id)
            if stored is None or stored.version < version:
                raise
        self.stored = now
        self.version = version


_EMPTY_BODY = '{"version":1,"slices":[]}'


# The workflows.


def _steps(
    run: _Run, request: DurableEvaluation, decisions: Mapping[str, Approval] | None = None
) -> Generator[Any, Any, PromptResponse[Any]]:
    """The evaluation's steps; with ``decisions``, those of its resume from the turn
    that paused."""
    prompt = _checked_prompt(request, run.workflow_id)
    adapter = _adapter_of(request.adapter)
    return evaluation_steps(
        adapter,
        prompt,
        session=run.session,
        max_turns=request.max_turns,
        output_retries=request.output_retries,
        asynchronous=True,
        resume=decisions,
    )


@DBOS.workflow(name="wink.evaluate")
def _evaluate_workflow(request: DurableEvaluation) -> PromptResponse[Any]:
    workflow_id = DBOS.workflow_id or workflow_id_of(request.session_id, request.evaluation)
    store = open_store(request.store_url)
    try:
        run = _Run(request, workflow_id, store)
        run.begin(_begin_step(request.store_url, request.session_id))
        adapter = _adapter_of(request.adapter)
        steps = _steps(run, request)
        reply: Any = None
        error: BaseException | None = None
        chunks: Iterator[Any] = iter(())
        try:
            while True:
                try:
                    step = steps.send(reply) if error is None else steps.throw(error)
                except StopIteration as finished:
                    response: PromptResponse[Any] = finished.value
                    return response
                except ApprovalPending as pending:
                    run.store_session()  # the paused evaluation, for whoever reads the session
                    steps = _steps(run, request, _wait_for_decisions(pending))
                    reply, error = None, None
                    continue
                reply, error = None, None
                try:
                    if isinstance(step, ModelRequest):
                        if step.stream:
                            chunks = iter(_stream_step(adapter, step))
                        else:
                            reply = _request_step(adapter, step)
                    elif isinstance(step, NextChunk):
                        reply = next(chunks, END_OF_STREAM)
                    elif isinstance(step, Wait):
                        DBOS.sleep(step.seconds)
                    elif isinstance(step, RefreshTools):
                        reply = step.run()
                    elif isinstance(step, ToolTurn):
                        reply = []
                        for call in step.calls:
                            ran = _Ran()
                            outcome = _call_step(run, step.executor, call, run.key(call), ran)
                            reply.append(run.applied(outcome, ran))
                            run.store_session()
                except Exception as raised:
                    error = raised
        finally:
            steps.close()
            run.store_session()  # the evaluation's end (``PromptExecuted``), or its error
    finally:
        store.close()


@DBOS.workflow(name="wink.aevaluate")
async def _aevaluate_workflow(request: DurableEvaluation) -> PromptResponse[Any]:
    workflow_id = DBOS.workflow_id or workflow_id_of(request.session_id, request.evaluation)
    store = await asyncio.to_thread(open_store, request.store_url)
    try:
        run = _Run(request, workflow_id, store)
        run.begin(_begin_step(request.store_url, request.session_id))
        adapter = _adapter_of(request.adapter)
        steps = _steps(run, request)
        reply: Any = None
        error: BaseException | None = None
        chunks: Iterator[Any] = iter(())
        try:
            while True:
                try:
                    step = steps.send(reply) if error is None else steps.throw(error)
                except StopIteration as finished:
                    response: PromptResponse[Any] = finished.value
                    return response
                except ApprovalPending as pending:
                    await asyncio.to_thread(run.store_session)
                    steps = _steps(run, request, await _await_decisions(pending))
                    reply, error = None, None
                    continue
                reply, error = None, None
                try:
                    if isinstance(step, ModelRequest):
                        if step.stream:
                            chunks = iter(await _astream_step(adapter, step))
                        else:
                            reply = await _arequest_step(adapter, step)
                    elif isinstance(step, NextChunk):
                        reply = next(chunks, END_OF_STREAM)
                    elif isinstance(step, Wait):
                        await DBOS.sleep_async(step.seconds)
                    elif isinstance(step, RefreshTools):
                        reply = await asyncio.to_thread(step.run)
                    elif isinstance(step, ToolTurn):
                        reply = []
                        for call in step.calls:
                            ran = _Ran()
                            outcome = await _acall_step(
                                run, step.executor, call, run.key(call), ran
                            )
                            reply.append(run.applied(outcome, ran))
                            await asyncio.to_thread(run.store_session)
                except Exception as raised:
                    error = raised
        finally:
            steps.close()
            await asyncio.to_thread(run.store_session)
    finally:
        await asyncio.to_thread(store.close)
