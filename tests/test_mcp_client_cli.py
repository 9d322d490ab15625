"""``wink tools`` and ``wink schemas export|check`` on tools imported from another MCP server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from wink.cli import main

SERVER = '''
from mcp.server.mcpserver import MCPServer

server = MCPServer("shop", log_level="WARNING")


@server.tool()
def search(query: str, limit: int = 10) -> list[str]:
    """Search the shop."""
    return [query] * limit
'''

TARGET = """
from wink.providers.mcp import McpServer, McpToolsSection

from {server_module} import server

section = McpToolsSection(McpServer.in_process(server), prefix="shop_")
"""

STDIO_TARGET = """
import sys

from wink.providers.mcp import McpServer, McpToolsSection

section = McpToolsSection(McpServer.stdio([sys.executable, {script!r}], name="shop"))
"""

LIMIT_REQUIRED = ("limit: int = 10", "limit: int")


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in (
        "WINK_PROVIDER",
        "WINK_STRICT",
        "WINK_SCHEMA_DIR",
        "WINK_TARGETS",
        "WINK_DIALECTS",
        "WINK_WIRE",
    ):
        monkeypatch.delenv(name, raising=False)


def served(tmp_path: Path, name: str, *edits: tuple[str, str]) -> str:
    """Write the shop server (with ``edits``) and a target importing it; the target's name."""
    code = SERVER
    for old, new in edits:
        assert old in code
        code = code.replace(old, new)
    # Modules of their own: a target's module is imported once per process.
    (tmp_path / f"{name}_server.py").write_text(code)
    (tmp_path / f"{name}.py").write_text(TARGET.format(server_module=f"{name}_server"))
    return f"{name}.py:section"


def test_wink_tools_prints_an_imported_tool_like_a_local_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = served(tmp_path, "shop_tools")
    assert main(["tools", target, "--provider", "mcp"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert json.loads(captured.out) == [
        {
            "name": "shop_search",
            "description": "Search the shop.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "query": {"type": "string"},
                    "limit": {"type": ["integer", "null"], "default": 10},
                },
                "required": ["query"],
                "additionalProperties": False,
            },
            "outputSchema": {
                "type": "object",
                "properties": {"result": {"type": "array", "items": {"type": "string"}}},
                "required": ["result"],
                "additionalProperties": False,
            },
        }
    ]


def test_wink_tools_imports_from_a_stdio_server_started_by_the_target(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "stdio_server.py").write_text(SERVER + '\nserver.run("stdio")\n')
    script = str(tmp_path / "stdio_server.py")
    (tmp_path / "stdio_target.py").write_text(STDIO_TARGET.format(script=script))
    assert main(["tools", "stdio_target.py:section", "--provider", "openai"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert json.loads(captured.out) == [
        {
            "type": "function",
            "function": {
                "name": "search",
                "description": "Search the shop.",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "query": {"type": "string"},
                        "limit": {
                            "anyOf": [{"type": "integer"}, {"type": "null"}],
                            "description": "Default: 10. null means the default.",
                        },
                    },
                    "required": ["query", "limit"],
                    "additionalProperties": False,
                },
                "strict": True,
            },
        }
    ]


def test_export_writes_the_imported_tools_files_and_check_passes_on_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = served(tmp_path, "shop_export")
    assert main(["schemas", "export", target, "--out", "schemas", "--dialect", "mcp"]) == 0
    assert capsys.readouterr().out == "wrote 3 files to schemas (0 unchanged, 0 stale removed)\n"
    assert sorted(
        path.relative_to(tmp_path / "schemas").as_posix()
        for path in (tmp_path / "schemas").rglob("*.json")
    ) == ["contract/shop_search.json", "index.json", "mcp/shop_search.json"]
    contract = json.loads((tmp_path / "schemas" / "contract" / "shop_search.json").read_text())
    assert contract["params"]["required"] == ["query"]
    assert main(["schemas", "check", target, "--dir", "schemas", "--dialect", "mcp"]) == 0
    assert capsys.readouterr().out == "schemas is up to date (3 files)\n"


def test_a_property_the_upstream_server_now_requires_fails_check_as_a_local_tool_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = served(tmp_path, "shop_before")
    assert main(["schemas", "export", before, "--out", "schemas", "--dialect", "mcp"]) == 0
    capsys.readouterr()
    after = served(tmp_path, "shop_after", LIMIT_REQUIRED)
    assert main(["schemas", "check", after, "--dir", "schemas", "--dialect", "mcp"]) == 1
    captured = capsys.readouterr()
    assert captured.out.splitlines() == [
        "schemas differs from the code: 2 changes in 1 tool (1 breaking, 0 warning, 1 info)",
        "shop_search:",
        "  breaking params-property-became-required at /params/properties/limit: limit is now "
        "required; calls that leave it out are now refused",
        "  info     params-default-removed at /params/properties/limit: limit: default of 10 "
        "removed",
    ]
    assert captured.err == (
        "wink: schemas: 1 change at or above --fail-on breaking; accept them in an --ignore "
        f"file, or record the new schemas with: wink schemas export {after} --out schemas "
        "--dialect mcp\n"
    )


def test_check_as_json_names_the_rule_level_and_pointer_of_the_upstream_change(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = served(tmp_path, "shop_json_before")
    assert main(["schemas", "export", before, "--out", "schemas", "--dialect", "mcp"]) == 0
    capsys.readouterr()
    after = served(tmp_path, "shop_json_after", LIMIT_REQUIRED)
    check = ["schemas", "check", after, "--dir", "schemas", "--dialect", "mcp"]
    assert main([*check, "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert [
        (change["tool"], change["rule"], change["level"], change["pointer"])
        for change in report["changes"]
    ] == [
        ("shop_search", "params-default-removed", "info", "/params/properties/limit"),
        ("shop_search", "params-property-became-required", "breaking", "/params/properties/limit"),
    ]
