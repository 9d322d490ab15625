"""Reading each SDK's stream of chunks into stream events and into the whole reply.

A reader builds the reply the provider would have sent whole, as the SDK's own reply
object, so that the conversation reads a streamed reply exactly as any other: the
same text, calls, stop reason, usage and echo (thinking signatures, reasoning items
and thought signatures included). Chunks are read through their attributes; a chunk
of another shape raises, and the loop names the chunk.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Sequence
from typing import Any

from wink.adapters import (
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallStarted,
    UnusableResponse,
)

__all__ = [
    "AnthropicStreamReader",
    "ChatStreamReader",
    "GeminiStreamReader",
    "ResponsesStreamReader",
    "closing_chunks",
]

_NONE: Sequence[StreamEvent] = ()


async def closing_chunks(stream: Any) -> AsyncGenerator[Any, None]:
    """An SDK's asynchronous stream as an async generator whose ``aclose()`` closes it."""
    try:
        async for chunk in stream:
            yield chunk
    finally:
        await stream.close()


def _dump(model: Any, *, by_alias: bool = False) -> dict[str, Any]:
    data: dict[str, Any] = model.model_dump(
        mode="json", exclude_none=True, by_alias=by_alias, warnings=False
    )
    return data


class ChatStreamReader:
    """Chat Completions chunks (``chat.completion.chunk``) into a ``ChatCompletion``."""

    def __init__(self, completion_type: Any) -> None:
        self._type = completion_type
        self._head: dict[str, Any] | None = None
        self._content: list[str] | None = None
        self._refusal: list[str] = []
        self._reasoning: dict[str, list[str]] = {}
        self._calls: dict[int, dict[str, Any]] = {}  # by the chunks' index
        self._arguments: dict[int, list[str]] = {}
        self._positions: dict[int, int] = {}  # the chunks' index -> order of arrival
        self._finish: str | None = None
        self._usage: Any = None

    def feed(self, chunk: Any) -> Sequence[StreamEvent]:
        if self._head is None:
            self._head = {"id": chunk.id, "created": chunk.created, "model": chunk.model}
        if chunk.usage is not None:
            self._usage = chunk.usage
        events: list[StreamEvent] = []
        for choice in chunk.choices:
            if choice.index != 0:  # the first choice is the answer, as read whole
                continue
            delta = choice.delta
            text = delta.content
            if text is not None:
                if self._content is None:
                    self._content = []
                if text:
                    self._content.append(text)
                    events.append(TextDelta(text))
            if delta.refusal:
                self._refusal.append(delta.refusal)
            extra = delta.model_extra
            if extra:
                self._read_reasoning(extra, events)
            if delta.tool_calls:
                self._read_calls(delta.tool_calls, events)
            if choice.finish_reason is not None:
                self._finish = choice.finish_reason
        return events

    def _read_reasoning(self, extra: dict[str, Any], events: list[StreamEvent]) -> None:
        # OpenAI-compatible servers stream reasoning under a field of their own.
        for name in ("reasoning_content", "reasoning"):
            piece = extra.get(name)
            if isinstance(piece, str) and piece:
                self._reasoning.setdefault(name, []).append(piece)
                events.append(ReasoningDelta(piece))

    def _read_calls(self, deltas: Any, events: list[StreamEvent]) -> None:
        for delta in deltas:
            index = delta.index
            function = delta.function
            name = function.name if function is not None else None
            entry = self._calls.get(index)
            if entry is None:
                entry = {"id": delta.id, "type": "function", "function": {"name": name}}
                self._calls[index] = entry
                self._arguments[index] = []
                self._positions[index] = len(self._positions)
                events.append(ToolCallStarted(self._positions[index], delta.id, name or ""))
            else:  # some servers repeat the id and name in every delta
                if entry["id"] is None:
                    entry["id"] = delta.id
                if entry["function"]["name"] is None:
                    entry["function"]["name"] = name
            piece = function.arguments if function is not None else None
            if piece:
                self._arguments[index].append(piece)
                events.append(ToolCallDelta(self._positions[index], piece))

    def reply(self) -> Any:
        if self._head is None:
            raise UnusableResponse("the stream ended before its first chunk")
        message: dict[str, Any] = {
            "role": "assistant",
            "content": None if self._content is None else "".join(self._content),
        }
        if self._refusal:
            message["refusal"] = "".join(self._refusal)
        for name, pieces in self._reasoning.items():
            message[name] = "".join(pieces)
        if self._calls:
            message["tool_calls"] = [
                {**entry, "function": {**entry["function"], "arguments": "".join(pieces)}}
                for entry, pieces in (
                    (self._calls[index], self._arguments[index]) for index in sorted(self._calls)
                )
            ]
        choice = {"index": 0, "finish_reason": self._finish, "message": message}
        data = {**self._head, "object": "chat.completion", "choices": [choice]}
        if self._usage is not None:
            data["usage"] = self._usage
        return self._type.construct(**data)


