"""OpenAI: tool specs for Chat Completions and the Responses API, tool calls, tool messages.

``strict`` is ``"auto"``, ``True`` or ``False``, for all tools or per tool name
(``{"search": True}``; tools not named get ``"auto"``, names of tools absent from
the source are ignored, since a disabled section hides its tools):

- ``False`` sends the contract's schema, with ``"strict": false``; a field with a
  default also accepts ``null`` there, as the contract does.
- ``True`` rewrites it for strict mode (see ``wink.providers._strict``) and
  raises ``ProviderSchemaError`` naming tool and field when it cannot.
- ``"auto"`` is strict only when the rewrite keeps the schema's meaning: no
  assertion moved into a description, no optional field whose ``null`` would
  mean ``None`` rather than its default, no optional field without a default
  (a ``TypedDict`` ``NotRequired`` key, which strict mode would always send).
  ``strict_issues(tool)`` says why not.

In strict mode a model sends ``null`` for an optional field; parsing with the
tool's contract turns it into the field's declared default.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, cast, overload

from wink.contract.frozen import FrozenDict, freeze
from wink.contract.schema import fields_without_default
from wink.contract.walk import ONE_SCHEMA, SCHEMA_LIST, SCHEMA_MAP, JsonSchema
from wink.providers._errors import ProviderPayloadError, ProviderSchemaError
from wink.providers._inline import object_root
from wink.providers._null_default import with_null_defaults
from wink.providers._openai_types import (
    ChatFunction,
    ChatToolMessage,
    ChatToolSpec,
    FunctionCallOutput,
    ResponsesToolSpec,
    TextPart,
)
from wink.providers._payload import (
    arguments_of,
    as_data,
    list_field,
    object_at,
    object_field,
    text_field,
    unrecognised,
)
from wink.providers._specs import SpecCache, ToolSource, option_for, options_key, tools_of
from wink.providers._strict import Figures, StrictRules, make_strict
from wink.runtime.call import ToolCall
from wink.tools import Tool, ToolResult

__all__ = [
    "STRICT_RULES",
    "Api",
    "ChatFunction",
    "ChatToolMessage",
    "ChatToolSpec",
    "FunctionCallOutput",
    "OpenAIAdapter",
    "ResponsesToolSpec",
    "StrictMode",
    "TextPart",
    "parse_tool_calls",
    "strict_issues",
    "tool_message",
    "tool_specs",
]

Api = Literal["chat", "responses"]
"""``"chat"``: Chat Completions; ``"responses"``: the Responses API."""
StrictMode = Literal["auto"] | bool
"""``"auto"``, ``True`` or ``False``."""

STRICT_RULES = StrictRules(
    dialect="OpenAI strict mode",
    kept=frozenset(
        {
            "pattern",
            "multipleOf",
            "maximum",
            "exclusiveMaximum",
            "minimum",
            "exclusiveMinimum",
            "minItems",
            "maxItems",
        }
    ),
    formats=frozenset(
        {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
    ),
    require_every_property=True,
    keep_defaults=False,
    allow_recursion=True,
)
"""OpenAI's documented strict-mode subset (Structured Outputs, "Supported schemas")."""

# Documented size limits of one strict schema.
_MAX_PROPERTIES = 5000
_MAX_DEPTH = 10
_MAX_ENUM_VALUES = 1000
_MAX_STRING_LENGTH = 120_000
_LARGE_ENUM = 250
_MAX_LARGE_ENUM_LENGTH = 15_000

_DIALECT = "OpenAI"
_tool_cache = SpecCache()
_list_cache = SpecCache(max_entries=256)
_strict_cache = SpecCache()


@overload
def tool_specs(
    source: ToolSource,
    *,
    api: Literal["chat"] = "chat",
    strict: StrictMode | Mapping[str, StrictMode] = "auto",
) -> list[ChatToolSpec]: ...


@overload
def tool_specs(
    source: ToolSource,
    *,
    api: Literal["responses"],
    strict: StrictMode | Mapping[str, StrictMode] = "auto",
) -> list[ResponsesToolSpec]: ...


@overload
def tool_specs(
    source: ToolSource,
    *,
    api: Api,
    strict: StrictMode | Mapping[str, StrictMode] = "auto",
) -> list[ChatToolSpec] | list[ResponsesToolSpec]: ...


