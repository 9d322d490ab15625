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
  worker thread.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.to_thread
import mcp
import mcp_types as types
from mcp.server import Server
from mcp.server.mcpserver import MCPServer

from benchmarks.bench_executor import LookupParams, LookupResult, lookup_handler, template
from benchmarks.timing import per_call_us
from wink import Filesystem, InMemoryFilesystem, Prompt, Session, ToolContext
from wink.providers import mcp as wink_mcp
from wink.runtime import ToolCall, ToolExecutor

ARGUMENTS = {"entity_id": "entity-42", "include_related": True}
NUMBER = 300
REPEAT = 3


def _prompt() -> Prompt:
    return Prompt(template).bind(resources={Filesystem: InMemoryFilesystem()})


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
    server = MCPServer("high-level")
    context = ToolContext(session=Session())

    @server.tool()
    def lookup_entity(entity_id: str, include_related: bool = False) -> LookupResult:
        """Fetch structured information for a given entity id."""
        result = lookup_handler(LookupParams(entity_id, include_related), context=context)
        assert result.value is not None
        return result.value

    return server


def _tools_call_us(server: Server[Any] | MCPServer, name: str) -> float:
    """Per-call cost of ``tools/call`` through the in-memory client, best of ``REPEAT``."""

    async def run() -> float:
        async with mcp.Client(server, mode="legacy") as client:
            call: Callable[[], Awaitable[types.CallToolResult]] = lambda: client.call_tool(  # noqa: E731
                name, ARGUMENTS
            )
            first = await call()
            if first.is_error:
                raise RuntimeError(f"{name} failed: {first.content}")
            best = float("inf")
            for _ in range(REPEAT):
                start = time.perf_counter()
                for _ in range(NUMBER):
                    await call()
                best = min(best, time.perf_counter() - start)
            return best / NUMBER * 1e6

    return anyio.run(run)


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
    floor = _tools_call_us(_floor_server(), "lookup_entity")
    high_level = _tools_call_us(_high_level_server(), "lookup_entity")
    served = _tools_call_us(wink_mcp.server(_prompt()), "lookup_entity")
    rows = [
        ("executor.execute (no protocol)", f"{execute:9.1f} us/call"),
        ("worker-thread hop of a no-op (anyio.to_thread)", f"{hop:9.1f} us/call"),
        ("floor: in-memory tools/call, fixed result", f"{floor:9.1f} us/call"),
        ("mcp MCPServer, same handler", f"{high_level:9.1f} us/call"),
        ("wink mcp.server (executor in a worker thread)", f"{served:9.1f} us/call"),
        ("  wink - floor", f"{served - floor:9.1f} us"),
        ("  executor + thread hop (what wink adds, at least)", f"{execute + hop:9.1f} us"),
        ("  wink / MCPServer (aim <= 1.5x)", f"{served / high_level:9.2f}x"),
    ]
    for label, figure in rows:
        print(f"{label:<52}{figure}")


if __name__ == "__main__":
    main()
