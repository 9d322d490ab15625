"""Replies as providers really send them, through the real SDKs into the adapters:
truncation, paused turns, provider tools, refusals, broken bodies and odd tool calls."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

httpx2 = pytest.importorskip("httpx2")
pytest.importorskip("openai")
pytest.importorskip("anthropic")
pytest.importorskip("google.genai")

from adapter_prompts import notes_template  # noqa: E402
from recorded_replies.replies import (  # noqa: E402
    ANTHROPIC_CONTINUED,
    ANTHROPIC_MAX_TOKENS,
    ANTHROPIC_PAUSED,
    CHAT_LENGTH,
    GEMINI_MAX_TOKENS,
    RESPONSES_INCOMPLETE,
)
from test_adapters_sdk import (  # noqa: E402
    ANTHROPIC,
    CASES,
    CHAT,
    GEMINI,
    RESPONSES,
    Api,
    Case,
    anthropic_client,
    anthropic_reply,
    chat_reply,
    genai_client,
    openai_client,
)

from wink import Prompt, PromptEvaluationError, Session, ToolInvoked  # noqa: E402
from wink.adapters import ModelExchange, PromptExecuted, ProviderToolCall  # noqa: E402
from wink.providers import anthropic, gemini, openai  # noqa: E402
from wink.providers.anthropic import AnthropicAdapter  # noqa: E402
from wink.providers.gemini import GeminiAdapter  # noqa: E402
from wink.providers.openai import OpenAIAdapter  # noqa: E402
from wink.runtime.session import Snapshot  # noqa: E402
from wink.testing import ModelReply, ScriptedAdapter  # noqa: E402

TRUNCATED = {
    "openai-chat": (CHAT_LENGTH, "length", len(CHAT_LENGTH["choices"][0]["message"]["content"])),
    "openai-responses": (RESPONSES_INCOMPLETE, "incomplete: max_output_tokens", 32),
    "anthropic": (ANTHROPIC_MAX_TOKENS, "max_tokens", 0),
    "gemini": (GEMINI_MAX_TOKENS, "MAX_TOKENS", 24),
}


def evaluate(case: Case, *replies: Any, **options: Any) -> tuple[Api, Any, Session]:
    api = Api(*replies)
    session = Session()
    response = case.adapter(api).evaluate(Prompt(notes_template), session=session, **options)
    return api, response, session


def failure(case: Case, *replies: Any, **options: Any) -> tuple[PromptEvaluationError, Session]:
    api = Api(*replies)
    session = Session()
    with pytest.raises(PromptEvaluationError) as raised:
        case.adapter(api).evaluate(Prompt(notes_template), session=session, **options)
    return raised.value, session


# --- an answer cut by the token limit -------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=str)
def test_a_truncated_answer_raises_with_phase_response_naming_the_stop_reason(case: Case) -> None:
    reply, raw, size = TRUNCATED[case.name]
    error, session = failure(case, reply)
    assert error.phase == "response"
    assert str(error) == (
        f"prompt 'notes': response 1 from {case.adapter(Api()).name}: the answer was cut by "
        f"the token limit (stop reason {raw!r}) after {size} characters: raise the limit, or "
        "pass allow_truncated=True to accept a cut answer"
    )
    (executed,) = session[PromptExecuted].all()
    assert executed.phase == "response"
    assert [exchange.stop_reason for exchange in executed.exchanges] == ["max_tokens"]


def test_allow_truncated_returns_the_cut_answer_saying_it_was_cut() -> None:
    _, response, _ = evaluate(GEMINI, GEMINI_MAX_TOKENS, allow_truncated=True)
    assert (response.text, response.stop_reason, response.raw_stop_reason) == (
        "The capital of France is",
        "max_tokens",
        "MAX_TOKENS",
    )


def test_a_finished_answer_says_it_ended_with_the_providers_value() -> None:
    _, response, _ = evaluate(ANTHROPIC, ANTHROPIC.text("done", (1, 1)))
    assert (response.stop_reason, response.raw_stop_reason) == ("end", "end_turn")


def test_a_tool_call_cut_by_the_token_limit_is_never_run() -> None:
    cut = chat_reply(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "search", "arguments": '{"query": "mil'},
                }
            ],
        },
        (5, 100),
    )
    cut["choices"][0]["finish_reason"] = "length"
    error, session = failure(CHAT, cut, allow_truncated=True)
    assert str(error) == (
        "prompt 'notes': response 1 from openai: the reply was cut by the token limit (stop "
        "reason 'length') while calling 'search'; no call was run, since its arguments may be "
        "incomplete: raise the limit (max_tokens, max_output_tokens...)"
    )
    assert session[ToolInvoked].all() == ()


def test_a_scripted_reply_plays_a_truncated_answer() -> None:
    adapter = ScriptedAdapter([ModelReply("The capital of", stop_reason="max_tokens")])
    response = adapter.evaluate(Prompt(notes_template), session=Session(), allow_truncated=True)
    assert (response.text, response.stop_reason) == ("The capital of", "max_tokens")


# --- Anthropic pauses a long turn of its server tools ---------------------------------

WEB_SEARCH = {"type": "web_search_20250305", "name": "web_search"}


def paused_adapter(api: Api) -> AnthropicAdapter:
    return AnthropicAdapter(
        anthropic_client(api), model="claude-test", max_tokens=256, provider_tools=[WEB_SEARCH]
    )


def test_a_paused_turn_is_sent_back_as_it_came_and_continued_to_the_answer() -> None:
    api = Api(ANTHROPIC_PAUSED, ANTHROPIC_CONTINUED)
    session = Session()
    response = paused_adapter(api).evaluate(Prompt(notes_template), session=session)
    user = {"role": "user", "content": "## Notes\n\nWhich notes mention e?"}
    paused = {"role": "assistant", "content": ANTHROPIC_PAUSED["content"]}
    assert api.bodies[1]["messages"] == [user, paused]
    assert response.text == (
        "I'll run these searches for you one at a time. Let me begin:"
        ".\n\n**Stock Market (Today):** "
        "The Nasdaq 100 slid 2.4%, set for its worst day since November"
    )
    assert (response.turns, response.stop_reason) == (2, "end")
    assert response.messages[-1] == {"role": "assistant", "content": ANTHROPIC_CONTINUED["content"]}
    (executed,) = session[PromptExecuted].all()
    assert [(e.stop_reason, e.raw_stop_reason) for e in executed.exchanges] == [
        ("pause", "pause_turn"),
        ("end", "end_turn"),
    ]
    assert executed.exchanges[0].provider_tools == (
        ProviderToolCall(
            "web_search",
            "srvtoolu_015V9Q8YNSkSyaVE5jFgZPhy",
            '{"query": "San Francisco weather today"}',
        ),
    )


def test_each_continuation_of_a_paused_turn_counts_against_max_turns() -> None:
    api = Api(ANTHROPIC_PAUSED, ANTHROPIC_CONTINUED)
    with pytest.raises(PromptEvaluationError) as raised:
        paused_adapter(api).evaluate(Prompt(notes_template), session=Session(), max_turns=1)
    assert raised.value.phase == "max_turns"
    assert len(api.bodies) == 1


def test_the_session_with_provider_tool_calls_saves_and_loads() -> None:
    session = Session()
    paused_adapter(Api(ANTHROPIC_PAUSED, ANTHROPIC_CONTINUED)).evaluate(
        Prompt(notes_template), session=session
    )
    loaded = Session()
    loaded.restore(Snapshot.from_json(session.snapshot().to_json()), keep_log=False)
    assert loaded[PromptExecuted].all() == session[PromptExecuted].all()


# --- provider tools go alongside the prompt's -----------------------------------------


def test_provider_tools_are_sent_after_the_prompts_tools() -> None:
    rendered = Prompt(notes_template).render()
    anthropic_api = Api(ANTHROPIC.text("ok", (1, 1)))
    paused_adapter(anthropic_api).evaluate(Prompt(notes_template), session=Session())
    assert anthropic_api.bodies[0]["tools"] == [*anthropic.tool_specs(rendered), WEB_SEARCH]

    responses_api = Api(RESPONSES.text("ok", (1, 1)))
    OpenAIAdapter(
        openai_client(responses_api),
        model="gpt-test",
        api="responses",
        provider_tools=[{"type": "web_search"}],
    ).evaluate(Prompt(notes_template), session=Session())
    specs = openai.tool_specs(rendered, api="responses")
    assert responses_api.bodies[0]["tools"] == [*specs, {"type": "web_search"}]

    gemini_api = Api(GEMINI.text("ok", (1, 1)))
    GeminiAdapter(
        genai_client(gemini_api), model="gemini-test", provider_tools=[{"google_search": {}}]
    ).evaluate(Prompt(notes_template), session=Session())
    tools = gemini_api.bodies[0]["tools"]  # the SDK orders them on the wire
    declarations = [
        tool["functionDeclarations"] for tool in tools if "functionDeclarations" in tool
    ]
    assert [len(found) for found in declarations] == [len(gemini.tool_specs(rendered))]
    assert [tool for tool in tools if "functionDeclarations" not in tool] == [{"googleSearch": {}}]


def test_tools_among_request_options_are_refused_pointing_to_provider_tools() -> None:
    with pytest.raises(ValueError) as raised:
        AnthropicAdapter(anthropic_client(Api()), model="m", max_tokens=1, tools=[WEB_SEARCH])
    assert str(raised.value) == (
        "AnthropicAdapter: tools are the prompt's; pass the provider's own tools (web search, "
        "code execution...) as provider_tools=[...]"
    )


def test_a_responses_web_search_call_is_recorded_and_echoed() -> None:
    search = {
        "type": "web_search_call",
        "id": "ws_1",
        "status": "completed",
        "action": {"type": "search", "query": "weather"},
    }
    reply = RESPONSES.calls([("c1", "search", {"query": "e"})], (1, 1))
    reply["output"].insert(0, search)
    api = Api(reply, RESPONSES.text("done", (1, 1)))
    session = Session()
    RESPONSES.adapter(api).evaluate(Prompt(notes_template), session=session)
    assert api.bodies[1]["input"][1] == search
    (executed,) = session[PromptExecuted].all()
    assert executed.exchanges[0].provider_tools == (
        ProviderToolCall("web_search", "ws_1", '{"type": "search", "query": "weather"}'),
    )


# --- the SDK's refusal to send a long non-streaming request ---------------------------

STREAM_EVENTS = [
    {
        "type": "message_start",
        "message": {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 9, "output_tokens": 1},
        },
    },
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Long."}},
    {"type": "content_block_stop", "index": 0},
    {
        "type": "message_delta",
        "delta": {"stop_reason": "end_turn", "stop_sequence": None},
        "usage": {"output_tokens": 3},
    },
    {"type": "message_stop"},
]


def test_a_request_the_sdk_would_not_send_unstreamed_is_streamed() -> None:
    bodies: list[dict[str, Any]] = []

    def handle(request: Any) -> Any:
        bodies.append(json.loads(request.content))
        text = "".join(
            f"event: {event['type']}\ndata: {json.dumps(event)}\n\n" for event in STREAM_EVENTS
        )
        return httpx2.Response(200, text=text, headers={"content-type": "text/event-stream"})

    sdk = pytest.importorskip("anthropic")
    http = httpx2.Client(transport=httpx2.MockTransport(handle))
    # A client with the SDK's default timeout: it refuses this max_tokens unstreamed.
    adapter = AnthropicAdapter(
        sdk.Anthropic(api_key="k", base_url="http://anthropic.test", http_client=http),
        model="claude-test",
        max_tokens=64000,
    )
    response = adapter.evaluate(Prompt(notes_template), session=Session())
    assert (response.text, response.stop_reason) == ("Long.", "end")
    assert [body["stream"] for body in bodies] == [True]
    assert bodies[0]["max_tokens"] == 64000


# --- ids that are missing or reused ---------------------------------------------------


def test_empty_and_reused_call_ids_get_unique_ids_used_in_echo_and_events() -> None:
    calls = CHAT.calls([("", "search", {"query": "e"}), ("", "get_note", {"id": 7})], (1, 1))
    api, response, session = evaluate(CHAT, calls, CHAT.text("done", (1, 1)))
    echoed = api.bodies[1]["messages"][1]["tool_calls"]
    answered = [message["tool_call_id"] for message in api.bodies[1]["messages"][2:]]
    assert [call["id"] for call in echoed] == answered == ["wink_call_1", "wink_call_2"]
    assert [event.call_id for event in session[ToolInvoked]] == ["wink_call_1", "wink_call_2"]
    assert response.text == "done"


def test_a_reused_anthropic_tool_use_id_is_made_unique() -> None:
    calls = ANTHROPIC.calls(
        [("t1", "search", {"query": "e"}), ("t1", "get_note", {"id": 7})], (1, 1)
    )
    api, _, session = evaluate(ANTHROPIC, calls, ANTHROPIC.text("done", (1, 1)))
    echoed = [block.get("id") for block in api.bodies[1]["messages"][1]["content"]]
    answered = [block["tool_use_id"] for block in api.bodies[1]["messages"][2]["content"]]
    assert echoed == [None, "t1", "wink_call_1"]
    assert answered == ["t1", "wink_call_1"]
    assert [event.call_id for event in session[ToolInvoked]] == ["t1", "wink_call_1"]


# --- refusals keep the provider's explanation -----------------------------------------


def test_an_anthropic_refusal_names_its_explanation_and_category() -> None:
    refusal = anthropic_reply([], "refusal", (1, 1)) | {
        "stop_details": {
            "type": "refusal",
            "category": "cyber",
            "explanation": "The request could enable malware development.",
        }
    }
    error, _ = failure(ANTHROPIC, refusal)
    assert str(error) == (
        "prompt 'notes': response 1 from anthropic: the model refused (stop reason 'refusal'): "
        "The request could enable malware development. (category cyber)"
    )


def test_a_long_refusal_is_shown_bounded() -> None:
    long = "no " * 2000
    reply = chat_reply({"role": "assistant", "content": None, "refusal": long}, (1, 1))
    error, _ = failure(CHAT, reply)
    assert str(error).endswith(f"{long[:2000]}… (4000 more characters)")


# --- a 200 reply that is not what the API sends ---------------------------------------

BROKEN_BODIES = {
    "html": (b"<html><body>502 Bad Gateway</body></html>", "text/html"),
    "sse": (b'data: {"id": 1}\n\n', "text/event-stream"),
    "null": (b"null", "application/json"),
    "list": (b"[]", "application/json"),
    "cut": (b'{"id": "x", "choi', "application/json"),
}


@pytest.mark.parametrize("body", sorted(BROKEN_BODIES))
@pytest.mark.parametrize("case", CASES, ids=str)
def test_a_broken_200_body_is_a_response_failure_recorded_in_the_session(
    case: Case, body: str
) -> None:
    content, content_type = BROKEN_BODIES[body]
    api = Api()
    api.handle = lambda request: httpx2.Response(  # type: ignore[method-assign]  # a raw body
        200, content=content, headers={"content-type": content_type}
    )
    session = Session()
    with pytest.raises(PromptEvaluationError) as raised:
        case.adapter(api).evaluate(Prompt(notes_template), session=session)
    assert raised.value.phase == "response"
    assert str(raised.value).startswith(f"prompt 'notes': response 1 from {case.adapter(api).name}")
    (executed,) = session[PromptExecuted].all()
    assert (executed.phase, executed.error) == (
        "response",
        f"PromptEvaluationError: {raised.value}",
    )


def test_an_html_page_is_named_as_what_came_instead_of_a_completion() -> None:
    api = Api()
    api.handle = lambda request: httpx2.Response(  # type: ignore[method-assign]  # a raw body
        200, content=b"<html>oops</html>", headers={"content-type": "text/html"}
    )
    with pytest.raises(PromptEvaluationError) as raised:
        CHAT.adapter(api).evaluate(Prompt(notes_template), session=Session())
    assert str(raised.value) == (
        "prompt 'notes': response 1 from openai: the reply is not a chat completion but str: "
        "'<html>oops</html>'"
    )


def test_a_gemini_reply_of_the_wrong_shape_is_a_response_failure() -> None:
    bad = {"candidates": [{"content": "x"}]}
    error, _ = failure(GEMINI, bad)
    assert (error.phase, str(error)) == (
        "response",
        "prompt 'notes': response 1 from gemini cannot be read: the reply does not fit the "
        "SDK's GenerateContentResponse: candidates.0.content: Input should be a valid "
        "dictionary or object to extract fields from",
    )


@pytest.mark.parametrize("case", CASES, ids=str)
def test_a_negative_token_count_is_a_response_failure_naming_the_field(case: Case) -> None:
    reply = copy.deepcopy(case.text("ok", (1, 1)))
    usage = reply["usageMetadata"] if case is GEMINI else reply["usage"]
    name = {"openai-chat": "prompt_tokens", "gemini": "promptTokenCount"}.get(
        case.name, "input_tokens"
    )
    usage[name] = -3
    error, _ = failure(case, reply)
    where = "usageMetadata" if case is GEMINI else "usage"
    assert (error.phase, str(error)) == (
        "response",
        f"prompt 'notes': response 1 from {case.adapter(Api()).name} cannot be read: "
        f"ProviderPayloadError: {where}.{name}: expected a token count (a whole number, not "
        "negative), got -3",
    )


def test_any_exception_of_the_sdk_call_is_a_request_failure() -> None:
    class Broken:
        max_retries = 0

        class messages:  # the SDK's attribute name
            @staticmethod
            def create(**body: Any) -> Any:
                raise RuntimeError("socket pool exhausted")

    pytest.importorskip("anthropic")
    adapter = AnthropicAdapter(Broken(), model="m", max_tokens=1)
    session = Session()
    with pytest.raises(PromptEvaluationError) as raised:
        adapter.evaluate(Prompt(notes_template), session=session)
    assert (raised.value.phase, str(raised.value)) == (
        "request",
        "prompt 'notes': request 1 to anthropic failed: RuntimeError: socket pool exhausted",
    )
    assert session[PromptExecuted].all()[0].phase == "request"


# --- what the model sends that is not a JSON object -----------------------------------


@pytest.mark.parametrize("value", [[1, 2], 7, "text"])
def test_tool_input_that_is_not_an_object_fails_the_call_and_the_session_saves(
    value: Any,
) -> None:
    reply = anthropic_reply(
        [{"type": "tool_use", "id": "t1", "name": "search", "input": value}], "tool_use", (1, 1)
    )
    _, response, session = evaluate(ANTHROPIC, reply, ANTHROPIC.text("done", (1, 1)))
    (invoked,) = session[ToolInvoked].all()
    assert (invoked.success, invoked.arguments) == (False, json.dumps(value))
    loaded = Session()
    loaded.restore(Snapshot.from_json(session.snapshot().to_json()), keep_log=False)
    assert loaded[ToolInvoked].all()[0].arguments == json.dumps(value)
    assert response.text == "done"


def test_model_exchange_defaults_keep_older_records_readable() -> None:
    exchange = ModelExchange(*[None] * 4)
    assert (exchange.stop_reason, exchange.raw_stop_reason, exchange.provider_tools) == (
        "end",
        None,
        (),
    )
