"""Strict rewrites: made once per params schema, read-only all the way down, and held to
OpenAI's documented size limits, counted exactly wherever a schema comes near one."""

from __future__ import annotations

import gc
import json
from dataclasses import make_dataclass
from typing import Annotated, Any, Literal

import pytest
from provider_corpus import CORPUS, RECURSIVE, STRICT_IMPOSSIBLE
from pydantic import BaseModel, Field, WithJsonSchema, create_model

from wink import Tool
from wink.contract.frozen import FrozenDict, FrozenList, freeze
from wink.providers import ProviderSchemaError, anthropic, clear_caches, openai
from wink.providers._describe import readable_json
from wink.providers._strict import StrictRules, StrictSchema, make_strict


class Search(BaseModel):
    query: str = Field(description="What to look for")
    limit: int = 10


STRICT_SEARCH = {
    "type": "object",
    "properties": {
        "query": {"description": "What to look for", "type": "string"},
        "limit": {
            "anyOf": [{"type": "integer"}, {"type": "null"}],
            "description": "Default: 10. null means the default.",
        },
    },
    "required": ["query", "limit"],
    "additionalProperties": False,
}


@pytest.fixture
def rewrites(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The tool names ``openai`` runs the strict rewrite for, from empty caches on."""
    made: list[str] = []

    def counting(
        schema: dict[str, Any], rules: StrictRules, tool_name: str, *args: Any
    ) -> StrictSchema:
        made.append(tool_name)
        return make_strict(schema, rules, tool_name, *args)

    monkeypatch.setattr(openai, "make_strict", counting)
    clear_caches()
    return made


def test_both_apis_and_strict_issues_share_one_rewrite_of_a_params_schema(
    rewrites: list[str],
) -> None:
    tool = Tool[Search, None](name="search", description="Search.")
    chat = openai.tool_specs([tool])[0]["function"]["parameters"]
    responses = openai.tool_specs([tool], api="responses", strict=True)[0]["parameters"]
    assert openai.strict_issues(tool) == []
    assert rewrites == ["search"]
    assert chat is responses
    assert chat == STRICT_SEARCH


def test_tools_carrying_the_same_params_schema_share_its_rewrite(rewrites: list[str]) -> None:
    first = Tool[Search, None](name="search", description="Search.")
    renamed = Tool[Search, None](name="find", description="Find.")
    assert renamed.params_schema is first.params_schema
    specs = openai.tool_specs([first, renamed])
    assert rewrites == ["search"]
    assert specs[1]["function"]["name"] == "find"
    assert specs[1]["function"]["parameters"] is specs[0]["function"]["parameters"]


def test_a_tool_with_new_parameter_descriptions_gets_its_own_rewrite(
    rewrites: list[str],
) -> None:
    tool = Tool[Search, None](name="search", description="Search.")
    described = tool.with_descriptions(params={"query": "Words to find"})
    openai.tool_specs([tool])
    parameters = openai.tool_specs([described])[0]["function"]["parameters"]
    assert rewrites == ["search", "search"]
    assert parameters["properties"]["query"] == {"description": "Words to find", "type": "string"}


def test_clear_caches_forgets_the_rewrites(rewrites: list[str]) -> None:
    tool = Tool[Search, None](name="search", description="Search.")
    openai.tool_specs([tool])
    clear_caches()
    openai.tool_specs([tool])
    assert rewrites == ["search", "search"]


def test_a_shared_rewrite_cannot_be_changed_through_a_spec_and_stays_as_made(
    rewrites: list[str],
) -> None:
    tool = Tool[Search, None](name="search", description="Search.")
    parameters = openai.tool_specs([tool])[0]["function"]["parameters"]
    with pytest.raises(TypeError, match="read-only"):
        parameters["properties"]["limit"]["anyOf"].append({"type": "string"})
    with pytest.raises(TypeError, match="read-only"):
        parameters["required"].remove("limit")
    with pytest.raises(TypeError, match="read-only"):
        parameters["properties"]["query"]["type"] = "integer"
    again = openai.tool_specs([tool], api="responses", strict=True)[0]["parameters"]
    assert again == STRICT_SEARCH
    assert rewrites == ["search"]


def _containers(value: Any) -> list[Any]:
    """Every dict and list in a JSON value, ``value`` first."""
    found: list[Any] = []
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            found.append(item)
            pending.extend(item.values())
        elif isinstance(item, list):
            found.append(item)
            pending.extend(item)
    return found


STRICT_NAMES = sorted(set(CORPUS) - set(STRICT_IMPOSSIBLE))


@pytest.mark.parametrize("name", STRICT_NAMES)
def test_every_part_of_a_strict_spec_is_read_only(name: str) -> None:
    specs = [openai.tool_specs([CORPUS[name]], strict=True)[0]]
    if name not in RECURSIVE:
        specs.append(anthropic.tool_specs([CORPUS[name]], strict=True)[0])
    for spec in specs:
        kinds = {type(container) for container in _containers(spec)}
        assert kinds <= {FrozenDict, FrozenList}, name


HAND_WRITTEN = {
    "tuple": {
        "type": "object",
        "properties": {
            "pair": {
                "type": "array",
                "prefixItems": [{"type": "string"}, {"type": "integer"}],
                "default": ["a", 1],
            }
        },
    },
    "reference_with_siblings": {
        "type": "object",
        "properties": {"home": {"$ref": "#/$defs/Place", "description": "Where"}},
        "required": ["home"],
        "$defs": {"Place": {"type": "object", "properties": {"city": {"type": "string"}}}},
    },
    "single_all_of": {
        "type": "object",
        "properties": {
            "inner": {
                "allOf": [{"type": "object", "properties": {"q": {"type": "integer"}}}],
                "title": "Inner",
            }
        },
    },
}


@pytest.mark.parametrize("name", sorted(HAND_WRITTEN))
@pytest.mark.parametrize("read_only", [False, True])
def test_a_strict_rewrite_is_read_only_whether_or_not_its_input_was(
    name: str, read_only: bool
) -> None:
    schema = HAND_WRITTEN[name]
    made = make_strict(freeze(schema) if read_only else schema, openai.STRICT_RULES, name)
    assert {type(container) for container in _containers(made.schema)} == {
        FrozenDict,
        FrozenList,
    }
    assert made.schema == make_strict(schema, openai.STRICT_RULES, name).schema


@pytest.mark.parametrize("name", STRICT_NAMES)
def test_counts_taken_while_rewriting_are_at_least_the_strict_schemas_own(name: str) -> None:
    tool = CORPUS[name]
    made = make_strict(tool.params_schema, openai.STRICT_RULES, tool.name)
    tally = openai._Tally(tool.name)
    depth = tally.walk(made.schema)
    definitions = made.schema.get("$defs", {})
    depth = max([depth, *(tally.depths.get(id(node), 0) for node in definitions.values())])
    characters = tally.characters + sum(len(name) for name in definitions)
    assert made.figures.properties >= tally.properties
    assert made.figures.enum_values >= tally.enum_values
    assert made.figures.characters >= characters
    assert made.figures.depth >= depth


def _nested(levels: int) -> type[BaseModel]:
    """Params whose one field is ``levels`` objects nested inline (the params add one)."""
    node: dict[str, Any] = {"type": "object", "properties": {"leaf": {"type": "integer"}}}
    for _ in range(levels - 1):
        node = {"type": "object", "properties": {"inner": node}}
    return create_model("Nested", payload=(Annotated[dict[str, Any], WithJsonSchema(node)], ...))


def _refusal(params: Any) -> str:
    tool = Tool[params, None](name="big", description="Too big.")
    with pytest.raises(ProviderSchemaError) as raised:
        openai.tool_specs([tool], strict=True)
    return str(raised.value)


def test_strict_refuses_more_than_ten_levels_of_objects() -> None:
    assert _refusal(_nested(10)) == (
        "tool 'big': the schema has 11 levels of object nesting, over OpenAI strict "
        "mode's limit of 10"
    )


def test_strict_accepts_ten_levels_of_objects() -> None:
    tool = Tool[_nested(9), None](name="deep", description="Deep.")
    assert openai.tool_specs([tool], strict=True)[0]["function"]["strict"] is True


def test_strict_refuses_more_than_5000_properties() -> None:
    wide = make_dataclass("Wide", [(f"f{index}", int) for index in range(5001)])
    assert _refusal(wide) == (
        "tool 'big': the schema has 5001 object properties, over OpenAI strict mode's limit of 5000"
    )


def test_strict_refuses_more_than_120000_characters_of_names_and_values() -> None:
    words = tuple(letter * 40_001 for letter in "abc")  # with the name: 120007

    class Long(BaseModel):
        word: Literal[words]  # type: ignore[valid-type]  # three long values

    assert _refusal(Long) == (
        "tool 'big': the schema has 120007 characters of names, enum and const values, over "
        "OpenAI strict mode's limit of 120000"
    )


def test_strict_refuses_an_enum_of_over_250_values_totalling_over_15000_characters() -> None:
    values = tuple(f"{index:03d}" + "x" * 57 for index in range(251))

    class Wide(BaseModel):
        code: Literal[values]  # type: ignore[valid-type]  # 251 values of 60 characters

    assert _refusal(Wide) == (
        "tool 'big': an enum of 251 values totals 15060 characters, over OpenAI strict mode's "
        "limit of 15000"
    )


def test_assertions_moved_into_the_description_do_not_count_against_the_limits() -> None:
    # 1001 enum values under ``not``, which strict mode cannot enforce: the rewrite moves
    # them into the description, so the strict schema has none.
    class Excluding(BaseModel):
        code: str = Field(json_schema_extra={"not": {"enum": [str(n) for n in range(1001)]}})

    tool = Tool[Excluding, None](name="excluding", description="Excludes codes.")
    function = openai.tool_specs([tool], strict=True)[0]["function"]
    assert function["strict"] is True
    assert function["parameters"]["properties"]["code"]["description"].startswith(
        'JSON Schema: {"not": {"enum": ["0", "1", '
    )


@pytest.mark.parametrize("value", [True, False, 0, -7, 10**20, 1.5, "é", [], {}, [1, "a"], None])
def test_readable_json_spells_values_as_the_json_encoder_does(value: Any) -> None:
    assert readable_json(value) == json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


@pytest.mark.parametrize("read_only", [True, False])
def test_an_optional_field_with_a_default_becomes_nullable_with_its_words_outside(
    read_only: bool,
) -> None:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "plain": {"type": "integer", "default": 3},
            "titled": {"type": "string", "title": "Mode", "default": "fast", "pattern": "^[a-z]+$"},
            "described": {"type": "number", "description": "Ratio", "default": None},
            "both": {"enum": ["a", "b"], "description": "Pick", "title": "Pick", "default": "a"},
        },
        "additionalProperties": False,
    }
    made = make_strict(freeze(schema) if read_only else schema, openai.STRICT_RULES, "t")
    assert json.dumps(made.schema) == json.dumps(
        {
            "type": "object",
            "properties": {
                "plain": {
                    "anyOf": [{"type": "integer"}, {"type": "null"}],
                    "description": "Default: 3. null means the default.",
                },
                "titled": {
                    "anyOf": [{"type": "string", "pattern": "^[a-z]+$"}, {"type": "null"}],
                    "description": 'Default: "fast". null means the default.',
                    "title": "Mode",
                },
                "described": {
                    "anyOf": [{"type": "number"}, {"type": "null"}],
                    "description": "Ratio",
                },
                "both": {
                    "anyOf": [{"enum": ["a", "b"]}, {"type": "null"}],
                    "description": 'Pick\n\nDefault: "a". null means the default.',
                    "title": "Pick",
                },
            },
            "additionalProperties": False,
            "required": ["plain", "titled", "described", "both"],
        }
    )
    assert made.losses == ()


@pytest.mark.parametrize("read_only", [True, False])
def test_an_optional_property_that_is_not_a_leaf_becomes_nullable_with_its_words_outside(
    read_only: bool,
) -> None:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "tags": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Tags",
                "default": [],
            },
            "choice": {"anyOf": [{"type": "integer"}, {"type": "string"}], "default": 1},
            "home": {"$ref": "#/$defs/Place", "default": {"city": "Oslo"}},
            "pair": {
                "type": "array",
                "items": {"type": "integer"},
                "title": "Pair",
                "default": None,
            },
            "bare": {"type": "array", "items": {"type": "integer"}, "default": None},
        },
        "additionalProperties": False,
        "$defs": {
            "Place": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
                "additionalProperties": False,
            }
        },
    }
    made = make_strict(freeze(schema) if read_only else schema, openai.STRICT_RULES, "t")
    integers = {"type": "array", "items": {"type": "integer"}}
    assert json.dumps(made.schema) == json.dumps(
        {
            "type": "object",
            "properties": {
                "tags": {
                    "anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}],
                    "description": "Tags\n\nDefault: []. null means the default.",
                },
                "choice": {
                    "anyOf": [{"type": "integer"}, {"type": "string"}, {"type": "null"}],
                    "description": "Default: 1. null means the default.",
                },
                "home": {
                    "description": 'Default: {"city": "Oslo"}. null means the default.',
                    "anyOf": [{"$ref": "#/$defs/Place"}, {"type": "null"}],
                },
                "pair": {"anyOf": [integers, {"type": "null"}], "title": "Pair"},
                "bare": {"anyOf": [integers, {"type": "null"}]},
            },
            "additionalProperties": False,
            "$defs": schema["$defs"],
            "required": ["tags", "choice", "home", "pair", "bare"],
        }
    )
    assert made.losses == ()


def test_what_the_rewrite_keeps_of_a_read_only_input_is_the_inputs_own() -> None:
    tool = CORPUS["discriminated_union"]
    schema = tool.params_schema
    made = make_strict(schema, openai.STRICT_RULES, tool.name).schema
    dog, branches = schema["$defs"]["Dog"], schema["properties"]["pet"]["oneOf"]
    assert made["$defs"]["Dog"] is dog  # closed and all required already
    assert made["$defs"]["Dog"]["properties"]["good"] is dog["properties"]["good"]
    assert made["properties"]["pet"]["anyOf"] is branches  # lone references, as they were


@pytest.mark.parametrize("rules", [openai.STRICT_RULES, anthropic.STRICT_RULES])
def test_a_strict_rewrite_leaves_no_garbage_for_the_collector(rules: StrictRules) -> None:
    tools = [CORPUS[name] for name in STRICT_NAMES if name not in RECURSIVE]
    for tool in tools:
        make_strict(tool.params_schema, rules, tool.name)
    gc.collect()
    gc.disable()
    try:
        for tool in tools:
            make_strict(tool.params_schema, rules, tool.name)
        assert gc.collect() == 0
    finally:
        gc.enable()


def test_emitting_strict_openai_specs_cold_leaves_no_garbage_for_the_collector() -> None:
    tools = [CORPUS[name] for name in STRICT_NAMES]
    openai.tool_specs(tools)
    clear_caches()
    gc.collect()
    gc.disable()
    try:
        for api in ("chat", "responses"):
            openai.tool_specs(tools, api=api)
        assert gc.collect() == 0
    finally:
        gc.enable()
