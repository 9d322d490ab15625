"""``AnthropicAdapter``: evaluate prompts with the Anthropic SDK (Messages API)."""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
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
from wink.contract.frozen import freeze
from wink.prompt import RenderedPrompt
from wink.providers._output import output_name
from wink.providers._sdk_errors import http_failure
from wink.providers._specs import SpecCache
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
    tool specs as in ``anthropic.tool_specs``. Other keyword arguments
    (``temperature``, ``thinking``...) go into every request.
    """

    def __init__(
        self,
        client: Any,
        *,
        model: str,
        max_tokens: int,
        strict: bool | Mapping[str, bool] = False,
        **request_options: Any,
    ) -> None:
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
        from wink.providers import anthropic

        base: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            **self.request_options,
        }
        specs = anthropic.tool_specs(rendered, strict=self.strict)
        if specs:
            base["tools"] = specs
        if output is not None:
            base["output_config"] = {"format": {"type": "json_schema", "schema": _schema(output)}}
        if messages:
            base["system"] = rendered.text
            return _MessagesConversation(base, list(messages))
        return _MessagesConversation(base, [{"role": "user", "content": rendered.text}])

    def send(self, request: ModelRequest) -> Any:
        """One SDK call; under a deadline it has the time left as its timeout and no retries."""
        client = self._client
        if request.timeout is not None:
            client = client.with_options(timeout=request.timeout, max_retries=0)
        return client.messages.create(**request.body)

    async def asend(self, request: ModelRequest) -> Any:
        """``send`` awaited with an ``AsyncAnthropic`` client; in a worker thread otherwise."""
        if self._async_client:
            return await self.send(request)
        return await super().asend(request)

    def describe_error(self, error: Exception) -> ProviderFailure | None:
        """An ``anthropic`` SDK error as a failure (rate limits, 5xx, connections retryable)."""
        return http_failure(error, self._sdk)


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
    messages: list[Any] = field(default_factory=list)

    def request(self) -> dict[str, Any]:
        # A copy of references only (each message was converted once, when it joined):
        # the request keeps the messages it was sent with while the conversation grows.
        return {**self.base, "messages": list(self.messages)}

    def read(self, reply: Any) -> ModelTurn:
        from wink.providers import anthropic

        if reply.stop_reason == "refusal":
            raise UnusableResponse("the model refused (stop_reason 'refusal')", reply)
        # Every block goes back as it came, thinking blocks (and their signatures) included.
        content = [block.model_dump(mode="json", exclude_none=True) for block in reply.content]
        texts = [block["text"] for block in content if block.get("type") == "text"]
        calls = tuple(anthropic.parse_tool_calls(content))
        usage = reply.usage
        # Cached input tokens are counted apart from input_tokens; all of them are input.
        input_tokens = (
            usage.input_tokens
            + (usage.cache_creation_input_tokens or 0)
            + (usage.cache_read_input_tokens or 0)
        )
        turn_usage = TokenUsage(input_tokens, usage.output_tokens)
        echo = {"role": "assistant", "content": content}
        return ModelTurn("".join(texts) if texts else None, calls, turn_usage, reply, echo)

    def _echo(self, turn: ModelTurn) -> None:
        self.messages.append(turn.echo)

    def answer_tools(self, turn: ModelTurn, answers: ToolAnswers) -> None:
        from wink.providers import anthropic

        self._echo(turn)
        self.messages.append(anthropic.tool_results_message(answers))

    def answer_invalid_output(self, turn: ModelTurn, message: str) -> None:
        self._echo(turn)
        self.messages.append({"role": "user", "content": message})

    def finish(self, turn: ModelTurn) -> tuple[Any, ...]:
        self._echo(turn)
        return tuple(self.messages)
