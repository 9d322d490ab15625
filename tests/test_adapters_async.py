"""``aevaluate`` through each real SDK's async client, offline: the SDK's own async HTTP
client sends to a mock transport; the requests are the same as ``evaluate``'s."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

httpx2 = pytest.importorskip("httpx2")
openai_sdk = pytest.importorskip("openai")
anthropic_sdk = pytest.importorskip("anthropic")
genai = pytest.importorskip("google.genai")

from adapter_prompts import notes_template, summary_template  # noqa: E402
from google.genai import types as genai_types  # noqa: E402
from test_adapters_sdk import (  # noqa: E402
    CALLS,
    CASES,
    INVALID_ANSWER,
    VALID_ANSWER,
    Api,
    Case,
    Summary,
)

from wink import Prompt, PromptEvaluationError, Session, ToolInvoked  # noqa: E402
from wink.adapters import LoopAdapter  # noqa: E402
from wink.providers.anthropic import AnthropicAdapter  # noqa: E402
from wink.providers.gemini import GeminiAdapter  # noqa: E402
from wink.providers.openai import OpenAIAdapter  # noqa: E402


def async_http(api: Api) -> Any:
    return httpx2.AsyncClient(transport=httpx2.MockTransport(api.handle))


def async_adapter(case: Case, api: Api) -> LoopAdapter:
    if case.name in ("openai-chat", "openai-responses"):
        client = openai_sdk.AsyncOpenAI(
            api_key="test-key",
            base_url="http://openai.test/v1",
            max_retries=2,
            http_client=async_http(api),
        )
        return OpenAIAdapter(client, model="gpt-test", api=case.name.removeprefix("openai-"))
    if case.name == "anthropic":
        client = anthropic_sdk.AsyncAnthropic(
            api_key="test-key",
            base_url="http://anthropic.test",
            max_retries=2,
            http_client=async_http(api),
        )
        return AnthropicAdapter(client, model="claude-test", max_tokens=256)
    options = genai_types.HttpOptions(
        base_url="http://gemini.test",
        httpx_async_client=async_http(api),
        retry_options=genai_types.HttpRetryOptions(attempts=1),
    )
    return GeminiAdapter(
        genai.Client(api_key="test-key", http_options=options), model="gemini-test"
    )


def test_the_cases_are_those_of_the_sync_tests() -> None:
    assert [case.name for case in CASES] == [
        "openai-chat",
        "openai-responses",
        "anthropic",
        "gemini",
    ]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_aevaluate_sends_through_the_async_client_what_evaluate_sends(case: Case) -> None:
    replies = (case.calls(CALLS, (10, 5)), case.text("bread and eggs", (20, 7)))
    sync_api, async_api = Api(*replies), Api(*replies)
    sync_session, async_session = Session(), Session()
    expected = case.adapter(sync_api).evaluate(Prompt(notes_template), session=sync_session)
    adapter = async_adapter(case, async_api)
    response = asyncio.run(adapter.aevaluate(Prompt(notes_template), session=async_session))
    assert async_api.bodies == sync_api.bodies
    assert len(async_api.bodies) == 2
    assert response.text == expected.text == "bread and eggs"
    assert [(e.name, e.call_id, e.success) for e in response.tool_results] == [
        ("search", "c1", True),
        ("get_note", "c2", False),
    ]
    assert response.tool_results == async_session[ToolInvoked].all()
    assert response.usage == expected.usage


@pytest.mark.parametrize("case", CASES, ids=str)
def test_aevaluate_retries_a_structured_answer_like_evaluate(case: Case) -> None:
    api = Api(case.text(INVALID_ANSWER, (5, 5)), case.text(VALID_ANSWER, (5, 5)))
    adapter = async_adapter(case, api)
    response = asyncio.run(adapter.aevaluate(Prompt(summary_template), session=Session()))
    assert response.output == Summary(titles=["bread"], count=1)
    assert len(api.bodies) == 2


@pytest.mark.parametrize("case", CASES, ids=str)
def test_aevaluate_maps_a_provider_error_like_evaluate(case: Case) -> None:
    api = Api((401, case.auth_error, {}))
    adapter = async_adapter(case, api)
    with pytest.raises(PromptEvaluationError) as raised:
        asyncio.run(adapter.aevaluate(Prompt(notes_template), session=Session()))
    assert raised.value.phase == "request"
    assert str(raised.value) == (
        f"prompt 'notes': request 1 to {adapter.name} failed: {case.auth_message}"
    )


@pytest.mark.parametrize("case", [c for c in CASES if c.name != "gemini"], ids=str)
def test_evaluate_with_an_async_client_says_to_use_aevaluate(case: Case) -> None:
    adapter = async_adapter(case, Api())
    with pytest.raises(TypeError) as raised:
        adapter.evaluate(Prompt(notes_template), session=Session())
    assert str(raised.value) == (
        f"the {adapter.name} adapter sends asynchronously (an async client or model "
        "function); use await adapter.aevaluate(...), or give it a synchronous one"
    )


# A google-genai Client has both halves; aevaluate always uses client.aio.
@pytest.mark.parametrize("case", [c for c in CASES if c.name != "gemini"], ids=str)
def test_aevaluate_with_a_sync_client_sends_from_a_worker_thread(case: Case) -> None:
    api = Api(case.calls(CALLS, (10, 5)), case.text("bread and eggs", (20, 7)))
    response = asyncio.run(case.adapter(api).aevaluate(Prompt(notes_template), session=Session()))
    assert response.text == "bread and eggs"
    assert len(api.bodies) == 2
