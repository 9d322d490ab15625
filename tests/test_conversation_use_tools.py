"""``Conversation.use_tools``: from the next request on, a conversation offers the tools
of a new render; the messages so far, the prompt's text as first sent, the provider's
own tools and the requests already made stay as they were."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("httpx2")
pytest.importorskip("openai")
pytest.importorskip("anthropic")
pytest.importorskip("google.genai")

from adapter_prompts import note_tool, search_tool
from test_adapters_sdk import Api, anthropic_client, genai_client, openai_client

from wink import MarkdownSection, Prompt, PromptTemplate
from wink.adapters import LoopAdapter, ModelRequest
from wink.prompt import RenderedPrompt
from wink.providers.anthropic import AnthropicAdapter
from wink.providers.gemini import GeminiAdapter
from wink.providers.openai import OpenAIAdapter
from wink.testing import FunctionAdapter, ModelInput, ToolSpec, UserMessage

SEARCH_TEXT = "## Notes\n\nWhich notes mention e?"
SEARCH_PARAMS = {
    "additionalProperties": False,
    "properties": {"query": {"description": "Text the note titles contain", "type": "string"}},
    "required": ["query"],
    "type": "object",
}
NOTE_PARAMS = {
    "additionalProperties": False,
    "properties": {"id": {"type": "integer"}},
    "required": ["id"],
    "type": "object",
}
SEARCH = {"name": "search", "description": "Find note titles."}
NOTE = {"name": "get_note", "description": "Read one note."}


def template(key: str, text: str, tools: list[Any]) -> PromptTemplate[Any]:
    return PromptTemplate(
        ns="tests/use_tools",
        key=key,
        sections=[MarkdownSection(title="Notes", template=text, tools=tools)],
    )


def render(key: str, text: str, tools: list[Any]) -> RenderedPrompt:
    return Prompt(template(key, text, tools)).render()


def with_search() -> RenderedPrompt:
    return render("search", "Which notes mention e?", [search_tool])


def with_note() -> RenderedPrompt:
    """Another text and another tool: ``search`` removed, ``get_note`` added."""
    return render("note", "Read note 7.", [note_tool])


def without_tools() -> RenderedPrompt:
    return render("plain", "Read nothing.", [])


def around_use_tools(
    adapter: LoopAdapter, rendered: RenderedPrompt
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A request before and one after ``use_tools(rendered)``, for a conversation that
    started with ``with_search()``."""
    conversation = adapter.start(with_search(), None, ())
    before = conversation.request()
    conversation.use_tools(rendered)
    return before, conversation.request()


def chat_adapter() -> OpenAIAdapter:
    return OpenAIAdapter(openai_client(Api()), model="gpt-test")


def responses_adapter() -> OpenAIAdapter:
    return OpenAIAdapter(openai_client(Api()), model="gpt-test", api="responses")


def anthropic_adapter(**options: Any) -> AnthropicAdapter:
    return AnthropicAdapter(anthropic_client(Api()), model="claude-test", max_tokens=256, **options)


def gemini_adapter(**options: Any) -> GeminiAdapter:
    return GeminiAdapter(genai_client(Api()), model="gemini-test", **options)


