"""``OpenAIAdapter``: evaluate prompts with the OpenAI SDK (Chat Completions or Responses)."""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from wink.adapters import (
    Conversation,
    LoopAdapter,
    ModelRequest,
    ModelTurn,
    ProviderFailure,
    UnusableResponse,
)
from wink.adapters.loop import ToolAnswers
from wink.contract import Contract, JsonSchema
from wink.contract.frozen import freeze
from wink.contract.schema import fields_without_default
from wink.prompt import RenderedPrompt
from wink.providers._errors import ProviderSchemaError
from wink.providers._inline import object_root
from wink.providers._output import output_name
from wink.providers._sdk_errors import http_failure
from wink.providers._specs import SpecCache
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
    for it when ``strict`` is a mapping of tool names); other keyword arguments
    (``temperature``, ``reasoning``...) go into every request.
    """

    def __init__(
        self,
        client: Any,
        *,
        model: str,
        api: Api = "chat",
        strict: StrictMode | Mapping[str, StrictMode] = "auto",
        **request_options: Any,
    ) -> None:
        if api not in ("chat", "responses"):
            raise ValueError(f"OpenAIAdapter: api must be 'chat' or 'responses', got {api!r}")
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
        from wink.providers import openai

        specs = openai.tool_specs(rendered, api=self.api, strict=self.strict)
        base: dict[str, Any] = {"model": self.model, **self.request_options}
        if specs:
            base["tools"] = specs
        if self.api == "chat":
            if output is not None:
                base["response_format"] = {
                    "type": "json_schema",
                    "json_schema": output_format(output, self.strict),
                }
            return _ChatConversation(base, _opening(rendered, messages, "system"))
        if output is not None:
            base["text"] = {"format": {"type": "json_schema", **output_format(output, self.strict)}}
        if messages:
            base["instructions"] = rendered.text
            return _ResponsesConversation(base, list(messages))
        return _ResponsesConversation(base, [{"role": "user", "content": rendered.text}])

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

    def describe_error(self, error: Exception) -> ProviderFailure | None:
        """An ``openai`` SDK error as a failure (rate limits, 5xx, connections retryable)."""
        return http_failure(error, self._sdk)


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


def _usage(usage: Any, input_name: str, output_name: str) -> TokenUsage:
    if usage is None:
        return TokenUsage()
    return TokenUsage(getattr(usage, input_name, 0) or 0, getattr(usage, output_name, 0) or 0)


@dataclass(slots=True)
class _ChatConversation:
    base: dict[str, Any]
    messages: list[Any] = field(default_factory=list)

    def request(self) -> dict[str, Any]:
        # A copy of references only (each message was converted once, when it joined):
        # the request keeps the messages it was sent with while the conversation grows.
        return {**self.base, "messages": list(self.messages)}

    def read(self, reply: Any) -> ModelTurn:
        from wink.providers import openai

        if not reply.choices:
            raise UnusableResponse("the completion has no choices", reply)
        message = reply.choices[0].message
        if message is None:
            raise UnusableResponse("the completion's first choice has no message", reply)
        if getattr(message, "refusal", None):
            raise UnusableResponse(f"the model refused: {message.refusal}", reply)
        calls = tuple(openai.parse_tool_calls(message))
        usage = _usage(reply.usage, "prompt_tokens", "completion_tokens")
        return ModelTurn(message.content, calls, usage, reply)

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

    def finish(self, turn: ModelTurn) -> tuple[Any, ...]:
        self._echo(turn)
        return tuple(self.messages)


@dataclass(slots=True)
class _ResponsesConversation:
    base: dict[str, Any]
    items: list[Any] = field(default_factory=list)

    def request(self) -> dict[str, Any]:
        # A copy of references only (each message was converted once, when it joined):
        # the request keeps the messages it was sent with while the conversation grows.
        return {**self.base, "input": list(self.items)}

    def read(self, reply: Any) -> ModelTurn:
        from wink.providers import openai

        if reply.error is not None:
            raise UnusableResponse(f"the response failed: {reply.error.message}", reply)
        # Every output item goes back, reasoning included: it belongs with its calls.
        items = [item.model_dump(mode="json", exclude_none=True) for item in reply.output]
        texts: list[str] = []
        for item in items:
            if item.get("type") != "message":
                continue
            for content in item.get("content", ()):
                if content.get("type") == "refusal":
                    raise UnusableResponse(f"the model refused: {content['refusal']}", reply)
                if content.get("type") == "output_text":
                    texts.append(content["text"])
        calls = tuple(openai.parse_tool_calls(items))
        usage = _usage(reply.usage, "input_tokens", "output_tokens")
        return ModelTurn("".join(texts) if texts else None, calls, usage, reply, items)

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

    def finish(self, turn: ModelTurn) -> tuple[Any, ...]:
        self._echo(turn)
        return tuple(self.items)
