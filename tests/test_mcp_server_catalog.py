"""Prompts, resources, completion and titled elicitation enums of a served prompt's
``McpCatalog``, through the official MCP client: over stdio and Streamable HTTP against a
``wink serve`` subprocess, and in process for the rest."""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import anyio
import pytest

mcp_sdk = pytest.importorskip("mcp")

import mcp_types as types  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

from wink import (  # noqa: E402
    InMemoryFilesystem,
    MarkdownSection,
    Prompt,
    PromptTemplate,
    PromptValidationError,
    Tool,
    ToolContext,
    ToolResult,
)
from wink.providers import mcp  # noqa: E402
from wink.tools.client import ChoiceTitles, elicitation_schema  # noqa: E402

ROOT = Path(__file__).parent.parent
TARGET = "examples/mcp_conformance.py:prompt"
WINK = [sys.executable, "-c", "import sys; from wink.cli import main; sys.exit(main())"]
RED_PIXEL = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIA"
    "X8jx0gAAAABJRU5ErkJggg=="
)
ENUM_ANSWER = {
    "untitledSingle": "option1",
    "titledSingle": "value1",
    "legacyEnum": "opt1",
    "untitledMulti": ["option1", "option2"],
    "titledMulti": ["value1", "value2"],
}


async def tour(server: Any) -> dict[str, Any]:
    """Every catalog request the conformance suite makes, answers dumped as JSON."""

    def dumped(value: Any) -> Any:
        return value.model_dump(by_alias=True, exclude_none=True, mode="json")

    asked: list[dict[str, Any]] = []

    async def answer(context: Any, params: Any) -> types.ElicitResult:
        asked.append(params.requested_schema)
        return types.ElicitResult(action="accept", content=ENUM_ANSWER)

    with anyio.fail_after(30), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the SDK marks subscriptions deprecated in 2026-07-28
        async with mcp_sdk.Client(server, mode="legacy", elicitation_callback=answer) as client:
            return await _requests(client, dumped, asked)


async def _requests(client: Any, dumped: Any, asked: list[dict[str, Any]]) -> dict[str, Any]:
    prompts = await client.list_prompts()
    resources = await client.list_resources()
    templates = await client.list_resource_templates()
    await client.subscribe_resource("test://watched-resource")
    await client.unsubscribe_resource("test://watched-resource")
    return {
        "prompts": [dumped(prompt) for prompt in prompts.prompts],
        "simple": dumped(await client.get_prompt("test_simple_prompt")),
        "arguments": dumped(
            await client.get_prompt(
                "test_prompt_with_arguments", {"arg1": "hello", "arg2": "world"}
            )
        ),
        "embedded": dumped(
            await client.get_prompt(
                "test_prompt_with_embedded_resource", {"resourceUri": "test://example-resource"}
            )
        ),
        "image": dumped(await client.get_prompt("test_prompt_with_image")),
        "completion": dumped(
            await client.complete(
                types.PromptReference(type="ref/prompt", name="test_prompt_with_arguments"),
                {"name": "arg1", "value": "par"},
            )
        ),
        "resources": [resource.uri for resource in resources.resources],
        "templates": [template.uri_template for template in templates.resource_templates],
        "text": dumped(await client.read_resource("test://static-text")),
        "binary": dumped(await client.read_resource("test://static-binary")),
        "templated": dumped(await client.read_resource("test://template/123/data")),
        "enums": dumped(await client.call_tool("test_elicitation_sep1330_enums", {})),
        "asked": asked,
    }


