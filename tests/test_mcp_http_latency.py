"""``wink serve`` over HTTP answers at once: its connections have Nagle's algorithm off.

With it on, each short response waits for the client's delayed ACK (~40 ms on
Linux), so a client calling one tool after another got about 20 calls a second.
"""

from __future__ import annotations

import socket
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

mcp_sdk = pytest.importorskip("mcp")

import httpx  # noqa: E402
from pydantic import BaseModel  # noqa: E402
from uvicorn.protocols.http.h11_impl import H11Protocol  # noqa: E402

from wink import MarkdownSection, Prompt, PromptTemplate, Tool, ToolContext, ToolResult  # noqa: E402
from wink.providers import mcp  # noqa: E402

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
CALLS = 20
ROUNDS = 3


class Echo(BaseModel):
    text: str


def echo(params: Echo, *, context: ToolContext) -> ToolResult[str]:
    return ToolResult.ok(params.text)


echo_tool = Tool[Echo, str](name="echo", description="Answer the text.", handler=echo)


def served_echo() -> mcp.PromptServer:
    template = PromptTemplate(
        ns="tests", key="latency", sections=[MarkdownSection(title="Echo", tools=[echo_tool])]
    )
    return mcp.server(Prompt(template))


@asynccontextmanager
async def running(sock: socket.socket) -> AsyncIterator[str]:
    """``serve_http`` on ``sock`` while the block runs; its URL.

    The socket already listens, so a client may connect before uvicorn starts: the
    connection waits in the backlog and no probe is needed.
    """
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    async with anyio.create_task_group() as group:
        group.start_soon(lambda: mcp.serve_http(served_echo(), sock=sock))
        yield url
        group.cancel_scope.cancel()


@pytest.mark.parametrize(
    ("host", "family"), [("127.0.0.1", socket.AF_INET), ("::1", socket.AF_INET6)]
)
def test_bind_http_socket_creates_a_tcp_socket_for_asyncio_to_set_nodelay_on(
    host: str, family: socket.AddressFamily
) -> None:
    try:
        sock = mcp.bind_http_socket(host, 0)
    except OSError:
        pytest.skip(f"{host} is not available here")
    with sock:
        assert (sock.family, sock.type, sock.proto) == (
            family,
            socket.SOCK_STREAM,
            socket.IPPROTO_TCP,
        )


def test_a_connection_accepted_by_serve_http_has_tcp_nodelay_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    nodelay: list[int] = []
    connection_made = H11Protocol.connection_made

    def recording(protocol: H11Protocol, transport: Any) -> None:
        # The server side of the connection, as uvicorn's HTTP protocol receives it.
        accepted = transport.get_extra_info("socket")
        nodelay.append(accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
        connection_made(protocol, transport)

    monkeypatch.setattr(H11Protocol, "connection_made", recording)

    async def main() -> int:
        async with (
            running(mcp.bind_http_socket("127.0.0.1", 0)) as url,
            httpx.AsyncClient() as http,
        ):
            opened = await http.post(url, json=INITIALIZE, headers=ACCEPT)
            return opened.status_code

    assert anyio.run(main) == 200
    assert nodelay == [1]


def test_serve_http_refuses_a_socket_not_created_as_tcp_and_leaves_it_open() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()

        async def main() -> None:
            await mcp.serve_http(served_echo(), sock=sock)

        with pytest.raises(ValueError) as refused:
            anyio.run(main)
        assert str(refused.value) == (
            "serve_http() needs a socket created as IPPROTO_TCP, such as bind_http_socket() "
            "returns: on this one every response would wait for the client's delayed ACK"
        )
        assert sock.fileno() != -1


@pytest.mark.parametrize("mode", ["2026-07-28", "legacy"])
def test_twenty_sequential_calls_over_http_take_well_under_twenty_delayed_acks(
    mode: str,
) -> None:
    """Stateless (2026-07-28) and session (legacy) clients alike: 20 x 40 ms would be 0.8 s."""

    async def main() -> tuple[list[str], float]:
        async with (
            running(mcp.bind_http_socket("127.0.0.1", 0)) as url,
            mcp_sdk.Client(url, mode=mode) as client,
        ):
            answers = []
            best = float("inf")
            for round_ in range(ROUNDS):
                start = time.perf_counter()
                for number in range(CALLS):
                    result = await client.call_tool("echo", {"text": f"{round_}-{number}"})
                    assert result.structured_content is not None
                    answers.append(result.structured_content["result"])
                best = min(best, time.perf_counter() - start)
            return answers, best

    answers, best = anyio.run(main)
    assert answers == [f"{round_}-{number}" for round_ in range(ROUNDS) for number in range(CALLS)]
    assert best < 0.5
