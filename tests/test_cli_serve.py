"""``wink serve``: the real MCP client against a ``wink serve`` subprocess, stdio and HTTP."""

from __future__ import annotations

import importlib.metadata
import json
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

mcp_sdk = pytest.importorskip("mcp")

import mcp_types as types  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

from wink import Prompt  # noqa: E402
from wink.cli import main  # noqa: E402
from wink.cli.failure import CliError  # noqa: E402
from wink.cli.targets import load_target  # noqa: E402

ROOT = Path(__file__).parent.parent
TARGET = "examples/served_notes.py:prompt"
WINK = [sys.executable, "-c", "import sys; from wink.cli import main; sys.exit(main())"]
UNREAD = (
    "File 'todo.md' already exists and has not been read: call read_file on it before "
    "overwriting it (policy 'read_before_write')."
)


def text_of(result: types.CallToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, types.TextContent))


def notes_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "todo.md").write_bytes(b"bread")
    return folder


def environment(folder: Path) -> dict[str, str]:
    return {**os.environ, "WINK_NOTES_DIR": str(folder)}


# --- stdio: one subprocess, the client's whole conversation ---------------------------


@dataclass(frozen=True)
class StdioRound:
    listed: types.ListToolsResult
    results: dict[str, types.CallToolResult]
    unknown_tool_error: tuple[int, str]
    server_version: str
    folder: Path
    stderr: str


@pytest.fixture(scope="module")
def stdio_round(tmp_path_factory: pytest.TempPathFactory) -> StdioRound:
    tmp_path = tmp_path_factory.mktemp("stdio")
    folder = notes_folder(tmp_path)
    parameters = StdioServerParameters(
        command=WINK[0], args=[*WINK[1:], "serve", TARGET], env=environment(folder), cwd=ROOT
    )
    calls: dict[str, tuple[str, dict[str, Any]]] = {
        "denied": ("write_file", {"path": "todo.md", "text": "milk"}),
        "ok": ("read_file", {"path": "todo.md"}),
        "bad_arguments": ("write_file", {"path": "todo.md", "txt": "oops"}),
        "failing": ("write_file", {"path": "todo.md", "text": "\nTODO: eggs", "append": True}),
    }
    results: dict[str, types.CallToolResult] = {}
    seen: dict[str, Any] = {}

    async def run() -> types.ListToolsResult:
        # stdio_client ends the subprocess on the way out, killing it if it must,
        # whether the conversation finished or failed.
        with anyio.fail_after(30):
            transport = stdio_client(parameters, errlog=errlog)
            async with mcp_sdk.Client(transport, mode="legacy") as client:
                listed = await client.list_tools()
                for key, (name, arguments) in calls.items():
                    results[key] = await client.call_tool(name, arguments)
                try:
                    await client.call_tool("delete_file", {"path": "todo.md"})
                except MCPError as error:
                    seen["unknown"] = (error.code, error.message)
                seen["version"] = client.server_info.version
                return listed

    with open(tmp_path / "stderr.txt", "w+") as errlog:
        listed = anyio.run(run)
        errlog.seek(0)
        stderr = errlog.read()
    return StdioRound(listed, results, seen["unknown"], seen["version"], folder, stderr)


def test_stdio_lists_the_served_prompts_tools(stdio_round: StdioRound) -> None:
    assert [tool.name for tool in stdio_round.listed.tools] == ["read_file", "write_file"]
    assert stdio_round.listed.tools[1].input_schema["required"] == ["path", "text"]


def test_stdio_call_answers_structured_content(stdio_round: StdioRound) -> None:
    result = stdio_round.results["ok"]
    assert (result.is_error, result.structured_content) == (
        False,
        {"path": "todo.md", "text": "bread"},
    )


def test_stdio_bad_arguments_answer_the_field_messages(stdio_round: StdioRound) -> None:
    result = stdio_round.results["bad_arguments"]
    assert (result.is_error, text_of(result)) == (
        True,
        "Invalid arguments for tool 'write_file':\ntext: required field is missing\n"
        "txt: unknown field (allowed: path, text, append)",
    )


