"""Many MCP clients over Streamable HTTP: most leave without closing, a server with small limits.

An in-process ``serve_http`` on a free port of 127.0.0.1 (``max_sessions=CAP``, a
short idle timeout) gets waves of clients at once: some open a session, list the
tools and leave without closing it; some call a tool and leave; some close their
session (DELETE); some send a malformed body or a session id that does not exist.
After each wave a fresh client (the ``mcp`` package's own) must still open a
session and get its call answered (else ``lost_events``), the server must hold at
most ``CAP`` sessions and wink sessions (else ``state_leaks``), and every answer
must be one the protocol allows: an exception anywhere, or the server's task
ending, counts in ``uncaught``. At the end, once the idle timeout has passed,
every wink session must have been released (else ``state_leaks``).
"""

from __future__ import annotations

import json
import logging
import random
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import httpx
import mcp as mcp_sdk
from pydantic import BaseModel

from stress.report import FamilyReport
from wink import MarkdownSection, Prompt, PromptTemplate, Tool, ToolContext, ToolResult
from wink.providers import mcp

QUICK_INPUTS = 40
"""Clients at scale 1."""

CAP = 6
"""Sessions the server keeps."""

IDLE_TIMEOUT = 0.5
"""Seconds an idle session is kept."""

WAVE = 5
"""Clients that arrive at once."""

SETTLE = 10.0
"""Seconds the server may take to release what it must release."""

ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "stress", "version": "0"},
    },
}


class Add(BaseModel):
    a: int
    b: int


def add(params: Add, *, context: ToolContext) -> ToolResult[int]:
    return ToolResult.ok(params.a + params.b)


def _served() -> mcp.PromptServer:
    tool = Tool[Add, int](name="add", description="Add two numbers.", handler=add)
    section: MarkdownSection[Any] = MarkdownSection(title="Sums", key="sums", tools=[tool])
    return mcp.server(Prompt(PromptTemplate(ns="stress", key="sums", sections=[section])))


class _Unexpected(Exception):
    """An answer the protocol does not allow for what the client sent."""


async def _post(
    http: httpx.AsyncClient, url: str, body: Any, session_id: str | None = None
) -> httpx.Response:
    headers = dict(ACCEPT)
    if session_id is not None:
        headers["mcp-session-id"] = session_id
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return await http.post(url, content=content, headers=headers)


def _answer(response: httpx.Response) -> dict[str, Any]:
    for line in response.text.splitlines():
        if line.startswith("data: ") and line[6:].strip():
            found: dict[str, Any] = json.loads(line[6:])
            if "id" in found:
                return found
    if response.headers.get("content-type", "").startswith("application/json"):
        answer: dict[str, Any] = response.json()
        return answer
    raise _Unexpected(f"no JSON-RPC answer in {response.status_code} {response.text[:80]!r}")


async def _open(http: httpx.AsyncClient, url: str) -> str:
    opened = await _post(http, url, INITIALIZE)
    if opened.status_code != 200:
        raise _Unexpected(f"initialize answered {opened.status_code} {opened.text[:80]!r}")
    session_id = opened.headers["mcp-session-id"]
    await _post(http, url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session_id)
    return session_id


async def _abandon_after_listing(http: httpx.AsyncClient, url: str, rng: random.Random) -> None:
    session_id = await _open(http, url)
    listed = _answer(
        await _post(http, url, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, session_id)
    )
    if [tool["name"] for tool in listed["result"]["tools"]] != ["add"]:
        raise _Unexpected(f"tools/list answered {listed}")


async def _abandon_after_calling(http: httpx.AsyncClient, url: str, rng: random.Random) -> None:
    session_id = await _open(http, url)
    a, b = rng.randrange(1000), rng.randrange(1000)
    call = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {"name": "add", "arguments": {"a": a, "b": b}},
    }
    response = await _post(http, url, call, session_id)
    if response.status_code == 404:
        return  # ended to make room between opening and calling: allowed at the cap
    answered = _answer(response)
    if answered.get("result", {}).get("structuredContent") != {"result": a + b}:
        raise _Unexpected(f"add({a}, {b}) answered {answered}")


async def _close(http: httpx.AsyncClient, url: str, rng: random.Random) -> None:
    session_id = await _open(http, url)
    closed = await http.delete(url, headers={**ACCEPT, "mcp-session-id": session_id})
    if closed.status_code not in (200, 404):
        raise _Unexpected(f"DELETE answered {closed.status_code}")


