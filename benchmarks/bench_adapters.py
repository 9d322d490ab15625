"""The evaluation loop's own cost per turn, next to the mocked SDK round trip it wraps.

A two-turn evaluation (one tool call, then the final text) runs through each
adapter and its real SDK client, whose HTTP goes to a mock transport answering
with canned JSON. One evaluation is recorded first: the keyword arguments the
loop passed to the SDK and the SDK objects it got back. Then, in the same run:

- SDK round trip (the floor): the bare SDK client making those same calls
  (``create(**kwargs)``: request building, the mock HTTP exchange, response
  parsing), per turn;
- loop overhead: ``adapter.evaluate`` with the SDK call replaced by handing back
  the recorded SDK objects, per turn: everything the adapter and the executor
  add (rendering, request building, reading the reply, the transactional tool
  call, tool messages, events, usage), excluding the SDK and building the
  ``Session`` (one per adapter, as an agent keeps one);
- the provider-free loop: ``wink.testing.FunctionAdapter`` running the same
  evaluation, per turn.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx2

from benchmarks.timing import per_call_us
from wink import MarkdownSection, Prompt, PromptTemplate, Session, Tool, ToolContext, ToolResult
from wink.adapters import LoopAdapter, ModelRequest
from wink.testing import FunctionAdapter, ModelInput, ToolMessage, call

NUMBER = 150
REPEAT = 7


@dataclass
class LookupParams:
    entity_id: str = field(metadata={"description": "Global identifier to fetch"})
    include_related: bool = False


@dataclass
class LookupResult:
    entity_id: str
    document_url: str


def lookup(params: LookupParams, *, context: ToolContext) -> ToolResult[LookupResult]:
    return ToolResult.ok(LookupResult(params.entity_id, "https://example.com"), message="Fetched.")


template = PromptTemplate(
    ns="bench",
    key="lookup",
    sections=[
        MarkdownSection(
            title="Guidance",
            template="Fetch entity-42 and say where its document is.",
            tools=[
                Tool[LookupParams, LookupResult](
                    name="lookup_entity", description="Fetch an entity by id.", handler=lookup
                )
            ],
        )
    ],
)
ARGUMENTS = {"entity_id": "entity-42", "include_related": True}


class Replies:
    """A mock transport answering with canned replies in turn (tool call, then text)."""

    def __init__(self, *replies: dict[str, Any]) -> None:
        self._replies = [json.dumps(reply).encode() for reply in replies]
        self._next = 0

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        content = self._replies[self._next % len(self._replies)]
        self._next += 1
        return httpx2.Response(200, content=content, headers={"content-type": "application/json"})

    def client(self) -> httpx2.Client:
        return httpx2.Client(transport=httpx2.MockTransport(self.handle))


def openai_case(api: str) -> tuple[LoopAdapter, Callable[[dict[str, Any]], object], Replies]:
    import openai as sdk

    from wink.providers.openai import OpenAIAdapter

    usage = {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60}
    if api == "chat":
        tool_call = {
            "id": "call_1",
            "type": "function",
            "function": {"name": "lookup_entity", "arguments": json.dumps(ARGUMENTS)},
        }

        def reply(message: dict[str, Any]) -> dict[str, Any]:
            return {
                "id": "c",
                "object": "chat.completion",
                "created": 0,
                "model": "m",
                "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
                "usage": usage,
            }

        replies = Replies(
            reply({"role": "assistant", "content": None, "tool_calls": [tool_call]}),
            reply({"role": "assistant", "content": "At https://example.com."}),
        )
    else:
        responses_usage = {
            "input_tokens": 50,
            "output_tokens": 10,
            "total_tokens": 60,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        }

        def reply_items(output: list[dict[str, Any]]) -> dict[str, Any]:
            return {
                "id": "r",
                "object": "response",
                "created_at": 0,
                "model": "m",
                "status": "completed",
                "output": output,
                "parallel_tool_calls": True,
                "tool_choice": "auto",
                "tools": [],
                "usage": responses_usage,
            }

        replies = Replies(
            reply_items(
                [
                    {
                        "type": "function_call",
                        "id": "fc_1",
                        "call_id": "call_1",
                        "name": "lookup_entity",
                        "arguments": json.dumps(ARGUMENTS),
                        "status": "completed",
                    }
                ]
            ),
            reply_items(
                [
                    {
                        "type": "message",
                        "id": "m1",
                        "role": "assistant",
                        "status": "completed",
                        "content": [{"type": "output_text", "text": "At it.", "annotations": []}],
                    }
                ]
            ),
        )
    client = sdk.OpenAI(
        api_key="k", base_url="http://bench.test/v1", max_retries=0, http_client=replies.client()
    )
    adapter = OpenAIAdapter(client, model="m", api=api)  # type: ignore[arg-type]
    create = client.chat.completions.create if api == "chat" else client.responses.create
    return adapter, lambda body: create(**body), replies


def anthropic_case() -> tuple[LoopAdapter, Callable[[dict[str, Any]], object], Replies]:
    import anthropic as sdk

    from wink.providers.anthropic import AnthropicAdapter

    def reply(content: list[dict[str, Any]], stop: str) -> dict[str, Any]:
        return {
            "id": "m",
            "type": "message",
            "role": "assistant",
            "model": "c",
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 50, "output_tokens": 10},
        }

    replies = Replies(
        reply(
            [{"type": "tool_use", "id": "t1", "name": "lookup_entity", "input": ARGUMENTS}],
            "tool_use",
        ),
        reply([{"type": "text", "text": "At https://example.com."}], "end_turn"),
    )
    client = sdk.Anthropic(
        api_key="k", base_url="http://bench.test", max_retries=0, http_client=replies.client()
    )
    adapter = AnthropicAdapter(client, model="c", max_tokens=256)
    return adapter, lambda body: client.messages.create(**body), replies


def gemini_case() -> tuple[LoopAdapter, Callable[[dict[str, Any]], object], Replies]:
    from google import genai
    from google.genai import types

    from wink.providers.gemini import GeminiAdapter

    def reply(parts: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP"}],
            "usageMetadata": {"promptTokenCount": 50, "candidatesTokenCount": 10},
        }

    replies = Replies(
        reply([{"functionCall": {"id": "f1", "name": "lookup_entity", "args": ARGUMENTS}}]),
        reply([{"text": "At https://example.com."}]),
    )
    options = types.HttpOptions(
        base_url="http://bench.test",
        httpx_client=replies.client(),
        retry_options=types.HttpRetryOptions(attempts=1),
    )
    client = genai.Client(api_key="k", http_options=options)
    adapter = GeminiAdapter(client, model="g")
    return adapter, lambda body: client.models.generate_content(**body), replies


def scripted(model_input: ModelInput) -> object:
    if isinstance(model_input.last, ToolMessage):
        return "At https://example.com."
    return call("lookup_entity", ARGUMENTS, "call_1")


def record(adapter: LoopAdapter, prompt: Prompt[None]) -> list[tuple[dict[str, Any], Any]]:
    """The SDK calls of one evaluation: keyword arguments and the SDK object returned."""
    exchanges: list[tuple[dict[str, Any], Any]] = []
    send = adapter.send

    def recording(request: ModelRequest) -> Any:
        reply = send(request)
        exchanges.append((dict(request.body), reply))
        return reply

    adapter.send = recording  # type: ignore[method-assign]
    adapter.evaluate(prompt, session=Session())
    adapter.send = send  # type: ignore[method-assign]
    return exchanges


def main() -> None:
    """Print, per adapter, the SDK round trip, the loop's overhead and their ratio."""
    prompt = Prompt(template)
    function_adapter = FunctionAdapter(scripted)

    # One session per adapter, as an agent keeps one: building a Session is not the loop's.
    free_session = Session()

    def provider_free() -> object:
        return function_adapter.evaluate(prompt, session=free_session)

    free_us = per_call_us(provider_free, number=NUMBER * 4, repeat=REPEAT) / 2
    print("two-turn evaluation (one tool call, then the answer); figures per turn")
    print(f"provider-free loop (FunctionAdapter: loop + executor, no SDK): {free_us:7.1f} us")
    print(f"{'adapter':18} {'SDK round trip us':>18} {'loop overhead us':>17} {'overhead':>9}")
    cases = {
        "openai chat": lambda: openai_case("chat"),
        "openai responses": lambda: openai_case("responses"),
        "anthropic": anthropic_case,
        "gemini": gemini_case,
    }
    for name, build in cases.items():
        adapter, create, _ = build()
        exchanges = record(adapter, prompt)

        def bare(exchanges: list[Any] = exchanges, create: Any = create) -> object:
            return [create(body) for body, _ in exchanges]

        replies = itertools.cycle([reply for _, reply in exchanges])
        adapter.send = lambda request, replies=replies: next(replies)  # type: ignore[method-assign]

        session = Session()

        def evaluate(adapter: LoopAdapter = adapter, session: Session = session) -> object:
            return adapter.evaluate(prompt, session=session)

        # Interleaved, best of each: both see the same machine load.
        sdk_us = loop_us = float("inf")
        for _ in range(REPEAT):
            sdk_us = min(sdk_us, per_call_us(bare, number=NUMBER, repeat=1) / 2)
            loop_us = min(loop_us, per_call_us(evaluate, number=NUMBER * 4, repeat=1) / 2)
        print(f"{name:18} {sdk_us:18.1f} {loop_us:17.1f} {loop_us / sdk_us:8.1%}")


if __name__ == "__main__":
    main()
