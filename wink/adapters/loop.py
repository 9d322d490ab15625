"""The evaluation loop every provider adapter shares.

The loop is a generator of steps: it yields a ``ModelRequest`` and is sent the
provider's reply (or has the provider's exception thrown in), or yields a
``Wait`` before retrying a request. A driver runs it: ``LoopAdapter.evaluate``
sends each request through the blocking ``send`` hook and runs tool calls in
place; ``LoopAdapter.aevaluate`` runs the same generator, awaiting ``asend``,
and is sent each turn's tool results as a ``ToolTurn`` step (run with
``ToolExecutor.aexecute_all``). Before a request, when a section says its tools
changed at their source (an MCP server's ``tools/list_changed``), the loop yields a
``RefreshTools`` step, which may block (``aevaluate`` runs it in a worker thread),
and is sent the refreshed prompt; it then offers that prompt's tools from the next
request on (``Conversation.use_tools``). Rendering, events, tool calls,
limits, output parsing and retries happen here, once for every provider; a
provider supplies a ``Conversation`` (request building, reply reading, echoing
the assistant turn, tool messages) and maps its SDK's errors.

A streamed request (``ModelRequest.stream``) is opened by the driver with
``open_stream``; the loop then yields ``NEXT_CHUNK`` and is sent each SDK chunk in
turn (``END_OF_STREAM`` after the last), which it parses with the provider's
``StreamReader`` into stream events (yielded for the driver to hand on when the
evaluation streams) and at the end into the whole reply, read like any other. The
drivers only read chunks: ``stream``/``astream`` and ``evaluate``/``aevaluate``
(which stream a request when the SDK demands it) share every other step.
"""

from __future__ import annotations

import abc
import asyncio
import inspect
import itertools
import json
import time
from collections.abc import AsyncGenerator, AsyncIterator, Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, NoReturn, Protocol

from wink import telemetry
from wink._error_text import bounded, describe_error
from wink.adapters.approval import (
    ApprovalError,
    ApprovalPending,
    PausedEvaluation,
    SavedTurn,
    answered,
    check_decisions,
    edited,
    paused,
    render_digest,
    replayed_result,
    saved_turn,
)
from wink.adapters.events import ModelExchange, PromptExecuted, PromptRendered, ProviderToolCall
from wink.adapters.protocol import DEFAULT_MAX_TURNS, DEFAULT_OUTPUT_RETRIES
from wink.adapters.response import PromptResponse, StopReason
from wink.adapters.stream import (
    AnswerRejected,
    EvaluationFinished,
    StreamEvent,
    StreamReader,
    ToolCallReady,
    TurnEnded,
    TurnStarted,
)
from wink.contract import Contract, ContractViolation, describe_problems
from wink.errors import (
    DeadlineExceededError,
    EvaluationPhase,
    PromptEvaluationError,
    WinkError,
)
from wink.policy.approval import Approval, ApprovalRequest
from wink.prompt import Prompt, RenderedPrompt
from wink.prompt.prompt import OutputT
from wink.runtime.budget import BudgetExceededError, BudgetTracker, TokenUsage
from wink.runtime.call import ToolCall
from wink.runtime.deadline import Deadline, utc_now
from wink.runtime.events import ToolInvoked
from wink.runtime.executor import ToolExecutor
from wink.runtime.session import Session, SliceKind
from wink.tools import ToolResult

__all__ = [
    "END_OF_STREAM",
    "NEXT_CHUNK",
    "ChunkStream",
    "Conversation",
    "EvaluationStream",
    "AsyncEvaluationStream",
    "LoopAdapter",
    "NextChunk",
    "ModelRequest",
    "ModelTurn",
    "ProviderFailure",
    "Step",
    "ToolTurn",
    "UnusableResponse",
    "Wait",
    "evaluation_steps",
    "unexpected_failure",
]

ToolAnswers = Sequence[tuple[ToolCall, ToolResult[Any]]]
"""Each call of a model turn with the result it gets, in the order the model sent them."""


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """One request to send to the model."""

    body: Mapping[str, Any]
    """The SDK call's keyword arguments, as the conversation built them."""
    timeout: float | None
    """Seconds left before the deadline, or ``None`` without one. With a deadline the
    request must not outlive it: the SDK's own retries are off and the loop retries."""
    turn: int
    """Which request of the evaluation this is, from 1."""
    attempt: int = 0
    """0 for the first try of this request, then 1, 2... for retries."""
    stream: bool = False
    """Whether to open it as a stream (``open_stream``) and send the loop its chunks
    (``NEXT_CHUNK``) rather than the whole reply."""


@dataclass(frozen=True, slots=True)
class NextChunk:
    """Send the next chunk of the open stream, or ``END_OF_STREAM`` after the last."""


NEXT_CHUNK = NextChunk()
"""The one ``NextChunk`` step."""


class _EndOfStream:
    def __repr__(self) -> str:
        return "END_OF_STREAM"


END_OF_STREAM: Any = _EndOfStream()
"""What a driver sends for ``NEXT_CHUNK`` once the stream has no chunk left."""


class ChunkStream(Protocol):
    """An SDK stream of chunks, as ``open_stream`` returns it."""

    def __next__(self) -> Any:
        """The next chunk; ``StopIteration`` after the last."""
        ...

    def close(self) -> None:
        """Close the HTTP response (a stream not read to its end must be closed)."""
        ...


@dataclass(frozen=True, slots=True)
class Wait:
    """Pause before retrying a request."""

    seconds: float
    """How long to wait."""


@dataclass(frozen=True, slots=True)
class ToolTurn:
    """Run one model turn's tool calls (asynchronous drivers only); the results, in call
    order, are sent back."""

    executor: ToolExecutor
    """The evaluation's executor."""
    calls: tuple[ToolCall, ...]
    """The turn's calls, in the order the model sent them."""


@dataclass(frozen=True, slots=True)
class RefreshTools:
    """Ask the sources of the prompt's tools for them again (it may block on I/O); the
    refreshed prompt, or ``None`` when nothing changed, is sent back."""

    prompt: Prompt[Any]
    """The prompt the evaluation offers the tools of."""
    session: Session
    """The evaluation's session, whose connections are asked."""

    def run(self) -> Prompt[Any] | None:
        """``prompt.refreshed(session)``."""
        return self.prompt.refreshed(self.session)


