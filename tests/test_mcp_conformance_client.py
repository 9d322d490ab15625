"""examples/mcp_conformance_client.py, the program ``make conformance`` runs as the
client of the suite's client scenarios, against servers of this process."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import mcp_types as types
import pytest
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from wink.providers.mcp import McpServer

EXAMPLES = Path(__file__).parent.parent / "examples"


def load_program() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "mcp_conformance_client", EXAMPLES / "mcp_conformance_client.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


program = load_program()

REQUESTED: types.ElicitRequestedSchema = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "default": "John Doe"},
        "age": {"type": "integer", "default": 30},
        "score": {"type": "number", "default": 95.5},
        "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
        "verified": {"type": "boolean", "default": True},
        "nickname": {"type": "string"},
    },
    "required": [],
}


def suite_like_server() -> MCPServer:
    """The suite's client scenarios in small: a tool with arguments, one that elicits."""
    server = MCPServer("suite-like", log_level="WARNING")

    @server.tool()
    def add_numbers(a: float, b: float) -> str:
        """Add two numbers together."""
        return f"The sum of {a:g} and {b:g} is {a + b:g}"

    @server.tool()
    async def ask_defaults(ctx: Context) -> str:
        """Ask the client for a form it may answer with defaults."""
        answer = await ctx.request_context.session.elicit_form(
            "accept with defaults", REQUESTED, ctx.request_id
        )
        return json.dumps({"action": answer.action, "content": answer.content})

    return server


def test_every_tool_is_called_with_its_arguments_and_elicitation_gets_the_defaults(
    capsys: pytest.CaptureFixture[str],
) -> None:
    server = McpServer.in_process(suite_like_server(), elicitation=program.accept_with_defaults)
    assert program.call_every_tool(server) == 0
    answer = {
        "action": "accept",
        "content": {
            "name": "John Doe",
            "age": 30,
            "score": 95.5,
            "status": "active",
            "verified": True,
        },
    }
    assert capsys.readouterr().out.splitlines() == [
        "add_numbers: ok: The sum of 2 and 3 is 5",
        f"ask_defaults: ok: {json.dumps(answer)}",
    ]


def test_a_failed_call_is_counted_and_printed_with_its_message(
    capsys: pytest.CaptureFixture[str],
) -> None:
    failing = MCPServer("failing", log_level="WARNING")

    @failing.tool()
    def refuse() -> str:
        """Always fails."""
        raise ToolError("not today")

    assert program.call_every_tool(McpServer.in_process(failing)) == 1
    assert capsys.readouterr().out == ("refuse: failed: Error executing tool refuse: not today\n")


def test_url_elicitation_is_refused_saying_only_forms_are_answered() -> None:
    params = types.ElicitRequestURLParams(
        message="sign in", url="https://example.com/login", elicitation_id="e1"
    )
    answer: Any = asyncio.run(program.accept_with_defaults(None, params))
    assert answer == types.ErrorData(
        code=types.INVALID_REQUEST, message="this client answers form elicitations only"
    )


def test_without_a_server_url_the_program_prints_its_usage_and_exits_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert program.main(["mcp_conformance_client.py"]) == 2
    assert capsys.readouterr().err == (
        "usage: mcp_conformance_client.py SERVER_URL (the suite appends it)\n"
    )
