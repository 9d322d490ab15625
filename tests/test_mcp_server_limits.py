"""What one MCP client can hold of ``wink serve``: HTTP sessions, stdio lines, requests."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

mcp_sdk = pytest.importorskip("mcp")

import httpx  # noqa: E402
from pydantic import BaseModel  # noqa: E402

from wink import MarkdownSection, Prompt, PromptTemplate, Tool, ToolContext, ToolResult  # noqa: E402
from wink.cli.settings import WinkSettings  # noqa: E402
from wink.providers import mcp  # noqa: E402

ROOT = Path(__file__).parent.parent
WINK = [sys.executable, "-c", "import sys; from wink.cli import main; sys.exit(main())"]
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
INITIALIZE: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


# --- HTTP: a server in this process, clients that leave without closing --------------


class Hold(BaseModel):
    name: str


STARTED = threading.Event()
RELEASE = threading.Event()


def hold(params: Hold, *, context: ToolContext) -> ToolResult[str]:
    if params.name == "held":
        STARTED.set()
        assert RELEASE.wait(timeout=10), "never released"
    return ToolResult.ok(params.name)


hold_tool = Tool[Hold, str](name="hold", description="Answer, or wait first.", handler=hold)


def served_hold() -> mcp.PromptServer:
    template = PromptTemplate(
        ns="tests", key="limits", sections=[MarkdownSection(title="Hold", tools=[hold_tool])]
    )
    return mcp.server(Prompt(template))


@asynccontextmanager
async def running(served: mcp.PromptServer, **limits: Any) -> AsyncIterator[str]:
    """``serve_http`` on a free port of 127.0.0.1 while the block runs; its URL."""
    sock = mcp.bind_http_socket("127.0.0.1", 0)
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    async with anyio.create_task_group() as group:
        group.start_soon(lambda: mcp.serve_http(served, sock=sock, **limits))
        async with httpx.AsyncClient() as probe:
            while True:
                try:
                    await probe.get(url)
                    break
                except httpx.ConnectError:
                    await anyio.sleep(0.01)
        yield url
        group.cancel_scope.cancel()


def answer_of(response: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC answer in a JSON or server-sent-events response body."""
    if response.headers["content-type"].startswith("application/json"):
        answer: dict[str, Any] = response.json()
        return answer
    for line in response.text.splitlines():
        if line.startswith("data: ") and line[6:].strip():
            found: dict[str, Any] = json.loads(line[6:])
            if "id" in found:
                return found
    raise AssertionError(f"no answer in {response.text!r}")


async def open_session(http: httpx.AsyncClient, url: str) -> str:
    """Initialize, list the tools (which gives the client its wink session) and leave
    without closing: the session id of the abandoned session."""
    opened = await http.post(url, json=INITIALIZE, headers=ACCEPT)
    assert opened.status_code == 200, opened.text
    session = {**ACCEPT, "mcp-session-id": opened.headers["mcp-session-id"]}
    await http.post(url, json=INITIALIZED, headers=session)
    listed = await list_tools(http, url, session["mcp-session-id"])
    assert listed.status_code == 200, listed.text
    return session["mcp-session-id"]


async def list_tools(http: httpx.AsyncClient, url: str, session_id: str) -> httpx.Response:
    headers = {**ACCEPT, "mcp-session-id": session_id}
    request = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    return await http.post(url, json=request, headers=headers)


async def call_hold(http: httpx.AsyncClient, url: str, session_id: str, name: str) -> Any:
    headers = {**ACCEPT, "mcp-session-id": session_id}
    request = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {"name": "hold", "arguments": {"name": name}},
    }
    response = await http.post(url, json=request, headers=headers, timeout=20)
    return answer_of(response)["result"]["structuredContent"]


async def settle(condition: Callable[[], bool], seconds: float = 10) -> None:
    """Wait until ``condition`` holds (the server releases sessions on its own tasks)."""
    with anyio.fail_after(seconds):
        while not condition():
            await anyio.sleep(0.02)


