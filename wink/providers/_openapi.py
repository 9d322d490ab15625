"""JSON Schema → Gemini's OpenAPI-subset ``Schema`` (the ``parameters`` form).

What changes, and what is lost (the contract still enforces all of it):

- ``$ref`` is inlined; a recursive type cannot be and raises ``ProviderSchemaError``.
- ``anyOf [T, null]`` (and ``type: [T, "null"]``) becomes ``T`` with ``nullable: true``;
  a ``null`` default goes (nullable and optional say as much).
- A string ``const`` becomes a one-value ``enum``; string enums stay enums.
  Enums and consts of numbers or booleans keep their type, and their choices
  move into the description (Gemini's ``enum`` holds strings only). Choices of
  several types (``Literal["a", 1]``) become ``anyOf`` with one branch per type.
- ``prefixItems`` (tuples) widens to one ``items`` schema accepting every
  position; the positions move into the description.
- ``title`` is stripped from schema nodes; a *property* named ``title`` stays.
- ``additionalProperties`` is dropped: Gemini cannot close an object, so a model
  may send extra keys (the contract rejects them), and a mapping's value type
  (``dict[str, X]``) only reaches the model as description text.
- An object without properties keeps ``type: OBJECT`` and no ``properties``
  (an empty ``properties`` map is rejected).
- String formats other than ``date-time`` and ``enum``, and keywords outside the
  subset (``exclusiveMinimum``, ``multipleOf``, ``uniqueItems``...) move into the
  description.
"""

from __future__ import annotations

from typing import Any

from wink.contract.walk import JsonSchema
from wink.providers._describe import describe_moved, widen_tuple
from wink.providers._errors import ProviderSchemaError
from wink.providers._inline import inline_all_refs

__all__ = ["openapi_schema"]

_SUPPORTED = frozenset(
    {
        "type",
        "format",
        "description",
        "nullable",
        "enum",
        "maxItems",
        "minItems",
        "properties",
        "required",
        "minProperties",
        "maxProperties",
        "minLength",
        "maxLength",
        "pattern",
        "example",
        "anyOf",
        "propertyOrdering",
        "default",
        "items",
        "minimum",
        "maximum",
    }
)
_FORMATS = {
    "STRING": frozenset({"date-time", "enum"}),
    "INTEGER": frozenset({"int32", "int64"}),
    "NUMBER": frozenset({"float", "double"}),
}
_DROPPED = frozenset({"title", "discriminator", "$schema", "$id", "$comment"})
# Keywords ``_convert`` keeps as they are, or drops (``title``, ``additionalProperties``
# unless it holds a schema).
_PLAIN = (_SUPPORTED - {"format", "enum", "anyOf", "example"}) | {"title", "additionalProperties"}
_NULL = {"type": "NULL"}


def openapi_schema(schema: JsonSchema, subject: str) -> JsonSchema:
    """The OpenAPI-subset form of ``schema`` (whose root, once inlined, is an object)."""
    hint = "use form='json_schema', which keeps $ref"
    problems: list[ProviderSchemaError] = []

    def convert(node: JsonSchema) -> JsonSchema:
        # Converted as it is inlined, in one walk; a schema that cannot be converted is
        # refused once inlining is done, so that a recursive type is named first.
        if problems:
            return node
        try:
            return _convert(node)
        except ProviderSchemaError as problem:
            problems.append(problem)
            return node

    converted = inline_all_refs(schema, subject, hint, convert)
    if problems:
        raise problems[0]
    return converted