Step = ModelRequest | Wait | ToolTurn | RefreshTools | NextChunk | StreamEvent
"""What the loop asks its driver to do; a stream event is handed on to the consumer of
a streamed evaluation."""


@dataclass(frozen=True, slots=True)
class ModelTurn:
    """What the model answered in one reply."""

    text: str | None
    """Its text (for structured output, the JSON answer), or ``None``."""
    calls: tuple[ToolCall, ...]
    """The tool calls it made, in order."""
    usage: TokenUsage
    """Tokens this request used."""
    reply: Any
    """The reply as the SDK returned it."""
    echo: Any = None
    """The model's turn as the conversation sends it back, when ``read`` built it
    (so that the reply is converted once)."""
    stop_reason: StopReason = "end"
    """Why the reply ended, in wink's words (see ``StopReason``)."""
    raw_stop_reason: str | None = None
    """The provider's own value for it, or ``None`` when it gave none."""
    stop_detail: str | None = None
    """The provider's explanation of a refusal or a block, if it gave one."""
    provider_tools: tuple[ProviderToolCall, ...] = ()
    """The provider's own tools that ran within the reply, in order."""


@dataclass(frozen=True, slots=True)
class ProviderFailure:
    """An SDK error, as the loop needs to know it."""

    message: str
    """What went wrong, in the provider's words."""
    payload: Any = None
    """The provider's error body, if any."""
    retryable: bool = False
    """Whether trying again may succeed (a rate limit, a 5xx, a dropped connection)."""
    retry_after: float | None = None
    """Seconds the provider asked to wait, if it said."""
    phase: EvaluationPhase = "request"
    """``"request"`` when sending failed; ``"response"`` when a reply came but could not
    be read (a body that is not JSON, or not of the reply's shape)."""
    stream_required: bool = False
    """The SDK refused to send the request whole and asks for it to be streamed (a
    request it expects to take too long): the loop sends it again as a stream."""


def unexpected_failure(error: Exception) -> ProviderFailure:
    """Any other exception out of an SDK call, as a failure that is not retried: a reply
    that is not JSON is the response's fault (a request body is never decoded), anything
    else the request's."""
    if isinstance(error, json.JSONDecodeError):
        return ProviderFailure(
            f"the reply is not valid JSON ({error.msg} at character {error.pos})",
            bounded(error.doc),
            phase="response",
        )
    return ProviderFailure(describe_error(error))


class _DriverMisuse(TypeError):
    """The adapter was driven the wrong way (an async client under ``evaluate``)."""


class UnusableResponse(WinkError):
    """A reply the loop cannot use (no message, a refusal); ``payload`` is the reply."""

    def __init__(self, message: str, payload: Any = None) -> None:
        super().__init__(message)
        self.payload = payload


class Conversation(Protocol):
    """One evaluation's messages, in a provider's format."""

    def request(self) -> dict[str, Any]:
        """The keyword arguments of the next SDK call."""
        ...

    def read(self, reply: Any) -> ModelTurn:
        """The text, calls and usage of ``reply``; raises ``UnusableResponse``."""
        ...

    def answer_tools(self, turn: ModelTurn, answers: ToolAnswers) -> None:
        """Echo the model's turn and add the tool results, for the next request."""
        ...

    def answer_invalid_output(self, turn: ModelTurn, message: str) -> None:
        """Echo the model's turn and tell it (``message``) why its answer was refused."""
        ...

    def answer_pause(self, turn: ModelTurn) -> None:
        """Echo a paused turn (``stop_reason == "pause"``) so that the next request
        continues it."""
        ...

    def use_tools(self, rendered: RenderedPrompt) -> None:
        """Offer ``rendered``'s tools from the next request on; the conversation so far,
        and the prompt's text as first sent, stay as they are. (A conversation without
        this method keeps the tools it started with.)"""
        ...

    def finish(self, turn: ModelTurn) -> tuple[Any, ...]:
        """The whole conversation, the final answer included."""
        ...


