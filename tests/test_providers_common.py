"""What the dialects share: sources of tools, caching, read-only specs, result text."""

from __future__ import annotations

import copy
import json
import pickle
from typing import Any

import pytest
from provider_corpus import CORPUS, Listing
from pydantic import BaseModel

from wink import MarkdownSection, Prompt, PromptOverrides, PromptTemplate, Tool, ToolResult
from wink.providers import ProviderSchemaError, anthropic, clear_caches, gemini, mcp, openai
from wink.providers._fields import field_path
from wink.providers._inline import object_root

DIALECTS: dict[str, Any] = {
    "openai": openai.tool_specs,
    "anthropic": anthropic.tool_specs,
    "gemini": gemini.tool_specs,
    "mcp": mcp.tool_specs,
}


class Rendered(BaseModel):
    text: str

    def render(self) -> str:
        return f"<{self.text}>"


def template(*tools: Tool[Any, Any], enabled: bool = True) -> PromptTemplate:
    sections = [
        MarkdownSection(title="Main", template="Main.", tools=list(tools[:1])),
        MarkdownSection(title="Extra", template="Extra.", tools=list(tools[1:]), enabled=enabled),
    ]
    return PromptTemplate(ns="tests", key="providers", name="providers", sections=sections)


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_a_rendered_prompt_gives_the_specs_of_its_enabled_tools_in_order(dialect: str) -> None:
    first, second = CORPUS["optional_field"], CORPUS["decimal"]
    rendered = Prompt(template(first, second)).render()
    specs = DIALECTS[dialect](rendered)
    assert [spec.get("name") or spec["function"]["name"] for spec in specs] == [
        "optional_field",
        "decimal",
    ]
    hidden = DIALECTS[dialect](Prompt(template(first, second, enabled=False)).render())
    assert len(hidden) == 1


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_a_single_tool_is_a_source_too(dialect: str) -> None:
    tool = CORPUS["decimal"]
    assert DIALECTS[dialect](tool) == DIALECTS[dialect]([tool])


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_a_source_that_holds_no_tools_is_refused(dialect: str) -> None:
    with pytest.raises(TypeError, match=r"item 1 is 'search', not a Tool"):
        DIALECTS[dialect]([CORPUS["decimal"], "search"])
    with pytest.raises(TypeError, match=r"takes a RenderedPrompt, a sequence of Tools or a Tool"):
        DIALECTS[dialect]("search")


def test_overridden_descriptions_reach_the_specs() -> None:
    tool = CORPUS["optional_field"]
    overrides = PromptOverrides(
        tool_descriptions={"optional_field": "Find things."},
        param_descriptions={"optional_field": {"query": "Search words"}},
    )
    rendered = Prompt(template(tool), overrides=overrides).render()
    (spec,) = anthropic.tool_specs(rendered)
    assert spec["description"] == "Find things."
    assert spec["input_schema"]["properties"]["query"] == {
        "description": "Search words",
        "type": "string",
    }


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_emitting_again_returns_the_same_cached_specs(dialect: str) -> None:
    tools = list(CORPUS.values())
    first = DIALECTS[dialect](tools)
    second = DIALECTS[dialect](tuple(tools))
    assert all(a is b for a, b in zip(first, second, strict=True))


def test_each_option_has_its_own_cache_entry() -> None:
    tool = CORPUS["optional_field"]
    chat = openai.tool_specs([tool], api="chat")[0]
    responses = openai.tool_specs([tool], api="responses")[0]
    off = openai.tool_specs([tool], strict=False)[0]
    assert "function" in chat and "function" not in responses
    assert (chat["function"]["strict"], off["function"]["strict"]) == (True, False)


def test_clearing_the_caches_builds_equal_new_specs() -> None:
    before = gemini.tool_specs([CORPUS["formats"]], form="openapi")[0]
    clear_caches()
    after = gemini.tool_specs([CORPUS["formats"]], form="openapi")[0]
    assert after == before and after is not before


