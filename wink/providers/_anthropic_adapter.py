"""``AnthropicAdapter``: evaluate prompts with the Anthropic SDK (Messages API)."""

from __future__ import annotations

import importlib
import itertools
import json
from collections.abc import AsyncGenerator, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

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
    unexpected_failure,
)
from wink.adapters.loop import ToolAnswers
from wink.contract import Contract
from wink.contract.frozen import freeze
from wink.prompt import RenderedPrompt
from wink.providers._output import output_name
from wink.providers._payload import fill_call_ids, list_field, object_field, token_count
from wink.providers._replies import offering, provider_tools_of, reply_data
from wink.providers._sdk_errors import http_failure
from wink.providers._specs import SpecCache
from wink.providers._streams import AnthropicStreamReader, closing_chunks
from wink.providers._strict import make_strict
from wink.runtime.budget import TokenUsage

__all__ = ["AnthropicAdapter"]

_output_cache = SpecCache()


class AnthropicAdapter(LoopAdapter):
    """Evaluates prompts through an ``anthropic.Anthropic`` client you built, or an
    ``anthropic.AsyncAnthropic`` one for ``aevaluate`` (with a sync client,
    ``aevaluate`` runs each request in a worker thread).

    A template's output type goes as structured output (``output_config.format``,
    the schema rewritten to Anthropic's strict subset); ``strict`` applies to the
    tool specs as in ``anthropic.tool_specs``. ``provider_tools`` are Anthropic's own
    tools (``{"type": "web_search_20250305", "name": "web_search"}``, web fetch, code
    execution...), sent after the prompt's; their blocks go back to the model with its
    turn and are recorded in each ``ModelExchange``, and a turn Anthropic pauses
    (``stop_reason`` ``"pause_turn"``) is sent back to be continued. Other keyword
    arguments (``temperature``, ``thinking``...) go into every request.

    A request the SDK refuses to send without streaming (a ``max_tokens`` it expects
    to take over 10 minutes) is sent again as a stream, read into the same reply as
    ``stream`` reads it.
    """

    def __init__(
        self,
        client: Any,
        *,
        model: str,
        max_tokens: int,
        strict: bool | Mapping[str, bool] = False,
        provider_tools: Sequence[Mapping[str, Any]] = (),
        **request_options: Any,
    ) -> None:
        self.provider_tools = provider_tools_of("AnthropicAdapter", provider_tools, request_options)
        self._client = client
        self._sdk = importlib.import_module("anthropic")
        self.model = model
        self.max_tokens = max_tokens
        self.strict = strict
        self.request_options = dict(request_options)
        self.max_retries = int(getattr(client, "max_retries", 0))
        self._async_client = isinstance(client, self._sdk.AsyncAnthropic)

    @property
    def name(self) -> str:
        """``"anthropic"``."""
        return "anthropic"

    def start(
        self, rendered: RenderedPrompt, output: Contract[Any] | None, messages: Sequence[Any]
    ) -> Conversation:
        """A Messages conversation for ``rendered``."""
        base = self._with_tools(
            {"model": self.model, "max_tokens": self.max_tokens, **self.request_options}, rendered
        )
        if output is not None:
            base["output_config"] = {"format": {"type": "json_schema", "schema": _schema(output)}}
        if messages:
            base["system"] = rendered.text
            opening: list[Any] = list(messages)
        else:
            opening = [{"role": "user", "content": rendered.text}]
        return _MessagesConversation(base, self._sdk.types.Message, self._with_tools, opening)

    def _with_tools(self, request: dict[str, Any], rendered: RenderedPrompt) -> dict[str, Any]:
        """A copy of ``request`` offering ``rendered``'s tools, then the provider's; with
        no ``tools`` key when there are none."""
        from wink.providers import anthropic

        tools = [*anthropic.tool_specs(rendered, strict=self.strict), *self.provider_tools]
        return offering(request, tools)

    def send(self, request: ModelRequest) -> Any:
        """One SDK call; under a deadline it has the time left as its timeout and no retries."""
        return self._client_for(request).messages.create(**request.body)

    async def asend(self, request: ModelRequest) -> Any:
        """``send`` awaited with an ``AsyncAnthropic`` client; in a worker thread otherwise."""
        if not self._async_client:
            return await super().asend(request)
        return await self.send(request)

    def open_stream(self, request: ModelRequest) -> ChunkStream:
        """The SDK's streaming call (``messages.create(stream=True)``)."""
        stream: ChunkStream = self._client_for(request).messages.create(**request.body, stream=True)
        return stream

    async def aopen_stream(self, request: ModelRequest) -> AsyncGenerator[Any, None]:
        """``open_stream`` awaited with an ``AsyncAnthropic`` client; in a worker thread
        otherwise."""
        if not self._async_client:
            return await super().aopen_stream(request)
        stream: Any = self.open_stream(request)
        return closing_chunks(await stream)

    def stream_reader(self) -> StreamReader:
        """A reader of Messages API events."""
        return AnthropicStreamReader(self._sdk.types.Message)

    def _client_for(self, request: ModelRequest) -> Any:
        if request.timeout is None:
            return self._client
        return self._client.with_options(timeout=request.timeout, max_retries=0)

    def describe_error(self, error: Exception) -> ProviderFailure:
        """An ``anthropic`` SDK error as a failure (rate limits, 5xx, connections
        retryable); the SDK's refusal to send a long request whole as one to stream;
        any other exception of the call as one that is not retried."""
        if isinstance(error, ValueError) and _needs_streaming(error):
            return ProviderFailure(str(error), stream_required=True)
        return http_failure(error, self._sdk) or unexpected_failure(error)


