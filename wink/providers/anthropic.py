"""Anthropic Messages API: tool specs, ``tool_use`` blocks, ``tool_result`` messages.

The ``input_schema`` is the contract's schema with a recursive root inlined (the
root must be an object). ``strict=True`` (for all tools or per tool name) adds
``"strict": true`` and rewrites the schema to Anthropic's strict subset: objects
closed, unsupported keywords (numeric bounds, lengths, ``pattern``, ``maxItems``,
``minItems`` above 1, formats outside the list) moved into the description,
``oneOf`` as ``anyOf``. Optional fields stay optional. In both forms a field
with a default also accepts ``null`` (which the contract reads as the default),
so in strict tool use it counts as a parameter with a union type. Recursive types,
free-form mappings, ``Any`` and bare lists raise ``ProviderSchemaError``, as do
requests over Anthropic's limits: 20 strict tools, 24 optional parameters and
16 parameters with union types across all strict tools.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, cast

from wink.contract.frozen import freeze
from wink.contract.walk import JsonSchema, iter_schema_nodes
from wink.providers._anthropic_types import CacheControl, ToolMessage, ToolResultBlock, ToolSpec
from wink.providers._errors import ProviderPayloadError, ProviderSchemaError
from wink.providers._inline import object_root
from wink.providers._null_default import with_null_defaults
from wink.providers._payload import (
    as_data,
    decoded_arguments,
    list_field,
    object_at,
    text_field,
    unrecognised,
)
from wink.providers._specs import SpecCache, ToolSource, option_for, options_key, tools_of
from wink.providers._strict import StrictRules, make_strict
from wink.runtime.call import ToolCall
from wink.tools import Tool, ToolResult

__all__ = [
    "AnthropicAdapter",
    "STRICT_RULES",
    "CacheControl",
    "ToolMessage",
    "ToolResultBlock",
    "ToolSpec",
    "parse_tool_calls",
    "tool_message",
    "tool_result_block",
    "tool_results_message",
    "tool_specs",
]

STRICT_RULES = StrictRules(
    dialect="Anthropic strict tool use",
    kept=frozenset({"definitions", "default", "minItems"}),
    formats=frozenset(
        {
            "date-time",
            "time",
            "date",
            "duration",
            "email",
            "hostname",
            "uri",
            "ipv4",
            "ipv6",
            "uuid",
        }
    ),
    require_every_property=False,
    keep_defaults=True,
    allow_recursion=False,
    min_items=frozenset({0, 1}),
)
"""Anthropic's documented strict subset (Structured outputs, "JSON Schema limitations")."""

# Documented limits across all strict schemas of one request.
_MAX_STRICT_TOOLS = 20
_MAX_OPTIONAL = 24
_MAX_UNIONS = 16

_DIALECT = "Anthropic"
_tool_cache = SpecCache()
_list_cache = SpecCache(max_entries=256)


def tool_specs(source: ToolSource, *, strict: bool | Mapping[str, bool] = False) -> list[ToolSpec]:
    """The ``tools`` list of a Messages request, in order, typed so that the SDK's
    ``create(tools=...)`` accepts it as it is.

    Specs are cached and read-only; ``copy.deepcopy`` one to change it.
    """
    values = strict.values() if isinstance(strict, Mapping) else (strict,)
    for value in values:
        if not isinstance(value, bool):
            raise ValueError(
                "anthropic.tool_specs: strict must be True or False (or a mapping of tool names "
                f"to them), got {value!r}"
            )
    tools = tools_of(source)

    def build() -> tuple[dict[str, Any], ...]:
        specs = tuple(_tool_spec(tool, option_for(strict, tool, False)) for tool in tools)
        _check_request_limits(specs)
        return specs

    specs = list(_list_cache.get((tools, options_key(strict)), build))
    return cast("list[ToolSpec]", specs)  # the cached values are the dicts it describes


def parse_tool_calls(payload: Any) -> list[ToolCall]:
    """The ``tool_use`` blocks of a message (response or message param), of a request's
    messages, or of a list of content blocks, as tool calls (dicts or SDK objects)."""
    data = as_data(payload)
    if isinstance(data, Mapping) and "messages" in data:
        calls = []
        for index, raw in enumerate(list_field(data, "messages", "")):
            message = object_at(raw, f"messages[{index}]")
            calls.extend(_calls_from_content(message, f"messages[{index}]"))
        return calls
    if isinstance(data, Mapping) and "content" in data:
        return _calls_from_content(data, "")
    if isinstance(data, Mapping) and data.get("type") == "tool_use":
        return _calls_from_blocks([data], "block")
    if isinstance(data, list):
        return _calls_from_blocks(data, "blocks")
    raise unrecognised(
        "an Anthropic message (content), a request (messages), a tool_use block or a list "
        "of content blocks",
        data,
    )