def chat_spec(tool: dict[str, str], params: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", "function": {**tool, "parameters": params, "strict": True}}


def responses_spec(tool: dict[str, str], params: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", **tool, "parameters": params, "strict": True}


# --- the new tools from the next request on --------------------------------------------


def test_chat_conversation_offers_the_new_tools_from_the_next_request() -> None:
    before, after = around_use_tools(chat_adapter(), with_note())
    messages = [{"role": "user", "content": SEARCH_TEXT}]
    assert before == {
        "model": "gpt-test",
        "messages": messages,
        "tools": [chat_spec(SEARCH, SEARCH_PARAMS)],
    }
    assert after == {
        "model": "gpt-test",
        "messages": messages,
        "tools": [chat_spec(NOTE, NOTE_PARAMS)],
    }


def test_responses_conversation_offers_the_new_tools_from_the_next_request() -> None:
    before, after = around_use_tools(responses_adapter(), with_note())
    items = [{"role": "user", "content": SEARCH_TEXT}]
    assert before == {
        "model": "gpt-test",
        "input": items,
        "tools": [responses_spec(SEARCH, SEARCH_PARAMS)],
    }
    assert after == {
        "model": "gpt-test",
        "input": items,
        "tools": [responses_spec(NOTE, NOTE_PARAMS)],
    }


def test_anthropic_conversation_offers_the_new_tools_from_the_next_request() -> None:
    before, after = around_use_tools(anthropic_adapter(), with_note())
    messages = [{"role": "user", "content": SEARCH_TEXT}]
    assert before == {
        "model": "claude-test",
        "max_tokens": 256,
        "messages": messages,
        "tools": [{**SEARCH, "input_schema": SEARCH_PARAMS}],
    }
    assert after == {
        "model": "claude-test",
        "max_tokens": 256,
        "messages": messages,
        "tools": [{**NOTE, "input_schema": NOTE_PARAMS}],
    }


def test_gemini_conversation_offers_the_new_tools_in_a_new_config() -> None:
    before, after = around_use_tools(gemini_adapter(), with_note())
    contents = [{"role": "user", "parts": [{"text": SEARCH_TEXT}]}]
    search = {**SEARCH, "parametersJsonSchema": SEARCH_PARAMS}
    note = {**NOTE, "parametersJsonSchema": NOTE_PARAMS}
    assert before == {
        "model": "gemini-test",
        "contents": contents,
        "config": {"tools": [{"functionDeclarations": [search]}]},
    }
    assert after == {
        "model": "gemini-test",
        "contents": contents,
        "config": {"tools": [{"functionDeclarations": [note]}]},
    }


def test_function_model_is_given_the_new_tools_on_the_next_turn() -> None:
    adapter = FunctionAdapter(lambda model_input: "ok")
    conversation = adapter.start(with_search(), None, ())
    adapter.send(ModelRequest(conversation.request(), None, 1))
    conversation.use_tools(with_note())
    adapter.send(ModelRequest(conversation.request(), None, 2))
    first, second = adapter.inputs
    messages = (UserMessage(SEARCH_TEXT),)
    assert (tuple(first.messages), first.tools) == (
        messages,
        (ToolSpec(**SEARCH, parameters=SEARCH_PARAMS),),
    )
    assert (tuple(second.messages), second.tools) == (
        messages,
        (ToolSpec(**NOTE, parameters=NOTE_PARAMS),),
    )


# --- a render with no tools -------------------------------------------------------------


@pytest.mark.parametrize(
    ("adapter", "body"),
    [
        (
            chat_adapter,
            {"model": "gpt-test", "messages": [{"role": "user", "content": SEARCH_TEXT}]},
        ),
        (
            responses_adapter,
            {"model": "gpt-test", "input": [{"role": "user", "content": SEARCH_TEXT}]},
        ),
        (
            anthropic_adapter,
            {
                "model": "claude-test",
                "max_tokens": 256,
                "messages": [{"role": "user", "content": SEARCH_TEXT}],
            },
        ),
        (
            gemini_adapter,
            {
                "model": "gemini-test",
                "contents": [{"role": "user", "parts": [{"text": SEARCH_TEXT}]}],
                "config": {},
            },
        ),
    ],
    ids=["chat", "responses", "anthropic", "gemini"],
)
def test_a_render_with_no_tools_leaves_the_tools_key_out(
    adapter: Any, body: dict[str, Any]
) -> None:
    _, after = around_use_tools(adapter(), without_tools())
    assert after == body


def test_the_function_model_is_given_no_tools_after_a_render_with_none() -> None:
    conversation = FunctionAdapter(lambda model_input: "ok").start(with_search(), None, ())
    conversation.use_tools(without_tools())
    model_input: ModelInput = conversation.request()["input"]
    assert model_input.tools == ()


# --- the provider's own tools stay -----------------------------------------------------


def test_anthropic_provider_tools_stay_after_the_prompts_tools_change() -> None:
    web_search = {"type": "web_search_20250305", "name": "web_search"}
    adapter = anthropic_adapter(provider_tools=[web_search])
    conversation = adapter.start(with_search(), None, ())
    conversation.use_tools(with_note())
    with_note_tools = conversation.request()["tools"]
    conversation.use_tools(without_tools())
    assert (with_note_tools, conversation.request()["tools"]) == (
        [{**NOTE, "input_schema": NOTE_PARAMS}, web_search],
        [web_search],
    )


def test_gemini_provider_tools_stay_when_the_prompt_has_no_tools_left() -> None:
    before, after = around_use_tools(
        gemini_adapter(provider_tools=[{"google_search": {}}]), without_tools()
    )
    search = {**SEARCH, "parametersJsonSchema": SEARCH_PARAMS}
    assert (before["config"], after["config"]) == (
        {"tools": [{"functionDeclarations": [search]}, {"google_search": {}}]},
        {"tools": [{"google_search": {}}]},
    )
