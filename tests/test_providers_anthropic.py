"""Anthropic dialect: tool specs, strict tool use and its limits, tool_use and tool_result."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import pytest
from provider_corpus import CORPUS
from pydantic import BaseModel, Field

from wink import Tool, ToolResult
from wink.providers import ProviderPayloadError, ProviderSchemaError, anthropic
from wink.runtime.call import ToolCall


class Note(BaseModel):
    text: str


class ManyOptional(BaseModel):
    a: int = 0
    b: int = 0
    c: int = 0
    d: int = 0
    e: int = 0


class ManyUnions(BaseModel):
    a: int | None = None
    b: int | None = None
    c: int | None = None
    d: int | None = None
    e: int | None = None


def input_schema(tool: Tool[Any, Any], **options: Any) -> dict[str, Any]:
    schema: dict[str, Any] = anthropic.tool_specs([tool], **options)[0]["input_schema"]
    return schema


def test_spec_has_name_description_and_input_schema() -> None:
    note = Tool[Note, None](name="note", description="Take a note.")
    assert anthropic.tool_specs([note]) == [
        {
            "name": "note",
            "description": "Take a note.",
            "input_schema": {
                "properties": {"text": {"type": "string"}},
                "required": ["text"],
                "type": "object",
                "additionalProperties": False,
            },
        }
    ]


def test_a_recursive_root_is_inlined_into_an_object() -> None:
    schema = input_schema(CORPUS["recursive_model"])
    assert schema["type"] == "object"
    assert "$ref" not in schema
    assert schema["properties"]["children"]["items"] == {"$ref": "#/$defs/TreeNode"}


def test_strict_adds_the_flag_and_keeps_optional_fields_optional() -> None:
    spec = anthropic.tool_specs([CORPUS["non_none_default"]], strict=True)[0]
    assert spec["strict"] is True
    assert spec["input_schema"] == {
        "properties": {
            "query": {"type": "string"},
            "limit": {"default": 10, "type": ["integer", "null"]},
            "tags": {"default": [], "items": {"type": "string"}, "type": ["array", "null"]},
        },
        "required": ["query"],
        "type": "object",
        "additionalProperties": False,
    }


class Mode(BaseModel):
    mode: Literal["fast"] = "fast"
    level: int = 1


def test_strict_requires_a_one_value_field_whose_default_is_that_value() -> None:
    tool = Tool[Mode, None](name="mode", description="Pick a mode.")
    assert input_schema(tool, strict=True) == {
        "properties": {
            "mode": {"const": "fast", "default": "fast", "type": "string"},
            "level": {"default": 1, "type": ["integer", "null"]},
        },
        "required": ["mode"],
        "type": "object",
        "additionalProperties": False,
    }


def test_strict_moves_numeric_and_length_bounds_into_the_description() -> None:
    properties = input_schema(CORPUS["constraints"], strict=True)["properties"]
    assert properties == {
        "count": {"type": "integer", "description": 'JSON Schema: {"maximum": 10, "minimum": 1}'},
        "ratio": {
            "type": "number",
            "description": 'JSON Schema: {"exclusiveMaximum": 1, "exclusiveMinimum": 0}',
        },
        "name": {
            "type": "string",
            "description": 'JSON Schema: {"maxLength": 20, "minLength": 1}',
        },
    }


def test_strict_keeps_the_uri_format_anthropic_supports() -> None:
    link = input_schema(CORPUS["formats"], strict=True)["properties"]["link"]
    assert link == {
        "format": "uri",
        "type": "string",
        "description": 'JSON Schema: {"minLength": 1}',
    }


def test_strict_keeps_min_items_of_one_and_describes_larger_ones() -> None:
    class Lists(BaseModel):
        some: Annotated[list[str], Field(min_length=1)]
        pair: Annotated[list[str], Field(min_length=2)]

    tool = Tool[Lists, None](name="lists", description="Lists.")
    assert input_schema(tool, strict=True)["properties"] == {
        "some": {"items": {"type": "string"}, "minItems": 1, "type": "array"},
        "pair": {
            "items": {"type": "string"},
            "type": "array",
            "description": 'JSON Schema: {"minItems": 2}',
        },
    }


def test_strict_turns_one_of_into_any_of() -> None:
    pet = input_schema(CORPUS["discriminated_union"], strict=True)["properties"]["pet"]
    assert pet == {"anyOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}]}


def test_strict_rejects_a_recursive_type() -> None:
    with pytest.raises(ProviderSchemaError) as raised:
        anthropic.tool_specs([CORPUS["recursive_model"]], strict=True)
    assert str(raised.value) == (
        "tool 'recursive_model': type TreeNode is recursive (it contains itself); "
        "Anthropic strict tool use does not support recursive schemas"
    )


def test_strict_rejects_a_free_form_mapping_naming_the_field() -> None:
    with pytest.raises(ProviderSchemaError, match=r"'free_form_dict': field counts is a free-form"):
        anthropic.tool_specs([CORPUS["free_form_dict"]], strict=True)


def test_strict_over_the_optional_parameter_limit_is_rejected() -> None:
    tools = [
        Tool[ManyOptional, None](name=f"opt{index}", description="Many optional.")
        for index in range(5)
    ]
    with pytest.raises(ProviderSchemaError) as raised:
        anthropic.tool_specs(tools, strict=True)
    assert str(raised.value) == (
        "Anthropic strict tool use allows at most 24 optional parameters per request; the strict "
        "tools (opt0, opt1, opt2, opt3, opt4) have 25: mark fewer tools strict"
    )


def test_the_same_tools_fit_when_only_some_are_strict() -> None:
    tools = [
        Tool[ManyOptional, None](name=f"opt{index}", description="Many optional.")
        for index in range(5)
    ]
    specs = anthropic.tool_specs(tools, strict={"opt0": True, "opt1": True})
    assert [spec.get("strict", False) for spec in specs] == [True, True, False, False, False]


def test_strict_over_the_union_parameter_limit_is_rejected() -> None:
    tools = [
        Tool[ManyUnions, None](name=f"union{index}", description="Many unions.")
        for index in range(4)
    ]
    with pytest.raises(ProviderSchemaError, match=r"at most 16 parameters with union types"):
        anthropic.tool_specs(tools, strict=True)


def test_strict_defaulted_fields_count_as_union_parameters_since_they_take_null() -> None:
    tools = [
        Tool[ManyOptional, None](name=f"opt{index}", description="Many optional.")
        for index in range(4)
    ]
    with pytest.raises(ProviderSchemaError) as raised:
        anthropic.tool_specs(tools, strict=True)
    assert str(raised.value) == (
        "Anthropic strict tool use allows at most 16 parameters with union types per request; "
        "the strict tools (opt0, opt1, opt2, opt3) have 20: mark fewer tools strict"
    )


def test_strict_over_the_tool_limit_is_rejected() -> None:
    tools = [Tool[Note, None](name=f"note{index}", description="Note.") for index in range(21)]
    with pytest.raises(ProviderSchemaError, match=r"at most 20 strict tools per request"):
        anthropic.tool_specs(tools, strict=True)


def test_strict_option_rejects_a_non_boolean() -> None:
    with pytest.raises(ValueError, match=r"strict must be True or False.*got 'auto'"):
        anthropic.tool_specs([CORPUS["decimal"]], strict="auto")  # type: ignore[arg-type]  # under test


def test_tool_use_blocks_are_read_from_a_message() -> None:
    message = {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Let me look."},
            {"type": "tool_use", "id": "toolu_1", "name": "note", "input": {"text": "hi"}},
        ],
    }
    assert anthropic.parse_tool_calls(message) == [ToolCall("note", {"text": "hi"}, "toolu_1")]


def test_tool_use_blocks_are_read_from_an_sdk_message() -> None:
    types = pytest.importorskip("anthropic.types")
    message = types.Message.model_validate(
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude",
            "content": [{"type": "tool_use", "id": "toolu_2", "name": "note", "input": {}}],
            "stop_reason": "tool_use",
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
    )
    assert anthropic.parse_tool_calls(message) == [ToolCall("note", {}, "toolu_2")]


def test_a_text_only_message_has_no_tool_calls() -> None:
    assert anthropic.parse_tool_calls({"role": "assistant", "content": "Done."}) == []


def test_content_that_is_neither_text_nor_blocks_is_reported() -> None:
    with pytest.raises(ProviderPayloadError) as raised:
        anthropic.parse_tool_calls({"role": "assistant", "content": 5})
    assert str(raised.value) == "content: expected a list, got a number"


def test_a_tool_use_block_without_id_is_reported_with_its_place() -> None:
    with pytest.raises(ProviderPayloadError) as raised:
        anthropic.parse_tool_calls([{"type": "tool_use", "name": "note", "input": {}}])
    assert str(raised.value) == "blocks[0]: expected a non-empty string 'id', got None"


def test_a_failed_result_is_marked_as_an_error() -> None:
    block = anthropic.tool_result_block(ToolCall("note", {}, "toolu_1"), ToolResult.error("Full."))
    assert block == {
        "type": "tool_result",
        "tool_use_id": "toolu_1",
        "content": "Full.",
        "is_error": True,
    }


def test_a_successful_result_carries_the_rendered_value() -> None:
    result = ToolResult.ok(Note(text="hi"), message="Saved.")
    message = anthropic.tool_message(ToolCall("note", {}, "toolu_1"), result)
    assert message == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": 'Saved.\n\n{"text":"hi"}'}
        ],
    }


def test_parallel_results_share_one_user_message() -> None:
    first = (ToolCall("note", {}, "a"), ToolResult.ok(None, message="one"))
    second = (ToolCall("note", {}, "b"), ToolResult.error("two"))
    assert anthropic.tool_results_message([first, second]) == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "a", "content": "one"},
            {"type": "tool_result", "tool_use_id": "b", "content": "two", "is_error": True},
        ],
    }


def test_an_empty_result_has_no_content() -> None:
    block = anthropic.tool_result_block(ToolCall("note", {}, "a"), ToolResult(message=""))
    assert block == {"type": "tool_result", "tool_use_id": "a"}


def test_a_result_needs_the_call_id() -> None:
    with pytest.raises(ProviderPayloadError, match=r"tool call 'note' has no call_id"):
        anthropic.tool_result_block(ToolCall("note", {}), ToolResult.error("x"))
