"""``OpenAIAdapter``: evaluate prompts with the OpenAI SDK (Chat Completions or Responses)."""

from __future__ import annotations

import importlib
import itertools
import json
from collections.abc import AsyncGenerator, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from wink.adapters import (
    ChunkStream,
    Conversation,
    LoopAdapter,
    ModelRequest,
    ModelTurn,
    ProviderFailure,
    ProviderToolCall,
    StopReason,
    StreamReader,
    UnusableResponse,
    unexpected_failure,
)
from wink.adapters.loop import ToolAnswers
from wink.contract import Contract, JsonSchema
from wink.contract.frozen import freeze
from wink.contract.schema import fields_without_default
from wink.prompt import RenderedPrompt
from wink.providers._errors import ProviderSchemaError
from wink.providers._inline import object_root
from wink.providers._output import output_name
from wink.providers._payload import (
    fill_call_ids,
    list_field,
    object_at,
    object_field,
    token_count,
)
from wink.providers._replies import offering, provider_tools_of, reply_data
from wink.providers._sdk_errors import http_failure
from wink.providers._specs import SpecCache
from wink.providers._streams import ChatStreamReader, ResponsesStreamReader, closing_chunks
from wink.providers._strict import make_strict
from wink.runtime.budget import TokenUsage

if TYPE_CHECKING:
    from wink.providers.openai import Api, StrictMode

__all__ = ["OpenAIAdapter"]

_output_cache = SpecCache()


class OpenAIAdapter(LoopAdapter):
    """Evaluates prompts through an ``openai.OpenAI`` client you built, or an
    ``openai.AsyncOpenAI`` one for ``aevaluate`` (with a sync client, ``aevaluate``
    runs each request in a worker thread).

    ``api="chat"`` uses Chat Completions, ``api="responses"`` the Responses API
    (stateless: each request carries the whole conversation). ``strict`` applies to
    the tool specs as in ``openai.tool_specs`` and to the output schema (``"auto"``
    for it when ``strict`` is a mapping of tool names). ``provider_tools`` are
    OpenAI's own tools (``{"type": "web_search"}``, ``{"type": "file_search", ...}`` for
    Responses), sent after the prompt's; their output items go back to the model with
    its turn and are recorded in each ``ModelExchange``. Other keyword arguments
    (``temperature``, ``reasoning``...) go into every request.
    """

    def __init__(
        self,
        client: Any,
        *,
        model: str,
        api: Api = "chat",
        strict: StrictMode | Mapping[str, StrictMode] = "auto",
        provider_tools: Sequence[Mapping[str, Any]] = (),
        **request_options: Any,
    ) -> None:
        if api not in ("chat", "responses"):
            raise ValueError(f"OpenAIAdapter: api must be 'chat' or 'responses', got {api!r}")
        self.provider_tools = provider_tools_of("OpenAIAdapter", provider_tools, request_options)
        self._client = client
        self._sdk = importlib.import_module("openai")
        self.model = model
        self.api = api
        self.strict = strict
        self.request_options = dict(request_options)
        self.max_retries = int(getattr(client, "max_retries", 0))
        self._async_client = isinstance(client, self._sdk.AsyncOpenAI)

    @property
    def name(self) -> str:
        """``"openai"``."""
        return "openai"

    def start(
        self, rendered: RenderedPrompt, output: Contract[Any] | None, messages: Sequence[Any]
    ) -> Conversation:
        """A Chat Completions or Responses conversation for ``rendered``."""
        base = self._with_tools({"model": self.model, **self.request_options}, rendered)
        types = self._sdk.types
        if self.api == "chat":
            if output is not None:
                base["response_format"] = {
                    "type": "json_schema",
                    "json_schema": output_format(output, self.strict),
                }
            opening = _opening(rendered, messages, "system")
            return _ChatConversation(base, types.chat.ChatCompletion, self._with_tools, opening)
        if output is not None:
            base["text"] = {"format": {"type": "json_schema", **output_format(output, self.strict)}}
        if messages:
            base["instructions"] = rendered.text
            return _ResponsesConversation(
                base, types.responses.Response, self._with_tools, list(messages)
            )
        user = {"role": "user", "content": rendered.text}
        return _ResponsesConversation(base, types.responses.Response, self._with_tools, [user])

    def _with_tools(self, request: dict[str, Any], rendered: RenderedPrompt) -> dict[str, Any]:
        """A copy of ``request`` offering ``rendered``'s tools, then the provider's; with
        no ``tools`` key when there are none."""
        from wink.providers import openai

        specs = openai.tool_specs(rendered, api=self.api, strict=self.strict)
        tools = [*specs, *self.provider_tools]
        return offering(request, tools)

    def send(self, request: ModelRequest) -> Any:
        """One SDK call; under a deadline it has the time left as its timeout and no retries."""
        client = self._client
        if request.timeout is not None:
            client = client.with_options(timeout=request.timeout, max_retries=0)
        if self.api == "chat":
            return client.chat.completions.create(**request.body)
        return client.responses.create(**request.body)

    async def asend(self, request: ModelRequest) -> Any:
        """``send`` awaited with an ``AsyncOpenAI`` client; in a worker thread otherwise."""
        if self._async_client:
            return await self.send(request)
        return await super().asend(request)

    def open_stream(self, request: ModelRequest) -> ChunkStream:
        """The SDK's streaming call (``stream=True``; Chat Completions asks for the usage
        in the last chunk)."""
        client = self._client
        if request.timeout is not None:
            client = client.with_options(timeout=request.timeout, max_retries=0)
        if self.api == "chat":
            options = {**request.body.get("stream_options", {}), "include_usage": True}
            stream: ChunkStream = client.chat.completions.create(
                **request.body, stream=True, stream_options=options
            )
            return stream
        responses: ChunkStream = client.responses.create(**request.body, stream=True)
        return responses

    async def aopen_stream(self, request: ModelRequest) -> AsyncGenerator[Any, None]:
        """``open_stream`` awaited with an ``AsyncOpenAI`` client; in a worker thread
        otherwise."""
        if not self._async_client:
            return await super().aopen_stream(request)
        stream: Any = self.open_stream(request)
        return closing_chunks(await stream)

    def stream_reader(self) -> StreamReader:
        """A reader of Chat Completions chunks or Responses API events."""
        if self.api == "chat":
            return ChatStreamReader(self._sdk.types.chat.ChatCompletion)
        return ResponsesStreamReader()

    def describe_error(self, error: Exception) -> ProviderFailure:
        """An ``openai`` SDK error as a failure (rate limits, 5xx, connections
        retryable); any other exception of the call as one that is not retried."""
        return http_failure(error, self._sdk) or unexpected_failure(error)