def _convert(node: JsonSchema) -> JsonSchema:
    kind = node.get("type")
    if (
        type(kind) is str
        and node.keys() <= _PLAIN
        and not isinstance(node.get("additionalProperties"), dict)
    ):
        # The usual node (one type, no choices, nothing to move): the steps below that
        # apply to it, and only those.
        node.pop("title", None)
        if "default" in node and node["default"] is None:
            del node["default"]
        node["type"] = kind = kind.upper()
        node.pop("additionalProperties", None)
        if kind == "OBJECT" and not node.get("properties"):
            node.pop("properties", None)
            node.pop("required", None)
        return node
    moved: dict[str, Any] = {}
    for key in _DROPPED & node.keys():
        node.pop(key)
    if "oneOf" in node:
        node["anyOf"] = [*node.get("anyOf", ()), *node.pop("oneOf")]
    if "allOf" in node:
        node = _merge_all_of(node)
    if "default" in node and node["default"] is None:
        del node["default"]  # an optional nullable field says as much; the SDK drops nulls
    if "examples" in node:
        examples = node.pop("examples")
        if isinstance(examples, list) and examples:
            node.setdefault("example", examples[0])
    _convert_type(node)
    _convert_choices(node, moved)
    _convert_any_of(node)
    if "prefixItems" in node:
        prefix = node.pop("prefixItems")
        moved["prefixItems"] = prefix
        widen_tuple(node, prefix)
    extra = node.pop("additionalProperties", None)
    if isinstance(extra, dict):
        moved["additionalProperties"] = extra
    if node.get("type") == "OBJECT" and not node.get("properties"):
        node.pop("properties", None)
        node.pop("required", None)
    fmt = node.get("format")
    if fmt is not None and fmt not in _FORMATS.get(str(node.get("type")), frozenset()):
        moved["format"] = node.pop("format")
    for key in list(node):
        if key not in _SUPPORTED:
            moved[key] = node.pop(key)
    return describe_moved(node, moved)


def _merge_all_of(node: JsonSchema) -> JsonSchema:
    parts = node.pop("allOf")
    if len(parts) != 1:
        raise ProviderSchemaError(
            "allOf with several schemas has no equivalent in Gemini's OpenAPI schema"
        )
    return {**parts[0], **node}


def _convert_type(node: JsonSchema) -> None:
    kind = node.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        if len(kinds) < len(kind):
            node["nullable"] = True
        if len(kinds) == 1:
            node["type"] = kinds[0].upper()
        else:
            node.pop("type")
            node["anyOf"] = [{"type": k.upper()} for k in kinds]
    elif isinstance(kind, str):
        node["type"] = kind.upper()


def _convert_choices(node: JsonSchema, moved: dict[str, Any]) -> None:
    """String choices stay an ``enum``; other choices keep their type and are described."""
    if "const" in node:
        value = node.pop("const")
        if value is None:
            node["nullable"] = True
        node["enum"] = [value]
    enum = node.get("enum")
    if not isinstance(enum, list):
        return
    values = [value for value in enum if value is not None]
    if len(values) < len(enum):
        node["nullable"] = True
    if values and all(isinstance(value, str) for value in values):
        node["type"] = "STRING"
        node["enum"] = values
        return
    node.pop("enum")
    if not values:
        return
    moved["enum"] = values
    kinds = list(dict.fromkeys(_type_of(value) for value in values))
    if len(kinds) == 1:
        node.setdefault("type", kinds[0])
        return
    # Mixed choices (``Literal["a", 1]``): one branch per type, strings still an enum.
    node.pop("type", None)
    strings = [value for value in values if isinstance(value, str)]
    node["anyOf"] = [
        {"type": kind, "enum": strings} if kind == "STRING" else {"type": kind} for kind in kinds
    ]


def _type_of(value: Any) -> str:
    if isinstance(value, bool):
        return "BOOLEAN"
    if isinstance(value, int):
        return "INTEGER"
    if isinstance(value, float):
        return "NUMBER"
    return "STRING"


def _convert_any_of(node: JsonSchema) -> None:
    branches = node.get("anyOf")
    if not isinstance(branches, list):
        return
    kept = [branch for branch in branches if branch != _NULL]
    if len(kept) < len(branches):
        node["nullable"] = True
    if len(kept) == 1:
        del node["anyOf"]
        merged = {**kept[0], **node}
        node.clear()
        node.update(merged)
    else:
        node["anyOf"] = kept
