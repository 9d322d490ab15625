"""Gemini dialect: JSON Schema and OpenAPI-subset declarations, function calls and responses."""

from __future__ import annotations

import gc
from typing import Annotated, Any, Literal

import pytest
from provider_corpus import CORPUS, RECURSIVE, Empty
from pydantic import BaseModel, Field

from wink import Tool, ToolResult
from wink.providers import ProviderPayloadError, ProviderSchemaError, clear_caches, gemini
from wink.providers._openapi import openapi_schema
from wink.runtime.call import ToolCall


class Flag(BaseModel):
    on: bool | None = None
    level: int | str


def openapi(name: str) -> dict[str, Any]:
    parameters: dict[str, Any] = gemini.tool_specs([CORPUS[name]], form="openapi")[0]["parameters"]
    return parameters


def test_json_schema_form_carries_the_contract_schema() -> None:
    tool = CORPUS["optional_field"]
    assert gemini.tool_specs([tool]) == [
        {
            "name": "optional_field",
            "description": "Corpus shape: optional_field.",
            "parametersJsonSchema": tool.params_schema,
        }
    ]


def test_a_tool_without_arguments_has_no_parameters_in_either_form() -> None:
    for form in ("json_schema", "openapi"):
        specs = gemini.tool_specs([CORPUS["no_params"], CORPUS["empty_params"]], form=form)
        assert [sorted(spec) for spec in specs] == [["description", "name"]] * 2


def test_openapi_form_gives_a_nested_empty_object_no_properties_map() -> None:
    class Holder(BaseModel):
        options: Empty

    tool = Tool[Holder, None](name="holder", description="Holds an empty object.")
    assert gemini.tool_specs([tool], form="openapi")[0]["parameters"] == {
        "properties": {"options": {"type": "OBJECT"}},
        "required": ["options"],
        "type": "OBJECT",
    }


def test_openapi_form_makes_optional_fields_nullable() -> None:
    assert openapi("optional_field") == {
        "properties": {
            "query": {"type": "STRING"},
            "limit": {"type": "INTEGER", "nullable": True},
        },
        "required": ["query"],
        "type": "OBJECT",
    }


def test_openapi_form_inlines_references_and_keeps_descriptions() -> None:
    properties = openapi("nested_described")["properties"]
    address = {
        "properties": {
            "street": {"type": "STRING"},
            "city": {"description": "City name", "type": "STRING"},
        },
        "required": ["street", "city"],
        "type": "OBJECT",
    }
    assert properties["home"] == {**address, "description": "Where the person lives"}
    assert properties["work"] == {
        **address,
        "description": "A postal address.",
        "nullable": True,
    }


def test_openapi_form_inlines_a_model_used_twice() -> None:
    properties = openapi("same_model_twice")["properties"]
    assert properties["start"] == properties["end"]
    assert properties["start"]["properties"] == {"x": {"type": "NUMBER"}, "y": {"type": "NUMBER"}}


def test_openapi_form_rejects_a_recursive_type() -> None:
    with pytest.raises(ProviderSchemaError) as raised:
        gemini.tool_specs([CORPUS["recursive_model"]], form="openapi")
    assert str(raised.value) == (
        "tool 'recursive_model': field children[] refers back to TreeNode (a recursive type), "
        "which cannot be inlined; use form='json_schema', which keeps $ref"
    )


def test_json_schema_form_accepts_a_recursive_type() -> None:
    spec = gemini.tool_specs([CORPUS["recursive_model"]])[0]
    assert spec["parametersJsonSchema"]["$defs"]["TreeNode"]["properties"]["children"] == {
        "default": [],
        "items": {"$ref": "#/$defs/TreeNode"},
        "type": ["array", "null"],
    }


def test_openapi_form_turns_a_string_const_into_a_one_value_enum() -> None:
    assert openapi("single_literal")["properties"]["mode"] == {"type": "STRING", "enum": ["fast"]}


def test_openapi_form_keeps_integer_enums_typed_and_describes_the_choices() -> None:
    assert openapi("literal_ints")["properties"]["level"] == {
        "type": "INTEGER",
        "description": 'JSON Schema: {"enum": [1, 2, 3]}',
    }


class Mixed(BaseModel):
    choice: Literal["a", "b", 1]
    maybe: Literal["x", True] | None = None