def test_abandoned_http_sessions_are_closed_when_idle_and_their_sessions_released() -> None:
    served = served_hold()

    async def main() -> list[int]:
        counts = []
        async with running(served, session_idle_timeout=1.0) as url, httpx.AsyncClient() as http:
            ids = [await open_session(http, url) for _ in range(5)]
            counts.append(len(served.sessions))
            await settle(lambda: not served.sessions)
            counts.append(len(served.sessions))
            gone = await list_tools(http, url, ids[0])
            counts.append(gone.status_code)
        return counts

    assert anyio.run(main) == [5, 0, 404]


def test_at_the_session_cap_a_new_client_ends_the_least_recently_used_idle_session() -> None:
    served = served_hold()

    async def main() -> list[Any]:
        async with running(served, max_sessions=3) as url, httpx.AsyncClient() as http:
            ids = [await open_session(http, url) for _ in range(8)]
            async with mcp_sdk.Client(url, mode="legacy") as client:
                result = await client.call_tool("hold", {"name": "newcomer"})
                await settle(lambda: len(served.sessions) <= 3)
                held = len(served.sessions)
            oldest = await list_tools(http, url, ids[0])
            newest = await list_tools(http, url, ids[-1])
        return [result.structured_content, held, oldest.status_code, newest.status_code]

    assert anyio.run(main) == [{"result": "newcomer"}, 3, 404, 200]


def test_a_session_whose_call_is_running_is_not_ended_to_make_room() -> None:
    STARTED.clear()
    RELEASE.clear()
    served = served_hold()
    answers: list[Any] = []

    async def main() -> list[Any]:
        async with running(served, max_sessions=2) as url, httpx.AsyncClient() as http:
            busy = await open_session(http, url)
            async with anyio.create_task_group() as group:

                async def held_call() -> None:
                    answers.append(await call_hold(http, url, busy, "held"))

                group.start_soon(held_call)
                await settle(STARTED.is_set)
                others = [await open_session(http, url) for _ in range(4)]
                RELEASE.set()
            again = await call_hold(http, url, busy, "again")
            return [answers, again, len(others)]

    assert anyio.run(main) == [[{"result": "held"}], {"result": "again"}, 4]


def test_a_request_body_over_the_limit_is_refused_before_it_is_parsed() -> None:
    served = served_hold()

    async def main() -> int:
        async with (
            running(served, max_message_bytes=1000) as url,
            httpx.AsyncClient() as http,
        ):
            padded = {**INITIALIZE, "id": 1, "padding": "x" * 2000}
            return (await http.post(url, json=padded, headers=ACCEPT)).status_code

    assert anyio.run(main) == 413