def test_stdio_policy_denial_is_an_error_result(stdio_round: StdioRound) -> None:
    result = stdio_round.results["denied"]
    assert (result.is_error, text_of(result)) == (True, UNREAD)


def test_stdio_failing_handler_leaves_the_folder_byte_for_byte(stdio_round: StdioRound) -> None:
    result = stdio_round.results["failing"]
    assert (result.is_error, text_of(result)) == (
        True,
        "Tool 'write_file' raised ValueError: notes must not contain TODO markers",
    )
    assert sorted(path.name for path in stdio_round.folder.iterdir()) == ["todo.md"]
    assert (stdio_round.folder / "todo.md").read_bytes() == b"bread"


def test_stdio_unknown_tool_is_a_jsonrpc_invalid_params_error(stdio_round: StdioRound) -> None:
    assert stdio_round.unknown_tool_error == (
        types.INVALID_PARAMS,
        "Unknown tool 'delete_file'. Available tools: read_file, write_file.",
    )


def test_stdio_server_version_is_winks_own(stdio_round: StdioRound) -> None:
    assert stdio_round.server_version == importlib.metadata.version("wink")


def test_stdio_server_writes_its_announcement_and_handler_bugs_to_stderr(
    stdio_round: StdioRound,
) -> None:
    # The failing handler's exception is a bug the developer must see: a warning with
    # its traceback, on stderr, never on the protocol's stdout.
    lines = stdio_round.stderr.splitlines()
    assert lines[:3] == [
        "wink serve: serving 2 tools of 'notes_agent' over stdio",
        "wink serve: WARNING wink.runtime.executor: tool 'write_file' raised",
        "Traceback (most recent call last):",
    ]
    assert lines[-1] == "ValueError: notes must not contain TODO markers"


# --- stdio: stdout is the protocol's alone ---------------------------------------------

PRINTING_TARGET = """
import os
import sys

from pydantic import BaseModel

from wink import Tool, ToolResult

print("printed on import")
os.write(1, b"written to fd 1 on import\\n")


class Params(BaseModel):
    text: str


class Echo(BaseModel):
    text: str

    def render(self):
        return self.text


def echo(params, *, context):
    print("printed by the handler")
    os.write(1, b"written to fd 1 by the handler\\n")
    return ToolResult.ok(Echo(text=params.text), message="echoed")


tool = Tool[Params, Echo](name="echo", description="Echo the text.", handler=echo)
"""

PRINTED = [
    "printed on import",
    "written to fd 1 on import",
    "wink serve: serving 1 tool of 'tool' over stdio",
    "printed by the handler",
    "written to fd 1 by the handler",
]
"""stderr of a printing target's serve, in order."""


def printing_target(tmp_path: Path) -> dict[str, str]:
    """A target whose import and handler print, and an environment where stdout is
    block-buffered, as it is for an MCP client that starts wink."""
    (tmp_path / "printing.py").write_text(PRINTING_TARGET)
    env = {key: value for key, value in os.environ.items() if key != "PYTHONUNBUFFERED"}
    return {**env, "PYTHONPATH": str(ROOT)}


def test_stdio_call_of_a_printing_handler_succeeds_and_the_prints_go_to_stderr(
    tmp_path: Path,
) -> None:
    env = printing_target(tmp_path)
    parameters = StdioServerParameters(
        command=WINK[0], args=[*WINK[1:], "serve", "printing.py:tool"], env=env, cwd=tmp_path
    )

    async def run() -> types.CallToolResult:
        with anyio.fail_after(30):
            transport = stdio_client(parameters, errlog=errlog)
            async with mcp_sdk.Client(transport, mode="legacy") as client:
                return await client.call_tool("echo", {"text": "hi"})

    with open(tmp_path / "stderr.txt", "w+") as errlog:
        result = anyio.run(run)
        errlog.seek(0)
        stderr = errlog.read()
    assert (result.is_error, result.structured_content) == (False, {"text": "hi"})
    assert stderr.splitlines() == PRINTED


