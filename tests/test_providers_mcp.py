"""MCP dialect: tools/list entries, tools/call requests, CallToolResult payloads."""

from __future__ import annotations

from typing import Any, Literal

import jsonschema
import pytest
from provider_corpus import CORPUS, Address, Listing, TreeNode
from pydantic import BaseModel

from wink import Tool, ToolResult
from wink.contract.walk import iter_schema_nodes
from wink.providers import ProviderPayloadError, mcp
from wink.runtime.call import ToolCall


class Secret(BaseModel):
    token: str


def test_entry_has_input_and_output_schema() -> None:
    tool = CORPUS["optional_field"]
    assert mcp.tool_specs([tool]) == [
        {
            "name": "optional_field",
            "description": "Corpus shape: optional_field.",
            "inputSchema": tool.params_schema,
            "outputSchema": {
                "properties": {"names": {"items": {"type": "string"}, "type": "array"}},
                "required": ["names"],
                "type": "object",
                "additionalProperties": False,
            },
        }
    ]


def test_a_tool_returning_nothing_has_no_output_schema() -> None:
    assert "outputSchema" not in mcp.tool_specs([CORPUS["constraints"]])[0]


def test_a_result_that_is_not_an_object_is_wrapped_in_a_result_property() -> None:
    assert mcp.tool_specs([CORPUS["non_none_default"]])[0]["outputSchema"] == {
        "type": "object",
        "properties": {"result": {"items": {"type": "string"}, "type": "array"}},
        "required": ["result"],
        "additionalProperties": False,
    }


def test_a_wrapped_result_has_its_references_inlined() -> None:
    output = mcp.tool_specs([CORPUS["discriminated_union"]])[0]["outputSchema"]
    assert [branch["properties"]["kind"] for branch in output["properties"]["result"]["anyOf"]] == [
        {"const": "cat", "default": "cat", "type": "string"},
        {"const": "dog", "type": "string"},
    ]
    assert "$defs" not in output


def test_every_reference_left_in_a_corpus_schema_carries_a_type() -> None:
    # Clients without $ref support (the MCP Inspector) send a field they cannot
    # type as a string; only a recursive reference, which cannot be inlined, stays.
    left: list[tuple[str, str, str, Any]] = []
    for name, tool in CORPUS.items():
        for key, schema in mcp.tool_specs([tool])[0].items():
            if key.endswith("Schema"):
                left.extend(
                    (name, key, pointer, node.get("type"))
                    for pointer, node in iter_schema_nodes(schema)
                    if "$ref" in node
                )
    assert sorted(left) == [
        ("recursive_model", "inputSchema", "#/$defs/TreeNode/properties/children/items", "object"),
        ("recursive_model", "inputSchema", "#/properties/children/items", "object"),
        ("recursive_model", "outputSchema", "#/$defs/TreeNode/properties/children/items", "object"),
        ("recursive_model", "outputSchema", "#/properties/children/items", "object"),
    ]


def test_a_nested_model_parameter_is_inlined_with_its_type() -> None:
    schema = mcp.tool_specs([CORPUS["nested_described"]])[0]["inputSchema"]
    assert schema["properties"]["home"] == {
        "description": "Where the person lives",
        "properties": {
            "street": {"type": "string"},
            "city": {"description": "City name", "type": "string"},
        },
        "required": ["street", "city"],
        "type": "object",
        "additionalProperties": False,
    }


class Paging(BaseModel):
    size: int = 20


class Query(BaseModel):
    text: str
    limit: int = 5
    level: Literal[1, 2] = 1
    paging: Paging = Paging()


def test_a_field_with_a_default_is_advertised_as_taking_null_for_it() -> None:
    tool = Tool[Query, None](name="query", description="Query.", handler=lambda p, *, context: None)
    schema = mcp.tool_specs([tool])[0]["inputSchema"]
    properties = schema["properties"]
    assert properties["text"] == {"type": "string"}
    assert properties["limit"] == {"default": 5, "type": ["integer", "null"]}
    assert properties["level"] == {
        "default": 1,
        "anyOf": [{"enum": [1, 2], "type": "integer"}, {"type": "null"}],
    }
    assert properties["paging"]["type"] == ["object", "null"]
    assert properties["paging"]["properties"]["size"] == {
        "default": 20,
        "type": ["integer", "null"],
    }
    # What the schema allows, the contract takes, and the other way round.
    arguments = {"text": "a", "limit": None, "level": None, "paging": {"size": None}}
    jsonschema.validate(arguments, schema)
    assert tool.params_contract.parse(arguments) == Query(text="a")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"text": None}, schema)


