"""Walk JSON Schema documents node by node, knowing which keywords hold schemas.

Provider dialects and the contract layer both rewrite schemas; they share this
walker so that a keyword holding a *map of names* (``properties``, ``$defs``) is
never mistaken for a schema node, and a property literally named ``title`` or
``type`` survives every rewrite.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = [
    "ONE_SCHEMA",
    "SCHEMA_LIST",
    "SCHEMA_MAP",
    "JsonSchema",
    "iter_schema_nodes",
    "map_nodes",
    "map_schema",
]

JsonSchema = dict[str, Any]

ONE_SCHEMA = frozenset(
    {
        "items",
        "additionalProperties",
        "not",
        "if",
        "then",
        "else",
        "contains",
        "propertyNames",
        "unevaluatedItems",
        "unevaluatedProperties",
        "additionalItems",
    }
)
"""Keywords whose value is one schema."""
SCHEMA_LIST = frozenset({"anyOf", "allOf", "oneOf", "prefixItems"})
"""Keywords whose value is a list of schemas."""
SCHEMA_MAP = frozenset(
    {"properties", "$defs", "definitions", "patternProperties", "dependentSchemas"}
)
"""Keywords whose value maps names to schemas (the names are data, never keywords)."""


def map_schema(schema: JsonSchema, visit: Callable[[JsonSchema], JsonSchema]) -> JsonSchema:
    """Return a new schema where every node (children first) went through ``visit``.

    ``visit`` receives a fresh copy of the node whose sub-schemas were already
    rewritten, and returns the node to put in its place. The input is not changed.
    """
    return map_nodes(schema, lambda node, _pointer: visit(node))


def map_nodes(
    schema: JsonSchema, visit: Callable[[JsonSchema, str], JsonSchema], pointer: str = "#"
) -> JsonSchema:
    """Like ``map_schema``, but ``visit`` also gets each node's JSON pointer.

    Rewrites that report *where* a keyword was lost or a type cannot be expressed
    use the pointer in their messages.
    """
    node: JsonSchema = {}
    for key, value in schema.items():
        if key in ONE_SCHEMA and isinstance(value, dict):
            node[key] = map_nodes(value, visit, f"{pointer}/{key}")
        elif key in SCHEMA_LIST and isinstance(value, list):
            node[key] = [
                map_nodes(item, visit, f"{pointer}/{key}/{index}")
                if isinstance(item, dict)
                else item
                for index, item in enumerate(value)
            ]
        elif key in SCHEMA_MAP and isinstance(value, dict):
            node[key] = {
                name: map_nodes(sub, visit, f"{pointer}/{key}/{name}")
                if isinstance(sub, dict)
                else sub
                for name, sub in value.items()
            }
        else:
            node[key] = value
    return visit(node, pointer)


def iter_schema_nodes(schema: JsonSchema, path: str = "#") -> list[tuple[str, JsonSchema]]:
    """List every schema node with its JSON pointer, parents before children."""
    found: list[tuple[str, JsonSchema]] = []
    pending: list[tuple[str, JsonSchema]] = [(path, schema)]
    while pending:
        path, node = pending.pop()
        found.append((path, node))
        children: list[tuple[str, JsonSchema]] = []
        for key, value in node.items():
            if key in ONE_SCHEMA and isinstance(value, dict):
                children.append((f"{path}/{key}", value))
            elif key in SCHEMA_LIST and isinstance(value, list):
                children.extend(
                    (f"{path}/{key}/{index}", item)
                    for index, item in enumerate(value)
                    if isinstance(item, dict)
                )
            elif key in SCHEMA_MAP and isinstance(value, dict):
                children.extend(
                    (f"{path}/{key}/{name}", sub)
                    for name, sub in value.items()
                    if isinstance(sub, dict)
                )
        # Last pushed is visited first: reversed, so children keep their written order.
        pending.extend(reversed(children))
    return found
