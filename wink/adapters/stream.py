"""What a streamed evaluation yields, and what a provider supplies to read a stream.

``adapter.stream(prompt, session=...)`` (and ``astream``) runs the same loop as
``evaluate``: the same requests, session events, stop rules, tool calls and
``PromptResponse``. It yields the events below as they happen: each request's
``TurnStarted``, the reply's text, reasoning and tool-call deltas as its chunks
arrive, its ``TurnEnded``, each complete ``ToolCallReady`` once the reply is whole
(never before: no tool runs on partial arguments), each tool's ``ToolInvoked`` as it
finishes, ``AnswerRejected`` when an answer breaks the output type and is sent back,
and last ``EvaluationFinished`` with the response ``evaluate`` would have returned.

A provider reads its SDK's chunks with a ``StreamReader``: each chunk gives the
events it holds, and at the end the reader hands back the whole reply, the same
object its ``send`` returns, which the conversation reads as any other.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from wink.adapters.response import PromptResponse, StopReason
from wink.runtime.budget import TokenUsage
from wink.runtime.call import ToolCall
from wink.runtime.events import ToolInvoked

__all__ = [
    "AnswerRejected",
    "EvaluationFinished",
    "ReasoningDelta",
    "StreamEvent",
    "StreamReader",
    "TextDelta",
    "ToolCallDelta",
    "ToolCallReady",
    "ToolCallStarted",
    "TurnEnded",
    "TurnStarted",
]


@dataclass(frozen=True, slots=True)
class TurnStarted:
    """A request to the model is about to be sent (retries of it are part of the turn)."""

    turn: int
    """Which request of the evaluation this is, from 1."""


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of the model's answer, in the order it arrived."""

    text: str
    """The new text (for structured output, a piece of the JSON answer)."""


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    """A piece of the model's reasoning (Anthropic thinking, Gemini thoughts, OpenAI
    reasoning summaries), where the provider streams it."""

    text: str
    """The new reasoning text."""


@dataclass(frozen=True, slots=True)
class ToolCallStarted:
    """The model began a tool call; its arguments follow as ``ToolCallDelta`` pieces."""

    index: int
    """The call's position among the reply's tool calls, from 0."""
    call_id: str | None
    """The provider's id for the call as it came, if any (``ToolCallReady`` carries the
    id the call is answered with)."""
    name: str
    """The tool's name."""


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """A piece of a tool call's JSON arguments."""

    index: int
    """The call's position among the reply's tool calls, from 0."""
    arguments: str
    """The new piece of JSON text."""


@dataclass(frozen=True, slots=True)
class ToolCallReady:
    """A tool call of a whole reply that the loop is about to run, as it runs it."""

    call: ToolCall
    """The call: name, complete JSON arguments and the id its result answers."""


@dataclass(frozen=True, slots=True)
class TurnEnded:
    """The model's reply to a request was read whole."""

    turn: int
    """Which request of the evaluation it answered, from 1."""
    text: str | None
    """The reply's text, or ``None``."""
    tool_calls: tuple[ToolCall, ...]
    """Its tool calls, in order."""
    usage: TokenUsage
    """Tokens this request used."""
    stop_reason: StopReason
    """Why the reply ended (the stop rules apply after this event, as to a whole reply)."""
    raw_stop_reason: str | None
    """The provider's own value for it, or ``None`` when it gave none."""


@dataclass(frozen=True, slots=True)
class AnswerRejected:
    """The answer does not match the output type; it is sent back to be redone."""

    turn: int
    """The request whose answer was refused."""
    problem: str
    """What is wrong with it, as the model is told."""


@dataclass(frozen=True, slots=True)
class EvaluationFinished:
    """The evaluation ended with an answer, recorded in the session."""

    response: PromptResponse[Any] = field(repr=False)
    """What ``evaluate`` returns for the same replies."""


StreamEvent = (
    TurnStarted
    | TextDelta
    | ReasoningDelta
    | ToolCallStarted
    | ToolCallDelta
    | TurnEnded
    | ToolCallReady
    | ToolInvoked
    | AnswerRejected
    | EvaluationFinished
)
"""What ``adapter.stream`` yields."""


class StreamReader(Protocol):
    """Reads one reply's stream of SDK chunks (a new reader for each request)."""

    def feed(self, chunk: Any) -> Sequence[StreamEvent]:
        """The events ``chunk`` holds, in order (often none); raises on a chunk of a
        shape it cannot read."""
        ...

    def reply(self) -> Any:
        """The whole reply the chunks made, of the type the adapter's ``send`` returns;
        raises ``UnusableResponse`` when the stream ended before the reply was whole."""
        ...
