"""The notes tools served over MCP, with read-before-write and rollback on a real folder.

Serve them to an MCP client (Claude Desktop, an IDE, an agent framework)::

    WINK_NOTES_DIR=~/notes wink serve examples/served_notes.py:prompt

The notes live in ``WINK_NOTES_DIR`` (default ``./notes``, created when missing).
Each client gets its own session: a client must read a note before it may
overwrite it, whatever other clients read. A call that fails leaves the folder
as it was.

``python examples/served_notes.py`` runs the same server for an in-process MCP
client (no network, a temporary folder) and prints what the client sees.
"""

from __future__ import annotations

import logging
import os
import tempfile
from pathlib import Path
from typing import Any

import anyio
import mcp
from mcp.types import TextContent
from notes_agent import template

from wink import HostFilesystem, Prompt
from wink.providers import mcp as wink_mcp


def notes_prompt(folder: str | os.PathLike[str]) -> Prompt:
    """The notes prompt with its notes in ``folder`` (created when missing)."""
    Path(folder).mkdir(parents=True, exist_ok=True)
    return Prompt(template).bind(resources={HostFilesystem: HostFilesystem(folder)})


def __getattr__(name: str) -> Prompt:
    # ``prompt`` is built when first asked for (by ``wink serve``), so importing
    # this module for ``main`` creates no notes folder.
    if name == "prompt":
        return notes_prompt(os.environ.get("WINK_NOTES_DIR", "notes"))
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


async def show(served: wink_mcp.PromptServer, folder: Path) -> None:
    """List the tools and make a few calls as an MCP client would."""
    calls: list[tuple[str, dict[str, Any]]] = [
        ("write_file", {"path": "todo.md", "text": "milk"}),
        ("read_file", {"path": "todo.md"}),
        ("write_file", {"path": "todo.md", "text": "bread\nmilk"}),
        ("write_file", {"path": "todo.md", "text": "\nTODO: eggs", "append": True}),
        ("write_file", {"path": "todo.md", "txt": "oops"}),
    ]
    async with mcp.Client(served) as client:
        listed = await client.list_tools()
        print("tools:", ", ".join(tool.name for tool in listed.tools))
        for name, arguments in calls:
            result = await client.call_tool(name, arguments)
            status = "ERR" if result.is_error else "ok "
            text = "".join(b.text for b in result.content if isinstance(b, TextContent))
            print(f"{status} {name} -> {text!r}")
    print(f"todo.md on disk = {(folder / 'todo.md').read_text()!r}")


def main() -> None:
    """Serve a temporary notes folder to an in-process client."""
    # A handler fails on purpose here to show the rollback; its failure is printed
    # below as the client sees it, so the executor's warning would only repeat it.
    logging.getLogger("wink.runtime.executor").setLevel(logging.ERROR)
    with tempfile.TemporaryDirectory() as directory:
        folder = Path(directory)
        (folder / "todo.md").write_text("bread")
        anyio.run(show, wink_mcp.server(notes_prompt(folder)), folder)


if __name__ == "__main__":
    main()