def tool_specs(
    source: ToolSource,
    *,
    api: Api = "chat",
    strict: StrictMode | Mapping[str, StrictMode] = "auto",
) -> list[ChatToolSpec] | list[ResponsesToolSpec]:
    """The ``tools`` list of a request: one function tool per tool, in order.

    Each is a ``ChatToolSpec`` (chat) or a ``ResponsesToolSpec`` (responses), typed
    so that the SDK's ``create(tools=...)`` accepts the list as it is.
    Specs are cached and read-only; ``copy.deepcopy`` one to change it.
    """
    if api not in ("chat", "responses"):
        raise ValueError(f"openai.tool_specs: api must be 'chat' or 'responses', got {api!r}")
    _check_strict_option(strict)
    tools = tools_of(source)

    def build() -> tuple[dict[str, Any], ...]:
        return tuple(_tool_spec(tool, api, option_for(strict, tool, "auto")) for tool in tools)

    specs = list(_list_cache.get((tools, api, options_key(strict)), build))
    # The cached values are the plain dicts these types describe.
    return cast("list[ChatToolSpec] | list[ResponsesToolSpec]", specs)


def strict_issues(tool: Tool[Any, Any]) -> list[str]:
    """Why ``strict="auto"`` leaves ``tool`` non-strict; empty when it goes strict."""
    try:
        return list(_strict_parameters(tool)[2])
    except ProviderSchemaError as error:
        return [str(error)]


_EXPECTED = (
    "an OpenAI chat completion (choices), a message (tool_calls), a chat request "
    "(messages), a Responses API response (output) or request (input), or a tool call"
)


def parse_tool_calls(payload: Any) -> list[ToolCall]:
    """The function calls in a chat completion, an assistant message, a chat request,
    a Responses API response or request, or a list of tool calls / output items
    (dicts or SDK objects).

    Arguments stay the JSON text the model sent; the tool's contract parses them.
    Of a chat completion, the first choice is read; of a request, every assistant
    message's calls (or every ``function_call`` input item), in order. A stream chunk
    holds only part of a call, so it raises ``ProviderPayloadError``: assemble the
    deltas first.
    """
    data = as_data(payload)
    if isinstance(data, list):
        return _calls_from_items(data, "items")
    if not isinstance(data, Mapping):
        raise unrecognised(_EXPECTED, data)
    if "messages" in data:
        return _calls_from_messages(list_field(data, "messages", ""))
    if "input" in data and "role" not in data and "type" not in data:
        # A Responses request: its input is one user text, or a list of items.
        items = data["input"]
        return (
            []
            if isinstance(items, str)
            else _calls_from_items(list_field(data, "input", ""), "input")
        )
    if "choices" in data:
        choices = list_field(data, "choices", "")
        if not choices:
            return []
        choice = object_at(choices[0], "choices[0]")
        if "delta" in choice and "message" not in choice:
            raise ProviderPayloadError(
                "choices[0]: a stream chunk (a delta, not a message): assemble the deltas first"
            )
        message = object_field(choice, "message", "choices[0]")
        where = "choices[0].message"
        return _calls_from_items(list_field(message, "tool_calls", where), f"{where}.tool_calls")
    if isinstance(data.get("output"), list):
        return _calls_from_items(data["output"], "output")
    if "tool_calls" in data:
        return _calls_from_items(list_field(data, "tool_calls", ""), "tool_calls")
    if data.get("type") == "function_call" or "function" in data:
        return _calls_from_items([data], "tool call")
    if "role" in data:
        return []
    raise unrecognised(_EXPECTED, data)


def _calls_from_messages(messages: list[Any]) -> list[ToolCall]:
    """The calls of a chat request's assistant messages; other messages call nothing."""
    calls = []
    for index, raw in enumerate(messages):
        where = f"messages[{index}]"
        message = object_at(raw, where)
        calls.extend(
            _calls_from_items(list_field(message, "tool_calls", where), f"{where}.tool_calls")
        )
    return calls


@overload
def tool_message(
    call: ToolCall, result: ToolResult[Any], *, api: Literal["chat"] = "chat"
) -> ChatToolMessage: ...


@overload
def tool_message(
    call: ToolCall, result: ToolResult[Any], *, api: Literal["responses"]
) -> FunctionCallOutput: ...


@overload
def tool_message(
    call: ToolCall, result: ToolResult[Any], *, api: Api
) -> ChatToolMessage | FunctionCallOutput: ...