def test_a_result_schema_is_not_made_nullable() -> None:
    tool = Tool[Query, Query](name="echo", description="Echo.", handler=lambda p, *, context: None)
    output = mcp.tool_specs([tool])[0]["outputSchema"]
    assert output["properties"]["limit"] == {"default": 5, "type": "integer"}


def test_a_recursive_result_is_inlined_into_an_object() -> None:
    output = mcp.tool_specs([CORPUS["recursive_model"]])[0]["outputSchema"]
    assert output["type"] == "object"
    assert "$ref" not in output


def test_a_tools_call_request_becomes_a_tool_call() -> None:
    request = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "optional_field", "arguments": {"query": "x"}},
    }
    assert mcp.parse_tool_call(request) == ToolCall("optional_field", {"query": "x"}, "7")


def test_bare_params_become_a_tool_call_without_id() -> None:
    assert mcp.parse_tool_call({"name": "no_params"}) == ToolCall("no_params", {}, None)


def test_sdk_request_params_become_a_tool_call() -> None:
    types = pytest.importorskip("mcp.types")
    params = types.CallToolRequestParams(name="formats", arguments={"when": "now"})
    assert mcp.parse_tool_call(params) == ToolCall("formats", {"when": "now"}, None)


def test_another_method_is_reported() -> None:
    with pytest.raises(ProviderPayloadError, match=r"expected a tools/call request, got method"):
        mcp.parse_tool_call({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})


def test_a_call_without_name_is_reported() -> None:
    with pytest.raises(ProviderPayloadError) as raised:
        mcp.parse_tool_call({"method": "tools/call", "params": {"arguments": {}}})
    assert str(raised.value) == "params: expected a non-empty string 'name', got None"


def test_an_object_result_is_structured_content_as_is() -> None:
    result = ToolResult.ok(Address(street="Main", city="Oslo"), message="Found.")
    assert mcp.call_tool_result(result, tool=CORPUS["nested_described"]) == {
        "content": [{"type": "text", "text": 'Found.\n\n{"street":"Main","city":"Oslo"}'}],
        "isError": False,
        "structuredContent": {"street": "Main", "city": "Oslo"},
    }


def test_a_list_result_is_structured_content_under_result() -> None:
    result = ToolResult.ok(["a", "b"], message="Two.")
    payload = mcp.call_tool_result(result, tool=CORPUS["non_none_default"])
    assert payload["structuredContent"] == {"result": ["a", "b"]}


def test_a_recursive_result_is_dumped_whole() -> None:
    tree = TreeNode(value=1, children=[TreeNode(value=2)])
    payload = mcp.call_tool_result(ToolResult.ok(tree), tool=CORPUS["recursive_model"])
    assert payload["structuredContent"] == {
        "value": 1,
        "children": [{"value": 2, "children": []}],
    }


def test_a_failure_is_an_error_without_structured_content() -> None:
    payload = mcp.call_tool_result(ToolResult.error("Nope."), tool=CORPUS["optional_field"])
    assert payload == {"content": [{"type": "text", "text": "Nope."}], "isError": True}


def test_an_excluded_value_stays_out_of_the_text_but_is_structured_content() -> None:
    result = ToolResult(
        message="Stored.", value=Listing(names=["x"]), exclude_value_from_context=True
    )
    assert mcp.call_tool_result(result, tool=CORPUS["optional_field"]) == {
        "content": [{"type": "text", "text": "Stored."}],
        "isError": False,
        "structuredContent": {"names": ["x"]},
    }


def test_no_value_of_an_optional_result_type_is_a_null_result() -> None:
    tool = Tool[Secret, Listing | None](name="maybe", description="Maybe.")
    result = ToolResult(message="Nothing found.", value=None)
    assert mcp.call_tool_result(result, tool=tool) == {
        "content": [{"type": "text", "text": "Nothing found."}],
        "isError": False,
        "structuredContent": {"result": None},
    }


def test_no_value_of_a_result_type_that_refuses_none_has_no_structured_content() -> None:
    result = ToolResult(message="Nothing.", value=None)
    assert mcp.call_tool_result(result, tool=CORPUS["non_none_default"]) == {
        "content": [{"type": "text", "text": "Nothing."}],
        "isError": False,
    }


def test_an_empty_result_has_no_content_blocks() -> None:
    payload = mcp.call_tool_result(ToolResult(message=""), tool=CORPUS["constraints"])
    assert payload == {"content": [], "isError": False}
