"""``FunctionAdapter`` and ``ScriptedAdapter``: the evaluation loop with no provider."""

from __future__ import annotations

import inspect
import json
import re
import threading
from collections.abc import (
    AsyncGenerator,
    Awaitable,
    Callable,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from dataclasses import dataclass, field
from itertools import count, islice
from typing import Any, overload

from pydantic import BaseModel

from wink.adapters.loop import (
    Conversation,
    LoopAdapter,
    ModelRequest,
    ModelTurn,
    ProviderFailure,
    ToolAnswers,
)
from wink.adapters.response import StopReason
from wink.adapters.stream import (
    StreamEvent,
    StreamReader,
    TextDelta,
    ToolCallDelta,
    ToolCallStarted,
)
from wink.contract import Contract, JsonSchema
from wink.errors import WinkError
from wink.prompt import RenderedPrompt
from wink.runtime.budget import TokenUsage
from wink.runtime.call import ToolCall

__all__ = [
    "AssistantMessage",
    "FunctionAdapter",
    "Message",
    "ModelInput",
    "ModelReply",
    "ProviderError",
    "Reply",
    "ScriptedAdapter",
    "SystemMessage",
    "ToolMessage",
    "ToolSpec",
    "Transcript",
    "UserMessage",
    "call",
]


@dataclass(frozen=True, slots=True)
class SystemMessage:
    """The instruction: the rendered prompt when the evaluation was given ``messages``."""

    text: str


@dataclass(frozen=True, slots=True)
class UserMessage:
    """A user turn: the rendered prompt, or why an answer was refused."""

    text: str


@dataclass(frozen=True, slots=True)
class AssistantMessage:
    """A model turn: its text and tool calls."""

    text: str | None
    calls: tuple[ToolCall, ...] = ()


@dataclass(frozen=True, slots=True)
class ToolMessage:
    """A tool result, as a provider shows it to the model."""

    call_id: str | None
    name: str
    content: str
    """The result's ``model_text()``: message, blank line, rendered value."""
    success: bool


Message = SystemMessage | UserMessage | AssistantMessage | ToolMessage
"""One message of a conversation with no provider."""


class Transcript(Sequence[Message]):
    """The conversation as one request saw it: an immutable sequence of messages.

    It reads the first ``len()`` messages of the evaluation's message list, which
    only ever grows at its end, so that it holds the same messages however many
    turns follow, and handing it to a request costs the same at turn 1,000 as at
    turn 10 (no copy). It reads as a tuple does: ``len``, indexing (negative too),
    iteration, ``reversed``, ``in``; a slice is a tuple; it equals a tuple (or a
    transcript) holding the same messages. It has no ``+``: ``tuple(transcript)`` is
    the tuple, a copy made only when asked for.
    """

    __slots__ = ("_length", "_messages")

    def __init__(self, messages: list[Message], length: int) -> None:
        """The first ``length`` messages of ``messages``, which must only be appended to."""
        self._messages = messages
        self._length = length

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: int) -> Message: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[Message, ...]: ...

    def __getitem__(self, index: int | slice) -> Message | tuple[Message, ...]:
        if isinstance(index, slice):
            return tuple(self._messages[i] for i in range(*index.indices(self._length)))
        position = index + self._length if index < 0 else index
        if not 0 <= position < self._length:
            raise IndexError(f"transcript index {index} out of range ({self._length} messages)")
        return self._messages[position]

    def __iter__(self) -> Iterator[Message]:
        return islice(self._messages, self._length)

    def __reversed__(self) -> Iterator[Message]:
        messages = self._messages
        return (messages[i] for i in range(self._length - 1, -1, -1))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Transcript | tuple):
            return NotImplemented
        return len(other) == self._length and all(a == b for a, b in zip(self, other, strict=True))

    def __hash__(self) -> int:
        return hash(tuple(self))  # as the equal tuple's

    def __repr__(self) -> str:
        return f"Transcript({tuple(self)!r})"


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool as the model is shown it."""

    name: str
    description: str
    parameters: JsonSchema
    """The params contract's JSON Schema."""


@dataclass(frozen=True, slots=True)
class ModelInput:
    """What the model function is given for one request."""

    messages: Transcript
    """The conversation so far: a read-only view of it as this request saw it, which
    later turns never change (a ``Transcript``, read as a tuple)."""
    tools: tuple[ToolSpec, ...]
    """The tools of the rendered prompt, in order."""
    output_schema: JsonSchema | None
    """The JSON Schema the answer must match; ``None`` for a text answer."""
    turn: int
    """Which request of the evaluation this is, from 1."""

    @property
    def last(self) -> Message:
        """The latest message."""
        return self.messages[-1]

    def tool_messages(self) -> tuple[ToolMessage, ...]:
        """The tool results that answer the latest model turn, in order."""
        found: list[ToolMessage] = []
        for message in reversed(self.messages):
            if not isinstance(message, ToolMessage):
                break
            found.append(message)
        return tuple(reversed(found))