async def _malformed(http: httpx.AsyncClient, url: str, rng: random.Random) -> None:
    body = rng.choice([b"{", b"[]", b'{"jsonrpc": "2.0"}', b"\xff\xfe", b"null"])
    response = await _post(http, url, body)
    if response.status_code != 400:
        raise _Unexpected(f"{body!r} answered {response.status_code}")


async def _unknown_session(http: httpx.AsyncClient, url: str, rng: random.Random) -> None:
    request = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    response = await _post(http, url, request, f"{rng.getrandbits(128):032x}")
    if response.status_code != 404:
        raise _Unexpected(f"an unknown session answered {response.status_code}")


CLIENTS: tuple[Callable[[httpx.AsyncClient, str, random.Random], Awaitable[None]], ...] = (
    _abandon_after_listing,
    _abandon_after_listing,
    _abandon_after_calling,
    _close,
    _malformed,
    _unknown_session,
)


async def _fresh_client_works(url: str, rng: random.Random) -> bool:
    a, b = rng.randrange(1000), rng.randrange(1000)
    async with mcp_sdk.Client(url, mode="legacy") as client:
        result = await client.call_tool("add", {"a": a, "b": b})
    expected: dict[str, Any] = {"result": a + b}
    return bool(result.structured_content == expected)


async def _settled(condition: Callable[[], bool]) -> bool:
    with anyio.move_on_after(SETTLE):
        while not condition():
            await anyio.sleep(0.02)
        return True
    return False


async def _campaign(count: int, report: FamilyReport) -> None:
    rng = random.Random(7)
    served = _served()
    sock = mcp.bind_http_socket("127.0.0.1", 0)
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"

    async def serve() -> None:
        try:
            await mcp.serve_http(
                served, sock=sock, max_sessions=CAP, session_idle_timeout=IDLE_TIMEOUT
            )
        except Exception as error:  # the server must outlive every client
            report.note("uncaught", f"the server stopped: {error!r}"[:200])

    async def client(http: httpx.AsyncClient, index: int) -> None:
        kind = CLIENTS[index % len(CLIENTS)]
        with report.measure():
            try:
                await kind(http, url, rng)
            except Exception as error:
                report.note("uncaught", f"{kind.__name__}: {error!r}"[:200])

    async with anyio.create_task_group() as group:
        group.start_soon(serve)
        async with httpx.AsyncClient(timeout=SETTLE) as http:
            while True:
                try:
                    await http.get(url)
                    break
                except httpx.ConnectError:
                    await anyio.sleep(0.01)
            for start in range(0, count, WAVE):
                async with anyio.create_task_group() as wave:
                    for index in range(start, min(start + WAVE, count)):
                        wave.start_soon(client, http, index)
                # The manager's own table: what the server holds, whatever wink counts.
                held = len(served.session_manager._server_instances)
                if held > CAP:
                    report.note("state_leaks", f"after client {start}: {held} HTTP sessions")
                try:
                    works = await _fresh_client_works(url, rng)
                except Exception as error:
                    report.note("lost_events", f"a fresh client failed: {error!r}"[:200])
                else:
                    if not works:
                        report.note("lost_events", "a fresh client got a wrong sum")
                if not await _settled(lambda: len(served.sessions) <= CAP):
                    report.note("state_leaks", f"{len(served.sessions)} wink sessions held")
            if not await _settled(lambda: not served.sessions):
                report.note(
                    "state_leaks", f"{len(served.sessions)} wink sessions outlived the idle timeout"
                )
        group.cancel_scope.cancel()


def run(scale: float) -> FamilyReport:
    """Send ``QUICK_INPUTS * scale`` clients, ``WAVE`` at a time, to one server."""
    report = FamilyReport("mcp_sessions")
    quiet = [logging.getLogger(name) for name in ("mcp", "httpx", "uvicorn")]
    levels = [logger.level for logger in quiet]
    for logger in quiet:
        logger.setLevel(logging.CRITICAL)  # refusals are expected; the tally says what matters
    try:
        anyio.run(_campaign, max(WAVE, round(QUICK_INPUTS * scale)), report)
    finally:
        for logger, level in zip(quiet, levels, strict=True):
            logger.setLevel(level)
    return report
