"""A path-aware schema rewrite: like ``wink.contract.walk.map_schema``, with JSON pointers.

Provider rewrites report *where* a keyword was lost or a type cannot be
expressed, so their visitor receives each node's pointer as well.
"""

from __future__ import annotations

from collections.abc import Callable

from wink.contract.walk import JsonSchema

__all__ = ["ONE_SCHEMA", "SCHEMA_LIST", "SCHEMA_MAP", "map_nodes"]

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


def map_nodes(
    schema: JsonSchema, visit: Callable[[JsonSchema, str], JsonSchema], pointer: str = "#"
) -> JsonSchema:
    """A new schema where every node went through ``visit(node, pointer)``, children first.

    ``visit`` gets a fresh node whose sub-schemas were already rewritten; the
    input is not changed.
    """
    node: JsonSchema = {}
    for key, value in schema.items():
        where = f"{pointer}/{key}"
        if key in ONE_SCHEMA and isinstance(value, dict):
            node[key] = map_nodes(value, visit, where)
        elif key in SCHEMA_LIST and isinstance(value, list):
            node[key] = [
                map_nodes(item, visit, f"{where}/{index}") if isinstance(item, dict) else item
                for index, item in enumerate(value)
            ]
        elif key in SCHEMA_MAP and isinstance(value, dict):
            node[key] = {
                name: map_nodes(sub, visit, f"{where}/{name}") if isinstance(sub, dict) else sub
                for name, sub in value.items()
            }
        else:
            node[key] = value
    return visit(node, pointer)
