"""One ``tools/call`` served over MCP, against the executor and the SDK's own servers.

Every call is ``bench_executor``'s ``lookup_entity`` with the same arguments. Rows:

- ``executor.execute``: the call with no protocol at all (arguments already decoded,
  as an MCP server receives them);
- the floor: the in-memory client (the SDK's JSON-RPC stream transport) calling a
  low-level ``Server`` that lists the same tool and whose handler returns a fixed
  ``CallToolResult``: what the protocol alone costs;
- the ``mcp`` package's high-level ``MCPServer`` (formerly FastMCP) calling the
  same handler from a plain function;
- ``wink.providers.mcp.server``: the same call through wink's executor, run in a
  worker thread;
- the same server with the handler wrapped in an ``async def``: the call awaited
  on the server's event loop (``aexecute``), no thread;
- over Streamable HTTP on 127.0.0.1, calls per second of wink's server against
  ``MCPServer``'s, for a client of the initialize handshake (one session) and for
  a stateless 2026-07-28 client (every request on its own);
- the client side: ``MCPServer``'s tool imported with ``McpToolsSection`` and
  called through ``executor.execute`` (arguments checked, a hop to the
  connection's event loop thread, the result checked against ``outputSchema``),
  next to the SDK's own ``Client.call_tool`` on the same server in the same run.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from contextlib import AsyncExitStack
from typing import Any

import anyio
import anyio.to_thread
import mcp
import mcp_types as types
import uvicorn
from mcp.server import Server
from mcp.server.mcpserver import MCPServer

from benchmarks.bench_executor import (
    LookupParams,
    LookupResult,
    lookup_handler,
    lookup_tool,
    template,
)
from benchmarks.timing import per_call_us
from wink import (
    Filesystem,
    InMemoryFilesystem,
    MarkdownSection,
    Prompt,
    PromptTemplate,
    Session,
    Tool,
    ToolContext,
    ToolResult,
)
from wink.providers import mcp as wink_mcp
from wink.providers.mcp import McpConnection
from wink.runtime import ToolCall, ToolExecutor

ARGUMENTS = {"entity_id": "entity-42", "include_related": True}
NUMBER = 200
REPEAT = 5
HTTP_MODES = {"session": "legacy", "stateless": "2026-07-28"}
"""The client's ``mode`` for each kind of HTTP client."""


def _prompt() -> Prompt:
    return Prompt(template).bind(resources={Filesystem: InMemoryFilesystem()})


async def _alookup_handler(
    params: LookupParams, *, context: ToolContext
) -> ToolResult[LookupResult]:
    return lookup_handler(params, context=context)


def _async_prompt() -> Prompt:
    """``template`` with ``lookup_entity``'s handler wrapped in an ``async def``."""
    alookup = Tool[LookupParams, LookupResult](
        name=lookup_tool.name, description=lookup_tool.description, handler=_alookup_handler
    )
    (section,) = template.sections
    assert isinstance(section, MarkdownSection)
    tools = [alookup if tool is lookup_tool else tool for tool in section.tools]
    async_template = PromptTemplate(
        ns=template.ns,
        key=f"{template.key}-async",
        sections=[
            MarkdownSection(
                title=section.title,
                template=section.template.template,
                tools=tools,
                policies=list(section.policies),
            )
        ],
    )
    return Prompt(async_template).bind(resources={Filesystem: InMemoryFilesystem()})


def _execute_us() -> float:
    executor = ToolExecutor(prompt=_prompt(), session=Session())
    call = ToolCall("lookup_entity", ARGUMENTS, "call-1")
    return per_call_us(lambda: executor.execute(call), number=NUMBER * 10, repeat=REPEAT)


