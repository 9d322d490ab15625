"""Servers wink did not write, for the tests of ``McpToolsSection``.

``demo``: the ``mcp`` package's own ``MCPServer`` (formerly FastMCP); run as a
script it serves over stdio, or with ``http PORT`` over Streamable HTTP on
127.0.0.1. ``crafted(...)``: a low-level ``Server`` listing exactly the tools given,
for what ``MCPServer`` never sends (invalid schemas, mismatched results).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import mcp_types as types
from mcp.server import Server
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel

demo = MCPServer("demo", log_level="WARNING", instructions="Arithmetic and echoes.")
calls: list[str] = []
"""The demo tools called in this process, in order."""


class Sum(BaseModel):
    total: int


@demo.tool()
def add(a: int, b: int) -> Sum:
    """Add two integers.

    The second paragraph is shown in the section's text only."""
    calls.append("add")
    return Sum(total=a + b)


@demo.tool(annotations=types.ToolAnnotations(read_only_hint=True))
def echo(text: str) -> str:
    """Echo the text back."""
    calls.append("echo")
    return text


@demo.tool()
def fail(reason: str) -> str:
    """Always fails."""
    calls.append("fail")
    raise ToolError(reason)


@demo.tool()
def sleep(seconds: float) -> str:
    """Sleep a while."""
    time.sleep(seconds)
    return "awake"


@demo.tool()
def crash() -> str:
    """End the server's process."""
    os._exit(3)


@demo.tool()
def pid() -> int:
    """The server's process id."""
    return os.getpid()


ListingHandler = Callable[[Any, Any], Awaitable[types.ListToolsResult]]
CallHandler = Callable[[Any, types.CallToolRequestParams], Awaitable[types.CallToolResult]]


def crafted(
    tools: list[dict[str, Any]],
    answer: Callable[[Any, types.CallToolRequestParams], Awaitable[types.CallToolResult]],
) -> Server[Any]:
    """A low-level server listing ``tools`` (MCP JSON) and answering every call with ``answer``."""
    listing = types.ListToolsResult(tools=[types.Tool.model_validate(tool) for tool in tools])

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return listing

    return Server("crafted", on_list_tools=list_tools, on_call_tool=answer)


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        demo.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        demo.run("stdio")
