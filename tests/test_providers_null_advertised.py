"""Every dialect's schema accepts ``null`` for a field exactly where the tool's contract does.

The contract reads ``null`` for a defaulted field as its default; each dialect's
advertised schema must say so, and must not promise ``null`` where the contract
refuses it (a discriminated union's tag). Gemini's OpenAPI form is turned back into
JSON Schema (``nullable: true`` as a null branch) to be checked the same way.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from provider_corpus import CORPUS, RECURSIVE, STRICT_IMPOSSIBLE
from pydantic import BaseModel

from wink import Tool
from wink.contract import ContractViolation
from wink.providers import anthropic, gemini, mcp, openai
from wink.providers._inline import inline_root_ref

Schema = dict[str, Any]

_CAMEL = {
    "any_of": "anyOf",
    "max_items": "maxItems",
    "min_items": "minItems",
    "min_properties": "minProperties",
    "max_properties": "maxProperties",
    "min_length": "minLength",
    "max_length": "maxLength",
    "property_ordering": "propertyOrdering",
}


def from_openapi(node: Schema) -> Schema:
    """Gemini's OpenAPI-subset schema (either case) as the JSON Schema it stands for."""
    converted: Schema = {}
    for key, value in node.items():
        key = _CAMEL.get(key, key)
        if key == "properties":
            value = {name: from_openapi(child) for name, child in value.items()}
        elif key == "items":
            value = from_openapi(value)
        elif key == "anyOf":
            value = [from_openapi(branch) for branch in value]
        elif key == "type":
            value = value.lower()
        converted[key] = value
    if converted.pop("nullable", False):
        return {"anyOf": [converted, {"type": "null"}]}
    return converted


def _openai(api: str, strict: Any) -> Callable[[Tool[Any, Any]], Schema]:
    def schema(tool: Tool[Any, Any]) -> Schema:
        spec = openai.tool_specs([tool], api=api, strict=strict)[0]  # type: ignore[call-overload]  # api and strict vary per case
        function = spec["function"] if api == "chat" else spec
        return dict(function["parameters"])

    return schema


def _gemini(form: Any, case: Any, key: str) -> Callable[[Tool[Any, Any]], Schema]:
    def schema(tool: Tool[Any, Any]) -> Schema:
        spec: Any = gemini.tool_specs([tool], form=form, case=case)[0]
        parameters = spec.get(key, {"type": "object", "properties": {}})
        return from_openapi(parameters) if form == "openapi" else dict(parameters)

    return schema


DIALECTS: dict[str, Callable[[Tool[Any, Any]], Schema]] = {
    "openai_chat": _openai("chat", False),
    "openai_responses": _openai("responses", False),
    "openai_chat_auto": _openai("chat", "auto"),
    "openai_responses_strict": _openai("responses", True),
    "anthropic": lambda tool: dict(anthropic.tool_specs([tool])[0]["input_schema"]),
    "anthropic_strict": lambda tool: dict(
        anthropic.tool_specs([tool], strict=True)[0]["input_schema"]
    ),
    "gemini_json_schema": _gemini("json_schema", "camel", "parametersJsonSchema"),
    "gemini_json_schema_snake": _gemini("json_schema", "snake", "parameters_json_schema"),
    "gemini_openapi": _gemini("openapi", "camel", "parameters"),
    "gemini_openapi_snake": _gemini("openapi", "snake", "parameters"),
    "mcp": lambda tool: dict(mcp.tool_specs([tool])[0]["inputSchema"]),
}

CANNOT_EXPRESS = {
    "openai_responses_strict": set(STRICT_IMPOSSIBLE),
    "anthropic_strict": set(STRICT_IMPOSSIBLE) | RECURSIVE,
    "gemini_openapi": set(RECURSIVE),
    "gemini_openapi_snake": set(RECURSIVE),
}
"""Tools a dialect refuses (tested elsewhere), left out here."""


def defaulted_fields(tool: Tool[Any, Any]) -> list[str]:
    """The top-level properties of the tool's params schema that have a default."""
    properties = inline_root_ref(tool.params_schema).get("properties", {})
    return [name for name, prop in properties.items() if "default" in prop]


def contract_accepts(tool: Tool[Any, Any], payload: Any, field: str | None = None) -> bool:
    """Whether the contract accepts ``payload`` (at ``field`` only, when given)."""
    try:
        tool.params_contract.parse(json.dumps(payload))
    except ContractViolation as violation:
        if field is None:
            return False
        return not any(
            problem.path == field or problem.path.startswith((f"{field}.", f"{field}["))
            for problem in violation.problems
        )
    return True


def schema_accepts(schema: Schema, payload: Any, field: str | None = None) -> bool:
    """Whether ``schema`` accepts ``payload`` (at ``field`` only, when given)."""
    errors = Draft202012Validator(schema).iter_errors(payload)
    if field is None:
        return next(errors, None) is None
    return not any(list(error.absolute_path)[:1] == [field] for error in errors)