@dataclass(frozen=True, slots=True)
class ModelReply:
    """A model turn in full: text, tool calls, token usage and why it ended."""

    text: str | None = None
    calls: tuple[ToolCall, ...] = ()
    usage: TokenUsage | None = None
    """Tokens of this request; ``None``: the adapter's ``usage``."""
    stop_reason: StopReason = "end"
    """Why the reply ended: ``"max_tokens"`` plays an answer cut by the token limit,
    ``"refusal"`` a refusal, ``"pause"`` a turn the loop must continue."""
    stop_detail: str | None = None
    """The provider's explanation of a refusal or block, if any."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "calls", tuple(self.calls))


Reply = str | ToolCall | Sequence[ToolCall] | Mapping[str, Any] | BaseModel | ModelReply
"""What a model function returns: final text, one or several tool calls, a structured
answer (a mapping or a pydantic model, sent as its JSON) or a ``ModelReply``."""


class ProviderError(WinkError):
    """Raise it from a model function to play a provider failure."""

    def __init__(self, message: str, *, payload: Any = None, retryable: bool = False) -> None:
        super().__init__(message)
        self.payload = payload
        self.retryable = retryable


_call_ids = count(1)
_NO_USAGE = TokenUsage()


def call(
    name: str, arguments: Mapping[str, Any] | str | None = None, call_id: str = ""
) -> ToolCall:
    """A tool call the model makes: ``arguments`` as a mapping (sent as JSON) or JSON text."""
    text = json.dumps(arguments) if isinstance(arguments, Mapping) else arguments
    return ToolCall(name, "{}" if text is None else text, call_id or f"call_{next(_call_ids)}")


class FunctionAdapter(LoopAdapter):
    """An adapter whose model is a Python function of the conversation.

    ``function(model_input)`` returns a ``Reply``; raise ``ProviderError`` to play a
    provider failure. An ``async def`` function works with ``aevaluate``. Every input
    is kept in ``inputs`` for assertions. ``stream`` and ``astream`` play each reply
    as a stream: its text word by word, then each tool call whole.
    """

    def __init__(
        self,
        function: Callable[[ModelInput], Reply | Awaitable[Reply]],
        *,
        usage: TokenUsage = _NO_USAGE,
        name: str = "function",
    ) -> None:
        self._function = function
        self._usage = usage
        self._name = name
        self._lock = threading.Lock()
        self.inputs: list[ModelInput] = []
        """Every request's input, in order (nested evaluations included)."""

    @property
    def name(self) -> str:
        """The adapter's name in events (``"function"`` unless given)."""
        return self._name

    def start(
        self, rendered: RenderedPrompt, output: Contract[Any] | None, messages: Sequence[Any]
    ) -> Conversation:
        """A conversation in this module's message types."""
        return _Conversation(rendered, output, messages)

    def send(self, request: ModelRequest) -> Any:
        """Call the function with the request's input."""
        reply = self._function(self._input_of(request))
        if inspect.isawaitable(reply):
            return reply  # an async function: evaluate() says to use aevaluate()
        return _as_reply(reply, self._usage)

    async def asend(self, request: ModelRequest) -> Any:
        """Call the function (awaiting it when it is async) with the request's input."""
        reply = self._function(self._input_of(request))
        if inspect.isawaitable(reply):
            reply = await reply
        return _as_reply(reply, self._usage)

    def open_stream(self, request: ModelRequest) -> Any:
        """The reply to ``request`` as chunks: its text word by word, then its calls."""
        reply = self._function(self._input_of(request))
        if inspect.isawaitable(reply):
            return reply  # an async function: stream() says to use astream()
        return _chunks_of(_as_reply(reply, self._usage))

    async def aopen_stream(self, request: ModelRequest) -> AsyncGenerator[Any, None]:
        """``open_stream``, awaiting the function when it is async."""
        reply = self._function(self._input_of(request))
        if inspect.isawaitable(reply):
            reply = await reply
        return _achunks_of(_as_reply(reply, self._usage))

    def stream_reader(self) -> StreamReader:
        """A reader of the chunks ``open_stream`` makes."""
        return _ScriptReader()

    def _input_of(self, request: ModelRequest) -> ModelInput:
        model_input: ModelInput = request.body["input"]
        with self._lock:
            self.inputs.append(model_input)
        return model_input

    def describe_error(self, error: Exception) -> ProviderFailure | None:
        """A ``ProviderError`` as a provider failure; anything else is a bug in the function."""
        if isinstance(error, ProviderError):
            return ProviderFailure(str(error), error.payload, error.retryable)
        return None


