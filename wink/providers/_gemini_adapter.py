"""``GeminiAdapter``: evaluate prompts with the Google Gen AI SDK (``google-genai``)."""

from __future__ import annotations

import importlib
import json
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
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
    UnusableResponse,
    unexpected_failure,
)
from wink.adapters.loop import ToolAnswers
from wink.contract import Contract
from wink.prompt import RenderedPrompt
from wink.providers._inline import object_root
from wink.providers._payload import list_field, object_at, object_field, token_count
from wink.providers._replies import offering, provider_tools_of, reply_data
from wink.providers._sdk_errors import retryable_status
from wink.providers._streams import GeminiStreamReader
from wink.runtime.budget import TokenUsage

__all__ = ["GeminiAdapter"]


class GeminiAdapter(LoopAdapter):
    """Evaluates prompts through a ``google.genai.Client`` you built (``aevaluate`` uses
    its async half, ``client.aio``).

    A template's output type goes as ``response_json_schema`` with
    ``response_mime_type="application/json"``; the tools as ``parametersJsonSchema``
    declarations, followed by ``provider_tools``, Gemini's own tools
    (``{"google_search": {}}``, ``{"code_execution": {}}``...): their parts go back to
    the model with its turn and are recorded in each ``ModelExchange``. Other keyword
    arguments (``temperature``, ``thinking_config``...) go into every request's
    ``config``. ``max_retries`` is how many times the loop
    retries a failed request itself when a deadline is set (the SDK's own retries
    are then off).
    """

    def __init__(
        self,
        client: Any,
        *,
        model: str,
        max_retries: int = 2,
        provider_tools: Sequence[Mapping[str, Any]] = (),
        **request_options: Any,
    ) -> None:
        self.provider_tools = provider_tools_of("GeminiAdapter", provider_tools, request_options)
        self._client = client
        self._errors = importlib.import_module("google.genai.errors")
        self._types = importlib.import_module("google.genai.types")
        self._pydantic = importlib.import_module("pydantic")
        self._httpx = importlib.import_module("httpx2")
        self.model = model
        self.max_retries = max_retries
        self.request_options = dict(request_options)

    @property
    def name(self) -> str:
        """``"gemini"``."""
        return "gemini"

    @property
    def provider_name(self) -> str:
        """``"gcp.gemini"``, as the OpenTelemetry GenAI conventions name the Gemini API."""
        return "gcp.gemini"

    def start(
        self, rendered: RenderedPrompt, output: Contract[Any] | None, messages: Sequence[Any]
    ) -> Conversation:
        """A ``generate_content`` conversation for ``rendered``."""
        config = self._with_tools(dict(self.request_options), rendered)
        if output is not None:
            config["response_mime_type"] = "application/json"
            config["response_json_schema"] = object_root(output.input_schema, "output", "Gemini")
        if messages:
            config["system_instruction"] = rendered.text
            contents = list(messages)
        else:
            contents = [{"role": "user", "parts": [{"text": rendered.text}]}]
        response_type = self._types.GenerateContentResponse
        return _GeminiConversation(self.model, config, response_type, self._with_tools, contents)

    def _with_tools(self, config: dict[str, Any], rendered: RenderedPrompt) -> dict[str, Any]:
        """A copy of ``config`` offering ``rendered``'s tools, then the provider's; with
        no ``tools`` key when there are none."""
        from wink.providers import gemini

        specs = gemini.tool_specs(rendered)
        tools = [{"functionDeclarations": specs}] if specs else []
        tools.extend(self.provider_tools)
        return offering(config, tools)

    def send(self, request: ModelRequest) -> Any:
        """One SDK call; under a deadline it has the time left as its timeout and no retries."""
        return self._client.models.generate_content(**self._body(request))

    async def asend(self, request: ModelRequest) -> Any:
        """``send`` through the client's async half, ``client.aio``."""
        return await self._client.aio.models.generate_content(**self._body(request))

    def open_stream(self, request: ModelRequest) -> ChunkStream:
        """``generate_content_stream`` (it sends the request when its first chunk is read)."""
        stream: ChunkStream = self._client.models.generate_content_stream(**self._body(request))
        return stream

    async def aopen_stream(self, request: ModelRequest) -> AsyncGenerator[Any, None]:
        """``generate_content_stream`` through the client's async half, ``client.aio``."""
        stream: AsyncGenerator[Any, None] = await self._client.aio.models.generate_content_stream(
            **self._body(request)
        )
        return stream

    def stream_reader(self) -> StreamReader:
        """A reader of ``generate_content_stream`` chunks."""
        return GeminiStreamReader(self._types.GenerateContentResponse)

    def _body(self, request: ModelRequest) -> dict[str, Any]:
        body = dict(request.body)
        if request.timeout is not None:
            http_options = {
                "timeout": max(1, int(request.timeout * 1000)),  # milliseconds
                "retry_options": {"attempts": 1},
            }
            body = {**body, "config": {**body["config"], "http_options": http_options}}
        return body

    def describe_error(self, error: Exception) -> ProviderFailure:
        """A ``google.genai`` API error or a connection error as a failure; a reply the
        SDK could not read into its response type as a failure of the response; any other
        exception of the call as a failure that is not retried."""
        if isinstance(error, self._errors.APIError):
            code = int(error.code or 0)
            message = f"HTTP {code} {error.status or type(error).__name__}: {error.message}"
            return ProviderFailure(message, error.details, retryable_status(code))
        if isinstance(error, self._httpx.TransportError):
            return ProviderFailure(f"{type(error).__name__}: {error}", None, retryable=True)
        if isinstance(error, self._pydantic.ValidationError) and error.title in _REPLY_TYPES:
            problems = "; ".join(
                f"{'.'.join(str(step) for step in problem['loc'])}: {problem['msg']}"
                for problem in error.errors()[:5]
            )
            return ProviderFailure(
                f"the reply does not fit the SDK's {error.title}: {problems}"[:1000],
                phase="response",
            )
        return unexpected_failure(error)