def test_stdio_stdout_carries_only_protocol_messages_to_the_end(tmp_path: Path) -> None:
    env = printing_target(tmp_path)
    process = subprocess.Popen(
        [*WINK, "serve", "printing.py:tool"],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdin is not None and process.stdout is not None
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"},
        },
    }
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "hi"}},
    }
    try:
        process.stdin.write(json.dumps(initialize).encode() + b"\n")
        process.stdin.flush()
        first = process.stdout.readline()
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        process.stdin.write(json.dumps(initialized).encode() + b"\n")
        process.stdin.write(json.dumps(call).encode() + b"\n")
        process.stdin.flush()
        second = process.stdout.readline()
        # Closing stdin ends the server; everything it writes until it exits is read.
        stdout, stderr = process.communicate(timeout=30)
    finally:
        process.kill()
        process.wait()
    answers = [json.loads(line) for line in (first, second)]
    assert [answer["id"] for answer in answers] == [1, 2]
    assert answers[1]["result"]["structuredContent"] == {"text": "hi"}
    assert (stdout, process.returncode) == (b"", 0)
    assert stderr.decode().splitlines() == PRINTED


# --- Streamable HTTP: one subprocess, two clients at once -----------------------------


@dataclass
class HttpServer:
    url: str
    process: subprocess.Popen[str]


def _announcement(process: subprocess.Popen[str], timeout: float) -> str:
    lines: queue.Queue[str] = queue.Queue()
    assert process.stderr is not None
    stderr = process.stderr
    threading.Thread(target=lambda: lines.put(stderr.readline()), daemon=True).start()
    try:
        return lines.get(timeout=timeout)
    except queue.Empty:
        raise AssertionError(f"wink serve did not start within {timeout} s") from None


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[HttpServer]:
    folder = notes_folder(tmp_path)
    process = subprocess.Popen(
        [*WINK, "serve", TARGET, "--transport", "http", "--port", "0"],
        cwd=ROOT,
        env=environment(folder),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = _announcement(process, timeout=30)
        found = re.fullmatch(
            r"wink serve: serving 2 tools of 'notes_agent' on (http://127\.0\.0\.1:\d+/mcp)\n",
            line,
        )
        assert found, line
        yield HttpServer(found.group(1), process)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def test_http_clients_each_have_their_own_policy_state(http_server: HttpServer) -> None:
    async def run() -> list[Any]:
        with anyio.fail_after(30):
            # A 2026-07-28 client over HTTP is stateless: each call runs in a fresh session.
            async with mcp_sdk.Client(http_server.url) as stateless:
                await stateless.call_tool("read_file", {"path": "todo.md"})
                forgotten = await stateless.call_tool(
                    "write_file", {"path": "todo.md", "text": "z"}
                )
                version = stateless.protocol_version
            async with (
                mcp_sdk.Client(http_server.url, mode="legacy") as reader,
                mcp_sdk.Client(http_server.url, mode="legacy") as writer,
            ):
                read = await reader.call_tool("read_file", {"path": "todo.md"})
                denied = await writer.call_tool("write_file", {"path": "todo.md", "text": "x"})
                allowed = await reader.call_tool("write_file", {"path": "todo.md", "text": "y"})
                return [
                    version,
                    text_of(forgotten),
                    read.structured_content,
                    text_of(denied),
                    allowed.structured_content,
                ]

    assert anyio.run(run) == [
        "2026-07-28",
        UNREAD,
        {"path": "todo.md", "text": "bread"},
        UNREAD,
        {"path": "todo.md", "text": "y"},
    ]
    http_server.process.terminate()
    stdout, stderr = http_server.process.communicate(timeout=10)
    # uvicorn shuts down gracefully, then ends by the signal it caught, as it should.
    assert (http_server.process.returncode, stdout, stderr) == (-signal.SIGTERM, "", "")


# --- one-line errors ------------------------------------------------------------------


def test_a_bad_target_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "examples/served_notes.py:nope"]) == 1
    assert capsys.readouterr().err == (
        "wink: target 'examples/served_notes.py:nope': 'examples/served_notes.py' has no "
        "attribute 'nope'\n"
    )


def test_a_target_that_is_not_servable_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "examples/notes_agent.py:RECORDED_RESPONSE"]) == 1
    assert capsys.readouterr().err == (
        "wink: target 'examples/notes_agent.py:RECORDED_RESPONSE' is a dict; expected a "
        "Prompt, PromptTemplate, Section, Tool or a sequence of tools\n"
    )