class LoopAdapter(abc.ABC):
    """An adapter whose ``evaluate`` runs the shared loop; a provider supplies the hooks.

    Subclasses implement ``name``, ``start`` (a ``Conversation`` for one evaluation),
    ``send`` (the one blocking call: the SDK request) and ``describe_error``.
    """

    model: str = ""
    """The model requests go to (``gen_ai.request.model`` in traces); ``""`` when the
    adapter has none."""

    max_retries: int = 0
    """Retries of a failed request the loop makes itself when a deadline is set (the
    SDK's own retries are then off, so that none outlives the deadline)."""

    @property
    @abc.abstractmethod
    def name(self) -> str:
        """The provider's name."""

    @abc.abstractmethod
    def start(
        self, rendered: RenderedPrompt, output: Contract[Any] | None, messages: Sequence[Any]
    ) -> Conversation:
        """The conversation of one evaluation of ``rendered``."""

    @abc.abstractmethod
    def send(self, request: ModelRequest) -> Any:
        """Send ``request`` with the SDK and return its reply; SDK errors propagate."""

    @abc.abstractmethod
    def describe_error(self, error: Exception) -> ProviderFailure | None:
        """``error`` as a provider failure, or ``None`` when the SDK did not raise it."""

    @property
    def provider_name(self) -> str:
        """The provider as traces name it (``gen_ai.provider.name``); the adapter's
        ``name`` unless the OpenTelemetry conventions spell it otherwise."""
        return self.name

    def sleep(self, seconds: float) -> None:
        """Wait before a retry."""
        time.sleep(seconds)

    async def asend(self, request: ModelRequest) -> Any:
        """``send`` for ``aevaluate``: by default the blocking call runs in a worker
        thread; an adapter with an asynchronous client awaits it instead."""
        return await asyncio.to_thread(self.send, request)

    async def asleep(self, seconds: float) -> None:
        """Wait before a retry, without blocking the event loop."""
        await asyncio.sleep(seconds)

    def open_stream(self, request: ModelRequest) -> ChunkStream:
        """Send ``request`` with the SDK's streaming call and return its stream of chunks;
        SDK errors propagate. An adapter that streams overrides it and ``stream_reader``."""
        raise NotImplementedError(f"the {self.name} adapter cannot stream its replies")

    async def aopen_stream(self, request: ModelRequest) -> AsyncGenerator[Any, None]:
        """``open_stream`` for ``astream``: by default the blocking stream is opened and
        read in a worker thread; an adapter with an asynchronous client awaits it."""
        chunks = await asyncio.to_thread(self.open_stream, request)
        return _read_in_thread(chunks)

    def stream_reader(self) -> StreamReader:
        """A reader for one reply's chunks (see ``StreamReader``)."""
        raise NotImplementedError(f"the {self.name} adapter cannot stream its replies")

    def evaluate(
        self,
        prompt: Prompt[OutputT],
        *,
        session: Session,
        deadline: Deadline | None = None,
        budget_tracker: BudgetTracker | None = None,
        max_turns: int = DEFAULT_MAX_TURNS,
        output_retries: int = DEFAULT_OUTPUT_RETRIES,
        messages: Sequence[Any] = (),
        raise_handler_errors: bool = False,
        allow_truncated: bool = False,
    ) -> PromptResponse[OutputT]:
        """Evaluate ``prompt`` until the model answers without tool calls.

        The prompt is rendered once; with no ``messages`` its text is the user's
        message, else it is the system instruction and ``messages`` (in the
        provider's format) follow. Every tool call runs through one ``ToolExecutor``
        (handlers get this adapter as ``context.adapter``); every call of a turn is
        answered in the next request; a turn the provider paused (``stop_reason``
        ``"pause"``) is sent back to be continued, each continuation a request of its
        own. A request the SDK refuses to send whole (one it expects to take too long)
        is sent again as a stream and its chunks read into the same reply. Raises
        ``PromptEvaluationError`` with its ``phase`` when the provider
        fails, a limit is reached, the reply is a refusal, a block or cannot be read,
        tool calls were cut by the token limit (none is run), the answer was cut by it
        (unless ``allow_truncated=True``: the response then says
        ``stop_reason="max_tokens"``) or the answer never matches the template's output
        type. With ``raise_handler_errors=True`` (for
        tests) a handler's exception, once its call is rolled back and recorded, ends
        the evaluation and propagates as it was raised (see ``ToolExecutor``).
        """
        steps = evaluation_steps(
            self,
            prompt,
            session=session,
            deadline=deadline,
            budget_tracker=budget_tracker,
            max_turns=max_turns,
            output_retries=output_retries,
            messages=messages,
            raise_handler_errors=raise_handler_errors,
            allow_truncated=allow_truncated,
        )
        return _response_of(self._drive(steps, streaming=False))

    def stream(
        self,
        prompt: Prompt[OutputT],
        *,
        session: Session,
        deadline: Deadline | None = None,
        budget_tracker: BudgetTracker | None = None,
        max_turns: int = DEFAULT_MAX_TURNS,
        output_retries: int = DEFAULT_OUTPUT_RETRIES,
        messages: Sequence[Any] = (),
        raise_handler_errors: bool = False,
        allow_truncated: bool = False,
    ) -> EvaluationStream:
        """``evaluate`` with every request streamed: iterate the result for the
        evaluation's events as they happen (see ``wink.adapters.stream``), the last an
        ``EvaluationFinished`` with the response ``evaluate`` would return.

        The session records the same events, and the next request echoes the same
        turn, as for replies read whole; the same stop rules and failures apply, a
        stream that breaks off or holds a chunk that cannot be read being a
        ``PromptEvaluationError`` with phase ``"response"`` (nothing is retried once
        a chunk was read). Closing the stream early (``close()``, or leaving its
        ``with`` block) closes the HTTP response and records the evaluation as stopped;
        a tool call never runs on partial arguments, and one that ran is recorded whole.
        """
        steps = evaluation_steps(
            self,
            prompt,
            session=session,
            deadline=deadline,
            budget_tracker=budget_tracker,
            max_turns=max_turns,
            output_retries=output_retries,
            messages=messages,
            raise_handler_errors=raise_handler_errors,
            allow_truncated=allow_truncated,
            stream=True,
        )
        return EvaluationStream(self._drive(steps, streaming=True))

    def _drive(
        self, steps: Generator[Step, Any, Any], streaming: bool
    ) -> Generator[StreamEvent, None, None]:
        """Run ``steps`` with blocking calls, yielding its stream events; without
        ``streaming`` the only event is the final ``EvaluationFinished``."""
        reply: Any = None
        error: BaseException | None = None
        chunks: ChunkStream | None = None
        try:
            while True:
                try:
                    step = steps.send(reply) if error is None else steps.throw(error)
                except StopIteration as finished:
                    if not streaming:
                        yield EvaluationFinished(finished.value)
                    return
                reply, error = None, None
                try:
                    if isinstance(step, NextChunk):
                        reply = END_OF_STREAM if chunks is None else next(chunks, END_OF_STREAM)
                        continue
                    if isinstance(step, ModelRequest):
                        if chunks is not None:
                            chunks.close()
                            chunks = None
                        if step.stream:
                            chunks = self.open_stream(step)
                            _refuse_awaitable(self, chunks, "adapter.astream(...)")
                        else:
                            reply = self.send(step)
                            _refuse_awaitable(self, reply, "await adapter.aevaluate(...)")
                        continue
                    if isinstance(step, Wait):
                        self.sleep(step.seconds)
                        continue
                    if isinstance(step, RefreshTools):
                        reply = step.run()
                        continue
                    if isinstance(step, ToolTurn):  # only asked of asynchronous drivers
                        raise _DriverMisuse(
                            "evaluate() runs tool calls in place; ToolTurn is for aevaluate()"
                        )
                except BaseException as raised:
                    # The loop maps it, with the provider's help; an interruption ends the
                    # evaluation there, recorded (and its span closed) before it propagates.
                    error = raised
                    continue
                yield step
        finally:
            if chunks is not None:
                chunks.close()
            steps.close()  # a consumer that stopped early: the evaluation records it

    async def aevaluate(
        self,
        prompt: Prompt[OutputT],
        *,
        session: Session,
        deadline: Deadline | None = None,
        budget_tracker: BudgetTracker | None = None,
        max_turns: int = DEFAULT_MAX_TURNS,
        output_retries: int = DEFAULT_OUTPUT_RETRIES,
        messages: Sequence[Any] = (),
        raise_handler_errors: bool = False,
        allow_truncated: bool = False,
    ) -> PromptResponse[OutputT]:
        """``evaluate``'s twin for a running event loop: the same loop, events and
        failures, with each request awaited (``asend``) and each turn's tool calls run
        with ``ToolExecutor.aexecute_all`` (independent calls overlap; results and
        ``ToolInvoked`` events in call order). Cancelling it rolls back the calls in
        flight, records them as failed, records the evaluation's ``PromptExecuted``
        with the error, and re-raises ``CancelledError``.
        """
        steps = evaluation_steps(
            self,
            prompt,
            session=session,
            deadline=deadline,
            budget_tracker=budget_tracker,
            max_turns=max_turns,
            output_retries=output_retries,
            messages=messages,
            raise_handler_errors=raise_handler_errors,
            allow_truncated=allow_truncated,
            asynchronous=True,
        )
        return await _aresponse_of(self._adrive(steps, streaming=False))

    def resume(
        self,
        prompt: Prompt[OutputT],
        *,
        session: Session,
        decisions: Mapping[str, Approval],
        deadline: Deadline | None = None,
        budget_tracker: BudgetTracker | None = None,
        max_turns: int = DEFAULT_MAX_TURNS,
        output_retries: int = DEFAULT_OUTPUT_RETRIES,
        messages: Sequence[Any] = (),
        raise_handler_errors: bool = False,
        allow_truncated: bool = False,
    ) -> PromptResponse[OutputT]:
        """Continue an evaluation that raised ``ApprovalPending``, from the turn whose calls
        awaited a person: ``decisions`` maps each awaiting call id to an ``Approval``.

        The session (loaded from its store in another process, or the same object) holds
        the paused evaluation; the conversation is rebuilt as it was, the approved calls
        run (with edited arguments when given), the denied ones are answered with the
        person's reason, and the evaluation goes on as ``evaluate`` would (it may pause
        again). Raises ``ApprovalError`` when nothing awaits (or it was resumed already),
        a decision names a call that does not await one, a call is left undecided, or the
        prompt renders differently from when it paused.
        """
        steps = evaluation_steps(
            self,
            prompt,
            session=session,
            deadline=deadline,
            budget_tracker=budget_tracker,
            max_turns=max_turns,
            output_retries=output_retries,
            messages=messages,
            raise_handler_errors=raise_handler_errors,
            allow_truncated=allow_truncated,
            resume=dict(decisions),
        )
        return _response_of(self._drive(steps, streaming=False))

    async def aresume(
        self,
        prompt: Prompt[OutputT],
        *,
        session: Session,
        decisions: Mapping[str, Approval],
        deadline: Deadline | None = None,
        budget_tracker: BudgetTracker | None = None,
        max_turns: int = DEFAULT_MAX_TURNS,
        output_retries: int = DEFAULT_OUTPUT_RETRIES,
        messages: Sequence[Any] = (),
        raise_handler_errors: bool = False,
        allow_truncated: bool = False,
    ) -> PromptResponse[OutputT]:
        """``resume``'s twin for a running event loop, running tool calls as ``aevaluate``."""
        steps = evaluation_steps(
            self,
            prompt,
            session=session,
            deadline=deadline,
            budget_tracker=budget_tracker,
            max_turns=max_turns,
            output_retries=output_retries,
            messages=messages,
            raise_handler_errors=raise_handler_errors,
            allow_truncated=allow_truncated,
            asynchronous=True,
            resume=dict(decisions),
        )
        return await _aresponse_of(self._adrive(steps, streaming=False))

    def astream(
        self,
        prompt: Prompt[OutputT],
        *,
        session: Session,
        deadline: Deadline | None = None,
        budget_tracker: BudgetTracker | None = None,
        max_turns: int = DEFAULT_MAX_TURNS,
        output_retries: int = DEFAULT_OUTPUT_RETRIES,
        messages: Sequence[Any] = (),
        raise_handler_errors: bool = False,
        allow_truncated: bool = False,
    ) -> AsyncEvaluationStream:
        """``stream``'s twin for a running event loop (``async for`` and ``async with``),
        running tool calls as ``aevaluate`` does."""
        steps = evaluation_steps(
            self,
            prompt,
            session=session,
            deadline=deadline,
            budget_tracker=budget_tracker,
            max_turns=max_turns,
            output_retries=output_retries,
            messages=messages,
            raise_handler_errors=raise_handler_errors,
            allow_truncated=allow_truncated,
            asynchronous=True,
            stream=True,
        )
        return AsyncEvaluationStream(self._adrive(steps, streaming=True))

    async def _adrive(
        self, steps: Generator[Step, Any, Any], streaming: bool
    ) -> AsyncGenerator[StreamEvent, None]:
        """``_drive`` awaiting each request, chunk, wait and tool turn."""
        reply: Any = None
        error: BaseException | None = None
        chunks: AsyncGenerator[Any, None] | None = None
        try:
            while True:
                try:
                    step = steps.send(reply) if error is None else steps.throw(error)
                except StopIteration as finished:
                    if not streaming:
                        yield EvaluationFinished(finished.value)
                    return
                reply, error = None, None
                try:
                    if isinstance(step, NextChunk):
                        reply = (
                            END_OF_STREAM if chunks is None else await anext(chunks, END_OF_STREAM)
                        )
                        continue
                    if isinstance(step, ModelRequest):
                        if chunks is not None:
                            await chunks.aclose()
                            chunks = None
                        if step.stream:
                            chunks = await self.aopen_stream(step)
                        else:
                            reply = await self.asend(step)
                        continue
                    if isinstance(step, Wait):
                        await self.asleep(step.seconds)
                        continue
                    if isinstance(step, ToolTurn):
                        reply = await step.executor.aexecute_all(step.calls)
                        continue
                    if isinstance(step, RefreshTools):
                        reply = await asyncio.to_thread(step.run)
                        continue
                except BaseException as raised:  # the loop maps it; a cancellation is recorded
                    error = raised
                    continue
                yield step
        finally:
            if chunks is not None:
                await chunks.aclose()
            steps.close()


