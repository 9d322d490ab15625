"""OpenAI dialect: chat and responses shapes, strict modes, tool calls, tool messages."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal, NotRequired

import jsonschema
import pytest
from openai_strict_rules import strict_violations
from provider_corpus import CORPUS
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from wink import Tool, ToolResult
from wink.providers import ProviderPayloadError, ProviderSchemaError, openai
from wink.runtime.call import ToolCall


class Search(BaseModel):
    query: str = Field(description="What to look for")
    limit: int = 10


class Hit(BaseModel):
    title: str


class OptionalWithDefault(BaseModel):
    page: int | None = 1


class ManyChoices(BaseModel):
    choice: Literal[tuple(range(1001))]  # type: ignore[valid-type]  # a 1001-value Literal


search = Tool[Search, Hit](name="search", description="Search the index.")


def parameters(tool: Tool[Any, Any], **options: Any) -> dict[str, Any]:
    spec = openai.tool_specs([tool], **options)[0]
    return spec["function"]["parameters"] if "function" in spec else spec["parameters"]


def test_chat_spec_wraps_the_function_and_states_strict_off() -> None:
    assert openai.tool_specs([search], strict=False) == [
        {
            "type": "function",
            "function": {
                "name": "search",
                "description": "Search the index.",
                "parameters": {
                    "properties": {
                        "query": {"description": "What to look for", "type": "string"},
                        "limit": {"default": 10, "type": ["integer", "null"]},
                    },
                    "required": ["query"],
                    "type": "object",
                    "additionalProperties": False,
                },
                "strict": False,
            },
        }
    ]


def test_responses_spec_is_flat() -> None:
    spec = openai.tool_specs([search], api="responses", strict=True)[0]
    assert sorted(spec) == ["description", "name", "parameters", "strict", "type"]
    assert (spec["type"], spec["name"], spec["strict"]) == ("function", "search", True)


def test_strict_requires_every_property_and_makes_optional_ones_nullable_without_default() -> None:
    assert parameters(search, strict=True) == {
        "properties": {
            "query": {"description": "What to look for", "type": "string"},
            "limit": {
                "anyOf": [{"type": "integer"}, {"type": "null"}],
                "description": "Default: 10. null means the default.",
            },
        },
        "required": ["query", "limit"],
        "type": "object",
        "additionalProperties": False,
    }


def test_strict_closes_and_requires_objects_inside_defs_keeping_a_defaulted_tag_non_null() -> None:
    schema = parameters(CORPUS["discriminated_union"], strict=True)
    assert schema["$defs"]["Cat"] == {
        "properties": {
            "kind": {"const": "cat", "type": "string"},
            "lives": {
                "anyOf": [{"type": "integer"}, {"type": "null"}],
                "description": "Default: 9. null means the default.",
            },
        },
        "type": "object",
        "additionalProperties": False,
        "required": ["kind", "lives"],
    }


class Ticket(BaseModel):
    subject: str
    priority: Literal["low", "normal", "high"] = Field("normal", description="How urgent.")
    assignee: str | None = "triage"
    note: str | None = None


ticket = Tool[Ticket, None](name="ticket", description="Open a ticket.")


def test_strict_says_a_dropped_default_in_the_description_after_the_fields_own() -> None:
    assert parameters(ticket, strict=True)["properties"]["priority"] == {
        "anyOf": [{"enum": ["low", "normal", "high"], "type": "string"}, {"type": "null"}],
        "description": 'How urgent.\n\nDefault: "normal". null means the default.',
    }


def test_strict_says_the_default_of_a_nullable_field_without_claiming_null_means_it() -> None:
    properties = parameters(ticket, strict=True)["properties"]
    assert (properties["assignee"], properties["note"]) == (
        {"anyOf": [{"type": "string"}, {"type": "null"}], "description": 'Default: "triage".'},
        {"anyOf": [{"type": "string"}, {"type": "null"}]},
    )


def test_strict_turns_one_of_into_any_of_and_drops_the_discriminator() -> None:
    schema = parameters(CORPUS["discriminated_union"], strict=True)
    assert schema["properties"]["pet"] == {
        "anyOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}]
    }


def test_strict_wraps_a_ref_that_has_a_description() -> None:
    schema = parameters(CORPUS["nested_described"], strict=True)
    assert schema["properties"]["home"] == {
        "description": "Where the person lives",
        "anyOf": [{"$ref": "#/$defs/Address"}],
    }
    assert schema["properties"]["work"] == {
        "anyOf": [{"$ref": "#/$defs/Address"}, {"type": "null"}]
    }


def test_strict_moves_unsupported_keywords_into_the_description() -> None:
    schema = parameters(CORPUS["constraints"], strict=True)
    assert schema["properties"]["name"] == {
        "type": "string",
        "description": 'JSON Schema: {"maxLength": 20, "minLength": 1}',
    }
    assert schema["properties"]["count"] == {"maximum": 10, "minimum": 1, "type": "integer"}


def test_strict_keeps_supported_formats_and_describes_uri() -> None:
    properties = parameters(CORPUS["formats"], strict=True)["properties"]
    assert properties["when"] == {"format": "date-time", "type": "string"}
    assert properties["ident"] == {"format": "uuid", "type": "string"}
    assert properties["link"] == {
        "type": "string",
        "description": 'JSON Schema: {"format": "uri", "minLength": 1}',
    }


def test_strict_widens_a_tuple_and_describes_its_positions() -> None:
    assert parameters(CORPUS["tuple"], strict=True)["properties"]["pair"] == {
        "maxItems": 2,
        "minItems": 2,
        "type": "array",
        "items": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
        "description": 'JSON Schema: {"prefixItems": [{"type": "integer"}, {"type": "string"}]}',
    }


def test_strict_inlines_a_recursive_root_and_keeps_its_definition() -> None:
    schema = parameters(CORPUS["recursive_model"], strict=True)
    assert schema["type"] == "object"
    assert "$ref" not in schema
    assert schema["properties"]["children"] == {
        "anyOf": [{"items": {"$ref": "#/$defs/TreeNode"}, "type": "array"}, {"type": "null"}],
        "description": "Default: []. null means the default.",
    }
    assert strict_violations(schema) == []


def test_strict_rejects_a_free_form_mapping_naming_tool_and_field() -> None:
    with pytest.raises(ProviderSchemaError) as raised:
        openai.tool_specs([CORPUS["free_form_dict"]], strict=True)
    assert str(raised.value) == (
        "tool 'free_form_dict': field counts is a free-form mapping (dict[str, X]) whose keys "
        "are not declared; OpenAI strict mode cannot express it (declare a model with named "
        "fields, or emit this tool with strict off)"
    )


def test_strict_rejects_a_bare_list_naming_the_field() -> None:
    with pytest.raises(ProviderSchemaError, match=r"field items is a list of anything"):
        openai.tool_specs([CORPUS["bare_list"]], strict=True)


def test_strict_rejects_any_naming_the_field() -> None:
    class Loose(BaseModel):
        payload: Any

    loose = Tool[Loose, None](name="loose", description="Takes anything.")
    with pytest.raises(ProviderSchemaError, match=r"field payload accepts any JSON value"):
        openai.tool_specs([loose], strict=True)


def test_strict_rejects_a_schema_over_the_enum_limit() -> None:
    many = Tool[ManyChoices, None](name="many", description="Too many choices.")
    with pytest.raises(ProviderSchemaError) as raised:
        openai.tool_specs([many], strict=True)
    assert str(raised.value) == (
        "tool 'many': the schema has 1001 enum values, over OpenAI strict mode's limit of 1000"
    )


@pytest.mark.parametrize(
    "name",
    ["optional_field", "non_none_default", "nested_described", "discriminated_union",
     "recursive_model", "same_model_twice", "decimal", "literal_ints", "single_literal",
     "empty_params", "no_params", "title_property", "dataclass_params"],
)  # fmt: skip
def test_auto_turns_strict_on_when_the_rewrite_keeps_the_meaning(name: str) -> None:
    spec = openai.tool_specs([CORPUS[name]])[0]["function"]
    assert spec["strict"] is True
    assert strict_violations(spec["parameters"]) == []


@pytest.mark.parametrize("name", ["constraints", "formats", "tuple", "free_form_dict", "bare_list"])
def test_auto_leaves_strict_off_and_the_schema_untouched_when_meaning_would_change(
    name: str,
) -> None:
    tool = CORPUS[name]
    spec = openai.tool_specs([tool])[0]["function"]
    assert spec["strict"] is False
    assert spec["parameters"] == tool.params_schema


def test_auto_leaves_strict_off_when_null_would_not_mean_the_default() -> None:
    tool = Tool[OptionalWithDefault, None](name="paged", description="Pages.")
    assert openai.tool_specs([tool])[0]["function"]["strict"] is False
    assert openai.strict_issues(tool) == [
        "page: null means None, not the field's default, once required"
    ]


class Cat(BaseModel):
    kind: Literal["cat"] = "cat"
    lives: int = 9


class Dog(BaseModel):
    kind: Literal["dog"]


class Pets(BaseModel):
    pet: Annotated[Cat | Dog, Field(discriminator="kind")]
    spare: Cat | None = None


class Lookup(TypedDict):
    key: str
    depth: NotRequired[int]


class LookupOrNone(TypedDict):
    key: str
    depth: NotRequired[int | None]


class Node(TypedDict):
    name: str
    kids: NotRequired[list[Node]]


pets = Tool[Pets, None](name="pets", description="Pets.")


def test_the_contract_schema_requires_a_defaulted_union_tag_in_its_branch() -> None:
    assert CORPUS["discriminated_union"].params_schema["$defs"]["Cat"]["required"] == ["kind"]


def test_a_branch_model_used_elsewhere_requires_its_tag_beside_the_reference() -> None:
    assert pets.params_schema["properties"]["pet"]["oneOf"] == [
        {"$ref": "#/$defs/Cat", "required": ["kind"]},
        {"$ref": "#/$defs/Dog"},
    ]
    assert "required" not in pets.params_schema["$defs"]["Cat"]


def test_strict_keeps_a_defaulted_tag_required_and_non_null_for_every_use() -> None:
    schema = parameters(pets, strict=True)
    assert schema["properties"]["pet"] == {
        "anyOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}]
    }
    assert schema["$defs"]["Cat"]["properties"]["kind"] == {"const": "cat", "type": "string"}
    assert schema["$defs"]["Cat"]["required"] == ["kind", "lives"]


def test_strict_union_nulls_parse_to_defaults_and_a_null_tag_is_refused() -> None:
    schema = parameters(CORPUS["discriminated_union"], strict=True)
    sent = {"pet": {"kind": "cat", "lives": None}}
    jsonschema.validate(sent, schema)
    parsed = CORPUS["discriminated_union"].params_contract.parse(sent)
    assert parsed.pet.model_dump() == {"kind": "cat", "lives": 9}
    assert not jsonschema.Draft202012Validator(schema).is_valid(
        {"pet": {"kind": None, "lives": None}}
    )


def test_auto_leaves_strict_off_for_an_optional_key_without_a_default() -> None:
    tool = Tool[Lookup, None](name="lookup", description="Look up.")
    assert openai.tool_specs([tool])[0]["function"]["strict"] is False
    assert openai.strict_issues(tool) == [
        "tool 'lookup': field depth may be left out but has no default, and OpenAI strict mode "
        "requires every field; a model would send null, which the field rejects (make it "
        "required or accept None, or emit this tool with strict off)"
    ]


def test_strict_refuses_an_optional_key_without_a_default_naming_tool_and_field() -> None:
    tool = Tool[Lookup, None](name="lookup", description="Look up.")
    with pytest.raises(ProviderSchemaError, match=r"^tool 'lookup': field depth may be left out"):
        openai.tool_specs([tool], strict=True)


def test_strict_finds_an_optional_key_without_a_default_in_a_recursive_root() -> None:
    tool = Tool[Node, None](name="tree", description="Tree.")
    with pytest.raises(ProviderSchemaError, match=r"^tool 'tree': field kids may be left out"):
        openai.tool_specs([tool], strict=True)


def test_an_optional_nullable_key_without_a_default_is_a_loss() -> None:
    tool = Tool[LookupOrNone, None](name="lookup", description="Look up.")
    assert openai.tool_specs([tool])[0]["function"]["strict"] is False
    assert openai.strict_issues(tool) == [
        "depth: has no default, so once required it is never left out"
    ]


def test_strict_issues_explain_why_auto_stays_off() -> None:
    assert openai.strict_issues(CORPUS["constraints"]) == [
        "name: maxLength moved into the description",
        "name: minLength moved into the description",
    ]
    assert openai.strict_issues(search) == []


def test_strict_can_be_chosen_per_tool_name() -> None:
    specs = openai.tool_specs(
        [search, CORPUS["constraints"], CORPUS["optional_field"]],
        strict={"search": False, "constraints": True},
    )
    assert [spec["function"]["strict"] for spec in specs] == [False, True, True]


def test_strict_option_rejects_an_unknown_value() -> None:
    with pytest.raises(ValueError, match=r"strict must be 'auto', True or False.*got 'yes'"):
        openai.tool_specs([search], strict="yes")  # type: ignore[arg-type]  # the bad value under test


def test_api_option_rejects_an_unknown_value() -> None:
    with pytest.raises(ValueError, match=r"api must be 'chat' or 'responses', got 'assistants'"):
        openai.tool_specs([search], api="assistants")  # type: ignore[arg-type]  # under test


def test_tool_calls_are_read_from_a_chat_completion() -> None:
    completion = {
        "choices": [
            {
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "search", "arguments": '{"query":"x"}'},
                        },
                        {"id": "call_2", "type": "custom", "custom": {"name": "c", "input": ""}},
                    ],
                }
            }
        ]
    }
    assert openai.parse_tool_calls(completion) == [ToolCall("search", '{"query":"x"}', "call_1")]


def test_tool_calls_are_read_from_sdk_objects() -> None:
    chat = pytest.importorskip("openai.types.chat")
    message = chat.ChatCompletionMessage.model_validate(
        {
            "role": "assistant",
            "tool_calls": [
                {
                    "id": "call_9",
                    "type": "function",
                    "function": {"name": "search", "arguments": "{}"},
                }
            ],
        }
    )
    assert openai.parse_tool_calls(message) == [ToolCall("search", "{}", "call_9")]


def test_tool_calls_are_read_from_a_responses_output() -> None:
    response = {
        "output": [
            {"type": "reasoning", "id": "rs_1", "summary": []},
            {
                "type": "function_call",
                "id": "fc_1",
                "call_id": "call_7",
                "name": "search",
                "arguments": '{"query":"y"}',
            },
        ]
    }
    assert openai.parse_tool_calls(response) == [ToolCall("search", '{"query":"y"}', "call_7")]


CHUNK = {
    "id": "chatcmpl-1",
    "object": "chat.completion.chunk",
    "choices": [
        {
            "index": 0,
            "delta": {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "search", "arguments": '{"qu'},
                    }
                ]
            },
        }
    ],
}


def test_a_stream_chunk_is_refused_since_it_holds_only_part_of_a_call() -> None:
    with pytest.raises(ProviderPayloadError) as raised:
        openai.parse_tool_calls(CHUNK)
    assert str(raised.value) == (
        "choices[0]: a stream chunk (a delta, not a message): assemble the deltas first"
    )


def test_a_stream_chunk_sdk_object_is_refused_too() -> None:
    chat = pytest.importorskip("openai.types.chat")
    chunk = chat.ChatCompletionChunk.model_validate({**CHUNK, "created": 0, "model": "m"})
    with pytest.raises(ProviderPayloadError, match="assemble the deltas first"):
        openai.parse_tool_calls(chunk)


def test_a_message_without_tool_calls_has_none() -> None:
    assert openai.parse_tool_calls({"role": "assistant", "content": "Hi"}) == []
    assert openai.parse_tool_calls({"choices": []}) == []


def test_a_tool_call_without_a_name_is_reported_with_its_place() -> None:
    payload = {"tool_calls": [{"id": "c", "type": "function", "function": {"arguments": "{}"}}]}
    with pytest.raises(ProviderPayloadError) as raised:
        openai.parse_tool_calls(payload)
    assert str(raised.value) == (
        "tool_calls[0].function: expected a non-empty string 'name', got None"
    )


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"choices": 5}, "choices: expected a list, got a number"),
        ({"choices": [5]}, "choices[0]: expected an object, got a number"),
        ({"choices": [{"message": "hi"}]}, "choices[0].message: expected an object, got a string"),
        (
            {"choices": [{"message": {"tool_calls": 5}}]},
            "choices[0].message.tool_calls: expected a list, got a number",
        ),
        ({"tool_calls": "x"}, "tool_calls: expected a list, got a string"),
        (
            {"tool_calls": [{"function": []}]},
            "tool_calls[0].function: expected an object, got a list",
        ),
    ],
)
def test_a_payload_of_the_wrong_shape_is_reported_with_its_place(
    payload: dict[str, Any], message: str
) -> None:
    with pytest.raises(ProviderPayloadError) as raised:
        openai.parse_tool_calls(payload)
    assert str(raised.value) == message


def test_an_unknown_payload_is_reported() -> None:
    with pytest.raises(ProviderPayloadError, match=r"got keys \['data'\]"):
        openai.parse_tool_calls({"data": []})


def test_chat_tool_message_carries_message_and_rendered_value() -> None:
    result = ToolResult.ok(Hit(title="Doc"), message="Found 1.")
    assert openai.tool_message(ToolCall("search", "{}", "call_1"), result) == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": 'Found 1.\n\n{"title":"Doc"}',
    }


def test_responses_tool_message_is_a_function_call_output() -> None:
    result = ToolResult.error("No index.")
    call = ToolCall("search", "{}", "call_2")
    assert openai.tool_message(call, result, api="responses") == {
        "type": "function_call_output",
        "call_id": "call_2",
        "output": "No index.",
    }


def test_tool_message_leaves_out_an_excluded_value() -> None:
    result = ToolResult(
        message="Stored.", value=Hit(title="secret"), exclude_value_from_context=True
    )
    message = openai.tool_message(ToolCall("search", "{}", "c"), result)
    assert message["content"] == "Stored."


def test_tool_message_needs_the_call_id() -> None:
    with pytest.raises(ProviderPayloadError, match=r"tool call 'search' has no call_id"):
        openai.tool_message(ToolCall("search", "{}"), ToolResult.error("x"))


def test_strict_rules_helper_reports_what_breaks_strict_mode() -> None:
    broken = {
        "type": "object",
        "properties": {"a": {"type": "string", "minLength": 1, "default": "x"}, "b": {}},
        "required": ["a"],
    }
    assert strict_violations(broken) == [
        "#: additionalProperties must be false",
        "#: required ['a'] must list every property ['a', 'b']",
        "#/properties/a: unsupported keywords ['default', 'minLength']",
        "#/properties/b: no type (a schema accepting anything)",
    ]


def test_specs_serialise_to_json() -> None:
    specs = openai.tool_specs(list(CORPUS.values()))
    assert json.loads(json.dumps(specs)) == specs