def test_a_port_in_use_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        target = "examples/notes_agent.py:template"
        code = main(["serve", target, "--transport", "http", "--port", str(port)])
    assert code == 1
    assert capsys.readouterr().err == (
        f"wink: cannot listen on 127.0.0.1:{port}: address already in use (choose another "
        "--port, or 0 for a free one)\n"
    )


def test_transport_and_port_come_from_the_settings(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        monkeypatch.setenv("WINK_SERVE_TRANSPORT", "http")
        monkeypatch.setenv("WINK_SERVE_PORT", str(port))
        code = main(["serve", "examples/notes_agent.py:template"])
    assert code == 1
    assert capsys.readouterr().err.startswith(f"wink: cannot listen on 127.0.0.1:{port}: ")


def test_http_limits_come_from_the_flags_else_the_settings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from wink.providers import _mcp_server

    seen: list[dict[str, Any]] = []

    async def record(served: Any, **options: Any) -> None:
        options["sock"].close()
        seen.append(
            {key: options[key] for key in ("session_idle_timeout", "max_sessions")}
            | {"max_message_bytes": options["max_message_bytes"]}
        )

    monkeypatch.setattr(_mcp_server, "serve_http", record)
    monkeypatch.setenv("WINK_SERVE_MAX_SESSIONS", "7")
    monkeypatch.setenv("WINK_SERVE_MAX_MESSAGE_BYTES", "5000")
    target = "examples/notes_agent.py:template"
    http = ["--transport", "http", "--port", "0"]
    assert main(["serve", target, *http]) == 0
    assert (
        main(["serve", target, *http, "--session-idle-timeout", "2.5", "--max-sessions", "3"]) == 0
    )
    assert seen == [
        {"session_idle_timeout": 600.0, "max_sessions": 7, "max_message_bytes": 5000},
        {"session_idle_timeout": 2.5, "max_sessions": 3, "max_message_bytes": 5000},
    ]


def test_a_limit_that_is_not_positive_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["serve", "examples/notes_agent.py:template", "--max-sessions", "0"])
    assert code == 2
    assert capsys.readouterr().err == (
        "wink: serve --max-sessions: input should be greater than 0 (got '0')\n"
    )


def test_tools_and_sections_are_served_in_a_prompt_of_their_own() -> None:
    from wink.cli.serve import served_prompt

    notes = load_target("examples/notes_agent.py:template")
    section = notes.sections[0]
    by_tools = served_prompt([notes.tools[0]], "examples/notes_agent.py:read_tools")
    by_section = served_prompt(section, "examples/notes_agent.py:section")
    assert [tool.name for tool in by_tools.render().tools] == ["read_file"]
    assert (by_tools.template.ns, by_tools.template.key) == ("wink.serve", "read-tools")
    assert [tool.name for tool in by_section.render().tools] == ["read_file", "write_file"]
    assert (by_section.template.key, by_section.template.sections) == ("notes", (section,))


def test_a_rendered_prompt_is_refused_for_want_of_resources() -> None:
    from wink.cli.serve import served_prompt

    rendered = Prompt(load_target("examples/notes_agent.py:template")).render()
    with pytest.raises(CliError) as raised:
        served_prompt(rendered, "app:rendered")
    assert str(raised.value) == (
        "target 'app:rendered' is a RenderedPrompt, which has no resources to serve with; "
        "name its Prompt or PromptTemplate"
    )


def test_server_version_flag_names_the_version_clients_see(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from wink.providers import _mcp_server

    seen: list[str] = []

    async def record(served: Any, **options: Any) -> None:
        options["sock"].close()
        seen.append(served.version)

    monkeypatch.setattr(_mcp_server, "serve_http", record)
    target = "examples/notes_agent.py:template"
    http = ["--transport", "http", "--port", "0"]
    assert main(["serve", target, *http, "--server-version", "3.1.4"]) == 0
    assert main(["serve", target, *http]) == 0
    assert seen == ["3.1.4", importlib.metadata.version("wink")]