class EvaluationStream:
    """The events of a streamed evaluation (``adapter.stream``): iterate it, and close it
    (or use it in a ``with`` block) to stop early."""

    __slots__ = ("_events",)

    def __init__(self, events: Generator[StreamEvent, None, None]) -> None:
        self._events = events

    def __iter__(self) -> Iterator[StreamEvent]:
        return self._events

    def __next__(self) -> StreamEvent:
        return next(self._events)

    def close(self) -> None:
        """Stop the evaluation: the HTTP response is closed, the session records it."""
        self._events.close()

    def __enter__(self) -> EvaluationStream:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class AsyncEvaluationStream:
    """The events of a streamed evaluation (``adapter.astream``): ``async for`` over it,
    and ``aclose()`` it (or use it in an ``async with`` block) to stop early."""

    __slots__ = ("_events",)

    def __init__(self, events: AsyncGenerator[StreamEvent, None]) -> None:
        self._events = events

    def __aiter__(self) -> AsyncIterator[StreamEvent]:
        return self._events

    async def __anext__(self) -> StreamEvent:
        return await anext(self._events)

    async def aclose(self) -> None:
        """Stop the evaluation: the HTTP response is closed, the session records it."""
        await self._events.aclose()

    async def __aenter__(self) -> AsyncEvaluationStream:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