def tool_message(
    call: ToolCall, result: ToolResult[Any], *, api: Api = "chat"
) -> ChatToolMessage | FunctionCallOutput:
    """The message answering ``call``: a ``tool`` message (chat) or a
    ``function_call_output`` item (responses).

    OpenAI has no error flag: a failure is told by the result's message text.
    """
    if not call.call_id:
        raise ProviderPayloadError(
            f"tool call {call.name!r} has no call_id; OpenAI matches a tool result to its "
            "call by that id"
        )
    text = result.model_text()
    if api == "chat":
        return {"role": "tool", "tool_call_id": call.call_id, "content": text}
    if api == "responses":
        return {"type": "function_call_output", "call_id": call.call_id, "output": text}
    raise ValueError(f"openai.tool_message: api must be 'chat' or 'responses', got {api!r}")


def _check_strict_option(strict: object) -> None:
    values = strict.values() if isinstance(strict, Mapping) else (strict,)
    for value in values:
        if value not in ("auto", True, False) or (value != "auto" and not isinstance(value, bool)):
            raise ValueError(
                f"openai.tool_specs: strict must be 'auto', True or False (or a mapping of tool "
                f"names to them), got {value!r}"
            )


def _tool_spec(tool: Tool[Any, Any], api: Api, strict: StrictMode) -> dict[str, Any]:
    def build() -> dict[str, Any]:
        parameters, is_strict = _parameters(tool, strict)
        # Built read-only: every value is a string, a bool or read-only parameters.
        function = {
            "name": tool.name,
            "description": tool.description,
            "parameters": freeze(parameters),
            "strict": is_strict,
        }
        if api == "chat":
            return FrozenDict({"type": "function", "function": FrozenDict(function)})
        return FrozenDict({"type": "function", **function})

    return _tool_cache.get((tool, api, strict), build)


def _parameters(tool: Tool[Any, Any], strict: StrictMode) -> tuple[JsonSchema, bool]:
    if strict is False:
        return _plain_parameters(tool), False
    try:
        _, made, losses = _strict_parameters(tool)
    except ProviderSchemaError:
        if strict is True:
            raise
        return _plain_parameters(tool), False
    if strict == "auto" and losses:
        return _plain_parameters(tool), False
    return made, True


def _plain_parameters(tool: Tool[Any, Any]) -> JsonSchema:
    """The contract's schema for ``"strict": false``, a defaulted field also taking ``null``."""
    return with_null_defaults(object_root(tool.params_schema, tool.name, _DIALECT))


def _strict_parameters(tool: Tool[Any, Any]) -> tuple[JsonSchema, JsonSchema, tuple[str, ...]]:
    """The params schema of ``tool``, its strict rewrite and the rewrite's losses (see
    ``StrictSchema``), rewritten once per schema.

    A params schema is read-only, so its rewrite holds for every tool carrying it
    (both APIs, ``strict_issues``, copies with other descriptions). Only successes
    are kept: a refusal names the tool. An entry is one tuple, the least a cache of
    hundreds of schemas keeps (the figures are spent once the limits are checked).
    """
    schema = tool.params_schema

    def build() -> tuple[JsonSchema, JsonSchema, tuple[str, ...]]:
        made = make_strict(
            schema, STRICT_RULES, tool.name, lambda: fields_without_default(tool.params_type)
        )
        if not _within_limits(made.figures):
            _check_limits(made.schema, tool.name)
        # The entry holds the schema, so its id names no other schema while it is kept.
        return schema, made.schema, made.losses

    if type(schema) is not FrozenDict:
        return build()  # not known to be read-only: nothing to share
    return _strict_cache.get(id(schema), build)


def _within_limits(figures: Figures) -> bool:
    """Whether a strict schema whose input counted ``figures`` is surely within the limits.

    The figures bound the strict schema's own (see ``Figures``). Where they do not
    settle it, the strict schema itself is counted, and a refusal states its figures.
    """
    return (
        figures.properties <= _MAX_PROPERTIES
        and figures.depth <= _MAX_DEPTH
        and figures.enum_values <= _MAX_ENUM_VALUES
        and figures.characters <= _MAX_STRING_LENGTH
        and (figures.longest_enum <= _LARGE_ENUM or figures.widest_enum <= _MAX_LARGE_ENUM_LENGTH)
    )