def check_tour(seen: dict[str, Any]) -> None:
    assert [prompt["name"] for prompt in seen["prompts"]] == [
        "test_simple_prompt",
        "test_prompt_with_arguments",
        "test_prompt_with_embedded_resource",
        "test_prompt_with_image",
    ]
    assert seen["prompts"][1]["arguments"] == [
        {"name": "arg1", "description": "First test argument", "required": True},
        {"name": "arg2", "description": "Second test argument", "required": True},
    ]
    assert seen["simple"]["messages"] == [
        {
            "role": "user",
            "content": {"type": "text", "text": "This is a simple prompt for testing."},
        }
    ]
    assert seen["arguments"]["messages"][0]["content"]["text"] == (
        "Prompt with arguments: arg1='hello', arg2='world'"
    )
    assert seen["embedded"]["messages"] == [
        {
            "role": "user",
            "content": {
                "type": "resource",
                "resource": {
                    "uri": "test://example-resource",
                    "mimeType": "text/plain",
                    "text": "Embedded resource content for testing.",
                },
            },
        },
        {
            "role": "user",
            "content": {"type": "text", "text": "Please process the embedded resource above."},
        },
    ]
    assert seen["image"]["messages"][0]["content"] == {
        "type": "image",
        "data": RED_PIXEL,
        "mimeType": "image/png",
    }
    assert seen["completion"]["completion"] == {
        "values": ["paris", "park", "party"],
        "total": 3,
        "hasMore": False,
    }
    assert seen["resources"] == [
        "test://static-text",
        "test://static-binary",
        "test://watched-resource",
    ]
    assert seen["templates"] == ["test://template/{id}/data"]
    assert seen["text"]["contents"] == [
        {
            "uri": "test://static-text",
            "mimeType": "text/plain",
            "text": "This is the content of the static text resource.",
        }
    ]
    assert seen["binary"]["contents"] == [
        {"uri": "test://static-binary", "mimeType": "image/png", "blob": RED_PIXEL}
    ]
    assert json.loads(seen["templated"]["contents"][0]["text"]) == {
        "id": "123",
        "templateTest": True,
        "data": "Data for ID: 123",
    }
    (schema,) = seen["asked"]
    assert schema["properties"] == {
        "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
        "titledSingle": {
            "type": "string",
            "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"},
            ],
        },
        "legacyEnum": {
            "type": "string",
            "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option One", "Option Two", "Option Three"],
        },
        "untitledMulti": {
            "type": "array",
            "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
        },
        "titledMulti": {
            "type": "array",
            "items": {
                "type": "string",
                "anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"},
                ],
            },
        },
    }
    assert seen["enums"]["content"][0]["text"] == (
        "Elicitation completed: action=accept, content=Enums(untitledSingle='option1', "
        "titledSingle='value1', legacyEnum='opt1', untitledMulti=('option1', 'option2'), "
        "titledMulti=('value1', 'value2'))"
    )


def test_the_catalog_answers_every_request_over_stdio(tmp_path: Path) -> None:
    parameters = StdioServerParameters(command=WINK[0], args=[*WINK[1:], "serve", TARGET], cwd=ROOT)

    with open(tmp_path / "stderr.txt", "w") as errlog:
        seen = anyio.run(tour, stdio_client(parameters, errlog=errlog))
    check_tour(seen)