async def _read_in_thread(chunks: ChunkStream) -> AsyncGenerator[Any, None]:
    """A blocking stream read chunk by chunk in a worker thread."""
    try:
        while True:
            chunk = await asyncio.to_thread(_next_chunk, chunks)
            if chunk is END_OF_STREAM:
                return
            yield chunk
    finally:
        chunks.close()


def _next_chunk(chunks: ChunkStream) -> Any:
    return next(chunks, END_OF_STREAM)


def _refuse_awaitable(adapter: LoopAdapter, value: object, instead: str) -> None:
    if inspect.isawaitable(value):
        _close(value)
        raise _DriverMisuse(
            f"the {adapter.name} adapter sends asynchronously (an async client "
            f"or model function); use {instead}, or give it a synchronous one"
        )


def evaluation_steps(
    adapter: LoopAdapter,
    prompt: Prompt[OutputT],
    *,
    session: Session,
    deadline: Deadline | None = None,
    budget_tracker: BudgetTracker | None = None,
    max_turns: int = DEFAULT_MAX_TURNS,
    output_retries: int = DEFAULT_OUTPUT_RETRIES,
    messages: Sequence[Any] = (),
    raise_handler_errors: bool = False,
    asynchronous: bool = False,
    allow_truncated: bool = False,
    stream: bool = False,
    resume: Mapping[str, Approval] | None = None,
) -> Generator[Step, Any, PromptResponse[OutputT]]:
    """The loop of one evaluation, as steps for a driver (see the module docstring);
    with ``asynchronous``, tool calls are yielded as ``ToolTurn`` steps; with
    ``stream``, every request is streamed and the stream events are yielded, the last
    an ``EvaluationFinished``."""
    if max_turns < 1:
        raise ValueError(f"max_turns must be at least 1, got {max_turns}")
    if output_retries < 0:
        raise ValueError(f"output_retries must not be negative, got {output_retries}")
    evaluation = _Evaluation(
        adapter,
        prompt,
        session,
        deadline,
        budget_tracker,
        max_turns,
        output_retries,
        raise_handler_errors,
    )
    evaluation.asynchronous = asynchronous
    evaluation.allow_truncated = allow_truncated
    evaluation.streaming = stream
    evaluation.decisions = resume
    return evaluation.steps(messages)


_evaluation_numbers = itertools.count(1)
"""Numbers evaluations in this process: the key of their usage in a ``BudgetTracker``."""
_BACKOFF_START = 0.5
_BACKOFF_MAX = 8.0