def output_format(
    output: Contract[Any], strict: StrictMode | Mapping[str, StrictMode]
) -> dict[str, Any]:
    """``{"name", "schema", "strict"}`` for the output type: strict where the rewrite
    keeps the schema's meaning (``strict="auto"``), or as asked."""
    mode: StrictMode = "auto" if isinstance(strict, Mapping) else strict

    def build() -> dict[str, Any]:
        name = output_name(output)
        schema, is_strict = _output_schema(output, name, mode)
        frozen: dict[str, Any] = freeze({"name": name, "schema": schema, "strict": is_strict})
        return frozen

    return dict(_output_cache.get((output.type, mode), build))


def _output_schema(output: Contract[Any], name: str, mode: StrictMode) -> tuple[JsonSchema, bool]:
    from wink.providers.openai import STRICT_RULES

    loose = object_root(output.input_schema, name, "OpenAI")
    if mode is False:
        return loose, False
    try:
        made = make_strict(
            output.input_schema, STRICT_RULES, name, lambda: fields_without_default(output.type)
        )
    except ProviderSchemaError:
        if mode is True:
            raise
        return loose, False
    if mode == "auto" and made.losses:
        return loose, False
    return made.schema, True


def _opening(rendered: RenderedPrompt, messages: Sequence[Any], role: str) -> list[Any]:
    """The rendered text as the user's message, or as the instruction before ``messages``."""
    if messages:
        return [{"role": role, "content": rendered.text}, *messages]
    return [{"role": "user", "content": rendered.text}]