def _check_limits(schema: JsonSchema, tool_name: str) -> None:
    tally = _Tally(tool_name)
    definitions = schema.get("$defs", {})
    tally.characters += sum(len(name) for name in definitions)
    depth = tally.walk(schema)
    # Each definition's own nesting counts too (references are not followed).
    depth = max([depth, *(tally.depths.get(id(node), 0) for node in definitions.values())])
    for what, value, limit in (
        ("object properties", tally.properties, _MAX_PROPERTIES),
        ("levels of object nesting", depth, _MAX_DEPTH),
        ("enum values", tally.enum_values, _MAX_ENUM_VALUES),
        ("characters of names, enum and const values", tally.characters, _MAX_STRING_LENGTH),
    ):
        if value > limit:
            _over_limit(tool_name, f"the schema has {value} {what}", limit)


def _over_limit(tool_name: str, what: str, limit: int) -> None:
    raise ProviderSchemaError(
        f"tool {tool_name!r}: {what}, over OpenAI strict mode's limit of {limit}"
    )


# A node with none of these keywords counts for nothing and holds nothing that counts.
_COUNTED = ONE_SCHEMA | SCHEMA_LIST | SCHEMA_MAP | {"enum", "const"}


class _Tally:
    """What OpenAI strict mode limits, counted in one walk of every schema node."""

    __slots__ = ("characters", "depths", "enum_values", "properties", "tool_name")

    def __init__(self, tool_name: str) -> None:
        self.tool_name = tool_name
        self.properties = self.enum_values = self.characters = 0
        self.depths: dict[int, int] = {}

    def walk(self, node: JsonSchema) -> int:
        """Count ``node`` and every node below it (parents first); return its levels of
        nested objects, references not followed (a recursive type counts once).

        Children that count for nothing (most leaves) are skipped without a call.
        """
        properties = node.get("properties")
        if isinstance(properties, dict):
            self.properties += len(properties)
            self.characters += sum(map(len, properties))
        enum = node.get("enum")
        if isinstance(enum, list):
            self.enum_values += len(enum)
            length = sum([len(value) for value in enum if isinstance(value, str)])
            self.characters += length
            if len(enum) > _LARGE_ENUM and length > _MAX_LARGE_ENUM_LENGTH:
                _over_limit(
                    self.tool_name,
                    f"an enum of {len(enum)} values totals {length} characters",
                    _MAX_LARGE_ENUM_LENGTH,
                )
        const = node.get("const")
        if isinstance(const, str):
            self.characters += len(const)
        below = 0
        for key, value in node.items():
            if key in ONE_SCHEMA:
                if isinstance(value, dict) and not _COUNTED.isdisjoint(value):
                    depth = self.walk(value)
                    if depth > below:
                        below = depth
            elif key in SCHEMA_LIST:
                if isinstance(value, list):
                    for item in value:
                        if isinstance(item, dict) and not _COUNTED.isdisjoint(item):
                            depth = self.walk(item)
                            if depth > below:
                                below = depth
            elif key in SCHEMA_MAP and isinstance(value, dict):
                for sub in value.values():
                    if isinstance(sub, dict) and not _COUNTED.isdisjoint(sub):
                        depth = self.walk(sub)
                        if key == "properties":
                            if depth > below:
                                below = depth
                        elif key == "$defs":
                            self.depths[id(sub)] = depth
        return below + 1 if "properties" in node else below


def _calls_from_items(items: list[Any], where: str) -> list[ToolCall]:
    calls = []
    for index, raw in enumerate(items):
        # Where an item is gets spelled out only to say what is wrong with it.
        item = raw if type(raw) is dict else object_at(raw, _item_where(where, index))
        kind = item.get("type")
        if kind == "function_call":
            name = item.get("name")
            if type(name) is not str or not name:
                name = text_field(item, "name", _item_where(where, index))
            calls.append(ToolCall(name, arguments_of(item.get("arguments")), item.get("call_id")))
        elif kind in (None, "function") and "function" in item:
            function = item["function"]
            if type(function) is not dict:
                function = object_at(function, f"{_item_where(where, index)}.function")
            name = function.get("name")
            if type(name) is not str or not name:
                name = text_field(function, "name", f"{_item_where(where, index)}.function")
            calls.append(ToolCall(name, arguments_of(function.get("arguments")), item.get("id")))
        # Other items (messages, reasoning, custom or hosted tool calls) call no function.
    return calls


def _item_where(where: str, index: int) -> str:
    return f"{where}[{index}]" if where != "tool call" else where


# Last: the adapter module reads this module's names when it runs.
from wink.providers._openai_adapter import OpenAIAdapter  # noqa: E402