class _Evaluation:
    """The state of one evaluation while its steps run."""

    def __init__(
        self,
        adapter: LoopAdapter,
        prompt: Prompt[Any],
        session: Session,
        deadline: Deadline | None,
        budget_tracker: BudgetTracker | None,
        max_turns: int,
        output_retries: int,
        raise_handler_errors: bool,
    ) -> None:
        self.adapter = adapter
        self.prompt = prompt
        self.name = prompt.name
        self.session = session
        self.deadline = _earliest(deadline, budget_tracker)
        self.budget_tracker = budget_tracker
        self.max_turns = max_turns
        self.output_retries = output_retries
        self.raise_handler_errors = raise_handler_errors
        self.evaluation_id = f"{self.name}#{next(_evaluation_numbers)}"
        self.turns = 0
        self.usage = TokenUsage()
        self.tool_results: list[ToolInvoked] = []
        self.exchanges: list[ModelExchange] = []
        self.span = telemetry.EvaluationSpan(None)
        self.asynchronous = False
        self.allow_truncated = False
        self.streaming = False
        """Every request is streamed and the stream events are yielded."""
        self.decisions: Mapping[str, Approval] | None = None
        """A person's decisions, when this evaluation resumes a paused one."""
        self.history: list[tuple[str, ModelTurn, tuple[Any, ...]]] = []
        """Each answered turn (``_answer``), kept to save the conversation if it pauses."""
        self.first_record = 0

    def steps(self, messages: Sequence[Any]) -> Generator[Step, Any, PromptResponse[Any]]:
        started_at = utc_now()
        _declare_log(self.session)
        # The evaluation's span: tool calls run inside it are its children.
        with telemetry.evaluation_span(
            prompt_name=self.name,
            provider=self.adapter.provider_name,
            model=self.adapter.model,
        ) as span:
            self.span = span
            try:
                response = yield from self._run(messages)
            except GeneratorExit:
                # The driver was closed: a stream's consumer stopped reading it.
                self._executed(started_at, None, None, _CLOSED_EARLY)
                raise
            except BaseException as error:
                phase = error.phase if isinstance(error, PromptEvaluationError) else None
                self._executed(started_at, None, None, f"{type(error).__name__}: {error}", phase)
                raise
            self._executed(started_at, response.text, response.output)
        if self.streaming:
            yield EvaluationFinished(response)  # after the span: the evaluation is over
        return response

    def _run(self, messages: Sequence[Any]) -> Generator[Step, Any, PromptResponse[Any]]:
        # The prompt as given: what a pause records and a resume checks, even after the
        # tools were refreshed.
        first = rendered = self.prompt.render()
        executor = self._executor(rendered)
        contract = self.prompt.output_contract
        conversation = self.adapter.start(rendered, contract, messages)
        tool_names = tuple(tool.name for tool in rendered.tools)
        self.session.dispatch(
            PromptRendered(self.name, self.adapter.name, rendered.text, tool_names, utc_now())
        )
        self.first_record = len(self.session[ToolInvoked].values())
        resumed = None
        if self.decisions is not None:  # a paused evaluation goes on from its awaiting turn
            resumed = self._resume(rendered, conversation, len(messages))
        refused = 0
        paused: list[str] = []  # the text of paused turns, which the answer continues
        while True:
            if self.prompt.tools_changed(self.session) and hasattr(conversation, "use_tools"):
                fresh = yield RefreshTools(self.prompt, self.session)
                if fresh is not None:
                    self.prompt, rendered = fresh, fresh.render()
                    executor = self._executor(rendered)
                    conversation.use_tools(rendered)
            if resumed is not None:
                turn, resumed = resumed, None
            else:
                if self.turns >= self.max_turns:
                    raise self._error(
                        f"max_turns={self.max_turns} reached: the model had not answered after "
                        f"{self.turns} requests",
                        "max_turns",
                    )
                turn = yield from self._request(conversation)
                if self.streaming:
                    yield TurnEnded(
                        self.turns,
                        turn.text,
                        turn.calls,
                        turn.usage,
                        turn.stop_reason,
                        turn.raw_stop_reason,
                    )
                self._check_stop(turn)
            if turn.calls:
                calls = self._approved(executor, first, turn, len(messages))
                if self.streaming:
                    for call in calls:
                        yield ToolCallReady(call)
                if self.asynchronous:
                    results = yield from self._tool_turn(executor, calls)
                    answers = list(zip(calls, results, strict=True))
                else:
                    answers = []
                    for call in calls:
                        answers.append((call, self._execute(executor, call)))
                        if self.streaming:
                            yield self.tool_results[-1]
                self._answer(conversation.answer_tools, turn, answers)
                paused.clear()
                continue
            if turn.stop_reason == "pause":
                if turn.text:
                    paused.append(turn.text)
                self._answer(conversation.answer_pause, turn)
                continue
            text = "".join([*paused, turn.text or ""]) if paused else turn.text
            paused.clear()
            if contract is None:
                return self._response(turn, text, None, conversation)
            output, problem = _parse_output(contract, text)
            if problem is None:
                return self._response(turn, text, output, conversation)
            if refused >= self.output_retries:
                raise self._error(
                    f"the answer does not match the output type {contract.name} after "
                    f"{refused} retries (output_retries={self.output_retries}):\n{problem}",
                    "response",
                    turn.reply,
                )
            refused += 1
            if self.streaming:
                yield AnswerRejected(self.turns, problem)
            self._answer(conversation.answer_invalid_output, turn, _correction(problem))

    def _executor(self, rendered: RenderedPrompt) -> ToolExecutor:
        """The executor of the evaluation's calls while ``rendered``'s tools are offered."""
        return ToolExecutor(
            prompt=self.prompt,
            session=self.session,
            adapter=self.adapter,
            deadline=self.deadline,
            budget_tracker=self.budget_tracker,
            rendered_prompt=rendered,
            raise_handler_errors=self.raise_handler_errors,
            approvals=self.decisions,
        )

    def _approved(
        self, executor: ToolExecutor, rendered: RenderedPrompt, turn: ModelTurn, messages: int
    ) -> tuple[ToolCall, ...]:
        """The turn's calls to run (with a person's edited arguments); raises
        ``ApprovalPending``, the evaluation saved, when a policy defers one undecided."""
        calls = turn.calls
        if self.decisions:
            calls = tuple(edited(call, self.decisions.get(call.call_id or "")) for call in calls)
        # A call without an id cannot be named in a decision: it is denied when it runs.
        awaiting = [request for request in executor.awaiting_approval(calls) if request.call_id]
        if awaiting:
            self._pause(rendered, turn, awaiting, messages)
        return calls

    def _pause(
        self,
        rendered: RenderedPrompt,
        turn: ModelTurn,
        awaiting: list[ApprovalRequest],
        messages: int,
    ) -> NoReturn:
        """Keep the evaluation in its session (stored, for a stored session) and stop."""
        history = [_saved(kind, done, arguments) for kind, done, arguments in self.history]
        history.append(saved_turn("pending", turn.text, turn.calls, turn.echo))
        record = PausedEvaluation(
            self.name,
            render_digest(rendered),
            messages,
            self.turns,
            self.usage,
            self.first_record,
            tuple(history),
            tuple(awaiting),
        )
        self.session[PausedEvaluation].seed((record,))
        if self.session.store is not None:
            self.session.persist()
        raise ApprovalPending(self.name, self.session.session_id, awaiting)

    def _resume(
        self, rendered: RenderedPrompt, conversation: Conversation, messages: int
    ) -> ModelTurn:
        """Check the decisions against the paused evaluation, replay its conversation,
        and return the turn whose calls awaited them."""
        assert self.decisions is not None
        record = paused(self.session, self.name)
        if record.render_digest != render_digest(rendered):
            raise ApprovalError(
                f"prompt {self.name!r} renders differently from when its evaluation paused "
                "(its text or tools changed); resume with the prompt as it was then"
            )
        if record.messages != messages:
            raise ApprovalError(
                f"prompt {self.name!r} was evaluated with {record.messages} messages and is "
                f"resumed with {messages}; pass the same messages"
            )
        check_decisions(record, self.decisions)
        for saved in record.history[:-1]:
            replayed = _replayed_turn(saved)
            if saved.kind == "tools":
                answers = [
                    (call, replayed_result(answer))
                    for call, answer in zip(replayed.calls, saved.answers, strict=True)
                ]
                conversation.answer_tools(replayed, answers)
            elif saved.kind == "invalid":
                conversation.answer_invalid_output(replayed, saved.correction or "")
            else:
                conversation.answer_pause(replayed)
        self.turns, self.usage, self.first_record = record.turns, record.usage, record.first_record
        # Its answers are saved again, as they were, if the evaluation pauses once more.
        self.history = [("saved", _replayed_turn(saved), (saved,)) for saved in record.history[:-1]]
        called = {
            call.call_id for saved in record.history[:-1] for call in saved.calls if call.call_id
        }
        self.tool_results = [
            event
            for event in self.session[ToolInvoked].all()[record.first_record :]
            if event.prompt_name == self.name and event.call_id in called
        ]
        self.session[PausedEvaluation].seed((replace(record, resumed=True),))
        if self.session.store is not None:
            self.session.persist()
        return _replayed_turn(record.history[-1])

    def _check_stop(self, turn: ModelTurn) -> None:
        """Stop on a reply that must not be used: a refusal, a block, a reason no rule
        covers, tool calls cut by the token limit, or (unless allowed) a cut answer."""
        stop = turn.stop_reason
        why = f"(stop reason {turn.raw_stop_reason!r})"
        if turn.stop_detail:
            why += f": {bounded(turn.stop_detail)}"
        if stop == "refusal":
            self._stop(turn, f"the model refused {why}")
        if stop == "content_filter":
            self._stop(turn, f"the reply was blocked by the provider's content filter {why}")
        if stop == "other":
            self._stop(turn, f"the reply stopped for a reason wink cannot act on {why}")
        if stop != "max_tokens":
            return
        if turn.calls:
            names = ", ".join(repr(call.name) for call in turn.calls)
            self._stop(
                turn,
                f"the reply was cut by the token limit {why} while calling {names}; no call "
                "was run, since its arguments may be incomplete: raise the limit "
                "(max_tokens, max_output_tokens...)",
            )
        if not self.allow_truncated:
            self._stop(
                turn,
                f"the answer was cut by the token limit {why} after {len(turn.text or '')} "
                "characters: raise the limit, or pass allow_truncated=True to accept a cut answer",
            )

    def _stop(self, turn: ModelTurn, message: str) -> NoReturn:
        where = f"response {self.turns} from {self.adapter.name}"
        raise self._error(f"{where}: {message}", "response", turn.reply)

    def _answer(self, answer: Any, turn: ModelTurn, *arguments: Any) -> None:
        """Add the turn's answer to the conversation; what the provider sent that cannot be
        answered (a call id, a block) stops the evaluation, recorded, even after its tools ran."""
        try:
            answer(turn, *arguments)
            self.history.append((getattr(answer, "__name__", ""), turn, arguments))
        except Exception as error:
            raise self._error(
                f"response {self.turns} from {self.adapter.name} cannot be answered: "
                f"{describe_error(error)}",
                "response",
                turn.reply,
            ) from error

    def _request(self, conversation: Conversation) -> Generator[Step, Any, ModelTurn]:
        body = conversation.request()
        self.turns += 1
        requested_at = utc_now()
        if self.streaming:
            yield TurnStarted(self.turns)
        attempt = 0
        stream = self.streaming
        while True:
            timeout = self._time_left(f"request {self.turns}")
            try:
                reply = yield ModelRequest(body, timeout, self.turns, attempt, stream)
                if stream:
                    reply = yield from self._read_stream()
                break
            except (_DriverMisuse, PromptEvaluationError):
                raise  # a mistake of the caller, or a stream already placed
            except Exception as error:
                failure = self.adapter.describe_error(error)
                if failure is None:
                    raise
                if failure.stream_required and not stream:
                    stream = True  # the same request, sent as a stream
                    continue
                if failure.phase == "response":
                    raise self._error(
                        f"response {self.turns} from {self.adapter.name} cannot be read: "
                        f"{failure.message}",
                        "response",
                        failure.payload,
                    ) from error
                if timeout is None or not failure.retryable or attempt >= self.adapter.max_retries:
                    raise self._error(
                        f"request {self.turns} to {self.adapter.name} failed: {failure.message}",
                        "request",
                        failure.payload,
                    ) from error
                delay = failure.retry_after or min(_BACKOFF_START * 2**attempt, _BACKOFF_MAX)
                self._time_left(f"retrying request {self.turns}", delay)
                yield Wait(delay)
                attempt += 1
        try:
            turn = conversation.read(reply)
        except UnusableResponse as error:
            raise self._error(
                f"response {self.turns} from {self.adapter.name}: {error}",
                "response",
                error.payload,
            ) from None
        except Exception as error:  # a reply of a shape the reader did not foresee
            raise self._error(
                f"response {self.turns} from {self.adapter.name} cannot be read: "
                f"{describe_error(error)}",
                "response",
                reply,
            ) from error
        self.usage = self.usage + turn.usage
        self.span.record_usage(turn.usage)
        names = tuple(call.name for call in turn.calls)
        self.exchanges.append(
            ModelExchange(
                requested_at,
                utc_now(),
                turn.usage,
                names,
                turn.stop_reason,
                turn.raw_stop_reason,
                turn.provider_tools,
            )
        )
        self._record_usage(turn)
        return turn

    def _read_stream(self) -> Generator[Step, Any, Any]:
        """The chunks of an open stream parsed into stream events (yielded when the
        evaluation streams) and, at the end, into the whole reply. A failure before the
        first chunk propagates as the request's (nothing was read: it may be retried);
        after it, the stream broke off and the evaluation stops."""
        reader = self.adapter.stream_reader()
        streaming = self.streaming
        read = 0
        while True:
            try:
                chunk = yield NEXT_CHUNK
            except Exception as error:
                if read == 0:
                    raise
                failure = self.adapter.describe_error(error)
                message = describe_error(error) if failure is None else failure.message
                raise self._error(
                    f"response {self.turns} from {self.adapter.name} broke off after "
                    f"chunk {read}: {message}",
                    "response",
                    None if failure is None else failure.payload,
                ) from error
            if chunk is END_OF_STREAM:
                break
            read += 1
            try:
                events = reader.feed(chunk)
            except UnusableResponse as error:  # the provider said, mid-stream, it failed
                raise self._error(
                    f"response {self.turns} from {self.adapter.name}: {error} (chunk {read})",
                    "response",
                    error.payload,
                ) from None
            except Exception as error:
                raise self._error(
                    f"response {self.turns} from {self.adapter.name}: chunk {read} of the "
                    f"stream cannot be read: {describe_error(error)}",
                    "response",
                    chunk,
                ) from error
            if streaming:
                yield from events
        try:
            return reader.reply()
        except UnusableResponse as error:
            raise self._error(
                f"response {self.turns} from {self.adapter.name}: {error} (after chunk {read})",
                "response",
                error.payload,
            ) from None

    def _time_left(self, activity: str, needed: float = 0.0) -> float | None:
        """Seconds before the deadline (``None`` without one), if ``needed`` fit in them."""
        if self.deadline is None:
            return None
        try:
            self.deadline.check(activity)
        except DeadlineExceededError as error:
            raise self._error(str(error), "deadline") from None
        left = self.deadline.remaining().total_seconds()
        if left <= needed:
            raise self._error(
                f"deadline {self.deadline.expires_at.isoformat()} leaves {left:.3f}s, too "
                f"little for {activity} after waiting {needed:.3f}s",
                "deadline",
            )
        return left

    def _record_usage(self, turn: ModelTurn) -> None:
        tracker = self.budget_tracker
        if tracker is None:
            return
        tracker.record(self.evaluation_id, turn.usage)
        try:
            tracker.check()
        except BudgetExceededError as error:
            raise self._error(
                f"after request {self.turns}: {error}", "budget", turn.reply
            ) from error

    def _execute(self, executor: ToolExecutor, call: ToolCall) -> ToolResult[Any]:
        try:
            result = executor.execute(call)
        except PromptEvaluationError as error:
            if error.phase is not None:
                raise  # a nested evaluation's own failure, already placed
            raise self._error(str(error), _phase_of(error)) from error
        self.tool_results.append(_invoked(self.session, result, call))
        return result

    def _tool_turn(
        self, executor: ToolExecutor, calls: tuple[ToolCall, ...]
    ) -> Generator[Step, Any, list[ToolResult[Any]]]:
        try:
            results: list[ToolResult[Any]] = yield ToolTurn(executor, calls)
        except PromptEvaluationError as error:
            if error.phase is not None:
                raise
            raise self._error(str(error), _phase_of(error)) from error
        for call, result in zip(calls, results, strict=True):
            self.tool_results.append(_invoked(self.session, result, call))
            if self.streaming:
                yield self.tool_results[-1]
        return results

    def _response(
        self, turn: ModelTurn, text: str | None, output: Any, conversation: Conversation
    ) -> PromptResponse[Any]:
        return PromptResponse(
            prompt_name=self.name,
            text=text,
            output=output,
            tool_results=tuple(self.tool_results),
            usage=self.usage,
            turns=self.turns,
            messages=conversation.finish(turn),
            provider_response=turn.reply,
            stop_reason=turn.stop_reason,
            raw_stop_reason=turn.raw_stop_reason,
        )

    def _error(
        self, message: str, phase: EvaluationPhase, payload: Any = None
    ) -> PromptEvaluationError:
        return PromptEvaluationError(
            f"prompt {self.name!r}: {message}",
            phase=phase,
            prompt_name=self.name,
            provider_payload=payload,
        )

    def _executed(
        self,
        started_at: datetime,
        text: str | None,
        output: Any,
        error: str | None = None,
        phase: EvaluationPhase | None = None,
    ) -> None:
        event = PromptExecuted(
            self.name,
            self.adapter.name,
            text,
            output,
            self.turns,
            len(self.tool_results),
            self.usage,
            started_at,
            utc_now(),
            error,
            phase,
            tuple(self.exchanges),
        )
        self.session.dispatch(event)


