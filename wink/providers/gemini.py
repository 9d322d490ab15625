"""Gemini (Google Gen AI): function declarations, ``functionCall`` parts, ``functionResponse``
parts.

Two forms of declaration (``form=``):

- ``"json_schema"`` (default): ``parametersJsonSchema`` carries the contract's
  JSON Schema (recursive root inlined). Gemini ignores keywords it does not
  support; the contract still enforces them.
- ``"openapi"``: ``parameters`` carries Gemini's OpenAPI-subset ``Schema``, for
  endpoints that need it; see ``wink.providers._openapi`` for every change and
  loss (no ``$ref``, so recursive types raise ``ProviderSchemaError``).

In both forms a field with a default also accepts ``null`` (``"nullable": true``
in the OpenAPI form), which the contract reads as the default.

A tool that takes no arguments gets no parameters at all: Gemini rejects an
object schema with an empty ``properties`` map. Send the declarations as
``{"tools": [{"functionDeclarations": gemini.tool_specs(prompt)}]}``.

Two spellings of keys (``case=``):

- ``"camel"`` (default): the REST API's (``functionDeclarations``,
  ``parametersJsonSchema``, ``functionResponse``), as plain dicts;
- ``"snake"``: the ``google-genai`` SDK's dict form (``parameters_json_schema``,
  ``function_response``, and snake_case keywords in an ``"openapi"`` schema),
  typed with the ``TypedDict``s of ``wink.providers._gemini_types``, which
  ``client.models.generate_content(contents=[...], config={"tools":
  [{"function_declarations": specs}]})`` accepts under ``mypy --strict``. The SDK
  sends both as the same request.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Literal, cast, overload

from wink.contract.frozen import freeze
from wink.providers._errors import ProviderSchemaError
from wink.providers._gemini_types import Content, FunctionDeclaration, FunctionResponse, Part
from wink.providers._inline import object_root
from wink.providers._null_default import with_null_defaults
from wink.providers._openapi import openapi_schema
from wink.providers._payload import (
    as_data,
    decoded_arguments,
    field,
    list_field,
    object_at,
    object_field,
    text_field,
    unrecognised,
)
from wink.providers._specs import SpecCache, ToolSource, tools_of
from wink.runtime.call import ToolCall
from wink.tools import Tool, ToolResult

__all__ = [
    "Case",
    "Content",
    "Form",
    "FunctionDeclaration",
    "FunctionResponse",
    "GeminiAdapter",
    "Part",
    "function_response_part",
    "parse_tool_calls",
    "tool_message",
    "tool_results_message",
    "tool_specs",
]

Form = Literal["json_schema", "openapi"]
"""``"json_schema"``: ``parametersJsonSchema``; ``"openapi"``: ``parameters``."""
Case = Literal["camel", "snake"]
"""``"camel"``: the REST API's keys, as plain dicts; ``"snake"``: the SDK's dict keys,
typed for its ``generate_content``."""

# Gemini's documented function name rule.
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$")
_DIALECT = "Gemini"
_tool_cache = SpecCache()
_list_cache = SpecCache(max_entries=256)


@overload
def tool_specs(
    source: ToolSource, *, form: Form = "json_schema", case: Literal["camel"] = "camel"
) -> list[dict[str, Any]]: ...


@overload
def tool_specs(
    source: ToolSource, *, form: Form = "json_schema", case: Literal["snake"]
) -> list[FunctionDeclaration]: ...


def tool_specs(
    source: ToolSource, *, form: Form = "json_schema", case: Case = "camel"
) -> list[dict[str, Any]] | list[FunctionDeclaration]:
    """The function declarations of a request, in order: REST keys, or with
    ``case="snake"`` the SDK's ``FunctionDeclarationDict``s.

    Specs are cached and read-only; ``copy.deepcopy`` one to change it.
    """
    if form not in ("json_schema", "openapi"):
        raise ValueError(
            f"gemini.tool_specs: form must be 'json_schema' or 'openapi', got {form!r}"
        )
    _check_case("tool_specs", case)
    tools = tools_of(source)

    def build() -> tuple[dict[str, Any], ...]:
        return tuple(_tool_spec(tool, form, case) for tool in tools)

    specs = list(_list_cache.get((tools, form, case), build))
    # The cached values are the plain dicts these types describe.
    return specs if case == "camel" else cast("list[FunctionDeclaration]", specs)


def parse_tool_calls(payload: Any) -> list[ToolCall]:
    """The function calls of a response (first candidate), a request (every content), a
    ``Content``, a list of parts
    or of ``FunctionCall``s (the SDK's ``response.function_calls``), a part or a
    ``FunctionCall`` (dicts, in camelCase or snake_case, or SDK objects).

    A call without ``args`` gets ``{}``: no arguments, which a contract reads as an
    empty object (``None`` would be rejected by every object contract).
    """
    data = as_data(payload)
    if isinstance(data, Mapping) and "contents" in data:
        calls = []
        for index, raw in enumerate(list_field(data, "contents", "")):
            where = f"contents[{index}]"
            parts = list_field(object_at(raw, where), "parts", where)
            calls.extend(_calls_from_parts(parts, f"{where}.parts"))
        return calls
    if isinstance(data, Mapping) and "candidates" in data:
        candidates = list_field(data, "candidates", "")
        if not candidates:
            return []
        content = object_field(
            object_at(candidates[0], "candidates[0]"), "content", "candidates[0]"
        )
        parts = list_field(content, "parts", "candidates[0].content")
        return _calls_from_parts(parts, "candidates[0].content.parts")
    if isinstance(data, Mapping) and "parts" in data:
        return _calls_from_parts(list_field(data, "parts", ""), "parts")
    if isinstance(data, Mapping) and field(data, "functionCall", "function_call") is not None:
        return _calls_from_parts([data], "part")
    if isinstance(data, Mapping) and "name" in data:
        return _calls_from_parts([{"functionCall": data}], "function call")
    if isinstance(data, list):
        return _calls_from_parts(data, "parts")
    raise unrecognised(
        "a Gemini response (candidates), a content (parts), a request (contents), a list of "
        "parts, a part (functionCall) or a function call (name)",
        data,
    )


@overload
def function_response_part(
    call: ToolCall, result: ToolResult[Any], *, case: Literal["camel"] = "camel"
) -> dict[str, Any]: ...


@overload
def function_response_part(
    call: ToolCall, result: ToolResult[Any], *, case: Literal["snake"]
) -> Part: ...


def function_response_part(
    call: ToolCall, result: ToolResult[Any], *, case: Case = "camel"
) -> dict[str, Any] | Part:
    """The ``functionResponse`` part answering ``call``: ``{"output": text}``, or
    ``{"error": text}`` for a failure (Gemini's documented keys); with
    ``case="snake"``, the SDK's ``PartDict`` (``function_response``)."""
    _check_case("function_response_part", case)
    text = result.model_text()
    response: dict[str, Any] = {"output": text} if result.success else {"error": text}
    if case == "snake":
        answer: FunctionResponse = {"name": call.name, "response": response}
        if call.call_id:
            answer["id"] = call.call_id
        return {"function_response": answer}
    function_response: dict[str, Any] = {"name": call.name, "response": response}
    if call.call_id:
        function_response["id"] = call.call_id
    return {"functionResponse": function_response}


@overload
def tool_message(
    call: ToolCall, result: ToolResult[Any], *, case: Literal["camel"] = "camel"
) -> dict[str, Any]: ...


@overload
def tool_message(call: ToolCall, result: ToolResult[Any], *, case: Literal["snake"]) -> Content: ...


def tool_message(
    call: ToolCall, result: ToolResult[Any], *, case: Case = "camel"
) -> dict[str, Any] | Content:
    """A ``user`` content carrying the one ``functionResponse`` part of ``call``; with
    ``case="snake"``, the SDK's ``ContentDict``."""
    _check_case("tool_message", case)
    return tool_results_message([(call, result)], case=case)


@overload
def tool_results_message(
    results: Iterable[tuple[ToolCall, ToolResult[Any]]], *, case: Literal["camel"] = "camel"
) -> dict[str, Any]: ...


@overload
def tool_results_message(
    results: Iterable[tuple[ToolCall, ToolResult[Any]]], *, case: Literal["snake"]
) -> Content: ...


@overload
def tool_results_message(
    results: Iterable[tuple[ToolCall, ToolResult[Any]]], *, case: Case
) -> dict[str, Any] | Content: ...


def tool_results_message(
    results: Iterable[tuple[ToolCall, ToolResult[Any]]], *, case: Case = "camel"
) -> dict[str, Any] | Content:
    """One ``user`` content with a ``functionResponse`` part per call; with
    ``case="snake"``, the SDK's ``ContentDict``."""
    _check_case("tool_results_message", case)
    if case == "snake":
        return {
            "role": "user",
            "parts": [function_response_part(c, r, case="snake") for c, r in results],
        }
    return {"role": "user", "parts": [function_response_part(c, r) for c, r in results]}


def _check_case(function: str, case: object) -> None:
    if case not in ("camel", "snake"):
        raise ValueError(f"gemini.{function}: case must be 'camel' or 'snake', got {case!r}")


# The SDK's snake_case spelling of the camelCase keys wink writes (declarations, and
# the keywords of an OpenAPI-subset schema); every other key is one word.
_SNAKE = {
    "parametersJsonSchema": "parameters_json_schema",
    "maxItems": "max_items",
    "minItems": "min_items",
    "minProperties": "min_properties",
    "maxProperties": "max_properties",
    "minLength": "min_length",
    "maxLength": "max_length",
    "anyOf": "any_of",
    "propertyOrdering": "property_ordering",
}


def _snake_schema(schema: Any) -> Any:
    """An OpenAPI-subset schema with the SDK's keys: keywords renamed, property names kept."""
    if not isinstance(schema, Mapping):
        return schema
    snake: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "properties":
            value = {name: _snake_schema(child) for name, child in value.items()}
        elif key == "items":
            value = _snake_schema(value)
        elif key == "anyOf":
            value = [_snake_schema(branch) for branch in value]
        snake[_SNAKE.get(str(key), str(key))] = value
    return snake


def _tool_spec(tool: Tool[Any, Any], form: Form, case: Case) -> dict[str, Any]:
    if case == "snake":
        return _tool_cache.get((tool, form, case), lambda: _snake_spec(tool, form))
    return _camel_spec(tool, form)


def _snake_spec(tool: Tool[Any, Any], form: Form) -> dict[str, Any]:
    camel = _camel_spec(tool, form)
    spec = {_SNAKE.get(key, key): value for key, value in camel.items()}
    if "parameters" in spec:
        spec["parameters"] = _snake_schema(camel["parameters"])
    frozen: dict[str, Any] = freeze(spec)
    return frozen


def _camel_spec(tool: Tool[Any, Any], form: Form) -> dict[str, Any]:
    def build() -> dict[str, Any]:
        if not _NAME.fullmatch(tool.name):
            raise ProviderSchemaError(
                f"tool {tool.name!r}: Gemini function names start with a letter or '_' "
                "(then letters, digits, '_', '.', ':' or '-', at most 64)"
            )
        spec: dict[str, Any] = {"name": tool.name, "description": tool.description}
        root = object_root(tool.params_schema, tool.name, _DIALECT)
        if root.get("properties"):
            if form == "json_schema":
                spec["parametersJsonSchema"] = with_null_defaults(root)
            else:
                subject = f"tool {tool.name!r}"
                params = with_null_defaults(tool.params_schema)
                spec["parameters"] = openapi_schema(params, subject)
        frozen: dict[str, Any] = freeze(spec)
        return frozen

    return _tool_cache.get((tool, form), build)


def _calls_from_parts(parts: list[Any], where: str) -> list[ToolCall]:
    calls = []
    for index, raw in enumerate(parts):
        part = object_at(raw, f"{where}[{index}]")
        function_call = field(part, "functionCall", "function_call")
        here = f"{where}[{index}].functionCall" if where != "function call" else where
        if function_call is None and "name" in part:
            # A bare FunctionCall, as the SDK's ``response.function_calls`` lists them.
            function_call, here = part, f"{where}[{index}]"
        if function_call is None:
            continue  # text, a function response, inline data...
        function_call = object_at(function_call, here)
        name = text_field(function_call, "name", here)
        # A function declared without parameters is called without ``args``: no arguments.
        arguments = function_call.get("args")
        call_id = function_call.get("id")
        calls.append(
            ToolCall(name, {} if arguments is None else decoded_arguments(arguments), call_id)
        )
    return calls


# Last: the adapter module reads this module's names when it runs.
from wink.providers._gemini_adapter import GeminiAdapter  # noqa: E402
