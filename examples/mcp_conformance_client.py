"""wink's MCP client as the official conformance suite's client scenarios run it.

``make conformance`` runs, for each client scenario::

    conformance client --scenario <name> --command "python examples/mcp_conformance_client.py"

The suite starts a test server of its own and appends its URL to the command; the
scenario's name is in ``MCP_CONFORMANCE_SCENARIO``. The program does what an
application does with another server's tools, with wink's public API only: it
imports them as an ``McpToolsSection``, calls each through a ``ToolExecutor`` and
answers the server's elicitation requests with the defaults the server asked for.
It exits non-zero when a tool call fails, printing why.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from typing import Any

import mcp_types as types
from mcp.client.session import ClientRequestContext

from wink import Prompt, PromptTemplate, Session, ToolCall, ToolExecutor
from wink.providers.mcp import McpServer, McpToolsSection

ARGUMENTS: Mapping[str, Mapping[str, Any]] = {"add_numbers": {"a": 2, "b": 3}}
"""Arguments for the suite's tools that take any; every other tool is called with none."""


async def accept_with_defaults(
    context: ClientRequestContext, params: types.ElicitRequestParams
) -> types.ElicitResult | types.ErrorData:
    """Accept a form elicitation, answering each field with the default the server gave it."""
    if not isinstance(params, types.ElicitRequestFormParams):
        return types.ErrorData(
            code=types.INVALID_REQUEST, message="this client answers form elicitations only"
        )
    properties = params.requested_schema.get("properties", {})
    content = {
        name: schema["default"]
        for name, schema in properties.items()
        if isinstance(schema, Mapping) and "default" in schema
    }
    return types.ElicitResult(action="accept", content=content)


def call_every_tool(server: McpServer) -> int:
    """Import ``server``'s tools and call each once, printing each result; the failed calls."""
    section = McpToolsSection(server)
    prompt = Prompt(PromptTemplate(ns="conformance", key="client", sections=[section]))
    failures = 0
    with prompt.resources:  # closes the session's connection to the server
        executor = ToolExecutor(prompt=prompt, session=Session())
        for tool in section.tools:
            arguments = json.dumps(ARGUMENTS.get(tool.name, {}))
            result = executor.execute(ToolCall(tool.name, arguments))
            print(f"{tool.name}: {'ok' if result.success else 'failed'}: {result.message}")
            failures += not result.success
    return failures


def main(argv: list[str]) -> int:
    """Run the scenario the suite names against the server URL it passes last."""
    if len(argv) < 2:
        print(f"usage: {argv[0]} SERVER_URL (the suite appends it)", file=sys.stderr)
        return 2
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "conformance")
    server = McpServer.http(argv[-1], name=scenario, elicitation=accept_with_defaults)
    return 1 if call_every_tool(server) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