@pytest.mark.parametrize(
    ("limits", "message"),
    [
        ({"session_idle_timeout": 0}, "session_idle_timeout must be a positive number"),
        ({"session_idle_timeout": float("inf")}, "session_idle_timeout must be a positive"),
        ({"max_sessions": 0}, "max_sessions must be positive or None, got 0"),
        ({"max_message_bytes": -1}, "max_message_bytes must be positive, got -1"),
    ],
)
def test_a_limit_that_is_not_positive_is_refused_when_the_app_is_built(
    limits: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        mcp.http_app(served_hold(), **limits)


def test_the_settings_defaults_are_the_servers_defaults() -> None:
    settings = WinkSettings()
    assert (
        settings.serve_session_idle_timeout,
        settings.serve_max_sessions,
        settings.serve_max_message_bytes,
        settings.serve_max_in_flight,
    ) == (
        mcp.DEFAULT_SESSION_IDLE_TIMEOUT,
        mcp.DEFAULT_MAX_SESSIONS,
        mcp.DEFAULT_MAX_MESSAGE_BYTES,
        mcp.DEFAULT_MAX_IN_FLIGHT,
    )


# --- stdio: raw bytes on a ``wink serve`` subprocess's stdin -------------------------

TARGET = """
import asyncio

from pydantic import BaseModel

from wink import Tool, ToolResult


class Text(BaseModel):
    text: str


def echo(params, *, context):
    return ToolResult.ok(params.text)


class Nap(BaseModel):
    seconds: float


async def nap(params, *, context):
    await asyncio.sleep(params.seconds)
    return ToolResult.ok("rested")


tools = [
    Tool[Text, str](name="echo", description="Echo.", handler=echo),
    Tool[Nap, str](name="nap", description="Sleep.", handler=nap),
]
"""


class Stdio:
    """A ``wink serve`` subprocess spoken to in raw lines."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        assert process.stdin is not None and process.stdout is not None
        self.stdin = process.stdin
        self.lines: queue.Queue[bytes] = queue.Queue()
        stdout = process.stdout

        def read() -> None:
            for line in stdout:
                self.lines.put(line)
            self.lines.put(b"")

        threading.Thread(target=read, daemon=True).start()

    def send(self, line: bytes) -> None:
        self.stdin.write(line + b"\n")
        self.stdin.flush()

    def send_json(self, message: dict[str, Any]) -> None:
        self.send(json.dumps(message).encode())

    def answer(self) -> dict[str, Any]:
        try:
            line = self.lines.get(timeout=30)
        except queue.Empty:
            raise AssertionError("no answer within 30 s") from None
        assert line, "the server ended"
        answer: dict[str, Any] = json.loads(line)
        return answer

    def initialize(self) -> None:
        self.send_json(INITIALIZE)
        assert self.answer()["id"] == 1
        self.send_json(INITIALIZED)

    def call(self, request_id: int | str, name: str, arguments: dict[str, Any]) -> None:
        self.send_json(
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "method": "tools/call",
                "params": {"name": name, "arguments": arguments},
            }
        )

    def peak_memory(self) -> int:
        """The subprocess's peak resident memory so far, in bytes."""
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        kilobytes = next(line for line in status.splitlines() if line.startswith("VmHWM:"))
        return int(kilobytes.split()[1]) * 1024


@pytest.fixture
def stdio(tmp_path: Path) -> Iterator[Callable[..., Stdio]]:
    (tmp_path / "target.py").write_text(TARGET)
    started: list[subprocess.Popen[bytes]] = []

    def start(*options: str) -> Stdio:
        process = subprocess.Popen(
            [*WINK, "serve", "target.py:tools", *options],
            cwd=tmp_path,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        started.append(process)
        return Stdio(process)

    yield start
    for process in started:
        process.kill()
        process.wait()


def result_of(answer: dict[str, Any]) -> Any:
    return answer["result"]["structuredContent"]["result"]


def test_stdio_a_line_that_is_not_json_is_answered_with_a_parse_error_and_serving_goes_on(
    stdio: Callable[..., Stdio],
) -> None:
    server = stdio()
    server.send(b'{"jsonrpc": "2.0", "id": 7, "method": ')
    parse_error = server.answer()
    server.initialize()
    server.call(2, "echo", {"text": "still here"})
    assert (parse_error, result_of(server.answer())) == (
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {
                "code": -32700,
                "message": "Parse error: Invalid JSON: EOF while parsing a value at line 1 "
                "column 38",
            },
        },
        "still here",
    )


def test_stdio_a_line_that_is_not_utf8_is_a_parse_error_naming_the_byte_and_is_not_run(
    stdio: Callable[..., Stdio],
) -> None:
    server = stdio()
    server.initialize()
    line = b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo",'
    line += b'"arguments":{"text":"a\xffb"}}}'
    server.send(line)
    offset = line.index(b"\xff")
    refused = server.answer()
    server.call(3, "echo", {"text": "a\u00ffb"})
    # Had the byte become U+FFFD, the call would have run and answered id 2.
    assert (refused, server.answer()["id"]) == (
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {
                "code": -32700,
                "message": f"Parse error: invalid UTF-8 at byte {offset} of the "
                "line (invalid start byte); MCP messages are UTF-8 text",
            },
        },
        3,
    )


