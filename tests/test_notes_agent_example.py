"""The demo example (``make demo``) runs end to end with the outcomes it shows."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

EXAMPLE = Path(__file__).parent.parent / "examples" / "notes_agent.py"


@pytest.fixture(scope="module")
def example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("notes_agent_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_demo_prints_each_outcome_and_keeps_only_successful_writes(
    example: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    example.main()
    out = capsys.readouterr().out
    calls = out.split("# Tool calls\n")[1].split("\n\n# State")[0].splitlines()
    assert [line.split(" ", 1)[0] for line in calls] == ["ERR", "ok", "ok", "ERR", "ERR", "ERR"]
    assert "already exists and has not been read" in calls[0]
    assert calls[3].endswith(
        "\"Tool 'write_file' raised ValueError: notes must not contain TODO markers\""
    )
    assert "txt: unknown field (allowed: path, text, append)" in calls[4]
    assert calls[5].endswith(
        "\"Unknown tool 'delete_file'. Available tools: read_file, write_file.\""
    )
    assert out.endswith("todo.md = 'bread\\nmilk'\n6 ToolInvoked events, 2 successful\n")


def test_null_for_a_defaulted_field_reaches_the_handler_as_the_default(
    example: ModuleType,
) -> None:
    params = example.write_tool.params_contract.parse(
        '{"path": "a.md", "text": "x", "append": null}'
    )
    assert params == example.WriteNote(path="a.md", text="x", append=False)