def _floor_server() -> Server[Any]:
    fixed = types.CallToolResult(
        content=[types.TextContent(type="text", text="Fetched entity entity-42.")],
        structured_content={"entity_id": "entity-42", "document_url": "https://example.com"},
    )

    # The same listing as wink's, so the client checks the result the same way.
    listing = types.ListToolsResult(
        tools=[types.Tool.model_validate(spec) for spec in wink_mcp.tool_specs(template.tools)]
    )

    async def list_tools(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return listing

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        return fixed

    return Server("floor", on_list_tools=list_tools, on_call_tool=call_tool)


def _high_level_server() -> MCPServer:
    # Its default configures the root logger at INFO: every HTTP request would be printed.
    server = MCPServer("high-level", log_level="WARNING")
    context = ToolContext(session=Session())

    @server.tool()
    def lookup_entity(entity_id: str, include_related: bool = False) -> LookupResult:
        """Fetch structured information for a given entity id."""
        result = lookup_handler(LookupParams(entity_id, include_related), context=context)
        assert result.value is not None
        return result.value

    return server


def _tools_call_us(servers: dict[str, Server[Any] | MCPServer]) -> dict[str, float]:
    """Per-call cost of ``tools/call`` through the in-memory client, for each server.

    The servers take turns, batch by batch, and each keeps its best batch, so a
    machine busy with something else for a while skews them all alike.
    """

    async def run() -> dict[str, float]:
        async with AsyncExitStack() as stack:
            clients = {
                label: await stack.enter_async_context(mcp.Client(server, mode="legacy"))
                for label, server in servers.items()
            }
            for label, client in clients.items():
                first = await client.call_tool("lookup_entity", ARGUMENTS)
                if first.is_error:
                    raise RuntimeError(f"{label}: lookup_entity failed: {first.content}")
            best = dict.fromkeys(clients, float("inf"))
            for _ in range(REPEAT):
                for label, client in clients.items():
                    start = time.perf_counter()
                    for _ in range(NUMBER):
                        await client.call_tool("lookup_entity", ARGUMENTS)
                    best[label] = min(best[label], time.perf_counter() - start)
            return {label: seconds / NUMBER * 1e6 for label, seconds in best.items()}

    return anyio.run(run)


def _http_calls_per_second() -> dict[tuple[str, str], float]:
    """Calls per second of ``tools/call`` over Streamable HTTP, per server and client kind.

    wink's app is served as ``serve_http`` (``wink serve --transport http``) serves
    it, on a socket from ``bind_http_socket``; ``MCPServer``'s as its own
    ``run("streamable-http")`` does, on the address uvicorn binds itself. Both run
    on uvicorn servers built here with ``serve_http``'s settings, so that they can
    be stopped cleanly (``serve_http`` stops only when cancelled). Servers and
    clients share this event loop; the clients take turns, batch by batch, each
    keeping its best batch.
    """
    number = max(1, NUMBER // 4)

    async def run() -> dict[tuple[str, str], float]:
        wink_socket = wink_mcp.bind_http_socket("127.0.0.1", 0)
        served = {
            "wink": (wink_mcp.http_app(wink_mcp.server(_prompt())), [wink_socket]),
            "high_level": (_high_level_server().streamable_http_app(), None),
        }
        servers = {
            label: uvicorn.Server(
                uvicorn.Config(
                    app,
                    host="127.0.0.1",
                    port=0,
                    log_config=None,
                    access_log=False,
                    lifespan="on",
                )
            )
            for label, (app, _) in served.items()
        }
        try:
            async with anyio.create_task_group() as group:
                for label, server in servers.items():
                    group.start_soon(server.serve, served[label][1])
                try:
                    urls = {label: await _url_of(server) for label, server in servers.items()}
                    per_second = await _calls_per_second(urls, number)
                finally:
                    for server in servers.values():
                        server.should_exit = True
        finally:
            wink_socket.close()
        return per_second

    return anyio.run(run)


async def _url_of(server: uvicorn.Server) -> str:
    while not server.started:
        await anyio.sleep(0.01)
    sockets = server.servers[0].sockets
    return f"http://127.0.0.1:{sockets[0].getsockname()[1]}/mcp"


async def _calls_per_second(urls: dict[str, str], number: int) -> dict[tuple[str, str], float]:
    async with AsyncExitStack() as stack:
        clients = {
            (label, kind): await stack.enter_async_context(mcp.Client(url, mode=mode))
            for label, url in urls.items()
            for kind, mode in HTTP_MODES.items()
        }
        for key, client in clients.items():
            first = await client.call_tool("lookup_entity", ARGUMENTS)
            if first.is_error:
                raise RuntimeError(f"{key}: lookup_entity failed: {first.content}")
        best = dict.fromkeys(clients, float("inf"))
        for _ in range(REPEAT):
            for key, client in clients.items():
                start = time.perf_counter()
                for _ in range(number):
                    await client.call_tool("lookup_entity", ARGUMENTS)
                best[key] = min(best[key], time.perf_counter() - start)
        return {key: number / seconds for key, seconds in best.items()}


def _client_call_us() -> dict[str, float]:
    """Per-call cost of the SDK's ``call_tool`` and of wink's imported tool, same server.

    Also, to show where wink's extra time goes: the connection's ``call_tool`` alone
    (the hop to its loop's thread, no executor), the SDK's ``call_tool`` awaited the
    same way (a client held open on an event loop in another thread, the call
    submitted with ``run_coroutine_threadsafe`` and waited for), and a no-op
    coroutine run on that loop (the hop alone). The no-op's hop is cheap because
    neither thread sleeps for long; in a call each thread sleeps while the other
    works, and waking it (often on the other CPU, gone idle meanwhile) costs more,
    and so does the work right after; the SDK's own call pays the same when awaited
    from another thread. They take turns, batch by batch, each keeping its best batch.
    """
    server = _high_level_server()

    async def sdk_batch() -> float:
        async with mcp.Client(server, mode="legacy") as client:
            await client.call_tool("lookup_entity", ARGUMENTS)
            start = time.perf_counter()
            for _ in range(NUMBER):
                await client.call_tool("lookup_entity", ARGUMENTS)
            return time.perf_counter() - start

    section = wink_mcp.McpToolsSection(wink_mcp.McpServer.in_process(server))
    prompt = Prompt(PromptTemplate(ns="bench", key="client", sections=[section]))
    call = ToolCall("lookup_entity", ARGUMENTS, "call-1")
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    opened: Future[mcp.Client] = Future()
    stop = asyncio.Event()
    holder = asyncio.run_coroutine_threadsafe(_hold_client(server, opened, stop), loop)
    labels = ("sdk", "imported", "imported_async", "connection", "sdk_hopped", "hop")
    best = dict.fromkeys(labels, float("inf"))
    try:
        sdk_client = opened.result(30)
        with prompt.resources, McpConnection(section.server) as connection:
            executor = ToolExecutor(prompt=prompt, session=Session())
            first = executor.execute(call)
            if not first.success:
                raise RuntimeError(f"imported lookup_entity failed: {first.message}")
            connection.call_tool("lookup_entity", dict(ARGUMENTS))
            batches: dict[str, Callable[[], object]] = {
                "imported": lambda: executor.execute(call),
                "connection": lambda: connection.call_tool("lookup_entity", dict(ARGUMENTS)),
                "sdk_hopped": lambda: asyncio.run_coroutine_threadsafe(
                    sdk_client.call_tool("lookup_entity", ARGUMENTS), loop
                ).result(),
                "hop": lambda: asyncio.run_coroutine_threadsafe(_anothing(), loop).result(),
            }

            async def awaited_batch() -> float:
                await executor.aexecute(call)
                start = time.perf_counter()
                for _ in range(NUMBER):
                    await executor.aexecute(call)
                return time.perf_counter() - start

            for _ in range(REPEAT):
                best["sdk"] = min(best["sdk"], anyio.run(sdk_batch))
                best["imported_async"] = min(best["imported_async"], asyncio.run(awaited_batch()))
                for label, run_once in batches.items():
                    start = time.perf_counter()
                    for _ in range(NUMBER):
                        run_once()
                    best[label] = min(best[label], time.perf_counter() - start)
    finally:
        loop.call_soon_threadsafe(stop.set)
        holder.result(30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        loop.close()
    return {label: seconds / NUMBER * 1e6 for label, seconds in best.items()}


async def _hold_client(server: MCPServer, opened: Future[mcp.Client], stop: asyncio.Event) -> None:
    """Hold a client of ``server`` open, in one task from entry to exit, until ``stop`` is set."""
    try:
        async with mcp.Client(server, mode="legacy") as client:
            opened.set_result(client)
            await stop.wait()
    except BaseException as error:
        if not opened.done():  # the client did not open: the caller waits no longer
            opened.set_exception(error)
        raise


async def _anothing() -> None:
    return None


def _thread_hop_us() -> float:
    """What running a no-op in a worker thread costs an event loop, per call."""

    async def run() -> float:
        best = float("inf")
        for _ in range(REPEAT):
            start = time.perf_counter()
            for _ in range(NUMBER):
                await anyio.to_thread.run_sync(_nothing)
            best = min(best, time.perf_counter() - start)
        return best / NUMBER * 1e6

    return anyio.run(run)


def _nothing() -> None:
    return None


def main() -> None:
    """Print each figure next to the executor alone and the protocol floor."""
    execute = _execute_us()
    hop = _thread_hop_us()
    costs = _tools_call_us(
        {
            "floor": _floor_server(),
            "high_level": _high_level_server(),
            "wink": wink_mcp.server(_prompt()),
            "wink_async": wink_mcp.server(_async_prompt()),
        }
    )
    floor, high_level, served = costs["floor"], costs["high_level"], costs["wink"]
    served_async = costs["wink_async"]
    rows = [
        ("executor.execute (no protocol)", f"{execute:9.1f} us/call"),
        ("worker-thread hop of a no-op (anyio.to_thread)", f"{hop:9.1f} us/call"),
        ("floor: in-memory tools/call, fixed result", f"{floor:9.1f} us/call"),
        ("mcp MCPServer, same handler", f"{high_level:9.1f} us/call"),
        ("wink mcp.server (executor in a worker thread)", f"{served:9.1f} us/call"),
        ("wink mcp.server, async def handler (on the loop)", f"{served_async:9.1f} us/call"),
        ("  wink - floor", f"{served - floor:9.1f} us"),
        ("  wink async def - floor (no thread hop)", f"{served_async - floor:9.1f} us"),
        ("  executor + thread hop (wink's own work; the hop", f"{execute + hop:9.1f} us"),
        ("   costs more in situ: the loop also serves the client)", ""),
        ("  wink / MCPServer (aim <= 1.5x)", f"{served / high_level:9.2f}x"),
    ]
    per_second = _http_calls_per_second()
    for kind in HTTP_MODES:
        wink_rate, high_level_rate = per_second["wink", kind], per_second["high_level", kind]
        rows += [
            (f"HTTP, {kind}: mcp MCPServer", f"{high_level_rate:9.0f} calls/s"),
            (f"HTTP, {kind}: wink serve", f"{wink_rate:9.0f} calls/s"),
            (f"  wink / MCPServer, {kind} (aim >= 0.9x)", f"{wink_rate / high_level_rate:9.2f}x"),
        ]
    client = _client_call_us()
    sdk_call, imported_call = client["sdk"], client["imported"]
    rows += [
        ("client: mcp Client.call_tool to MCPServer", f"{sdk_call:9.1f} us/call"),
        ("  the same, its client held on a loop thread", f"{client['sdk_hopped']:9.1f} us/call"),
        ("   (as a caller without an event loop must hold it)", ""),
        ("client: wink McpToolsSection tool, execute()", f"{imported_call:9.1f} us/call"),
        ("  / SDK client (aim <= 1.15x)", f"{imported_call / sdk_call:9.2f}x"),
        ("  / SDK client held on a loop thread", f"{imported_call / client['sdk_hopped']:9.2f}x"),
        (
            "client: wink McpToolsSection tool, aexecute()",
            f"{client['imported_async']:9.1f} us/call",
        ),
        ("  / SDK client", f"{client['imported_async'] / sdk_call:9.2f}x"),
        ("of which: McpConnection.call_tool (no executor)", f"{client['connection']:9.1f} us"),
        ("of which: a no-op's hop to a loop thread", f"{client['hop']:9.1f} us"),
    ]
    for label, figure in rows:
        print(f"{label:<52}{figure}")


if __name__ == "__main__":
    main()