def test_the_returned_list_is_the_callers_own() -> None:
    specs = mcp.tool_specs([CORPUS["decimal"]])
    specs.append({"name": "extra"})
    assert len(mcp.tool_specs([CORPUS["decimal"]])) == 1


def test_cached_specs_refuse_changes_at_every_level() -> None:
    (spec,) = openai.tool_specs([CORPUS["optional_field"]])
    with pytest.raises(TypeError, match=r"read-only; copy.deepcopy\(value\) gives a mutable copy"):
        spec["function"]["strict"] = False
    with pytest.raises(TypeError):
        spec["function"]["parameters"]["required"].append("limit")
    with pytest.raises(TypeError):
        spec["function"]["parameters"]["properties"].pop("query")


def test_a_deep_copy_of_a_spec_is_plain_and_mutable() -> None:
    (spec,) = openai.tool_specs([CORPUS["optional_field"]])
    mutable = copy.deepcopy(spec)
    mutable["function"]["parameters"]["required"].append("extra")
    assert type(mutable) is dict
    assert type(mutable["function"]["parameters"]["required"]) is list
    assert "extra" not in spec["function"]["parameters"]["required"]


def test_read_only_specs_serialise_like_plain_json() -> None:
    (spec,) = anthropic.tool_specs([CORPUS["discriminated_union"]])
    assert json.loads(json.dumps(spec)) == spec
    assert pickle.loads(pickle.dumps(spec)) == spec


def test_model_text_is_the_message_then_the_rendered_value() -> None:
    assert ToolResult.ok(Listing(names=["a"]), message="One.").model_text() == (
        'One.\n\n{"names":["a"]}'
    )
    assert ToolResult.ok(Rendered(text="x"), message="").model_text() == "<x>"
    assert ToolResult.ok(None, message="Done.").model_text() == "Done."


def test_model_text_leaves_out_an_excluded_value() -> None:
    result = ToolResult(
        message="Saved.", value=Listing(names=["a"]), exclude_value_from_context=True
    )
    assert result.model_text() == "Saved."


@pytest.mark.parametrize(
    ("pointer", "path"),
    [
        ("#", "<root>"),
        ("#/properties/tags/items", "tags[]"),
        ("#/$defs/Inner/properties/x", "Inner.x"),
        ("#/properties/pet/oneOf/1/properties/kind", "pet.kind"),
        ("#/properties/pair/prefixItems/0", "pair[0]"),
        ("#/properties/counts/additionalProperties", "counts{}"),
    ],
)
def test_field_paths_read_like_python(pointer: str, path: str) -> None:
    assert field_path(pointer) == path


def test_params_that_do_not_describe_an_object_are_refused_naming_the_tool() -> None:
    with pytest.raises(ProviderSchemaError) as raised:
        object_root({"type": "array", "items": {"type": "integer"}}, "numbers", "OpenAI")
    assert str(raised.value) == (
        "tool 'numbers': OpenAI needs the arguments to be a JSON object, but the params type "
        "describes array; use a model or dataclass as the params type"
    )


class _Place(BaseModel):
    city: str
    zip_code: str = "00000"


class _Trip(BaseModel):
    to: _Place
    note: str


def test_a_strict_openai_spec_shares_the_nodes_it_leaves_unchanged_and_is_read_only() -> None:
    tool = Tool[_Trip, None](name="trip", description="Plan a trip.")
    parameters = openai.tool_specs([tool], strict=True)[0]["function"]["parameters"]
    place = tool.params_schema["$defs"]["_Place"]
    assert parameters["properties"]["note"] is tool.params_schema["properties"]["note"]
    assert parameters["$defs"]["_Place"]["properties"]["city"] is place["properties"]["city"]
    assert parameters["$defs"]["_Place"]["properties"]["zip_code"] == {
        "anyOf": [{"type": "string"}, {"type": "null"}],
        "description": 'Default: "00000". null means the default.',
    }
    with pytest.raises(TypeError):
        parameters["$defs"]["_Place"]["required"].append("x")