def _usage(data: Mapping[str, Any], input_name: str, output_name: str) -> TokenUsage:
    usage = object_field(data, "usage", "")
    return TokenUsage(
        token_count(usage, input_name, "usage"), token_count(usage, output_name, "usage")
    )


def _made_ids() -> Iterator[str]:
    """Ids for calls that came without a usable one: unique in the conversation."""
    return (f"wink_call_{number}" for number in itertools.count(1))


_CHAT_STOPS: dict[str, StopReason] = {
    "stop": "end",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "length": "max_tokens",
    "content_filter": "content_filter",
}
_INCOMPLETE: dict[str, StopReason] = {
    "max_output_tokens": "max_tokens",
    "content_filter": "content_filter",
}
# Output items of the tools OpenAI runs itself; the keys kept as the call's arguments.
_HOSTED_CALLS = {
    "web_search_call": "action",
    "file_search_call": "queries",
    "code_interpreter_call": "code",
    "image_generation_call": None,
    "mcp_call": "arguments",
}


@dataclass(slots=True)
class _ChatConversation:
    base: dict[str, Any]
    completion_type: type
    with_tools: Callable[[dict[str, Any], RenderedPrompt], dict[str, Any]]
    messages: list[Any] = field(default_factory=list)
    made_ids: Iterator[str] = field(default_factory=_made_ids)

    def request(self) -> dict[str, Any]:
        # A copy of references only (each message was converted once, when it joined):
        # the request keeps the messages it was sent with while the conversation grows.
        return {**self.base, "messages": list(self.messages)}

    def use_tools(self, rendered: RenderedPrompt) -> None:
        self.base = self.with_tools(self.base, rendered)

    def read(self, reply: Any) -> ModelTurn:
        from wink.providers import openai

        data = reply_data(reply, self.completion_type, "a chat completion")
        choices = list_field(data, "choices", "")
        if not choices:
            raise UnusableResponse("the completion has no choices", reply)
        choice = object_at(choices[0], "choices[0]")
        if choice.get("message") is None:
            raise UnusableResponse("the completion's first choice has no message", reply)
        message = dict(object_field(choice, "message", "choices[0]"))
        calls_data = list_field(message, "tool_calls", "choices[0].message")
        fill_call_ids(
            [call for call in calls_data if isinstance(call, dict)], "id", self.made_ids.__next__
        )
        calls = tuple(openai.parse_tool_calls(calls_data))
        content = message.get("content")
        if content is not None and not isinstance(content, str):
            raise UnusableResponse(
                f"choices[0].message.content is not text but {type(content).__name__}", reply
            )
        raw = choice.get("finish_reason")
        raw_stop = None if raw is None else str(raw)
        stop: StopReason = "end" if raw_stop is None else _CHAT_STOPS.get(raw_stop, "other")
        refusal = message.get("refusal")
        if refusal:
            stop = "refusal"
        return ModelTurn(
            content,
            calls,
            _usage(data, "prompt_tokens", "completion_tokens"),
            reply,
            stop_reason=stop,
            raw_stop_reason=raw_stop,
            stop_detail=str(refusal) if refusal else None,
        )

    def _echo(self, turn: ModelTurn) -> None:
        message: dict[str, Any] = {"role": "assistant", "content": turn.text}
        if turn.calls:
            message["tool_calls"] = [
                {
                    "id": call.call_id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                }
                for call in turn.calls
            ]
        self.messages.append(message)

    def answer_tools(self, turn: ModelTurn, answers: ToolAnswers) -> None:
        from wink.providers import openai

        self._echo(turn)
        self.messages.extend(openai.tool_message(call, result) for call, result in answers)

    def answer_invalid_output(self, turn: ModelTurn, message: str) -> None:
        self._echo(turn)
        self.messages.append({"role": "user", "content": message})

    def answer_pause(self, turn: ModelTurn) -> None:
        self._echo(turn)

    def finish(self, turn: ModelTurn) -> tuple[Any, ...]:
        self._echo(turn)
        return tuple(self.messages)