class ScriptedAdapter(FunctionAdapter):
    """An adapter that replays ``replies`` in order, one per request."""

    def __init__(
        self, replies: Iterable[Reply], *, usage: TokenUsage = _NO_USAGE, name: str = "script"
    ) -> None:
        self._script = list(replies)
        self._next = 0
        super().__init__(self._reply, usage=usage, name=name)

    @property
    def remaining(self) -> int:
        """Replies not played yet."""
        return len(self._script) - self._next

    def _reply(self, model_input: ModelInput) -> Reply:
        if self._next >= len(self._script):
            raise WinkError(
                f"the script has no reply left for request {model_input.turn} (it had "
                f"{len(self._script)} replies); last message: {model_input.last!r}"
            )
        reply = self._script[self._next]
        self._next += 1
        return reply


_WORDS = re.compile(r"\s*\S+\s*|\s+")


def _chunks_of(reply: ModelReply) -> Iterator[Any]:
    """A reply as a stream: each word of its text (with its spaces), each call, then the
    reply itself."""
    if reply.text:
        yield from _WORDS.findall(reply.text)
    yield from reply.calls
    yield reply


async def _achunks_of(reply: ModelReply) -> AsyncGenerator[Any, None]:
    for chunk in _chunks_of(reply):
        yield chunk


class _ScriptReader:
    """Reads ``_chunks_of``: text pieces, whole calls, and last the reply."""

    def __init__(self) -> None:
        self._reply: ModelReply | None = None
        self._calls = 0

    def feed(self, chunk: Any) -> Sequence[StreamEvent]:
        if isinstance(chunk, str):
            return (TextDelta(chunk),)
        if isinstance(chunk, ToolCall):
            index = self._calls
            self._calls += 1
            arguments = chunk.arguments
            text = arguments if isinstance(arguments, str) else json.dumps(arguments)
            return (ToolCallStarted(index, chunk.call_id, chunk.name), ToolCallDelta(index, text))
        self._reply = chunk
        return ()

    def reply(self) -> Any:
        return self._reply


def _as_reply(reply: Reply, usage: TokenUsage) -> ModelReply:
    if isinstance(reply, ModelReply):
        if reply.usage is not None:
            return reply
        return ModelReply(reply.text, reply.calls, usage, reply.stop_reason, reply.stop_detail)
    if isinstance(reply, str):
        return ModelReply(reply, (), usage)
    if isinstance(reply, ToolCall):
        return ModelReply(None, (reply,), usage)
    if isinstance(reply, BaseModel):
        return ModelReply(reply.model_dump_json(by_alias=True), (), usage)
    if isinstance(reply, Mapping):
        return ModelReply(json.dumps(reply), (), usage)
    calls = tuple(reply)
    for index, item in enumerate(calls):
        if not isinstance(item, ToolCall):
            raise TypeError(f"a model function's reply [{index}] is {item!r}, not a ToolCall")
    return ModelReply(None, calls, usage)


@dataclass(slots=True)
class _Conversation:
    rendered: RenderedPrompt
    output: Contract[Any] | None
    history: Sequence[Any]
    # Only ever appended to: the transcripts of earlier requests read its first messages.
    messages: list[Message] = field(init=False)
    tools: tuple[ToolSpec, ...] = field(init=False)
    turn: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        if self.history:
            self.messages = [SystemMessage(self.rendered.text), *self.history]
        else:
            self.messages = [UserMessage(self.rendered.text)]
        self.use_tools(self.rendered)

    def use_tools(self, rendered: RenderedPrompt) -> None:
        self.tools = tuple(
            ToolSpec(tool.name, tool.description, tool.params_schema) for tool in rendered.tools
        )

    def request(self) -> dict[str, Any]:
        self.turn += 1
        schema = None if self.output is None else self.output.input_schema
        # A view, not a copy: a request's cost must not grow with the conversation.
        messages = Transcript(self.messages, len(self.messages))
        return {"input": ModelInput(messages, self.tools, schema, self.turn)}

    def read(self, reply: Any) -> ModelTurn:
        if not isinstance(reply, ModelReply):
            raise TypeError(f"expected a ModelReply, got {type(reply).__qualname__}")
        return ModelTurn(
            reply.text,
            reply.calls,
            reply.usage or TokenUsage(),
            reply,
            stop_reason=reply.stop_reason,
            raw_stop_reason=reply.stop_reason,
            stop_detail=reply.stop_detail,
        )

    def answer_tools(self, turn: ModelTurn, answers: ToolAnswers) -> None:
        self.messages.append(AssistantMessage(turn.text, turn.calls))
        for tool_call, result in answers:
            self.messages.append(
                ToolMessage(tool_call.call_id, tool_call.name, result.model_text(), result.success)
            )

    def answer_invalid_output(self, turn: ModelTurn, message: str) -> None:
        self.messages.append(AssistantMessage(turn.text))
        self.messages.append(UserMessage(message))

    def answer_pause(self, turn: ModelTurn) -> None:
        self.messages.append(AssistantMessage(turn.text))

    def finish(self, turn: ModelTurn) -> tuple[Any, ...]:
        return (*self.messages, AssistantMessage(turn.text))