class ResponsesStreamReader:
    """Responses API events into the ``Response`` of its last event (``response.completed``,
    ``response.incomplete`` or ``response.failed``), which carries every output item."""

    def __init__(self) -> None:
        self._final: Any = None
        self._calls: dict[int, int] = {}  # output index -> call index

    def feed(self, event: Any) -> Sequence[StreamEvent]:
        kind = event.type
        if kind == "response.output_text.delta":
            return (TextDelta(event.delta),)
        if kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            return (ReasoningDelta(event.delta),)
        if kind == "response.function_call_arguments.delta":
            return (ToolCallDelta(self._calls[event.output_index], event.delta),)
        if kind == "response.output_item.added" and event.item.type == "function_call":
            index = len(self._calls)
            self._calls[event.output_index] = index
            return (ToolCallStarted(index, event.item.call_id, event.item.name),)
        if kind in ("response.completed", "response.incomplete", "response.failed"):
            self._final = event.response
        elif kind == "error":
            raise UnusableResponse(
                f"the stream reported an error: {event.code}: {event.message}", event
            )
        return _NONE

    def reply(self) -> Any:
        if self._final is None:
            raise UnusableResponse("the stream ended before the response was complete")
        return self._final


class AnthropicStreamReader:
    """Messages API events into a ``Message``: each block as it would come whole."""

    def __init__(self, message_type: Any) -> None:
        self._type = message_type
        self._message: dict[str, Any] | None = None
        self._blocks: list[dict[str, Any]] = []
        self._pieces: list[list[str]] = []
        self._calls: dict[int, int] = {}  # block index -> call index
        self._finished = False

    def feed(self, event: Any) -> Sequence[StreamEvent]:
        kind = event.type
        if kind == "content_block_delta":
            return self._delta(event.index, event.delta)
        if kind == "content_block_start":
            block = _dump(event.content_block)
            self._blocks.append(block)
            self._pieces.append([])
            if block.get("type") == "tool_use":
                index = len(self._calls)
                self._calls[len(self._blocks) - 1] = index
                return (ToolCallStarted(index, block.get("id"), str(block.get("name"))),)
        elif kind == "message_start":
            self._message = _dump(event.message)
        elif kind == "message_delta":
            self._message_delta(event)
        elif kind == "message_stop":
            self._finished = True
        return _NONE

    def _delta(self, index: int, delta: Any) -> Sequence[StreamEvent]:
        kind = delta.type
        if kind == "text_delta":
            self._pieces[index].append(delta.text)
            return (TextDelta(delta.text),)
        if kind == "input_json_delta":
            self._pieces[index].append(delta.partial_json)
            call = self._calls.get(index)
            if call is None or not delta.partial_json:
                return _NONE
            return (ToolCallDelta(call, delta.partial_json),)
        if kind == "thinking_delta":
            self._pieces[index].append(delta.thinking)
            return (ReasoningDelta(delta.thinking),) if delta.thinking else _NONE
        if kind == "signature_delta":
            self._blocks[index]["signature"] = delta.signature
        elif kind == "citations_delta":
            self._blocks[index].setdefault("citations", []).append(_dump(delta.citation))
        return _NONE

    def _message_delta(self, event: Any) -> None:
        if self._message is None:
            raise UnusableResponse("message_delta came before message_start", event)
        self._message.update(_dump(event.delta))
        usage = self._message.setdefault("usage", {})
        usage.update(_dump(event.usage))  # the counts so far; the last are the message's

    def reply(self) -> Any:
        if self._message is None or not self._finished:
            raise UnusableResponse("the stream ended before message_stop")
        content = []
        for block, pieces in zip(self._blocks, self._pieces, strict=True):
            kind = block.get("type")
            if kind == "text":
                block["text"] = block.get("text", "") + "".join(pieces)
            elif kind in ("thinking",):
                block["thinking"] = block.get("thinking", "") + "".join(pieces)
            elif pieces:
                block["input"] = _decoded("".join(pieces))
            content.append(block)
        return self._type.construct(**{**self._message, "content": content})


