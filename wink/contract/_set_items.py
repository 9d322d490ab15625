"""Whether the items a set is parsed into can be put in a set at all.

JSON Schema's ``uniqueItems`` compares any values, objects included; a Python set
holds only hashable ones. A ``set[TypedDict]`` therefore promises arrays of objects
that parsing could never accept: such a type is refused when it is compiled.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["unhashable_items"]

_CONTAINERS = {
    "list": "arrays (lists)",
    "dict": "objects (dicts)",
    "typed-dict": "objects (TypedDicts)",
    "set": "arrays (sets)",
    "generator": "arrays (iterables)",
    "any": "any JSON value, arrays and objects included",
}
_WRAPPERS = frozenset(
    {"nullable", "default", "function-after", "function-before", "function-wrap", "definitions"}
)


def unhashable_items(schema: Any, definitions: Mapping[str, Any]) -> str | None:
    """What in ``schema`` cannot be hashed, in words; ``None`` when every value can."""
    return _unhashable(schema, definitions, set())


def _unhashable(schema: Any, definitions: Mapping[str, Any], seen: set[str]) -> str | None:
    if not isinstance(schema, dict):
        return None
    kind = schema.get("type")
    if kind in _CONTAINERS:
        return _CONTAINERS[kind]
    if kind == "definition-ref":
        ref = schema["schema_ref"]
        if ref in seen:
            return None
        seen.add(ref)
        return _unhashable(definitions.get(ref), definitions, seen)
    if kind in _WRAPPERS:
        return _unhashable(schema.get("schema"), definitions, seen)
    if kind == "json-or-python":
        return _unhashable(schema.get("json_schema"), definitions, seen)
    if kind in ("model", "dataclass"):
        return _unhashable_class(schema, definitions, seen)
    children: list[Any] = []
    if kind == "tuple":
        children = list(schema.get("items_schema", ()))
    elif kind == "frozenset":
        children = [schema.get("items_schema")]
    elif kind == "union":
        children = [c[0] if isinstance(c, tuple) else c for c in schema.get("choices", ())]
    elif kind == "tagged-union":
        children = list(schema.get("choices", {}).values())
    elif kind == "named-tuple":  # a tuple of its fields
        children = [field.get("schema") for field in schema.get("fields", ())]
    for child in children:
        found = _unhashable(child, definitions, seen)
        if found is not None:
            return found
    return None


def _unhashable_class(
    schema: dict[str, Any], definitions: Mapping[str, Any], seen: set[str]
) -> str | None:
    cls = schema["cls"]
    name = cls.__qualname__
    if getattr(cls, "__hash__", None) is None:
        kind = "a model" if schema["type"] == "model" else "a dataclass"
        return f"{name} objects ({kind} that is not frozen)"
    if schema.get("root_model"):
        return _unhashable(schema.get("schema"), definitions, seen)
    fields = schema.get("schema")
    while isinstance(fields, dict) and fields.get("type") in _WRAPPERS:
        fields = fields.get("schema")
    if not isinstance(fields, dict):
        return None
    members = fields.get("fields", {})
    items = members.items() if isinstance(members, dict) else ((f["name"], f) for f in members)
    for field_name, field in items:
        found = _unhashable(field.get("schema"), definitions, seen)
        if found is not None:
            return f"{name} objects (field {field_name} holds {found})"
    return None