# The SDK's types of a reply: its ValidationError for one is about what came back, not
# about what was sent.
_REPLY_TYPES = frozenset({"GenerateContentResponse"})
_STOP_REASONS: dict[str, StopReason] = {
    "STOP": "end",
    "FINISH_REASON_UNSPECIFIED": "end",
    "MAX_TOKENS": "max_tokens",
    "SAFETY": "content_filter",
    "RECITATION": "content_filter",
    "BLOCKLIST": "content_filter",
    "PROHIBITED_CONTENT": "content_filter",
    "SPII": "content_filter",
    "IMAGE_SAFETY": "content_filter",
    "IMAGE_PROHIBITED_CONTENT": "content_filter",
    "IMAGE_RECITATION": "content_filter",
}


@dataclass(slots=True)
class _GeminiConversation:
    model: str
    config: dict[str, Any]
    response_type: type
    with_tools: Callable[[dict[str, Any], RenderedPrompt], dict[str, Any]]
    contents: list[Any] = field(default_factory=list)

    def request(self) -> dict[str, Any]:
        # A copy of references only (each message was converted once, when it joined):
        # the request keeps the messages it was sent with while the conversation grows.
        return {"model": self.model, "contents": list(self.contents), "config": self.config}

    def use_tools(self, rendered: RenderedPrompt) -> None:
        # A new config, not a changed one: the requests already made hold the old one.
        self.config = self.with_tools(self.config, rendered)

    def read(self, reply: Any) -> ModelTurn:
        from wink.providers import gemini

        data = reply_data(reply, self.response_type, "a Gemini response", by_alias=True)
        metadata = object_field(data, "usageMetadata", "")
        usage = TokenUsage(
            token_count(metadata, "promptTokenCount", "usageMetadata"),
            token_count(metadata, "candidatesTokenCount", "usageMetadata")
            + token_count(metadata, "thoughtsTokenCount", "usageMetadata"),
        )
        candidates = list_field(data, "candidates", "")
        if not candidates:
            feedback = object_field(data, "promptFeedback", "")
            reason = feedback.get("blockReason")
            if reason is None:
                raise UnusableResponse("the response has no candidates", reply)
            detail = feedback.get("blockReasonMessage")
            return ModelTurn(
                None,
                (),
                usage,
                reply,
                stop_reason="content_filter",
                raw_stop_reason=str(reason),
                stop_detail=detail if isinstance(detail, str) else None,
            )
        candidate = object_at(candidates[0], "candidates[0]")
        raw = candidate.get("finishReason")
        raw_stop = None if raw is None else str(raw)
        stop: StopReason = "end" if raw_stop is None else _STOP_REASONS.get(raw_stop, "other")
        # The model's content goes back whole: thought signatures belong with their calls.
        echo = dict(object_field(candidate, "content", "candidates[0]"))
        parts = list_field(echo, "parts", "candidates[0].content")
        if not parts and stop == "end":
            raise UnusableResponse(f"the first candidate has no content ({raw_stop})", reply)
        texts = [
            part["text"]
            for part in parts
            if isinstance(part, dict)
            and isinstance(part.get("text"), str)
            and not part.get("thought")
        ]
        calls = tuple(gemini.parse_tool_calls(parts))
        if calls and stop == "end":
            stop = "tool_calls"
        detail = candidate.get("finishMessage")
        return ModelTurn(
            "".join(texts) if texts else None,
            calls,
            usage,
            reply,
            echo,
            stop_reason=stop,
            raw_stop_reason=raw_stop,
            stop_detail=detail if isinstance(detail, str) else None,
            provider_tools=_provider_tools(candidate, parts),
        )

    def _echo(self, turn: ModelTurn) -> None:
        self.contents.append(turn.echo)

    def answer_tools(self, turn: ModelTurn, answers: ToolAnswers) -> None:
        from wink.providers import gemini

        self._echo(turn)
        self.contents.append(gemini.tool_results_message(answers))

    def answer_invalid_output(self, turn: ModelTurn, message: str) -> None:
        self._echo(turn)
        self.contents.append({"role": "user", "parts": [{"text": message}]})

    def answer_pause(self, turn: ModelTurn) -> None:
        self._echo(turn)

    def finish(self, turn: ModelTurn) -> tuple[Any, ...]:
        self._echo(turn)
        return tuple(self.contents)


def _provider_tools(candidate: Mapping[str, Any], parts: list[Any]) -> tuple[ProviderToolCall, ...]:
    """Code Gemini ran (``executableCode`` parts) and searches it made (grounding)."""
    found = []
    grounding = candidate.get("groundingMetadata")
    queries = grounding.get("webSearchQueries") if isinstance(grounding, dict) else None
    if queries:
        found.append(
            ProviderToolCall("google_search", None, json.dumps(queries, ensure_ascii=False))
        )
    for part in parts:
        code = part.get("executableCode") if isinstance(part, dict) else None
        if isinstance(code, dict):
            call_id = code.get("id") if isinstance(code.get("id"), str) else None
            arguments = {key: value for key, value in code.items() if key != "id"}
            found.append(
                ProviderToolCall(
                    "code_execution", call_id, json.dumps(arguments, ensure_ascii=False)
                )
            )
    return tuple(found)