_CLOSED_EARLY = "the stream was closed before the evaluation finished"


def _earliest(deadline: Deadline | None, tracker: BudgetTracker | None) -> Deadline | None:
    """The deadline that bounds requests: the earlier of ``deadline`` and the budget's."""
    budgeted = tracker.budget.deadline if tracker is not None else None
    if deadline is None or budgeted is None:
        return deadline or budgeted
    return deadline if deadline.expires_at <= budgeted.expires_at else budgeted


# History by nature: declared LOG in every session from the start, so that a failed
# tool call's rollback (which undoes the declarations it made) never drops them.
for _event_type in (PromptRendered, PromptExecuted):
    Session.declare_default(_event_type, SliceKind.LOG)


def _declare_log(session: Session) -> None:
    for event_type in (PromptRendered, PromptExecuted):
        accessor = session[event_type]
        if accessor.kind is not SliceKind.LOG:
            accessor.declare(SliceKind.LOG)


def _saved(kind: str, turn: ModelTurn, arguments: tuple[Any, ...]) -> SavedTurn:
    """An answered turn as ``_answer`` was given it, as JSON data."""
    if kind == "saved":
        saved: SavedTurn = arguments[0]
        return saved
    base = saved_turn("tools", turn.text, turn.calls, turn.echo)
    if kind == "answer_tools":
        return answered(base, [result for _, result in arguments[0]])
    if kind == "answer_invalid_output":
        return replace(base, kind="invalid", correction=arguments[0])
    return replace(base, kind="pause")