@dataclass(slots=True)
class _ResponsesConversation:
    base: dict[str, Any]
    response_type: type
    with_tools: Callable[[dict[str, Any], RenderedPrompt], dict[str, Any]]
    items: list[Any] = field(default_factory=list)
    made_ids: Iterator[str] = field(default_factory=_made_ids)

    def request(self) -> dict[str, Any]:
        # A copy of references only (each message was converted once, when it joined):
        # the request keeps the messages it was sent with while the conversation grows.
        return {**self.base, "input": list(self.items)}

    def use_tools(self, rendered: RenderedPrompt) -> None:
        self.base = self.with_tools(self.base, rendered)

    def read(self, reply: Any) -> ModelTurn:
        from wink.providers import openai

        data = reply_data(reply, self.response_type, "a Responses API response")
        error = data.get("error")
        if error is not None:
            message = error.get("message") if isinstance(error, dict) else error
            raise UnusableResponse(f"the response failed: {message}", reply)
        # Every output item goes back, reasoning included: it belongs with its calls.
        items: list[Any] = list_field(data, "output", "")
        dicts = [item for item in items if isinstance(item, dict)]
        fill_call_ids(
            [item for item in dicts if item.get("type") == "function_call"],
            "call_id",
            self.made_ids.__next__,
        )
        texts: list[str] = []
        refusals: list[str] = []
        for index, item in enumerate(dicts):
            if item.get("type") != "message":
                continue
            for content in list_field(item, "content", f"output[{index}]"):
                if not isinstance(content, dict):
                    continue
                if content.get("type") == "refusal":
                    refusals.append(str(content.get("refusal")))
                if content.get("type") == "output_text" and isinstance(content.get("text"), str):
                    texts.append(content["text"])
        calls = tuple(openai.parse_tool_calls(items))
        stop, raw_stop = _responses_stop(data, bool(calls))
        if refusals:
            stop = "refusal"
        return ModelTurn(
            "".join(texts) if texts else None,
            calls,
            _usage(data, "input_tokens", "output_tokens"),
            reply,
            items,
            stop_reason=stop,
            raw_stop_reason=raw_stop,
            stop_detail="".join(refusals) if refusals else None,
            provider_tools=tuple(_hosted_calls(dicts)),
        )

    def _echo(self, turn: ModelTurn) -> None:
        self.items.extend(turn.echo)

    def answer_tools(self, turn: ModelTurn, answers: ToolAnswers) -> None:
        from wink.providers import openai

        self._echo(turn)
        self.items.extend(
            openai.tool_message(call, result, api="responses") for call, result in answers
        )

    def answer_invalid_output(self, turn: ModelTurn, message: str) -> None:
        self._echo(turn)
        self.items.append({"role": "user", "content": message})

    def answer_pause(self, turn: ModelTurn) -> None:
        self._echo(turn)

    def finish(self, turn: ModelTurn) -> tuple[Any, ...]:
        self._echo(turn)
        return tuple(self.items)


def _responses_stop(data: Mapping[str, Any], called: bool) -> tuple[StopReason, str | None]:
    """A response's ``status`` (with the reason of an incomplete one) as a stop reason."""
    status = data.get("status")
    if status is None or status == "completed":
        return ("tool_calls" if called else "end"), None if status is None else "completed"
    if status == "incomplete":
        details = data.get("incomplete_details")
        reason = details.get("reason") if isinstance(details, dict) else None
        return _INCOMPLETE.get(str(reason), "other"), f"incomplete: {reason}"
    return "other", str(status)  # failed, cancelled, queued, in_progress: not an answer


def _hosted_calls(items: list[dict[str, Any]]) -> list[ProviderToolCall]:
    calls = []
    for item in items:
        kind = item.get("type")
        if kind not in _HOSTED_CALLS:
            continue
        key = _HOSTED_CALLS[kind]
        arguments = item.get(key) if key is not None else None
        name = str(item.get("name") or kind.removesuffix("_call"))
        call_id = item.get("id") if isinstance(item.get("id"), str) else None
        calls.append(ProviderToolCall(name, call_id, json.dumps(arguments, ensure_ascii=False)))
    return calls
