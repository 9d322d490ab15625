"""``GeminiAdapter``: evaluate prompts with the Google Gen AI SDK (``google-genai``)."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from wink.adapters import (
    Conversation,
    LoopAdapter,
    ModelRequest,
    ModelTurn,
    ProviderFailure,
    UnusableResponse,
)
from wink.adapters.loop import ToolAnswers
from wink.contract import Contract
from wink.prompt import RenderedPrompt
from wink.providers._inline import object_root
from wink.providers._sdk_errors import retryable_status
from wink.runtime.budget import TokenUsage

__all__ = ["GeminiAdapter"]


class GeminiAdapter(LoopAdapter):
    """Evaluates prompts through a ``google.genai.Client`` you built (``aevaluate`` uses
    its async half, ``client.aio``).

    A template's output type goes as ``response_json_schema`` with
    ``response_mime_type="application/json"``; the tools as ``parametersJsonSchema``
    declarations. Other keyword arguments (``temperature``, ``thinking_config``...)
    go into every request's ``config``. ``max_retries`` is how many times the loop
    retries a failed request itself when a deadline is set (the SDK's own retries
    are then off).
    """

    def __init__(
        self, client: Any, *, model: str, max_retries: int = 2, **request_options: Any
    ) -> None:
        self._client = client
        self._errors = importlib.import_module("google.genai.errors")
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
        from wink.providers import gemini

        config: dict[str, Any] = dict(self.request_options)
        specs = gemini.tool_specs(rendered)
        if specs:
            config["tools"] = [{"functionDeclarations": specs}]
        if output is not None:
            config["response_mime_type"] = "application/json"
            config["response_json_schema"] = object_root(output.input_schema, "output", "Gemini")
        if messages:
            config["system_instruction"] = rendered.text
            contents = list(messages)
        else:
            contents = [{"role": "user", "parts": [{"text": rendered.text}]}]
        return _GeminiConversation(self.model, config, contents)

    def send(self, request: ModelRequest) -> Any:
        """One SDK call; under a deadline it has the time left as its timeout and no retries."""
        return self._client.models.generate_content(**self._body(request))

    async def asend(self, request: ModelRequest) -> Any:
        """``send`` through the client's async half, ``client.aio``."""
        return await self._client.aio.models.generate_content(**self._body(request))

    def _body(self, request: ModelRequest) -> dict[str, Any]:
        body = dict(request.body)
        if request.timeout is not None:
            http_options = {
                "timeout": max(1, int(request.timeout * 1000)),  # milliseconds
                "retry_options": {"attempts": 1},
            }
            body = {**body, "config": {**body["config"], "http_options": http_options}}
        return body

    def describe_error(self, error: Exception) -> ProviderFailure | None:
        """A ``google.genai`` API error or a connection error as a failure."""
        if isinstance(error, self._errors.APIError):
            code = int(error.code or 0)
            message = f"HTTP {code} {error.status or type(error).__name__}: {error.message}"
            return ProviderFailure(message, error.details, retryable_status(code))
        if isinstance(error, self._httpx.TransportError):
            return ProviderFailure(f"{type(error).__name__}: {error}", None, retryable=True)
        return None


@dataclass(slots=True)
class _GeminiConversation:
    model: str
    config: dict[str, Any]
    contents: list[Any] = field(default_factory=list)

    def request(self) -> dict[str, Any]:
        # A copy of references only (each message was converted once, when it joined):
        # the request keeps the messages it was sent with while the conversation grows.
        return {"model": self.model, "contents": list(self.contents), "config": self.config}

    def read(self, reply: Any) -> ModelTurn:
        from wink.providers import gemini

        if not reply.candidates:
            feedback = reply.prompt_feedback
            reason = feedback.block_reason if feedback is not None else None
            raise UnusableResponse(f"no candidates (block reason {reason})", reply)
        content = reply.candidates[0].content
        if content is None or not content.parts:
            reason = reply.candidates[0].finish_reason
            raise UnusableResponse(f"the first candidate has no content ({reason})", reply)
        # The model's content goes back whole: thought signatures belong with their calls.
        echo = content.model_dump(mode="json", exclude_none=True, by_alias=True)
        parts = echo.get("parts", [])
        texts = [part["text"] for part in parts if "text" in part and not part.get("thought")]
        calls = tuple(gemini.parse_tool_calls(echo))
        metadata = reply.usage_metadata
        usage = (
            TokenUsage()
            if metadata is None
            else TokenUsage(
                metadata.prompt_token_count or 0,
                (metadata.candidates_token_count or 0) + (metadata.thoughts_token_count or 0),
            )
        )
        return ModelTurn("".join(texts) if texts else None, calls, usage, reply, echo)

    def _echo(self, turn: ModelTurn) -> None:
        self.contents.append(turn.echo)

    def answer_tools(self, turn: ModelTurn, answers: ToolAnswers) -> None:
        from wink.providers import gemini

        self._echo(turn)
        self.contents.append(gemini.tool_results_message(answers))

    def answer_invalid_output(self, turn: ModelTurn, message: str) -> None:
        self._echo(turn)
        self.contents.append({"role": "user", "parts": [{"text": message}]})

    def finish(self, turn: ModelTurn) -> tuple[Any, ...]:
        self._echo(turn)
        return tuple(self.contents)