def _calls_from_content(message: Mapping[str, Any], where: str) -> list[ToolCall]:
    """The calls in the content of the message at ``where`` ("" for the payload itself)."""
    # A message's content is a string (text only) or a list of blocks.
    if isinstance(message.get("content"), str):
        return []
    blocks = list_field(message, "content", where)
    return _calls_from_blocks(blocks, f"{where}.content" if where else "content")


def _calls_from_blocks(blocks: list[Any], where: str) -> list[ToolCall]:
    calls = []
    for index, raw in enumerate(blocks):
        block = as_data(raw)
        if not isinstance(block, Mapping) or block.get("type") != "tool_use":
            continue
        here = f"{where}[{index}]"
        name = text_field(block, "name", here)
        call_id = text_field(block, "id", here)
        calls.append(ToolCall(name, decoded_arguments(block.get("input")), call_id))
    return calls


def tool_result_block(call: ToolCall, result: ToolResult[Any]) -> ToolResultBlock:
    """The ``tool_result`` block answering ``call``; ``is_error`` marks a failure."""
    if not call.call_id:
        raise ProviderPayloadError(
            f"tool call {call.name!r} has no call_id; Anthropic matches a tool_result to its "
            "tool_use block by that id"
        )
    block: ToolResultBlock = {"type": "tool_result", "tool_use_id": call.call_id}
    text = result.model_text()
    if text:
        block["content"] = text
    if not result.success:
        block["is_error"] = True
    return block


def tool_message(call: ToolCall, result: ToolResult[Any]) -> ToolMessage:
    """A ``user`` message carrying the one ``tool_result`` block of ``call``."""
    return {"role": "user", "content": [tool_result_block(call, result)]}


def tool_results_message(
    results: Iterable[tuple[ToolCall, ToolResult[Any]]],
) -> ToolMessage:
    """One ``user`` message with a ``tool_result`` block per call, as Anthropic expects
    after parallel tool use."""
    return {
        "role": "user",
        "content": [tool_result_block(call, result) for call, result in results],
    }


def _tool_spec(tool: Tool[Any, Any], strict: bool) -> dict[str, Any]:
    def build() -> dict[str, Any]:
        if strict:
            schema = make_strict(tool.params_schema, STRICT_RULES, tool.name).schema
        else:
            schema = object_root(tool.params_schema, tool.name, _DIALECT)
        schema = with_null_defaults(schema)
        spec: dict[str, Any] = {
            "name": tool.name,
            "description": tool.description,
            "input_schema": schema,
        }
        if strict:
            spec["strict"] = True
        frozen: dict[str, Any] = freeze(spec)
        return frozen

    return _tool_cache.get((tool, strict), build)


def _check_request_limits(specs: tuple[dict[str, Any], ...]) -> None:
    strict = [spec for spec in specs if spec.get("strict")]
    optional = unions = 0
    for spec in strict:
        counts = _parameter_counts(spec["input_schema"])
        optional += counts[0]
        unions += counts[1]
    names = ", ".join(spec["name"] for spec in strict)
    for what, value, limit in (
        ("strict tools", len(strict), _MAX_STRICT_TOOLS),
        ("optional parameters", optional, _MAX_OPTIONAL),
        ("parameters with union types", unions, _MAX_UNIONS),
    ):
        if value > limit:
            raise ProviderSchemaError(
                f"Anthropic strict tool use allows at most {limit} {what} per request; the strict "
                f"tools ({names}) have {value}: mark fewer tools strict"
            )


def _parameter_counts(schema: JsonSchema) -> tuple[int, int]:
    """(optional parameters, parameters with a union type) in one schema."""
    optional = unions = 0
    for _, node in iter_schema_nodes(schema):
        properties = node.get("properties")
        if not isinstance(properties, dict):
            continue
        required = set(node.get("required", ()))
        optional += sum(1 for name in properties if name not in required)
        unions += sum(
            1
            for prop in properties.values()
            if isinstance(prop, dict) and ("anyOf" in prop or isinstance(prop.get("type"), list))
        )
    return optional, unions


# Last: the adapter module reads this module's names when it runs.
from wink.providers._anthropic_adapter import AnthropicAdapter  # noqa: E402