def test_openapi_form_gives_choices_of_several_types_one_branch_per_type() -> None:
    tool = Tool[Mixed, None](name="mixed", description="Mixed choices.")
    parameters = gemini.tool_specs([tool], form="openapi")[0]["parameters"]
    assert parameters["properties"] == {
        "choice": {
            "anyOf": [{"type": "STRING", "enum": ["a", "b"]}, {"type": "INTEGER"}],
            "description": 'JSON Schema: {"enum": ["a", "b", 1]}',
        },
        "maybe": {
            "anyOf": [{"type": "STRING", "enum": ["x"]}, {"type": "BOOLEAN"}],
            "description": 'JSON Schema: {"enum": ["x", true]}',
            "nullable": True,
        },
    }
    types = pytest.importorskip("google.genai.types")
    assert types.Schema.model_validate(parameters).properties["choice"].any_of[1].type == "INTEGER"


def test_openapi_form_widens_a_tuple() -> None:
    assert openapi("tuple")["properties"]["pair"] == {
        "maxItems": 2,
        "minItems": 2,
        "type": "ARRAY",
        "items": {"anyOf": [{"type": "INTEGER"}, {"type": "STRING"}]},
        "description": 'JSON Schema: {"prefixItems": [{"type": "INTEGER"}, {"type": "STRING"}]}',
    }


def test_openapi_form_keeps_a_property_named_title() -> None:
    assert openapi("title_property")["properties"] == {
        "title": {"description": "The document title", "type": "STRING"},
        "body": {"type": "STRING"},
    }


def test_openapi_conversion_strips_titles_from_schema_nodes_only() -> None:
    schema = {
        "title": "Doc",
        "type": "object",
        "properties": {
            "title": {"title": "Title", "type": "string"},
            "tags": {"title": "Tags", "type": "array", "items": {"title": "Tag", "type": "string"}},
        },
        "required": ["title"],
    }
    assert openapi_schema(schema, "tool 'doc'") == {
        "type": "OBJECT",
        "properties": {
            "title": {"type": "STRING"},
            "tags": {"type": "ARRAY", "items": {"type": "STRING"}},
        },
        "required": ["title"],
    }


def test_openapi_form_drops_additional_properties_and_describes_a_mapping() -> None:
    assert openapi("free_form_dict")["properties"]["counts"] == {
        "type": "OBJECT",
        "description": 'JSON Schema: {"additionalProperties": {"type": "INTEGER"}}',
    }


def test_openapi_form_describes_formats_gemini_does_not_know() -> None:
    properties = openapi("formats")["properties"]
    assert properties["when"] == {"format": "date-time", "type": "STRING"}
    assert properties["ident"] == {
        "type": "STRING",
        "description": 'JSON Schema: {"format": "uuid"}',
    }
    assert properties["link"] == {
        "minLength": 1,
        "type": "STRING",
        "description": 'JSON Schema: {"format": "uri"}',
    }


def test_openapi_form_describes_exclusive_bounds() -> None:
    assert openapi("constraints")["properties"]["ratio"] == {
        "type": "NUMBER",
        "description": 'JSON Schema: {"exclusiveMaximum": 1, "exclusiveMinimum": 0}',
    }


def test_openapi_form_turns_a_discriminated_union_into_any_of() -> None:
    pet = openapi("discriminated_union")["properties"]["pet"]
    assert [branch["properties"]["kind"] for branch in pet["anyOf"]] == [
        {"default": "cat", "type": "STRING", "enum": ["cat"]},
        {"type": "STRING", "enum": ["dog"]},
    ]


class Leaf(BaseModel):
    kind: Literal["leaf"] = "leaf"
    colour: str


class Stone(BaseModel):
    kind: Literal["stone"] = "stone"
    weight: int


class Heap(BaseModel):
    item: Annotated[Leaf | Stone, Field(discriminator="kind")]
    first: Leaf


def test_openapi_form_keeps_a_union_branch_s_own_required_fields_beside_its_tag() -> None:
    tool = Tool[Heap, None](name="heap", description="Heap.")
    parameters = gemini.tool_specs([tool], form="openapi")[0]["parameters"]
    assert [branch["required"] for branch in parameters["properties"]["item"]["anyOf"]] == [
        ["colour", "kind"],
        ["kind", "weight"],
    ]
    assert parameters["properties"]["first"]["required"] == ["colour"]


def test_openapi_form_keeps_a_plain_union_as_any_of() -> None:
    tool = Tool[Flag, None](name="flag", description="Flag.")
    assert gemini.tool_specs([tool], form="openapi")[0]["parameters"]["properties"] == {
        "on": {"type": "BOOLEAN", "nullable": True},
        "level": {"anyOf": [{"type": "INTEGER"}, {"type": "STRING"}]},
    }