def _needs_streaming(error: ValueError) -> bool:
    """Whether the SDK refused a request before sending it for want of streaming: it says
    so only in its message (a reply that is not JSON is a ``ValueError`` too)."""
    return not isinstance(error, json.JSONDecodeError) and "Streaming is required" in str(error)


_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "end",
    "stop_sequence": "end",
    "tool_use": "tool_calls",
    "max_tokens": "max_tokens",
    "model_context_window_exceeded": "max_tokens",
    "pause_turn": "pause",
    "refusal": "refusal",
}
_SERVER_TOOL_BLOCKS = ("server_tool_use", "mcp_tool_use")


def _schema(output: Contract[Any]) -> dict[str, Any]:
    from wink.providers.anthropic import STRICT_RULES

    def build() -> dict[str, Any]:
        made = make_strict(output.input_schema, STRICT_RULES, output_name(output))
        frozen: dict[str, Any] = freeze(made.schema)
        return frozen

    return _output_cache.get(output.type, build)


@dataclass(slots=True)
class _MessagesConversation:
    base: dict[str, Any]
    message_type: type
    with_tools: Callable[[dict[str, Any], RenderedPrompt], dict[str, Any]]
    messages: list[Any] = field(default_factory=list)
    # Ids for calls that came without a usable one: unique in the conversation.
    made_ids: Iterator[str] = field(
        default_factory=lambda: (f"wink_call_{n}" for n in itertools.count(1))
    )

    def request(self) -> dict[str, Any]:
        # A copy of references only (each message was converted once, when it joined):
        # the request keeps the messages it was sent with while the conversation grows.
        return {**self.base, "messages": list(self.messages)}

    def use_tools(self, rendered: RenderedPrompt) -> None:
        self.base = self.with_tools(self.base, rendered)

    def read(self, reply: Any) -> ModelTurn:
        from wink.providers import anthropic

        data = reply_data(reply, self.message_type, "an Anthropic message")
        # Every block goes back as it came, thinking blocks (and their signatures) included.
        content: list[Any] = list_field(data, "content", "")
        blocks = [block for block in content if isinstance(block, dict)]
        fill_call_ids(
            [block for block in blocks if block.get("type") == "tool_use"],
            "id",
            self.made_ids.__next__,
        )
        texts = [block["text"] for block in blocks if block.get("type") == "text"]
        calls = tuple(anthropic.parse_tool_calls(content))
        usage = object_field(data, "usage", "")
        # Cached input tokens are counted apart from input_tokens; all of them are input.
        input_tokens = (
            token_count(usage, "input_tokens", "usage")
            + token_count(usage, "cache_creation_input_tokens", "usage")
            + token_count(usage, "cache_read_input_tokens", "usage")
        )
        turn_usage = TokenUsage(input_tokens, token_count(usage, "output_tokens", "usage"))
        raw = data.get("stop_reason")
        raw_stop = None if raw is None else str(raw)
        stop: StopReason = "end" if raw_stop is None else _STOP_REASONS.get(raw_stop, "other")
        echo = {"role": "assistant", "content": content}
        return ModelTurn(
            "".join(texts) if texts else None,
            calls,
            turn_usage,
            reply,
            echo,
            stop_reason=stop,
            raw_stop_reason=raw_stop,
            stop_detail=_stop_detail(data),
            provider_tools=tuple(
                ProviderToolCall(
                    str(block.get("name")),
                    block.get("id"),
                    json.dumps(block.get("input"), ensure_ascii=False),
                )
                for block in blocks
                if block.get("type") in _SERVER_TOOL_BLOCKS
            ),
        )

    def _echo(self, turn: ModelTurn) -> None:
        self.messages.append(turn.echo)

    def answer_tools(self, turn: ModelTurn, answers: ToolAnswers) -> None:
        from wink.providers import anthropic

        self._echo(turn)
        self.messages.append(anthropic.tool_results_message(answers))

    def answer_invalid_output(self, turn: ModelTurn, message: str) -> None:
        self._echo(turn)
        self.messages.append({"role": "user", "content": message})

    def answer_pause(self, turn: ModelTurn) -> None:
        # The paused turn goes back as the last message, as it came: the model goes on
        # from there (consecutive assistant messages read as one turn).
        self._echo(turn)

    def finish(self, turn: ModelTurn) -> tuple[Any, ...]:
        self._echo(turn)
        return tuple(self.messages)


def _stop_detail(data: Mapping[str, Any]) -> str | None:
    """Anthropic's explanation of a refusal (``stop_details``), or its category."""
    details = data.get("stop_details")
    if not isinstance(details, dict):
        return None
    explanation, category = details.get("explanation"), details.get("category")
    if isinstance(explanation, str) and explanation:
        return explanation if category is None else f"{explanation} (category {category})"
    return None if category is None else f"category {category}"
