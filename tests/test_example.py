"""The first example of the Tool Runtime Specification runs on wink as written."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from wink import ToolContext, ToolResult

EXAMPLE = Path(__file__).parent.parent / "examples" / "lookup_entity.py"


@pytest.fixture(scope="module")
def example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("lookup_entity_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # Registered so that the dataclasses' string annotations resolve in their module.
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


EXPECTED_SCHEMA = {
    "properties": {
        "entity_id": {"description": "Global identifier to fetch", "type": "string"},
        "include_related": {"default": False, "type": "boolean"},
    },
    "required": ["entity_id"],
    "type": "object",
    "additionalProperties": False,
}


def test_main_prints_the_rendered_prompt_and_the_tool_schema(
    example: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    example.main()
    assert capsys.readouterr().out == (
        "## Guidance\n\nUse tools when you need up-to-date context.\n\n"
        "tool lookup_entity: Fetch structured information for a given entity id.\n"
        + json.dumps(EXPECTED_SCHEMA, indent=2)
        + "\n"
    )


def test_the_spec_assertions_hold(example: ModuleType) -> None:
    rendered = example.prompt.render()
    tools = rendered.tools
    assert tools[0].name == "lookup_entity"
    assert rendered.text == "## Guidance\n\nUse tools when you need up-to-date context."
    assert tools[0].params_schema == EXPECTED_SCHEMA
    assert rendered.binding("lookup_entity").section_path == "guidance"


def test_the_handler_answers_a_call_parsed_through_the_contract(example: ModuleType) -> None:
    tool = example.prompt.render().tools[0]
    params = tool.params_contract.parse('{"entity_id": "e-42"}')
    result = tool.handler(params, context=ToolContext())
    assert result == ToolResult(
        message="Fetched entity e-42.",
        value=example.LookupResult(entity_id="e-42", document_url="https://example.com"),
    )
    assert result.render() == '{"entity_id":"e-42","document_url":"https://example.com"}'