def test_stdio_json_that_is_no_jsonrpc_message_is_an_invalid_request(
    stdio: Callable[..., Stdio],
) -> None:
    server = stdio()
    server.send(b'{"hello": "world"}')
    server.send(b"[1, 2]")
    answers = [server.answer()["error"] for _ in range(2)]
    assert answers == [
        {
            "code": -32600,
            "message": "Invalid Request: the object is not a JSON-RPC 2.0 request, "
            "notification or response",
        },
        {
            "code": -32600,
            "message": "Invalid Request: an array (batches are not part of MCP) is not a "
            "JSON-RPC 2.0 request, notification or response",
        },
    ]


def test_stdio_a_100_mb_line_is_refused_unread_and_serving_goes_on(
    stdio: Callable[..., Stdio],
) -> None:
    server = stdio("--max-message-bytes", "100000")
    server.initialize()
    before = server.peak_memory()
    chunk = b"x" * (1024 * 1024)
    for _ in range(100):
        server.stdin.write(chunk)
    server.send(b"")
    refused = server.answer()
    server.call(2, "echo", {"text": "after"})
    answered = result_of(server.answer())
    grown = server.peak_memory() - before
    assert (refused, answered) == (
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {
                "code": -32600,
                "message": "Invalid Request: a line longer than 100000 bytes was skipped unread",
            },
        },
        "after",
    )
    # Kept whole, the line alone would be 100 MB.
    assert grown < 20 * 1024 * 1024, grown


def test_stdio_a_request_reusing_the_id_of_one_in_flight_is_refused_and_not_run(
    stdio: Callable[..., Stdio],
) -> None:
    server = stdio()
    server.initialize()
    server.call(5, "nap", {"seconds": 0.5})
    server.call(5, "echo", {"text": "reused"})
    answers = [server.answer(), server.answer()]
    assert answers[0] == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": -32600,
            "message": "Invalid Request: id 5 is already used by a request in flight; this one "
            "was not run (give each request its own id)",
        },
    }
    assert (answers[1]["id"], result_of(answers[1])) == (5, "rested")


def test_stdio_no_line_is_read_while_max_in_flight_requests_are_unanswered(
    stdio: Callable[..., Stdio],
) -> None:
    server = stdio("--max-in-flight", "2")
    server.initialize()
    for request_id in range(10, 16):
        server.call(request_id, "nap", {"seconds": 0.05})
    server.send_json({"jsonrpc": "2.0", "id": 99, "method": "ping"})
    order = [server.answer()["id"] for _ in range(7)]
    # A ping is answered as soon as it is read; read at once, it would come first.
    # It is read only once five naps are answered and one alone is in flight.
    assert sorted(order) == [10, 11, 12, 13, 14, 15, 99]
    assert 99 not in order[:5], order


def test_stdio_serving_ends_when_stdin_closes_after_a_bad_line(
    stdio: Callable[..., Stdio],
) -> None:
    server = stdio()
    server.send(b"\xff")
    server.stdin.close()
    assert server.answer()["error"]["message"] == (
        "Parse error: invalid UTF-8 at byte 0 of the line (invalid start byte); MCP messages "
        "are UTF-8 text"
    )
    assert (server.process.wait(timeout=30), server.lines.get(timeout=30)) == (0, b"")


def test_protocol_stdin_gives_the_protocol_the_input_and_fd_0_the_null_device() -> None:
    from wink.providers._stdio import protocol_stdin

    saved = os.dup(0)
    read_end, write_end = os.pipe()
    try:
        os.dup2(read_end, 0)
        os.write(write_end, b"for the protocol\n")
        with protocol_stdin() as stream:
            seen = [os.read(0, 100), stream.readline()]
        os.write(write_end, b"after\n")
        seen.append(os.read(0, 100))
    finally:
        os.dup2(saved, 0)
        for fd in (saved, read_end, write_end):
            os.close(fd)
    assert seen == [b"", b"for the protocol\n", b"after\n"]
