"""Rich results, logging, progress, sampling and elicitation of a served tool, through the
official MCP client (in process, the handshake protocol), and the same calls outside MCP."""

from __future__ import annotations

import importlib.util
import logging
import sys
import warnings
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import pytest

mcp_sdk = pytest.importorskip("mcp")

import mcp_types as types  # noqa: E402

from wink import MarkdownSection, Prompt, PromptTemplate, Session, Tool, ToolContext  # noqa: E402
from wink.providers import mcp  # noqa: E402
from wink.runtime import ToolExecutor  # noqa: E402
from wink.runtime.call import ToolCall  # noqa: E402
from wink.tools.client import ClientUnavailableError  # noqa: E402
from wink.tools.content import Image  # noqa: E402

EXAMPLES = Path(__file__).parent.parent / "examples"


def load_fixture() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "mcp_conformance", EXAMPLES / "mcp_conformance.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


fixture = load_fixture()


def call(name: str, arguments: dict[str, Any], **callbacks: Any) -> Any:
    served = mcp.server(fixture.prompt)
    logged: list[tuple[str, Any]] = []
    progress: list[tuple[float, float | None]] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logged.append((params.level, params.data))

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total))

    async def main() -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the SDK marks logging as deprecated in 2026-07-28
            async with mcp_sdk.Client(
                served, mode="legacy", logging_callback=on_log, **callbacks
            ) as client:
                if "level" in arguments:
                    await client.set_logging_level(arguments.pop("level"))
                return await client.call_tool(name, arguments, progress_callback=on_progress)

    result = anyio.run(main)
    return result.model_dump(by_alias=True, exclude_none=True), logged, progress


def test_an_image_result_is_an_image_block_without_structured_content() -> None:
    result, _, _ = call("test_image_content", {})
    assert result == {
        "content": [
            {
                "type": "image",
                "data": Image.of(fixture.RED_PIXEL, "x").data,
                "mimeType": "image/png",
            }
        ],
        "isError": False,
        "resultType": "complete",
    }


def test_mixed_content_keeps_its_parts_in_order() -> None:
    result, _, _ = call("test_multiple_content_types", {})
    assert [block["type"] for block in result["content"]] == ["text", "image", "resource"]
    assert result["content"][2]["resource"] == {
        "uri": "test://mixed-content-resource",
        "mimeType": "application/json",
        "text": '{"test":"data","value":123}',
    }


def test_a_rich_tool_lists_no_output_schema() -> None:
    specs = {spec["name"]: spec for spec in mcp.tool_specs(fixture.prompt.render())}
    assert "outputSchema" not in specs["test_image_content"]


def test_handler_logs_reach_the_client_at_or_above_its_level() -> None:
    _, logged, _ = call("test_tool_with_logging", {"level": "info"})
    assert logged == [
        ("info", "Tool execution started"),
        ("info", "Tool processing data"),
        ("info", "Tool execution completed"),
    ]
    _, quiet, _ = call("test_tool_with_logging", {"level": "warning"})
    assert quiet == []


def test_progress_reaches_a_client_that_asked_for_it() -> None:
    result, _, progress = call("test_tool_with_progress", {})
    assert progress == [(0, 100), (50, 100), (100, 100)]
    assert result["isError"] is False


def test_sampling_asks_the_clients_model() -> None:
    asked: list[Any] = []

    async def sample(context: Any, params: types.CreateMessageRequestParams) -> Any:
        asked.append((params.messages[0].content.text, params.max_tokens))
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="four"), model="m"
        )

    result, _, _ = call("test_sampling", {"prompt": "2+2?"}, sampling_callback=sample)
    assert asked == [("2+2?", 100)]
    assert result["content"] == [{"type": "text", "text": "LLM response: four"}]


def test_elicitation_sends_the_types_schema_with_defaults_and_parses_the_answer() -> None:
    asked: list[Any] = []

    async def elicit(context: Any, params: Any) -> Any:
        asked.append(params.requested_schema)
        return types.ElicitResult(action="accept", content={"name": "Jane", "age": 25})

    result, _, _ = call("test_elicitation_sep1034_defaults", {}, elicitation_callback=elicit)
    (schema,) = asked
    assert schema["properties"]["status"] == {
        "default": "active",
        "enum": ["active", "inactive", "pending"],
        "type": "string",
    }
    assert schema["properties"]["age"] == {"default": 30, "type": "integer"}
    assert "additionalProperties" not in schema
    assert result["content"][0]["text"] == (
        "Elicitation completed: action=accept, content=Profile(name='Jane', age=25, "
        "score=95.5, status='active', verified=True)"
    )


def outside_mcp(handler: Any) -> Any:
    tool = Tool[fixture.NoArguments, None](name="t", description="T.", handler=handler)
    section = MarkdownSection(title="T", key="t", tools=[tool])
    executor = ToolExecutor(
        prompt=Prompt(PromptTemplate(ns="tests", key="t", sections=[section])), session=Session()
    )
    return executor.execute(ToolCall("t", {}, "1"))


def test_outside_mcp_logging_and_progress_go_to_python_logging(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    result = outside_mcp(fixture.with_progress)
    logged = outside_mcp(fixture.with_logging)
    assert (result.success, logged.success) == (True, True)
    assert [
        record.getMessage() for record in caplog.records if record.name.startswith("wink.tools")
    ] == [
        "progress 0 of 100 ",
        "progress 50 of 100 ",
        "progress 100 of 100 ",
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ]


def test_outside_mcp_sampling_fails_the_call_naming_what_to_configure() -> None:
    def ask(params: Any, *, context: ToolContext) -> Any:
        return context.sample("hi")

    result = outside_mcp(ask)
    assert result.success is False
    assert "context.sample() needs a client that can answer it: serve the tool over MCP" in (
        result.message
    )
    with pytest.raises(ClientUnavailableError):
        ToolContext().elicit("hi", fixture.Contact)
