"""Rich results, logging, progress, sampling and elicitation of ``wink serve``, through the
official MCP client over the two real transports: stdio and Streamable HTTP.

Each transport starts one server subprocess and one client, which makes every call of
``observe`` in order; the tests then read what the client saw for the call they pin.
"""

from __future__ import annotations

import re
import subprocess
import sys
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest

mcp_sdk = pytest.importorskip("mcp")

import mcp_types as types  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

ROOT = Path(__file__).parent.parent
WINK = [sys.executable, "-c", "import sys; from wink.cli import main; sys.exit(main())"]
RED_PIXEL = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIA"
    "X8jx0gAAAABJRU5ErkJggg=="
)
SILENCE = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA="

# The conformance example's tools, plus tools that log at every level and use the
# async twins, so that a level filter and the awaited path are both seen on the wire.
TARGET_SOURCE = """
from __future__ import annotations

from typing import Any

from examples.mcp_conformance import TOOLS, NoArguments, SamplingArguments
from wink import MarkdownSection, Prompt, PromptTemplate, Tool, ToolContext, ToolResult


def levels(params: NoArguments, *, context: ToolContext) -> ToolResult[None]:
    context.log("debug", "fine detail")
    context.log("info", "started")
    context.log("warning", "disk low", logger="disk")
    context.log("error", {"code": 7})
    return ToolResult(message="logged")


async def async_levels(params: NoArguments, *, context: ToolContext) -> ToolResult[None]:
    await context.alog("info", "async started")
    await context.areport_progress(1, 2, "half")
    await context.alog("error", "async failed once")
    await context.areport_progress(2, 2, "done")
    return ToolResult(message="async logged")


async def async_sampling(params: SamplingArguments, *, context: ToolContext) -> ToolResult[None]:
    answer = await context.asample(params.prompt, max_tokens=7, system_prompt="Be brief.")
    return ToolResult(message=f"async answer: {answer}")


EXTRA: list[Tool[Any, Any]] = [
    Tool[NoArguments, None](name="levels", description="Logs at four levels.", handler=levels),
    Tool[NoArguments, None](
        name="async_levels", description="Logs and reports progress.", handler=async_levels
    ),
    Tool[SamplingArguments, None](
        name="async_sampling", description="Asks the model, awaiting.", handler=async_sampling
    ),
]

prompt = Prompt(
    PromptTemplate(
        ns="tests",
        key="transports",
        sections=[MarkdownSection(title="Tools", template="Tools.", tools=[*TOOLS, *EXTRA])],
    )
)
"""


@dataclass
class Seen:
    """What the client saw during one call."""

    result: dict[str, Any]
    logged: list[tuple[str, str | None, Any]]
    progress: list[tuple[float, float | None, str | None]]
    """Calls of the request's progress callback."""
    progress_notifications: int
    """Progress notifications that reached the client at all, for any request."""


@dataclass
class Tour:
    """Every call's ``Seen`` by step name, and what the client's callbacks were asked."""

    steps: dict[str, Seen] = field(default_factory=dict)
    sampled: list[tuple[str, int, str | None]] = field(default_factory=list)
    elicited: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


ELICITATION_ANSWERS = [
    types.ElicitResult(action="accept", content={"username": "ann", "email": "ann@example.com"}),
    types.ElicitResult(action="decline"),
    types.ElicitResult(action="cancel"),
]


