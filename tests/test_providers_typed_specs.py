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


def test_specs_and_messages_pass_straight_to_the_sdks_under_mypy_strict(tmp_path: Path) -> None:
    # Only the control (plain dicts, as the providers returned before) is refused: the
    # SDKs' types are really checked, and wink's pass.
    assert check(tmp_path, {"sdk_calls": SNIPPET}) == [
        'sdk_calls.py:50: error: Argument "tools" to "create" of "Completions" has '
        'incompatible type "list[dict[str, Any]]"; expected '
        '"Iterable[ChatCompletionFunctionToolParam | ChatCompletionCustomToolParam] | Omit"  '
        "[arg-type]",
    ]
