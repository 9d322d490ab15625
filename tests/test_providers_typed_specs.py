"""What the providers return is typed: the SDKs' ``create()`` accepts it under ``mypy --strict``."""

from __future__ import annotations

from pathlib import Path

from tests.mypy_check import check

SNIPPET = """
from typing import Any

from anthropic import Anthropic
from anthropic.types import MessageParam, ToolResultBlockParam
from openai import OpenAI
from openai.types.chat import ChatCompletionMessageParam
from openai.types.responses import ResponseInputParam

from wink import RenderedPrompt, ToolCall, ToolResult
from wink.providers import anthropic, openai


def chat(client: OpenAI, rendered: RenderedPrompt, call: ToolCall, result: ToolResult[str]) -> None:
    messages: list[ChatCompletionMessageParam] = [{"role": "user", "content": "Hi."}]
    messages.append(openai.tool_message(call, result))
    client.chat.completions.create(
        model="gpt-5", messages=messages, tools=openai.tool_specs(rendered, strict=True)
    )


def responses(
    client: OpenAI, rendered: RenderedPrompt, call: ToolCall, result: ToolResult[str]
) -> None:
    items: ResponseInputParam = [openai.tool_message(call, result, api="responses")]
    client.responses.create(
        model="gpt-5", input=items, tools=openai.tool_specs(rendered, api="responses")
    )


def claude(
    client: Anthropic, rendered: RenderedPrompt, call: ToolCall, result: ToolResult[str]
) -> None:
    block: ToolResultBlockParam = anthropic.tool_result_block(call, result)
    messages: list[MessageParam] = [
        {"role": "user", "content": "Hi."},
        anthropic.tool_message(call, result),
        anthropic.tool_results_message([(call, result)]),
        {"role": "user", "content": [block]},
    ]
    client.messages.create(
        model="claude-sonnet-4-5",
        max_tokens=1024,
        messages=messages,
        tools=anthropic.tool_specs(rendered, strict=True),
    )


def untyped(client: OpenAI, specs: list[dict[str, Any]]) -> None:
    client.chat.completions.create(model="gpt-5", messages=[], tools=specs)
"""

GEMINI_SNIPPET = """
from google import genai
from google.genai import types

from wink import RenderedPrompt, ToolCall, ToolResult
from wink.providers import gemini


def generate(
    client: genai.Client, rendered: RenderedPrompt, call: ToolCall, result: ToolResult[str]
) -> None:
    part: types.PartDict = gemini.function_response_part(call, result, case="snake")
    content: types.ContentDict = gemini.tool_message(call, result, case="snake")
    contents: list[types.ContentDict] = [
        {"role": "user", "parts": [{"text": "Hi."}]},
        content,
        gemini.tool_results_message([(call, result)], case="snake"),
        {"role": "user", "parts": [part]},
    ]
    declarations: list[types.FunctionDeclarationDict] = gemini.tool_specs(
        rendered, form="openapi", case="snake"
    )
    client.models.generate_content(
        model="gemini-2.5-flash",
        contents=contents,
        config={
            "tools": [
                {"function_declarations": gemini.tool_specs(rendered, case="snake")},
                {"function_declarations": declarations},
            ]
        },
    )
    client.models.generate_content(
        model="gemini-2.5-flash", contents=[gemini.tool_message(call, result, case="snake")]
    )


def camel_case(client: genai.Client, rendered: RenderedPrompt) -> None:
    client.models.generate_content(
        model="gemini-2.5-flash",
        contents="Hi.",
        config={"tools": [{"function_declarations": gemini.tool_specs(rendered)}]},
    )
"""


def test_specs_and_messages_pass_straight_to_the_sdks_under_mypy_strict(tmp_path: Path) -> None:
    # Only the controls (plain dicts, as the providers returned before, and Gemini's
    # default camelCase form) are refused: the SDKs' types are really checked, and
    # wink's pass.
    assert check(tmp_path, {"sdk_calls": SNIPPET, "gemini_calls": GEMINI_SNIPPET}) == [
        'gemini_calls.py:42: error: Argument "config" to "generate_content" of "Models" has '
        'incompatible type "dict[str, list[dict[str, list[dict[str, Any]]]]]"; expected '
        '"GenerateContentConfig | GenerateContentConfigDict | None"  [arg-type]',
        'sdk_calls.py:50: error: Argument "tools" to "create" of "Completions" has '
        'incompatible type "list[dict[str, Any]]"; expected '
        '"Iterable[ChatCompletionFunctionToolParam | ChatCompletionCustomToolParam] | Omit"  '
        "[arg-type]",
    ]