def _decoded(text: str) -> Any:
    """A tool block's streamed input; text that is not JSON (a call cut by the token
    limit) is kept as it came, and the call is never run."""
    if not text:
        return {}
    try:
        return json.loads(text)
    except ValueError:
        return text


class _TextRun:
    """Consecutive text parts of one kind (thought or answer), joined as one part."""

    __slots__ = ("first", "pieces", "signed", "thought")

    def __init__(self, first: Any, thought: bool) -> None:
        self.first = first
        self.thought = thought
        self.pieces: list[str] = []
        self.signed: Any = None

    def part(self) -> dict[str, Any]:
        data = _dump(self.first, by_alias=True)
        data["text"] = "".join(self.pieces)
        if self.signed is not None:
            data["thoughtSignature"] = _dump(self.signed, by_alias=True)["thoughtSignature"]
        return data


class GeminiStreamReader:
    """``generate_content_stream`` chunks into one ``GenerateContentResponse``: the
    first candidate's parts in order, consecutive text joined (with the thought
    signature that closes it), the last chunk's usage, finish reason and metadata."""

    def __init__(self, response_type: Any) -> None:
        self._type = response_type
        self._parts: list[_TextRun | dict[str, Any]] = []
        self._run: _TextRun | None = None
        self._calls = 0
        self._candidate: dict[str, Any] = {}
        self._top: dict[str, Any] = {}
        self._chunks = 0

    def feed(self, chunk: Any) -> Sequence[StreamEvent]:
        self._chunks += 1
        for name, value in (
            ("usageMetadata", chunk.usage_metadata),
            ("modelVersion", chunk.model_version),
            ("responseId", chunk.response_id),
            ("promptFeedback", chunk.prompt_feedback),
        ):
            if value is not None:
                self._top[name] = value
        candidates = chunk.candidates
        if not candidates:
            return _NONE
        candidate = candidates[0]
        if candidate.finish_reason is not None or candidate.grounding_metadata is not None:
            fields = _dump(candidate, by_alias=True)
            fields.pop("content", None)
            self._candidate.update(fields)
        content = candidate.content
        if content is None or not content.parts:
            return _NONE
        events: list[StreamEvent] = []
        for part in content.parts:
            self._read_part(part, events)
        return events

    def _read_part(self, part: Any, events: list[StreamEvent]) -> None:
        text = part.text
        if text is not None and part.function_call is None:
            thought = bool(part.thought)
            run = self._run
            if run is None or run.thought != thought or run.signed is not None:
                if not text and part.thought_signature is None:
                    return  # an empty piece between chunks: nothing to keep
                run = self._run = _TextRun(part, thought)
                self._parts.append(run)
            if text:
                run.pieces.append(text)
                events.append(ReasoningDelta(text) if thought else TextDelta(text))
            if part.thought_signature is not None:
                run.signed = part
            return
        self._run = None
        data = _dump(part, by_alias=True)
        self._parts.append(data)
        call = part.function_call
        if call is not None:
            index = self._calls
            self._calls += 1
            events.append(ToolCallStarted(index, call.id, call.name or ""))
            events.append(ToolCallDelta(index, json.dumps(call.args or {})))

    def reply(self) -> Any:
        if self._chunks == 0:
            raise UnusableResponse("the stream ended before its first chunk")
        data: dict[str, Any] = {
            name: _dump(value, by_alias=True) if hasattr(value, "model_dump") else value
            for name, value in self._top.items()
        }
        if self._parts or self._candidate:
            parts = [part.part() if isinstance(part, _TextRun) else part for part in self._parts]
            content = {"role": "model", "parts": parts}
            data["candidates"] = [{"content": content, **self._candidate}]
        return self._type.model_validate(data)