CASES = [
    (dialect, name, field)
    for dialect in sorted(DIALECTS)
    for name in sorted(CORPUS)
    if name not in CANNOT_EXPRESS.get(dialect, set())
    for field in defaulted_fields(CORPUS[name])
]


def test_the_corpus_has_defaulted_fields_of_every_kind_to_check() -> None:
    fields = {(name, field) for name in CORPUS for field in defaulted_fields(CORPUS[name])}
    assert fields == {
        ("abstract_collections", "ids"),
        ("abstract_collections", "more"),
        ("dataclass_params", "recursive"),
        ("nested_described", "work"),
        ("non_none_default", "limit"),
        ("non_none_default", "tags"),
        ("numbers", "price"),
        ("optional_field", "limit"),
        ("recursive_model", "children"),
    }
    assert len(CASES) == 11 * 9 - 3  # recursive_model left out of three dialects


@pytest.mark.parametrize(("dialect", "name", "field"), CASES)
def test_null_for_a_defaulted_field_is_advertised_iff_the_contract_accepts_it(
    dialect: str, name: str, field: str
) -> None:
    tool = CORPUS[name]
    schema = DIALECTS[dialect](tool)
    payload = {field: None}
    assert contract_accepts(tool, payload, field) is True
    assert schema_accepts(schema, payload, field) is True


NESTED = [
    ("discriminated_union", {"pet": {"kind": "cat", "lives": None}}, True),
    ("discriminated_union", {"pet": {"kind": None, "lives": 1}}, False),
    ("discriminated_union", {"pet": {"lives": 1}}, False),
    ("callable_discriminator", {"animal": {"kind": None, "eggs": 1}}, False),
    ("recursive_model", {"value": 1, "children": [{"value": 2, "children": None}]}, True),
    ("nested_described", {"home": {"street": "a", "city": "b"}, "work": None}, True),
]
"""Whole payloads with ``null`` for a nested defaulted field, and whether the contract
takes them: a union's tag has a default but must be sent."""

NESTED_CASES = [
    (dialect, name, payload, accepted)
    for dialect in sorted(DIALECTS)
    for name, payload, accepted in NESTED
    if name not in CANNOT_EXPRESS.get(dialect, set())
]


@pytest.mark.parametrize(("dialect", "name", "payload", "accepted"), NESTED_CASES)
def test_null_inside_a_nested_model_is_advertised_iff_the_contract_accepts_it(
    dialect: str, name: str, payload: Any, accepted: bool
) -> None:
    tool = CORPUS[name]
    assert contract_accepts(tool, payload) is accepted
    assert schema_accepts(DIALECTS[dialect](tool), payload) is accepted


class Paging(BaseModel):
    size: int = 20
    cursor: str | None = None


class Query(BaseModel):
    text: str
    paging: Paging = Paging()


query_tool = Tool[Query, None](name="query", description="Query.")


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_a_nested_models_defaulted_field_takes_null_in_every_dialect(dialect: str) -> None:
    schema = DIALECTS[dialect](query_tool)
    for payload in (
        {"text": "x", "paging": None},
        {"text": "x", "paging": {"size": None, "cursor": None}},
    ):
        assert contract_accepts(query_tool, payload) is True
        assert schema_accepts(schema, payload) is True


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_a_wrong_type_for_a_defaulted_field_is_still_refused(dialect: str) -> None:
    schema = DIALECTS[dialect](query_tool)
    payload = {"text": "x", "paging": {"size": "big"}}
    assert contract_accepts(query_tool, payload) is False
    assert schema_accepts(schema, payload) is False


def test_each_dialect_writes_the_null_in_its_own_form() -> None:
    tool = CORPUS["non_none_default"]
    limit = {"default": 10, "type": ["integer", "null"]}
    assert DIALECTS["openai_chat"](tool)["properties"]["limit"] == limit
    assert DIALECTS["anthropic"](tool)["properties"]["limit"] == limit
    assert DIALECTS["anthropic_strict"](tool)["properties"]["limit"] == limit
    assert DIALECTS["gemini_json_schema"](tool)["properties"]["limit"] == limit
    assert DIALECTS["mcp"](tool)["properties"]["limit"] == limit
    openapi = gemini.tool_specs([tool], form="openapi")[0]["parameters"]
    assert openapi["properties"]["limit"] == {"default": 10, "type": "INTEGER", "nullable": True}
    strict = DIALECTS["openai_responses_strict"](tool)["properties"]["limit"]
    assert strict == {
        "anyOf": [{"type": "integer"}, {"type": "null"}],
        "description": "Default: 10. null means the default.",
    }