async def tour(server: Any) -> Tour:
    """One client session making every call the tests pin, in order."""
    seen = Tour()
    logged: list[tuple[str, str | None, Any]] = []
    notifications: list[types.ProgressNotification] = []
    answers = list(ELICITATION_ANSWERS)

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logged.append((params.level, params.logger, params.data))

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ProgressNotification):
            notifications.append(message)

    async def sample(context: Any, params: types.CreateMessageRequestParams) -> Any:
        content = params.messages[0].content
        assert isinstance(content, types.TextContent)
        seen.sampled.append((content.text, params.max_tokens, params.system_prompt))
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="four"), model="m"
        )

    async def elicit(context: Any, params: Any) -> types.ElicitResult:
        seen.elicited.append((params.message, params.requested_schema))
        return answers.pop(0)

    async def observe(
        client: Any, step: str, name: str, arguments: dict[str, Any], *, with_progress: bool
    ) -> None:
        logged.clear()
        notifications.clear()
        progress: list[tuple[float, float | None, str | None]] = []

        async def on_progress(done: float, total: float | None, message: str | None) -> None:
            progress.append((done, total, message))

        result = await client.call_tool(
            name, arguments, progress_callback=on_progress if with_progress else None
        )
        # Notifications are handled on tasks of their own; they have run once the
        # answer to a later request is in.
        await client.send_ping()
        seen.steps[step] = Seen(
            result.model_dump(by_alias=True, exclude_none=True, mode="json"),
            list(logged),
            progress,
            len(notifications),
        )

    with anyio.fail_after(30), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the SDK marks logging deprecated in 2026-07-28
        async with mcp_sdk.Client(
            server,
            mode="legacy",
            logging_callback=on_log,
            message_handler=on_message,
            sampling_callback=sample,
            elicitation_callback=elicit,
        ) as client:
            for step, name in (
                ("image", "test_image_content"),
                ("audio", "test_audio_content"),
                ("embedded", "test_embedded_resource"),
                ("mixed", "test_multiple_content_types"),
                ("levels at debug", "levels"),
            ):
                await observe(client, step, name, {}, with_progress=False)
            await client.set_logging_level("warning")
            await observe(client, "levels at warning", "levels", {}, with_progress=False)
            await observe(client, "async at warning", "async_levels", {}, with_progress=True)
            await observe(client, "progress", "test_tool_with_progress", {}, with_progress=True)
            await observe(
                client, "no progress token", "test_tool_with_progress", {}, with_progress=False
            )
            await observe(
                client, "sampling", "test_sampling", {"prompt": "2+2?"}, with_progress=False
            )
            await observe(
                client, "async sampling", "async_sampling", {"prompt": "3+1?"}, with_progress=False
            )
            for step in ("accept", "decline", "cancel"):
                await observe(
                    client,
                    f"elicitation {step}",
                    "test_elicitation",
                    {"message": f"Who are you? ({step})"},
                    with_progress=False,
                )
    return seen


