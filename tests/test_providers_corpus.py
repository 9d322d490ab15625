"""Every corpus shape through every dialect: valid JSON Schema, OpenAI's strict rules, and
acceptance by each provider SDK's own types (skipped where the SDK is not installed)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from openai_strict_rules import strict_violations
from provider_corpus import CORPUS, RECURSIVE, STRICT_IMPOSSIBLE

from wink import Tool, ToolResult
from wink.contract import check_schema
from wink.providers import ProviderSchemaError, anthropic, gemini, mcp, openai

NAMES = sorted(CORPUS)
STRICT_NAMES = sorted(set(CORPUS) - set(STRICT_IMPOSSIBLE))
ANTHROPIC_STRICT_NAMES = sorted(set(CORPUS) - set(STRICT_IMPOSSIBLE) - RECURSIVE)
OPENAPI_NAMES = sorted(set(CORPUS) - RECURSIVE)


def _openai_checker(api: str) -> Callable[[dict[str, Any]], Any]:
    pydantic = pytest.importorskip("pydantic")
    if api == "chat":
        chat = pytest.importorskip("openai.types.chat")
        param = (
            getattr(chat, "ChatCompletionFunctionToolParam", None) or chat.ChatCompletionToolParam
        )
    else:
        param = pytest.importorskip("openai.types.responses").FunctionToolParam
    return pydantic.TypeAdapter(param).validate_python


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("api", ["chat", "responses"])
@pytest.mark.parametrize("strict", ["auto", False])
def test_openai_specs_are_valid_and_accepted_by_the_sdk(name: str, api: str, strict: Any) -> None:
    spec = openai.tool_specs([CORPUS[name]], api=api, strict=strict)[0]
    function = spec["function"] if api == "chat" else spec
    check_schema(function["parameters"], name)
    if function["strict"]:
        assert strict_violations(function["parameters"]) == []
    assert _openai_checker(api)(spec) == spec


@pytest.mark.parametrize("name", STRICT_NAMES)
@pytest.mark.parametrize("api", ["chat", "responses"])
def test_openai_strict_specs_follow_the_documented_rules(name: str, api: str) -> None:
    spec = openai.tool_specs([CORPUS[name]], api=api, strict=True)[0]
    function = spec["function"] if api == "chat" else spec
    assert function["strict"] is True
    assert strict_violations(function["parameters"]) == []
    check_schema(function["parameters"], name)
    assert _openai_checker(api)(spec) == spec


@pytest.mark.parametrize("name", sorted(STRICT_IMPOSSIBLE))
def test_strict_modes_refuse_what_they_cannot_express(name: str) -> None:
    field = STRICT_IMPOSSIBLE[name]
    with pytest.raises(ProviderSchemaError, match=rf"tool '{name}': field {field} "):
        openai.tool_specs([CORPUS[name]], strict=True)
    with pytest.raises(ProviderSchemaError, match=rf"tool '{name}': field {field} "):
        anthropic.tool_specs([CORPUS[name]], strict=True)


@pytest.mark.parametrize("name", NAMES)
def test_anthropic_specs_are_valid_and_accepted_by_the_sdk(name: str) -> None:
    spec = anthropic.tool_specs([CORPUS[name]])[0]
    check_schema(spec["input_schema"], name)
    _anthropic_accepts(spec)


@pytest.mark.parametrize("name", ANTHROPIC_STRICT_NAMES)
def test_anthropic_strict_specs_are_valid_and_accepted_by_the_sdk(name: str) -> None:
    spec = anthropic.tool_specs([CORPUS[name]], strict=True)[0]
    assert spec["strict"] is True
    check_schema(spec["input_schema"], name)
    _anthropic_accepts(spec)


def _anthropic_accepts(spec: dict[str, Any]) -> None:
    pydantic = pytest.importorskip("pydantic")
    types = pytest.importorskip("anthropic.types")
    assert pydantic.TypeAdapter(types.ToolParam).validate_python(spec) == spec


@pytest.mark.parametrize("name", NAMES)
def test_gemini_json_schema_declarations_are_accepted_by_the_sdk(name: str) -> None:
    spec = gemini.tool_specs([CORPUS[name]])[0]
    if "parametersJsonSchema" in spec:
        check_schema(spec["parametersJsonSchema"], name)
    _gemini_accepts(spec)


@pytest.mark.parametrize("name", OPENAPI_NAMES)
def test_gemini_openapi_declarations_are_accepted_by_the_sdk(name: str) -> None:
    spec = gemini.tool_specs([CORPUS[name]], form="openapi")[0]
    _gemini_accepts(spec)
    if "parameters" in spec:
        types = pytest.importorskip("google.genai.types")
        types.Schema.model_validate(spec["parameters"])
        assert "$ref" not in str(spec["parameters"])


def _gemini_accepts(spec: dict[str, Any]) -> None:
    types = pytest.importorskip("google.genai.types")
    declaration = types.FunctionDeclaration.model_validate(spec)
    assert declaration.model_dump(mode="json", by_alias=True, exclude_none=True) == spec


@pytest.mark.parametrize("name", NAMES)
def test_mcp_entries_are_valid_and_accepted_by_the_sdk(name: str) -> None:
    spec = mcp.tool_specs([CORPUS[name]])[0]
    check_schema(spec["inputSchema"], name)
    assert spec["inputSchema"]["type"] == "object"
    if "outputSchema" in spec:
        check_schema(spec["outputSchema"], name)
        assert spec["outputSchema"]["type"] == "object"
    types = pytest.importorskip("mcp.types")
    tool = types.Tool.model_validate(spec)
    assert tool.model_dump(mode="json", by_alias=True, exclude_none=True) == spec


SAMPLE_RESULTS: dict[str, Any] = {
    "optional_field": {"names": ["a"]},
    "non_none_default": ["a", "b"],
    "recursive_model": {"value": 1, "children": []},
    "decimal": "1.50",
    "tuple": [1, "a"],
    "no_params": True,
}


@pytest.mark.parametrize("name", sorted(SAMPLE_RESULTS))
def test_mcp_structured_content_matches_the_output_schema(name: str) -> None:
    tool: Tool[Any, Any] = CORPUS[name]
    value = tool.result_contract.parse(_json(SAMPLE_RESULTS[name]))
    payload = mcp.call_tool_result(ToolResult.ok(value), tool=tool)
    output_schema = mcp.tool_specs([tool])[0]["outputSchema"]
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(payload["structuredContent"], output_schema)
    types = pytest.importorskip("mcp.types")
    types.CallToolResult.model_validate(payload)


def _json(value: Any) -> str:
    import json

    return json.dumps(value)