@pytest.fixture
def http_url() -> Iterator[str]:
    process = subprocess.Popen(
        [*WINK, "serve", TARGET, "--transport", "http", "--port", "0"],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        found = re.search(r"on (http://127\.0\.0\.1:\d+/mcp)$", line.strip())
        assert found, line
        yield found.group(1)
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_the_catalog_answers_every_request_over_http(http_url: str) -> None:
    check_tour(anyio.run(tour, http_url))


# --- in process -----------------------------------------------------------------------


@dataclass(frozen=True)
class NoArguments:
    """No arguments."""


@dataclass(frozen=True)
class Topic:
    topic: Literal["weather", "wine", "work"]
    """What to talk about"""


def noop(params: NoArguments, *, context: ToolContext) -> ToolResult[None]:
    return ToolResult(message="done")


NOOP = Tool[NoArguments, None](name="noop", description="Does nothing.", handler=noop)


def served_with(*catalog: mcp.McpCatalog, files: dict[str, str] | None = None) -> Prompt[Any]:
    template = PromptTemplate(
        ns="tests",
        key="catalog",
        sections=[MarkdownSection(title="Tools", template="Tools.", tools=[NOOP]), *catalog],
    )
    resources = None if files is None else {InMemoryFilesystem: InMemoryFilesystem(files=files)}
    return Prompt(template, resources=resources)


def in_process(prompt: Prompt[Any], work: Any, **callbacks: Any) -> Any:
    served = mcp.server(prompt)

    async def run() -> Any:
        with anyio.fail_after(10), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # subscriptions are deprecated in 2026-07-28
            async with mcp_sdk.Client(served, mode="legacy", **callbacks) as client:
                return await work(client, served)

    return anyio.run(run)


def test_a_template_is_a_prompt_whose_arguments_are_its_params_fields() -> None:
    template = PromptTemplate(
        ns="tests",
        key="chat",
        sections=[MarkdownSection[Topic](title="Chat", template="Let us talk about $topic.")],
    )
    catalog = mcp.McpCatalog(prompts=[mcp.McpPrompt.of(template, description="Small talk.")])

    async def work(client: Any, served: Any) -> Any:
        listed = await client.list_prompts()
        got = await client.get_prompt("chat", {"topic": "wine"})
        completed = await client.complete(
            types.PromptReference(type="ref/prompt", name="chat"), {"name": "topic", "value": "W"}
        )
        return listed.prompts[0], got.messages, completed.completion.values

    listed, messages, completed = in_process(served_with(catalog), work)
    assert (listed.name, listed.description) == ("chat", "Small talk.")
    assert [(a.name, a.description, a.required) for a in listed.arguments] == [
        ("topic", "What to talk about", True)
    ]
    assert [m.content.text for m in messages] == ["## Chat\n\nLet us talk about wine."]
    assert completed == ["weather", "wine", "work"]


def test_bad_prompt_arguments_and_unknown_prompts_are_invalid_params() -> None:
    template = PromptTemplate(
        ns="tests", key="chat", sections=[MarkdownSection[Topic](title="Chat", template="$topic")]
    )
    catalog = mcp.McpCatalog(prompts=[mcp.McpPrompt.of(template)])

    async def work(client: Any, served: Any) -> list[tuple[int, str]]:
        errors = []
        for name, arguments in (
            ("chat", {"topic": "cats"}),
            ("chat", {"topic": "wine", "mood": "sad"}),
            ("nope", {}),
        ):
            with pytest.raises(MCPError) as caught:
                await client.get_prompt(name, arguments)
            errors.append((caught.value.code, caught.value.message))
        return errors

    errors = in_process(served_with(catalog), work)
    assert [code for code, _ in errors] == [types.INVALID_PARAMS] * 3
    assert errors[0][1].startswith("prompt 'chat': invalid Topic:\ntopic: ")
    assert errors[1][1] == "prompt 'chat' has no argument 'mood' (its arguments: topic)"
    assert errors[2][1] == "Unknown prompt 'nope'. Available prompts: chat."


def test_a_prompt_argument_that_is_not_a_string_is_refused_at_construction() -> None:
    @dataclass(frozen=True)
    class Count:
        count: int

    with pytest.raises(PromptValidationError) as caught:
        mcp.McpPrompt(name="p", description="P.", arguments=Count, messages=lambda _: ["x"])
    assert str(caught.value) == (
        "prompt 'p': argument 'count' must be a string field (MCP sends arguments as "
        "strings), got {'type': 'integer'}"
    )


def test_the_bound_filesystem_is_listed_and_read_only_when_the_catalog_asks() -> None:
    files = {"notes/todo.md": "milk", "readme.md": "hi"}

    async def work(client: Any, served: Any) -> Any:
        listed = await client.list_resources()
        templates = await client.list_resource_templates()
        read = await client.read_resource("file:///mnt/notes/todo.md")
        with pytest.raises(MCPError) as missing:
            await client.read_resource("file:///mnt/../etc/passwd")
        return (
            [resource.uri for resource in listed.resources],
            [template.uri_template for template in templates.resource_templates],
            read.contents[0].text,
            missing.value.code,
        )

    offered = in_process(served_with(mcp.McpCatalog(files=True), files=files), work)
    assert offered == (
        ["file:///mnt/readme.md", "file:///mnt/notes/todo.md"],
        ["file:///mnt/{+path}"],
        "milk",
        -32002,
    )
    hidden = in_process(served_with(files=files), lambda client, served: _capabilities(client))
    assert hidden == (None, None, None)


async def _capabilities(client: Any) -> tuple[Any, Any, Any]:
    capabilities = client.server_capabilities
    return capabilities.resources, capabilities.prompts, capabilities.completions


def test_a_subscribed_client_hears_that_a_resource_changed_until_it_unsubscribes() -> None:
    catalog = mcp.McpCatalog(
        resources=[mcp.McpResource(uri="memo://today", name="today", contents="sunny")]
    )
    heard: list[str] = []

    async def listen(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            heard.append(str(message.params.uri))

    async def work(client: Any, served: Any) -> list[int]:
        told = [await served.resource_updated("memo://today")]
        await client.subscribe_resource("memo://today")
        told.append(await served.resource_updated("memo://today"))
        await client.send_ping()  # the notification arrives before the ping's answer
        await client.unsubscribe_resource("memo://today")
        told.append(await served.resource_updated("memo://today"))
        with pytest.raises(MCPError) as unknown:
            await client.subscribe_resource("memo://tomorrow")
        told.append(unknown.value.code)
        return told

    assert in_process(served_with(catalog), work, message_handler=listen) == [0, 1, 0, -32002]
    assert heard == ["memo://today"]


def test_resource_templates_complete_their_variables_and_need_one() -> None:
    template = mcp.McpResourceTemplate(
        uri_template="notes://{topic}/latest",
        name="notes",
        read=lambda variables: f"about {variables['topic']}",
        completions={"topic": ["garden", "games", "work"]},
    )
    assert template.match("notes://garden/latest") == {"topic": "garden"}
    assert template.match("notes://a/b/latest") is None
    assert template.complete("topic", "ga") == (["garden", "games"], 2)
    with pytest.raises(PromptValidationError) as caught:
        mcp.McpResourceTemplate(uri_template="notes://all", name="n", read=lambda _: "")
    assert str(caught.value) == (
        "resource template 'notes://all' has no {variable}; use an McpResource for a single URI"
    )


def test_two_prompts_of_one_name_are_refused_when_served() -> None:
    first = mcp.McpPrompt(name="p", description="P.", messages=lambda _: ["x"])
    catalog = mcp.McpCatalog(prompts=[first, first])
    with pytest.raises(PromptValidationError) as caught:
        mcp.server(served_with(catalog))
    assert str(caught.value) == "the prompt's catalogs offer two of prompt 'p'"


def test_the_catalog_section_is_never_shown_to_the_model() -> None:
    catalog = mcp.McpCatalog(resources=[mcp.McpResource(uri="a://b", name="b", contents=b"\x00")])
    assert served_with(catalog).render().text == "## Tools\n\nTools."


def test_choice_titles_leave_a_field_without_them_as_it_was() -> None:
    @dataclass(frozen=True)
    class Pick:
        plain: Literal["a", "b"]
        titled: Annotated[Literal["a", "b"], ChoiceTitles({"a": "Apple"})]

    schema = elicitation_schema(
        Pick,
        {
            "type": "object",
            "properties": {
                "plain": {"type": "string", "enum": ["a", "b"]},
                "titled": {"type": "string", "enum": ["a", "b"]},
            },
        },
    )
    assert schema["properties"] == {
        "plain": {"type": "string", "enum": ["a", "b"]},
        "titled": {
            "type": "string",
            "oneOf": [{"const": "a", "title": "Apple"}, {"const": "b", "title": "b"}],
        },
    }


def test_binary_contents_are_sent_as_base64() -> None:
    catalog = mcp.McpCatalog(
        resources=[mcp.McpResource(uri="a://b", name="b", contents=b"\x00\xff", mime_type="x/y")]
    )

    async def work(client: Any, served: Any) -> Any:
        return (await client.read_resource("a://b")).contents[0].blob

    assert base64.b64decode(in_process(served_with(catalog), work)) == b"\x00\xff"