def _replayed_turn(saved: SavedTurn) -> ModelTurn:
    """A saved turn as the conversation echoes it."""
    calls = tuple(call.call() for call in saved.calls)
    stop: StopReason = "tool_calls" if calls else "end"
    return ModelTurn(saved.text, calls, TokenUsage(), None, saved.echo, stop_reason=stop)


def _invoked(session: Session, result: ToolResult[Any], call: ToolCall) -> ToolInvoked:
    """The event the executor recorded for ``result``: the latest, unless another thread
    recorded a call on this session meanwhile."""
    for event in reversed(session[ToolInvoked].values()):
        if event.result is result:
            return event
    raise WinkError(f"no ToolInvoked event was recorded for tool call {call.name!r}")


def _close(awaitable: object) -> None:
    close = getattr(awaitable, "close", None)  # a coroutine never started: nothing to undo
    if callable(close):
        close()


def _phase_of(error: PromptEvaluationError) -> EvaluationPhase:
    """Which limit stopped a tool call, from the executor's error."""
    cause = error.__cause__
    if isinstance(cause, DeadlineExceededError):
        return "deadline"
    if isinstance(cause, BudgetExceededError):
        return "budget"
    return "tool"


def _parse_output(contract: Contract[Any], text: str | None) -> tuple[Any, str | None]:
    """The output parsed from ``text``, or ``None`` and what is wrong with it."""
    if text is None or not text.strip():
        return None, "<root>: the answer is empty; a JSON object is required"
    try:
        return contract.parse(text), None
    except ContractViolation as violation:
        return None, describe_problems(violation.problems)


def _correction(problem: str) -> str:
    return (
        "Your answer does not match the required JSON Schema:\n"
        f"{problem}\n"
        "Answer again with only the corrected JSON object."
    )


def _response_of(events: Generator[StreamEvent, None, None]) -> PromptResponse[Any]:
    """The response an unstreamed evaluation's events end with; the driver is closed."""
    try:
        for event in events:
            if isinstance(event, EvaluationFinished):
                return event.response
    finally:
        events.close()
    raise AssertionError("an evaluation ends with its response or an error")


async def _aresponse_of(events: AsyncGenerator[StreamEvent, None]) -> PromptResponse[Any]:
    """``_response_of`` for the async driver."""
    try:
        async for event in events:
            if isinstance(event, EvaluationFinished):
                return event.response
    finally:
        await events.aclose()
    raise AssertionError("an evaluation ends with its response or an error")
