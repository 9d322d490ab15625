"""Provider readers take request bodies too, and name the keys of a payload they cannot read."""

from __future__ import annotations

from typing import Any

import pytest

from wink.providers import ProviderPayloadError, anthropic, gemini, openai
from wink.runtime.call import ToolCall


def test_openai_reads_the_calls_of_every_assistant_message_in_a_chat_request() -> None:
    request = {
        "model": "m",
        "messages": [
            {"role": "user", "content": "find tea"},
            {
                "role": "assistant",
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "a", "arguments": "{}"}}
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "done"},
            {
                "role": "assistant",
                "tool_calls": [
                    {"id": "c2", "type": "function", "function": {"name": "b", "arguments": "[]"}}
                ],
            },
        ],
    }
    assert openai.parse_tool_calls(request) == [
        ToolCall("a", "{}", "c1"),
        ToolCall("b", "[]", "c2"),
    ]


def test_openai_reads_the_function_call_items_of_a_responses_request() -> None:
    request = {
        "model": "m",
        "input": [
            {"role": "user", "content": "find tea"},
            {"type": "function_call", "call_id": "c1", "name": "a", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "done"},
        ],
    }
    assert openai.parse_tool_calls(request) == [ToolCall("a", "{}", "c1")]


def test_openai_finds_no_calls_in_a_responses_request_with_text_input() -> None:
    assert openai.parse_tool_calls({"model": "m", "input": "find tea"}) == []


def test_openai_names_the_message_of_a_bad_call_in_a_chat_request() -> None:
    request = {
        "messages": [{"role": "user"}, {"role": "assistant", "tool_calls": [{"function": 1}]}]
    }
    with pytest.raises(ProviderPayloadError) as raised:
        openai.parse_tool_calls(request)
    assert str(raised.value) == (
        "messages[1].tool_calls[0].function: expected an object, got a number"
    )


def test_anthropic_reads_the_tool_use_blocks_of_every_message_in_a_request() -> None:
    request = {
        "model": "m",
        "messages": [
            {"role": "user", "content": "find tea"},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Searching."},
                    {"type": "tool_use", "id": "t1", "name": "a", "input": {"q": 1}},
                ],
            },
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1"}]},
        ],
    }
    assert anthropic.parse_tool_calls(request) == [ToolCall("a", {"q": 1}, "t1")]


def test_anthropic_names_the_message_of_a_bad_block_in_a_request() -> None:
    request = {"messages": [{"role": "assistant", "content": [{"type": "tool_use", "id": "t"}]}]}
    with pytest.raises(ProviderPayloadError) as raised:
        anthropic.parse_tool_calls(request)
    assert str(raised.value) == (
        "messages[0].content[0]: expected a non-empty string 'name', got None"
    )


def test_gemini_reads_the_function_calls_of_every_content_in_a_request() -> None:
    request = {
        "contents": [
            {"role": "user", "parts": [{"text": "find tea"}]},
            {"role": "model", "parts": [{"functionCall": {"name": "a", "args": {"q": 1}}}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "a", "response": {}}}]},
            {"role": "model", "parts": [{"functionCall": {"id": "f2", "name": "b"}}]},
        ]
    }
    assert gemini.parse_tool_calls(request) == [
        ToolCall("a", {"q": 1}, None),
        ToolCall("b", {}, "f2"),
    ]


def test_gemini_names_the_content_of_a_bad_part_in_a_request() -> None:
    request = {"contents": [{"role": "model", "parts": [5]}]}
    with pytest.raises(ProviderPayloadError) as raised:
        gemini.parse_tool_calls(request)
    assert str(raised.value) == "contents[0].parts[0]: expected an object, got a number"


@pytest.mark.parametrize(
    ("reader", "expected"),
    [
        (
            openai.parse_tool_calls,
            "an OpenAI chat completion (choices), a message (tool_calls), a chat request "
            "(messages), a Responses API response (output) or request (input), or a tool call",
        ),
        (
            anthropic.parse_tool_calls,
            "an Anthropic message (content), a request (messages), a tool_use block or a list "
            "of content blocks",
        ),
        (
            gemini.parse_tool_calls,
            "a Gemini response (candidates), a content (parts), a request (contents), a list of "
            "parts, a part (functionCall) or a function call (name)",
        ),
    ],
)
def test_an_unrecognised_payload_is_reported_with_the_keys_it_has(
    reader: Any, expected: str
) -> None:
    with pytest.raises(ProviderPayloadError) as raised:
        reader({"zeta": 1, "alpha": 2})
    assert str(raised.value) == f"expected {expected}; got keys ['alpha', 'zeta']"


@pytest.mark.parametrize(
    "reader", [openai.parse_tool_calls, anthropic.parse_tool_calls, gemini.parse_tool_calls]
)
def test_a_payload_that_is_not_an_object_or_list_is_reported_by_its_json_kind(reader: Any) -> None:
    with pytest.raises(ProviderPayloadError) as raised:
        reader("hello")
    assert str(raised.value).endswith("; got a string")
