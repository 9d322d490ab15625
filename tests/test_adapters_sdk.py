"""The adapters through the real SDKs, offline: each SDK's own HTTP client sends to a
mock transport, which records the exact request bodies and answers with queued replies."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

httpx2 = pytest.importorskip("httpx2")
openai_sdk = pytest.importorskip("openai")
anthropic_sdk = pytest.importorskip("anthropic")
genai = pytest.importorskip("google.genai")

from adapter_prompts import (  # noqa: E402
    Summary,
    Tagged,
    notes_template,
    parent_template,
    summary_template,
)
from google.genai import types as genai_types  # noqa: E402
from pydantic import BaseModel  # noqa: E402

from wink import (  # noqa: E402
    Budget,
    BudgetTracker,
    Deadline,
    Prompt,
    PromptEvaluationError,
    Session,
    TokenUsage,
    ToolInvoked,
)
from wink.adapters import LoopAdapter  # noqa: E402
from wink.providers import ProviderSchemaError, anthropic, gemini, openai  # noqa: E402
from wink.providers.anthropic import AnthropicAdapter  # noqa: E402
from wink.providers.gemini import GeminiAdapter  # noqa: E402
from wink.providers.openai import OpenAIAdapter  # noqa: E402

NOTES_TEXT = "## Notes\n\nWhich notes mention e?"
SUMMARY_TEXT = "## Summary\n\nSummarise the notes."
SEARCH_OK = '2 hits.\n\n["bread","eggs"]'
NO_NOTE = "No note 7."
CALLS = [("c1", "search", {"query": "e"}), ("c2", "get_note", {"id": 7})]
INVALID_ANSWER = '{"titles": "bread", "count": 1}'
VALID_ANSWER = '{"titles": ["bread"], "count": 1}'
CORRECTION = (
    "Your answer does not match the required JSON Schema:\n"
    'titles: input should be a valid array (got "bread")\n'
    "Answer again with only the corrected JSON object."
)
SUMMARY_SCHEMA = {
    "description": "The structured answer.",
    "properties": {
        "titles": {
            "description": "Matching note titles",
            "items": {"type": "string"},
            "type": "array",
        },
        "count": {"type": "integer"},
    },
    "required": ["titles", "count"],
    "type": "object",
    "additionalProperties": False,
}

Reply = dict[str, Any] | tuple[int, dict[str, Any], dict[str, str]]


class Api:
    """A fake provider API: records each request's JSON body and timeout, answers with
    queued replies (a JSON body, or ``(status, body, headers)``)."""

    def __init__(self, *replies: Reply) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.timeouts: list[Any] = []
        self._replies = list(replies)

    def handle(self, request: Any) -> Any:
        self.bodies.append(json.loads(request.content))
        self.timeouts.append(request.extensions.get("timeout", {}).get("read"))
        if not self._replies:
            return httpx2.Response(500, json={"error": {"message": "no reply queued"}})
        reply = self._replies.pop(0)
        if isinstance(reply, tuple):
            status, body, headers = reply
            return httpx2.Response(status, json=body, headers=headers)
        return httpx2.Response(200, json=reply)

    def http_client(self) -> Any:
        return httpx2.Client(transport=httpx2.MockTransport(self.handle))


@dataclass(frozen=True)
class Case:
    """One adapter: how to build it, its replies, and its error and refusal payloads."""

    name: str
    adapter: Callable[[Api], LoopAdapter]
    calls: Callable[[list[tuple[str, str, dict[str, Any]]], tuple[int, int]], dict[str, Any]]
    text: Callable[[str, tuple[int, int]], dict[str, Any]]
    auth_error: dict[str, Any]
    auth_message: str
    auth_payload: Any
    refusal: dict[str, Any]
    refusal_message: str

    def __str__(self) -> str:
        return self.name


# --- OpenAI Chat Completions ----------------------------------------------------------


def openai_client(api: Api) -> Any:
    return openai_sdk.OpenAI(
        api_key="test-key",
        base_url="http://openai.test/v1",
        max_retries=2,
        http_client=api.http_client(),
    )


def chat_reply(message: dict[str, Any], usage: tuple[int, int]) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "gpt-test",
        "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
        "usage": {
            "prompt_tokens": usage[0],
            "completion_tokens": usage[1],
            "total_tokens": sum(usage),
        },
    }


def chat_calls(calls: list[tuple[str, str, dict[str, Any]]], usage: tuple[int, int]) -> Any:
    tool_calls = [
        {"id": id_, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        for id_, name, args in calls
    ]
    return chat_reply({"role": "assistant", "content": None, "tool_calls": tool_calls}, usage)


def chat_text(text: str, usage: tuple[int, int]) -> dict[str, Any]:
    return chat_reply({"role": "assistant", "content": text}, usage)


OPENAI_AUTH = {
    "error": {
        "message": "Incorrect API key provided",
        "type": "invalid_request_error",
        "code": "invalid_api_key",
    }
}

CHAT = Case(
    "openai-chat",
    lambda api: OpenAIAdapter(openai_client(api), model="gpt-test"),
    chat_calls,
    chat_text,
    OPENAI_AUTH,
    "HTTP 401 AuthenticationError: Incorrect API key provided",
    OPENAI_AUTH["error"],
    chat_reply({"role": "assistant", "content": None, "refusal": "I can't help."}, (1, 1)),
    "the model refused (stop reason 'stop'): I can't help.",
)

# --- OpenAI Responses -----------------------------------------------------------------


def responses_reply(output: list[dict[str, Any]], usage: tuple[int, int]) -> dict[str, Any]:
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 0,
        "model": "gpt-test",
        "status": "completed",
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": usage[0],
            "output_tokens": usage[1],
            "total_tokens": sum(usage),
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }


def responses_calls(calls: list[tuple[str, str, dict[str, Any]]], usage: tuple[int, int]) -> Any:
    items: list[dict[str, Any]] = [{"type": "reasoning", "id": "rs_1", "summary": []}]
    items.extend(
        {
            "type": "function_call",
            "id": f"fc_{id_}",
            "call_id": id_,
            "name": name,
            "arguments": json.dumps(args),
            "status": "completed",
        }
        for id_, name, args in calls
    )
    return responses_reply(items, usage)


def responses_message(content: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "status": "completed",
        "content": [content],
    }


def responses_text(text: str, usage: tuple[int, int]) -> dict[str, Any]:
    content = {"type": "output_text", "text": text, "annotations": []}
    return responses_reply([responses_message(content)], usage)


RESPONSES = Case(
    "openai-responses",
    lambda api: OpenAIAdapter(openai_client(api), model="gpt-test", api="responses"),
    responses_calls,
    responses_text,
    OPENAI_AUTH,
    "HTTP 401 AuthenticationError: Incorrect API key provided",
    OPENAI_AUTH["error"],
    responses_reply([responses_message({"type": "refusal", "refusal": "I can't help."})], (1, 1)),
    "the model refused (stop reason 'completed'): I can't help.",
)

# --- Anthropic ------------------------------------------------------------------------


def anthropic_client(api: Api) -> Any:
    return anthropic_sdk.Anthropic(
        api_key="test-key",
        base_url="http://anthropic.test",
        max_retries=2,
        http_client=api.http_client(),
    )


def anthropic_reply(
    content: list[dict[str, Any]], stop_reason: str, usage: tuple[int, int]
) -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": usage[0], "output_tokens": usage[1]},
    }


def anthropic_calls(calls: list[tuple[str, str, dict[str, Any]]], usage: tuple[int, int]) -> Any:
    blocks = [
        {"type": "tool_use", "id": id_, "name": name, "input": args} for id_, name, args in calls
    ]
    return anthropic_reply([{"type": "text", "text": "Looking."}, *blocks], "tool_use", usage)


def anthropic_text(text: str, usage: tuple[int, int]) -> dict[str, Any]:
    return anthropic_reply([{"type": "text", "text": text}], "end_turn", usage)


ANTHROPIC_AUTH = {
    "type": "error",
    "error": {"type": "authentication_error", "message": "invalid x-api-key"},
}

ANTHROPIC = Case(
    "anthropic",
    lambda api: AnthropicAdapter(anthropic_client(api), model="claude-test", max_tokens=256),
    anthropic_calls,
    anthropic_text,
    ANTHROPIC_AUTH,
    "HTTP 401 AuthenticationError: invalid x-api-key",
    ANTHROPIC_AUTH,
    anthropic_reply([], "refusal", (1, 1)),
    "the model refused (stop reason 'refusal')",
)

# --- Gemini ---------------------------------------------------------------------------


def genai_client(api: Api) -> Any:
    options = genai_types.HttpOptions(
        base_url="http://gemini.test",
        httpx_client=api.http_client(),
        retry_options=genai_types.HttpRetryOptions(attempts=1),
    )
    return genai.Client(api_key="test-key", http_options=options)


def gemini_reply(parts: list[dict[str, Any]], usage: tuple[int, int]) -> dict[str, Any]:
    return {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP"}],
        "usageMetadata": {"promptTokenCount": usage[0], "candidatesTokenCount": usage[1]},
        "modelVersion": "gemini-test",
    }


def gemini_calls(calls: list[tuple[str, str, dict[str, Any]]], usage: tuple[int, int]) -> Any:
    parts = [{"functionCall": {"id": id_, "name": name, "args": args}} for id_, name, args in calls]
    return gemini_reply([{"text": "Looking."}, *parts], usage)


def gemini_text(text: str, usage: tuple[int, int]) -> dict[str, Any]:
    return gemini_reply([{"text": text}], usage)


GEMINI_AUTH = {"error": {"code": 401, "message": "API key not valid.", "status": "UNAUTHENTICATED"}}

GEMINI = Case(
    "gemini",
    lambda api: GeminiAdapter(genai_client(api), model="gemini-test"),
    gemini_calls,
    gemini_text,
    GEMINI_AUTH,
    "HTTP 401 UNAUTHENTICATED: API key not valid.",
    GEMINI_AUTH,
    {"candidates": [], "promptFeedback": {"blockReason": "SAFETY"}},
    "the reply was blocked by the provider's content filter (stop reason 'SAFETY')",
)

CASES = [CHAT, RESPONSES, ANTHROPIC, GEMINI]


def tool_loop(case: Case) -> tuple[Api, Any, Session]:
    api = Api(case.calls(CALLS, (10, 5)), case.text("bread and eggs", (20, 7)))
    session = Session()
    response = case.adapter(api).evaluate(Prompt(notes_template), session=session)
    return api, response, session


def structured(case: Case) -> tuple[Api, Any]:
    api = Api(case.text(INVALID_ANSWER, (5, 5)), case.text(VALID_ANSWER, (5, 5)))
    response = case.adapter(api).evaluate(Prompt(summary_template), session=Session())
    return api, response


def rendered_notes() -> Any:
    return Prompt(notes_template).render()


# --- exact request bodies, provider by provider ---------------------------------------


def test_openai_chat_tool_loop_sends_the_prompt_then_echoes_calls_and_answers_each() -> None:
    api, response, _ = tool_loop(CHAT)
    user = {"role": "user", "content": NOTES_TEXT}
    tools = openai.tool_specs(rendered_notes())
    assert api.bodies[0] == {"model": "gpt-test", "messages": [user], "tools": tools}
    assert api.bodies[1] == {
        "model": "gpt-test",
        "tools": tools,
        "messages": [
            user,
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "search", "arguments": '{"query": "e"}'},
                    },
                    {
                        "id": "c2",
                        "type": "function",
                        "function": {"name": "get_note", "arguments": '{"id": 7}'},
                    },
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": SEARCH_OK},
            {"role": "tool", "tool_call_id": "c2", "content": NO_NOTE},
        ],
    }
    assert response.text == "bread and eggs"


def test_openai_chat_structured_output_uses_response_format_and_retries_once() -> None:
    api, response = structured(CHAT)
    response_format = {
        "type": "json_schema",
        "json_schema": {"name": "Summary", "schema": SUMMARY_SCHEMA, "strict": True},
    }
    user = {"role": "user", "content": SUMMARY_TEXT}
    assert api.bodies[0] == {
        "model": "gpt-test",
        "messages": [user],
        "response_format": response_format,
    }
    assert api.bodies[1]["messages"] == [
        user,
        {"role": "assistant", "content": INVALID_ANSWER},
        {"role": "user", "content": CORRECTION},
    ]
    assert response.output == Summary(titles=["bread"], count=1)


def test_openai_responses_tool_loop_echoes_every_output_item_then_the_call_outputs() -> None:
    api, response, _ = tool_loop(RESPONSES)
    user = {"role": "user", "content": NOTES_TEXT}
    tools = openai.tool_specs(rendered_notes(), api="responses")
    assert api.bodies[0] == {"model": "gpt-test", "input": [user], "tools": tools}
    assert api.bodies[1] == {
        "model": "gpt-test",
        "tools": tools,
        "input": [
            user,
            {"type": "reasoning", "id": "rs_1", "summary": []},
            {
                "type": "function_call",
                "id": "fc_c1",
                "call_id": "c1",
                "name": "search",
                "arguments": '{"query": "e"}',
                "status": "completed",
            },
            {
                "type": "function_call",
                "id": "fc_c2",
                "call_id": "c2",
                "name": "get_note",
                "arguments": '{"id": 7}',
                "status": "completed",
            },
            {"type": "function_call_output", "call_id": "c1", "output": SEARCH_OK},
            {"type": "function_call_output", "call_id": "c2", "output": NO_NOTE},
        ],
    }
    assert response.text == "bread and eggs"


def test_openai_responses_structured_output_uses_text_format_and_retries_once() -> None:
    api, response = structured(RESPONSES)
    user = {"role": "user", "content": SUMMARY_TEXT}
    assert api.bodies[0] == {
        "model": "gpt-test",
        "input": [user],
        "text": {
            "format": {
                "type": "json_schema",
                "name": "Summary",
                "schema": SUMMARY_SCHEMA,
                "strict": True,
            }
        },
    }
    answer = {"type": "output_text", "text": INVALID_ANSWER, "annotations": []}
    assert api.bodies[1]["input"] == [
        user,
        responses_message(answer),
        {"role": "user", "content": CORRECTION},
    ]
    assert response.output == Summary(titles=["bread"], count=1)


def test_anthropic_tool_loop_echoes_the_blocks_and_answers_in_one_user_message() -> None:
    api, response, _ = tool_loop(ANTHROPIC)
    user = {"role": "user", "content": NOTES_TEXT}
    tools = anthropic.tool_specs(rendered_notes())
    assert api.bodies[0] == {
        "model": "claude-test",
        "max_tokens": 256,
        "messages": [user],
        "tools": tools,
    }
    assert api.bodies[1] == {
        "model": "claude-test",
        "max_tokens": 256,
        "tools": tools,
        "messages": [
            user,
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Looking."},
                    {"type": "tool_use", "id": "c1", "name": "search", "input": {"query": "e"}},
                    {"type": "tool_use", "id": "c2", "name": "get_note", "input": {"id": 7}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "c1", "content": SEARCH_OK},
                    {
                        "type": "tool_result",
                        "tool_use_id": "c2",
                        "content": NO_NOTE,
                        "is_error": True,
                    },
                ],
            },
        ],
    }
    assert response.text == "bread and eggs"


def test_anthropic_structured_output_uses_output_config_and_retries_once() -> None:
    api, response = structured(ANTHROPIC)
    user = {"role": "user", "content": SUMMARY_TEXT}
    assert api.bodies[0] == {
        "model": "claude-test",
        "max_tokens": 256,
        "messages": [user],
        "output_config": {"format": {"type": "json_schema", "schema": SUMMARY_SCHEMA}},
    }
    assert api.bodies[1]["messages"] == [
        user,
        {"role": "assistant", "content": [{"type": "text", "text": INVALID_ANSWER}]},
        {"role": "user", "content": CORRECTION},
    ]
    assert response.output == Summary(titles=["bread"], count=1)


def test_gemini_tool_loop_echoes_the_model_content_and_answers_every_call() -> None:
    api, response, _ = tool_loop(GEMINI)
    user = {"role": "user", "parts": [{"text": NOTES_TEXT}]}
    declarations = [
        {camel(key): value for key, value in declaration.items()}
        for declaration in api.bodies[0]["tools"][0]["functionDeclarations"]
    ]
    assert declarations == gemini.tool_specs(rendered_notes())
    assert api.bodies[0]["contents"] == [user]
    assert set(api.bodies[0]) == {"contents", "tools", "generationConfig"}
    assert api.bodies[0]["generationConfig"] == {}
    assert api.bodies[1]["contents"] == [
        user,
        {
            "role": "model",
            "parts": [
                {"text": "Looking."},
                {"functionCall": {"id": "c1", "name": "search", "args": {"query": "e"}}},
                {"functionCall": {"id": "c2", "name": "get_note", "args": {"id": 7}}},
            ],
        },
        {
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "id": "c1",
                        "name": "search",
                        "response": {"output": SEARCH_OK},
                    }
                },
                {
                    "functionResponse": {
                        "id": "c2",
                        "name": "get_note",
                        "response": {"error": NO_NOTE},
                    }
                },
            ],
        },
    ]
    assert response.text == "bread and eggs"


def test_gemini_structured_output_uses_response_json_schema_and_retries_once() -> None:
    api, response = structured(GEMINI)
    user = {"role": "user", "parts": [{"text": SUMMARY_TEXT}]}
    assert api.bodies[0] == {
        "contents": [user],
        "generationConfig": {
            "responseMimeType": "application/json",
            "responseJsonSchema": SUMMARY_SCHEMA,
        },
    }
    assert api.bodies[1]["contents"] == [
        user,
        {"role": "model", "parts": [{"text": INVALID_ANSWER}]},
        {"role": "user", "parts": [{"text": CORRECTION}]},
    ]
    assert response.output == Summary(titles=["bread"], count=1)


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word.title() for word in rest)


# --- the same behaviour through every adapter -----------------------------------------


@pytest.mark.parametrize("case", CASES, ids=str)
def test_every_call_of_a_turn_runs_in_order_and_a_failure_is_a_result(case: Case) -> None:
    _, response, session = tool_loop(case)
    assert [(e.name, e.call_id, e.success) for e in response.tool_results] == [
        ("search", "c1", True),
        ("get_note", "c2", False),
    ]
    assert [e.rendered_output for e in response.tool_results] == ['["bread","eggs"]', ""]
    assert response.tool_results == session[ToolInvoked].all()
    assert response.turns == 2


@pytest.mark.parametrize("case", CASES, ids=str)
def test_usage_is_summed_and_recorded_in_the_budget_tracker(case: Case) -> None:
    api = Api(case.calls(CALLS, (10, 5)), case.text("done", (20, 7)))
    tracker = BudgetTracker(Budget(max_total_tokens=1000))
    response = case.adapter(api).evaluate(
        Prompt(notes_template), session=Session(), budget_tracker=tracker
    )
    assert response.usage == TokenUsage(30, 12)
    assert tracker.consumed == TokenUsage(30, 12)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_the_budget_stops_the_evaluation_before_the_tools_run(case: Case) -> None:
    api = Api(case.calls(CALLS, (90, 20)), case.text("unused", (1, 1)))
    session = Session()
    with pytest.raises(PromptEvaluationError) as raised:
        case.adapter(api).evaluate(
            Prompt(notes_template),
            session=session,
            budget_tracker=BudgetTracker(Budget(max_total_tokens=100)),
        )
    assert raised.value.phase == "budget"
    assert str(raised.value) == (
        "prompt 'notes': after request 1: budget exceeded on total_tokens: 110 tokens used, "
        "limit 100"
    )
    assert (len(api.bodies), len(session[ToolInvoked])) == (1, 0)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_a_passed_deadline_sends_nothing(case: Case) -> None:
    now = datetime(2025, 1, 1, tzinfo=UTC)
    deadline = Deadline(now, lambda: now)
    api = Api(case.text("unused", (1, 1)))
    with pytest.raises(PromptEvaluationError) as raised:
        case.adapter(api).evaluate(Prompt(notes_template), session=Session(), deadline=deadline)
    assert raised.value.phase == "deadline"
    assert api.bodies == []


@pytest.mark.parametrize("case", CASES, ids=str)
def test_the_deadline_bounds_the_sdk_timeout(case: Case) -> None:
    now = datetime(2025, 1, 1, tzinfo=UTC)
    deadline = Deadline(now + timedelta(seconds=42), lambda: now)
    api = Api(case.text("ok", (1, 1)))
    case.adapter(api).evaluate(Prompt(notes_template), session=Session(), deadline=deadline)
    assert api.timeouts == [42.0]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_a_rate_limit_is_retried_under_a_deadline_without_passing_it(case: Case) -> None:
    now = datetime(2025, 1, 1, tzinfo=UTC)
    deadline = Deadline(now + timedelta(seconds=42), lambda: now)
    limited = (
        429,
        {"error": {"code": 429, "message": "slow down", "status": "RESOURCE_EXHAUSTED"}},
        {"retry-after": "2"},
    )
    api = Api(limited, case.text("ok", (1, 1)))
    adapter = case.adapter(api)
    waits: list[float] = []
    adapter.sleep = waits.append  # type: ignore[method-assign]  # record instead of sleeping
    response = adapter.evaluate(Prompt(notes_template), session=Session(), deadline=deadline)
    assert response.text == "ok"
    assert (len(api.bodies), api.timeouts) == (2, [42.0, 42.0])
    assert waits == ([0.5] if case is GEMINI else [2.0])  # Gemini gives no retry-after


@pytest.mark.parametrize("case", CASES, ids=str)
def test_max_turns_stops_a_model_that_keeps_calling_tools(case: Case) -> None:
    api = Api(case.calls(CALLS, (1, 1)), case.calls(CALLS, (1, 1)))
    with pytest.raises(PromptEvaluationError) as raised:
        case.adapter(api).evaluate(Prompt(notes_template), session=Session(), max_turns=1)
    assert raised.value.phase == "max_turns"
    assert len(api.bodies) == 1


@pytest.mark.parametrize("case", CASES, ids=str)
def test_an_sdk_error_is_mapped_with_its_phase_and_payload(case: Case) -> None:
    api = Api((401, case.auth_error, {}))
    with pytest.raises(PromptEvaluationError) as raised:
        case.adapter(api).evaluate(Prompt(notes_template), session=Session())
    error = raised.value
    assert (
        str(error)
        == f"prompt 'notes': request 1 to {case.adapter(api).name} failed: {case.auth_message}"
    )
    assert error.phase == "request"
    assert error.provider_payload == case.auth_payload
    assert isinstance(error.__cause__, Exception)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_a_refusal_stops_with_phase_response(case: Case) -> None:
    api = Api(case.refusal)
    with pytest.raises(PromptEvaluationError) as raised:
        case.adapter(api).evaluate(Prompt(notes_template), session=Session())
    error = raised.value
    assert error.phase == "response"
    assert (
        str(error)
        == f"prompt 'notes': response 1 from {case.adapter(api).name}: {case.refusal_message}"
    )
    assert error.provider_payload is not None


@pytest.mark.parametrize("case", CASES, ids=str)
def test_a_handler_delegates_to_a_sub_prompt_through_context_adapter(case: Case) -> None:
    api = Api(
        case.calls([("d1", "delegate", {"task": "tag"})], (1, 1)),
        case.calls([("t1", "tag", {"tag": "food"})], (1, 1)),
        case.text("tagged food", (1, 1)),
        case.text("all done", (1, 1)),
    )
    session = Session()
    response = case.adapter(api).evaluate(Prompt(parent_template), session=session)
    assert response.text == "all done"
    assert [first_text(case, body) for body in api.bodies] == [
        "## Parent\n\nDelegate tagging.",
        "## Tagger\n\nTag the notes.",
        "## Tagger\n\nTag the notes.",
        "## Parent\n\nDelegate tagging.",
    ]
    assert last_tool_output(case, api.bodies[3]) == 'Delegated.\n\n"tagged food"'
    assert session[Tagged].all() == (Tagged("food"),)
    assert [(e.prompt_name, e.name) for e in session[ToolInvoked]] == [
        ("tagger", "tag"),
        ("parent", "delegate"),
    ]


def last_tool_output(case: Case, body: dict[str, Any]) -> Any:
    if case is CHAT:
        return body["messages"][-1]["content"]
    if case is RESPONSES:
        return body["input"][-1]["output"]
    if case is ANTHROPIC:
        return body["messages"][-1]["content"][0]["content"]
    return body["contents"][-1]["parts"][0]["functionResponse"]["response"]["output"]


def first_text(case: Case, body: dict[str, Any]) -> str:
    if case is GEMINI:
        return str(body["contents"][0]["parts"][0]["text"])
    messages = body["input"] if case is RESPONSES else body["messages"]
    return str(messages[0]["content"])


@pytest.mark.parametrize("case", CASES, ids=str)
def test_with_messages_the_prompt_is_the_system_instruction(case: Case) -> None:
    api = Api(case.text("hello again", (1, 1)))
    history = HISTORY[case.name]
    response = case.adapter(api).evaluate(
        Prompt(notes_template), session=Session(), messages=history
    )
    body = api.bodies[0]
    if case is CHAT:
        assert body["messages"] == [{"role": "system", "content": NOTES_TEXT}, *history]
    elif case is RESPONSES:
        assert (body["instructions"], body["input"]) == (NOTES_TEXT, history)
    elif case is ANTHROPIC:
        assert (body["system"], body["messages"]) == (NOTES_TEXT, history)
    else:
        assert body["systemInstruction"] == {"parts": [{"text": NOTES_TEXT}], "role": "user"}
        assert body["contents"] == history
    assert response.messages[-2] == history[-1]  # then the model's answer


HISTORY: dict[str, list[dict[str, Any]]] = {
    "openai-chat": [{"role": "user", "content": "hi"}],
    "openai-responses": [{"role": "user", "content": "hi"}],
    "anthropic": [{"role": "user", "content": "hi"}],
    "gemini": [{"role": "user", "parts": [{"text": "hi"}]}],
}


@pytest.mark.parametrize("case", CASES, ids=str)
def test_a_dropped_connection_is_retried_then_a_request_failure(case: Case) -> None:
    attempts: list[float] = []

    def refuse(request: Any) -> Any:
        attempts.append(request.extensions["timeout"]["read"])
        raise httpx2.ConnectError("connection refused", request=request)

    api = Api()
    api.handle = refuse  # type: ignore[method-assign]
    adapter = case.adapter(api)
    waits: list[float] = []
    adapter.sleep = waits.append  # type: ignore[method-assign]  # record instead of sleeping
    now = datetime(2025, 1, 1, tzinfo=UTC)
    deadline = Deadline(now + timedelta(seconds=42), lambda: now)
    with pytest.raises(PromptEvaluationError) as raised:
        adapter.evaluate(Prompt(notes_template), session=Session(), deadline=deadline)
    error = raised.value
    assert (error.phase, error.provider_payload) == ("request", None)
    assert str(error) == (
        f"prompt 'notes': request 1 to {adapter.name} failed: {CONNECTION[case.name]}"
    )
    assert (attempts, waits) == ([42.0] * 3, [0.5, 1.0])  # the client's max_retries=2


CONNECTION = {
    "openai-chat": "APIConnectionError: Connection error.",
    "openai-responses": "APIConnectionError: Connection error.",
    "anthropic": "APIConnectionError: Connection error.",
    "gemini": "ConnectError: connection refused",
}


class Loose(BaseModel):
    name: str
    note: str = "none"


class Tally(BaseModel):
    counts: dict[str, int]


def test_openai_output_schema_is_strict_only_where_meaning_is_kept() -> None:
    from wink.contract import compile_contract
    from wink.providers._openai_adapter import output_format

    loose, tally = compile_contract(Loose), compile_contract(Tally)
    # A defaulted field goes strict: the model's null parses back into the default.
    assert output_format(loose, "auto")["strict"] is True
    assert output_format(loose, "auto")["schema"]["required"] == ["name", "note"]
    assert loose.parse('{"name": "a", "note": null}') == Loose(name="a", note="none")
    # A free-form mapping cannot be strict: "auto" sends the schema as it is.
    assert output_format(tally, "auto") == {
        "name": "Tally",
        "schema": {
            "properties": {
                "counts": {"additionalProperties": {"type": "integer"}, "type": "object"}
            },
            "required": ["counts"],
            "type": "object",
            "additionalProperties": False,
        },
        "strict": False,
    }
    with pytest.raises(ProviderSchemaError):
        output_format(tally, True)
    assert output_format(loose, False)["strict"] is False
    assert output_format(loose, {"search": False})["strict"] is True  # "auto" for the output


def test_importing_wink_and_its_adapters_imports_no_sdk() -> None:
    import subprocess
    import sys

    code = (
        "import sys, wink, wink.adapters, wink.testing\n"
        "from wink.providers import openai, anthropic, gemini\n"
        "loaded = [m for m in ('openai', 'anthropic', 'google.genai') if m in sys.modules]\n"
        "print(loaded)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout == "[]\n"


def test_a_completion_without_choices_stops_with_phase_response() -> None:
    empty = chat_text("unused", (1, 1)) | {"choices": []}
    api = Api(empty)
    with pytest.raises(PromptEvaluationError) as raised:
        CHAT.adapter(api).evaluate(Prompt(notes_template), session=Session())
    error = raised.value
    assert (error.phase, str(error)) == (
        "response",
        "prompt 'notes': response 1 from openai: the completion has no choices",
    )
    assert error.provider_payload.choices == []


def test_gemini_usage_counts_thinking_tokens_as_output() -> None:
    reply = gemini_text("ok", (10, 3))
    reply["usageMetadata"]["thoughtsTokenCount"] = 4
    response = GEMINI.adapter(Api(reply)).evaluate(Prompt(notes_template), session=Session())
    assert response.usage == TokenUsage(10, 7)


def test_anthropic_usage_counts_cached_input_tokens_as_input() -> None:
    reply = anthropic_text("ok", (10, 3))
    reply["usage"] |= {"cache_creation_input_tokens": 5, "cache_read_input_tokens": 20}
    response = ANTHROPIC.adapter(Api(reply)).evaluate(Prompt(notes_template), session=Session())
    assert response.usage == TokenUsage(35, 3)


def test_the_output_schema_name_is_made_of_the_type_name() -> None:
    from wink.contract import compile_contract
    from wink.providers._output import output_name

    class Inner(BaseModel):
        value: int

    assert output_name(compile_contract(Summary)) == "Summary"
    # "test_..._type_name.<locals>.Inner", cleaned and cut to its last 64 characters
    assert output_name(compile_contract(Inner)) == (
        "t_the_output_schema_name_is_made_of_the_type_name__locals__Inner"
    )