@pytest.fixture(scope="module")
def target(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("target") / "served_transports.py"
    path.write_text(TARGET_SOURCE)
    return f"{path}:prompt"


def over_stdio(target: str, folder: Path) -> Tour:
    parameters = StdioServerParameters(command=WINK[0], args=[*WINK[1:], "serve", target], cwd=ROOT)
    with open(folder / "stderr.txt", "w") as errlog:
        return anyio.run(tour, stdio_client(parameters, errlog=errlog))


def over_http(target: str) -> Tour:
    process = subprocess.Popen(
        [*WINK, "serve", target, "--transport", "http", "--host", "127.0.0.1", "--port", "0"],
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
        return anyio.run(tour, found.group(1))
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture(scope="module", params=["stdio", "http"])
def seen(
    request: pytest.FixtureRequest, target: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Tour]:
    if request.param == "stdio":
        yield over_stdio(target, tmp_path_factory.mktemp("stdio"))
    else:
        yield over_http(target)


def test_an_image_result_is_one_image_block_without_structured_content(seen: Tour) -> None:
    assert seen.steps["image"].result == {
        "content": [{"type": "image", "data": RED_PIXEL, "mimeType": "image/png"}],
        "isError": False,
        "resultType": "complete",
    }


def test_an_audio_result_is_one_audio_block(seen: Tour) -> None:
    assert seen.steps["audio"].result == {
        "content": [{"type": "audio", "data": SILENCE, "mimeType": "audio/wav"}],
        "isError": False,
        "resultType": "complete",
    }


def test_an_embedded_resource_result_is_one_resource_block(seen: Tour) -> None:
    assert seen.steps["embedded"].result == {
        "content": [
            {
                "type": "resource",
                "resource": {
                    "uri": "test://embedded-resource",
                    "mimeType": "text/plain",
                    "text": "This is an embedded resource content.",
                },
            }
        ],
        "isError": False,
        "resultType": "complete",
    }


def test_mixed_content_arrives_as_its_blocks_in_order(seen: Tour) -> None:
    assert seen.steps["mixed"].result["content"] == [
        {"type": "text", "text": "Multiple content types test:"},
        {"type": "image", "data": RED_PIXEL, "mimeType": "image/png"},
        {
            "type": "resource",
            "resource": {
                "uri": "test://mixed-content-resource",
                "mimeType": "application/json",
                "text": '{"test":"data","value":123}',
            },
        },
    ]


def test_every_log_message_reaches_a_client_that_set_no_level(seen: Tour) -> None:
    assert seen.steps["levels at debug"].logged == [
        ("debug", None, "fine detail"),
        ("info", None, "started"),
        ("warning", "disk", "disk low"),
        ("error", None, {"code": 7}),
    ]


def test_messages_below_the_level_the_client_set_are_not_sent(seen: Tour) -> None:
    assert seen.steps["levels at warning"].logged == [
        ("warning", "disk", "disk low"),
        ("error", None, {"code": 7}),
    ]
    assert seen.steps["levels at warning"].result["content"] == [{"type": "text", "text": "logged"}]


def test_an_async_handler_logs_at_the_set_level_and_reports_progress(seen: Tour) -> None:
    step = seen.steps["async at warning"]
    assert step.logged == [("error", None, "async failed once")]
    assert step.progress == [(1.0, 2.0, "half"), (2.0, 2.0, "done")]


def test_progress_reaches_the_callback_of_a_request_that_carried_a_token(seen: Tour) -> None:
    step = seen.steps["progress"]
    assert step.progress == [(0.0, 100.0, None), (50.0, 100.0, None), (100.0, 100.0, None)]
    assert step.progress_notifications == 3


def test_no_progress_is_sent_for_a_request_without_a_token(seen: Tour) -> None:
    step = seen.steps["no progress token"]
    assert (step.progress, step.progress_notifications) == ([], 0)
    assert step.result["content"] == [
        {"type": "text", "text": "Tool with progress executed successfully"}
    ]


def test_sampling_is_answered_by_the_clients_callback_and_its_text_is_the_result(
    seen: Tour,
) -> None:
    assert seen.sampled == [("2+2?", 100, None), ("3+1?", 7, "Be brief.")]
    assert seen.steps["sampling"].result["content"] == [
        {"type": "text", "text": "LLM response: four"}
    ]
    assert seen.steps["async sampling"].result["content"] == [
        {"type": "text", "text": "async answer: four"}
    ]


def test_an_accepted_elicitation_gives_the_handler_the_parsed_values(seen: Tour) -> None:
    message, schema = seen.elicited[0]
    assert message == "Who are you? (accept)"
    assert schema == {
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"},
        },
        "required": ["username", "email"],
    }
    assert seen.steps["elicitation accept"].result["content"] == [
        {
            "type": "text",
            "text": "User response: action=accept, "
            "content=Contact(username='ann', email='ann@example.com')",
        }
    ]


def test_a_declined_or_cancelled_elicitation_gives_the_handler_no_values(seen: Tour) -> None:
    assert [message for message, _ in seen.elicited[1:]] == [
        "Who are you? (decline)",
        "Who are you? (cancel)",
    ]
    assert [
        seen.steps[f"elicitation {action}"].result["content"] for action in ("decline", "cancel")
    ] == [
        [{"type": "text", "text": "User response: action=decline, content=None"}],
        [{"type": "text", "text": "User response: action=cancel, content=None"}],
    ]