def test_a_name_gemini_rejects_is_reported() -> None:
    tool = Tool[Flag, None](name="1flag", description="Flag.")
    with pytest.raises(ProviderSchemaError, match=r"tool '1flag': Gemini function names start"):
        gemini.tool_specs([tool])


def test_form_option_rejects_an_unknown_value() -> None:
    with pytest.raises(ValueError, match=r"form must be 'json_schema' or 'openapi', got 'rest'"):
        gemini.tool_specs([CORPUS["decimal"]], form="rest")  # type: ignore[arg-type]  # under test


def test_function_calls_are_read_from_a_response() -> None:
    response = {
        "candidates": [
            {
                "content": {
                    "role": "model",
                    "parts": [
                        {"text": "Checking."},
                        {"functionCall": {"name": "flag", "args": {"level": 2}, "id": "fc1"}},
                    ],
                }
            }
        ]
    }
    assert gemini.parse_tool_calls(response) == [ToolCall("flag", {"level": 2}, "fc1")]


def test_function_calls_are_read_from_sdk_objects() -> None:
    types = pytest.importorskip("google.genai.types")
    content = types.Content(
        role="model", parts=[types.Part(function_call=types.FunctionCall(name="flag", args={}))]
    )
    assert gemini.parse_tool_calls(content) == [ToolCall("flag", {}, None)]


def test_snake_case_parts_are_read_too() -> None:
    parts = [{"function_call": {"name": "flag", "args": {"on": True}}}]
    assert gemini.parse_tool_calls(parts) == [ToolCall("flag", {"on": True}, None)]


def test_a_response_without_candidates_has_no_calls() -> None:
    assert gemini.parse_tool_calls({"candidates": []}) == []


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"candidates": 5}, "candidates: expected a list, got a number"),
        ({"candidates": [5]}, "candidates[0]: expected an object, got a number"),
        (
            {"candidates": [{"content": "x"}]},
            "candidates[0].content: expected an object, got a string",
        ),
        (
            {"candidates": [{"content": {"parts": {}}}]},
            "candidates[0].content.parts: expected a list, got an object",
        ),
        (
            {"parts": [{"functionCall": 3}]},
            "parts[0].functionCall: expected an object, got a number",
        ),
    ],
)
def test_a_response_of_the_wrong_shape_is_reported_with_its_place(
    payload: dict[str, Any], message: str
) -> None:
    with pytest.raises(ProviderPayloadError) as raised:
        gemini.parse_tool_calls(payload)
    assert str(raised.value) == message


def test_a_function_call_without_a_name_is_reported() -> None:
    with pytest.raises(ProviderPayloadError) as raised:
        gemini.parse_tool_calls({"parts": [{"functionCall": {"args": {}}}]})
    assert str(raised.value) == (
        "parts[0].functionCall: expected a non-empty string 'name', got None"
    )


def test_a_result_becomes_a_function_response_with_output() -> None:
    result = ToolResult.ok(Flag(on=True, level=1), message="Set.")
    assert gemini.tool_message(ToolCall("flag", {}, "fc1"), result) == {
        "role": "user",
        "parts": [
            {
                "functionResponse": {
                    "name": "flag",
                    "response": {"output": 'Set.\n\n{"on":true,"level":1}'},
                    "id": "fc1",
                }
            }
        ],
    }


def test_a_failure_becomes_a_function_response_with_error() -> None:
    part = gemini.function_response_part(ToolCall("flag", {}), ToolResult.error("Locked."))
    assert part == {"functionResponse": {"name": "flag", "response": {"error": "Locked."}}}


def test_parallel_results_share_one_content() -> None:
    results = [
        (ToolCall("flag", {}), ToolResult.ok(None, message="a")),
        (ToolCall("flag", {}), ToolResult.ok(None, message="b")),
    ]
    assert gemini.tool_results_message(results)["parts"] == [
        {"functionResponse": {"name": "flag", "response": {"output": "a"}}},
        {"functionResponse": {"name": "flag", "response": {"output": "b"}}},
    ]


def test_emitting_gemini_openapi_specs_cold_leaves_no_garbage_for_the_collector() -> None:
    tools = [CORPUS[name] for name in sorted(set(CORPUS) - RECURSIVE)]
    gemini.tool_specs(tools, form="openapi")
    clear_caches()
    gc.collect()
    gc.disable()
    try:
        gemini.tool_specs(tools, form="openapi")
        assert gc.collect() == 0
    finally:
        gc.enable()
