"""The provider adapters' turns do not grow with the conversation: each turn's tool
results are converted once, and a late request hands the SDK the early messages as
the very objects it sent before (its own list of them), never converted again.

The SDK call is replaced by SDK reply objects: what is pinned is wink's work; the
SDK's serialisation of the whole list on each request is its own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

openai_sdk = pytest.importorskip("openai")
anthropic_sdk = pytest.importorskip("anthropic")
genai = pytest.importorskip("google.genai")
httpx2 = pytest.importorskip("httpx2")

from adapter_prompts import notes_template  # noqa: E402
from google.genai import types as genai_types  # noqa: E402

from wink import Prompt, Session  # noqa: E402
from wink.adapters import LoopAdapter, ModelRequest  # noqa: E402
from wink.providers import anthropic, gemini, openai  # noqa: E402
from wink.providers.anthropic import AnthropicAdapter  # noqa: E402
from wink.providers.gemini import GeminiAdapter  # noqa: E402
from wink.providers.openai import OpenAIAdapter  # noqa: E402

LONG = 1_000
"""Requests answered with a tool call; request ``LONG + 1`` gets the final text."""
SEARCH_ARGUMENTS = '{"query": "e"}'


class Counter:
    """Counts calls of a wrapped function."""

    def __init__(self) -> None:
        self.calls = 0

    def wrap(self, function: Callable[..., Any]) -> Callable[..., Any]:
        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            return function(*args, **kwargs)

        return counted


def offline_http() -> Any:
    def refuse(request: Any) -> Any:
        raise AssertionError("no request goes over HTTP here")

    return httpx2.Client(transport=httpx2.MockTransport(refuse))


def chat_case() -> tuple[LoopAdapter, Any, Any, str]:
    def completion(message: dict[str, Any]) -> Any:
        return openai_sdk.types.chat.ChatCompletion.model_validate(
            {
                "id": "c",
                "object": "chat.completion",
                "created": 0,
                "model": "m",
                "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
            }
        )

    tool_call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "search", "arguments": SEARCH_ARGUMENTS},
    }
    client = openai_sdk.OpenAI(api_key="k", max_retries=0, http_client=offline_http())
    return (
        OpenAIAdapter(client, model="m"),
        completion({"role": "assistant", "content": None, "tool_calls": [tool_call]}),
        completion({"role": "assistant", "content": "bread and eggs"}),
        "messages",
    )


def responses_case() -> tuple[LoopAdapter, Any, Any, str]:
    def response(output: list[dict[str, Any]]) -> Any:
        return openai_sdk.types.responses.Response.model_validate(
            {
                "id": "r",
                "object": "response",
                "created_at": 0,
                "model": "m",
                "status": "completed",
                "output": output,
                "parallel_tool_calls": True,
                "tool_choice": "auto",
                "tools": [],
            }
        )

    function_call = {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "c1",
        "name": "search",
        "arguments": SEARCH_ARGUMENTS,
        "status": "completed",
    }
    text = {
        "type": "message",
        "id": "m1",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": "bread and eggs", "annotations": []}],
    }
    client = openai_sdk.OpenAI(api_key="k", max_retries=0, http_client=offline_http())
    return (
        OpenAIAdapter(client, model="m", api="responses"),
        response([function_call]),
        response([text]),
        "input",
    )


def anthropic_case() -> tuple[LoopAdapter, Any, Any, str]:
    def message(content: list[dict[str, Any]], stop: str) -> Any:
        return anthropic_sdk.types.Message.model_validate(
            {
                "id": "m",
                "type": "message",
                "role": "assistant",
                "model": "c",
                "content": content,
                "stop_reason": stop,
                "stop_sequence": None,
                "usage": {"input_tokens": 5, "output_tokens": 1},
            }
        )

    tool_use = {"type": "tool_use", "id": "c1", "name": "search", "input": {"query": "e"}}
    client = anthropic_sdk.Anthropic(api_key="k", max_retries=0, http_client=offline_http())
    return (
        AnthropicAdapter(client, model="c", max_tokens=64),
        message([tool_use], "tool_use"),
        message([{"type": "text", "text": "bread and eggs"}], "end_turn"),
        "messages",
    )


def gemini_case() -> tuple[LoopAdapter, Any, Any, str]:
    def reply(parts: list[dict[str, Any]]) -> Any:
        return genai_types.GenerateContentResponse.model_validate(
            {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP"}]}
        )

    function_call = {"functionCall": {"id": "c1", "name": "search", "args": {"query": "e"}}}
    options = genai_types.HttpOptions(base_url="http://offline.test", httpx_client=offline_http())
    client = genai.Client(api_key="k", http_options=options)
    return (
        GeminiAdapter(client, model="g"),
        reply([function_call]),
        reply([{"text": "bread and eggs"}]),
        "contents",
    )


CASES: dict[str, tuple[Callable[[], tuple[LoopAdapter, Any, Any, str]], Any, str]] = {
    "openai chat": (chat_case, openai, "tool_message"),
    "openai responses": (responses_case, openai, "tool_message"),
    "anthropic": (anthropic_case, anthropic, "tool_results_message"),
    "gemini": (gemini_case, gemini, "tool_results_message"),
}
"""Per adapter: its case, and the function that turns a turn's tool results into
messages (called by the conversation through its module)."""


def long_provider_evaluation(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> tuple[dict[int, int], dict[int, list[Any]], Counter]:
    """Evaluate through ``name``'s adapter with its SDK call replaced by replies; the
    conversions counted when each request was sent, and the message lists of requests
    10 and 1,000 (as sent: their own list objects)."""
    build, module, function_name = CASES[name]
    adapter, tool_reply, final_reply, key = build()
    counter = Counter()
    monkeypatch.setattr(module, function_name, counter.wrap(getattr(module, function_name)))
    conversions: dict[int, int] = {}
    sent: dict[int, list[Any]] = {}

    def send(request: ModelRequest) -> Any:
        conversions[request.turn] = counter.calls
        if request.turn in (10, 1_000):
            sent[request.turn] = request.body[key]
        return final_reply if request.turn > LONG else tool_reply

    monkeypatch.setattr(adapter, "send", send)
    response = adapter.evaluate(Prompt(notes_template), session=Session(), max_turns=LONG + 1)
    assert response.text == "bread and eggs"
    return conversions, sent, counter


@pytest.mark.parametrize("name", CASES)
def test_a_long_provider_evaluation_converts_each_turns_tool_results_once(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    conversions, _, counter = long_provider_evaluation(name, monkeypatch)
    assert (conversions[10], conversions[11], conversions[1_000], conversions[1_001]) == (
        9,
        10,
        999,
        1_000,
    )
    assert counter.calls == 1_000


@pytest.mark.parametrize("name", CASES)
def test_a_late_provider_request_resends_the_early_messages_as_the_same_objects(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, sent, _ = long_provider_evaluation(name, monkeypatch)
    early, late = sent[10], sent[1_000]
    # The opening message, then an echoed model turn and its tool results per turn.
    assert (len(early), len(late)) == (19, 1_999)
    assert all(late[index] is early[index] for index in range(19))
    # Each request has its own list: the early one still holds what it was sent with.
    assert early is not late
