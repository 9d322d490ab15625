"""Walk JSON Schema documents node by node, knowing which keywords hold schemas.

Provider dialects and the contract layer both rewrite schemas; they share this
walker so that a keyword holding a *map of names* (``properties``, ``$defs``) is
never mistaken for a schema node, and a property literally named ``title`` or
``type`` survives every rewrite.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["JsonSchema", "map_schema", "iter_schema_nodes"]

JsonSchema = dict[str, Any]

# Keywords whose value is one schema.
_SCHEMA_KEYWORDS = frozenset(
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
# Keywords whose value is a list of schemas.
_SCHEMA_LIST_KEYWORDS = frozenset({"anyOf", "allOf", "oneOf", "prefixItems"})
# Keywords whose value maps names to schemas.
_SCHEMA_MAP_KEYWORDS = frozenset(
    {"properties", "$defs", "definitions", "patternProperties", "dependentSchemas"}
)


def map_schema(schema: JsonSchema, visit: Callable[[JsonSchema], JsonSchema]) -> JsonSchema:
    """Return a new schema where every node (children first) went through ``visit``.

    ``visit`` receives a fresh copy of the node whose sub-schemas were already
    rewritten, and returns the node to put in its place. The input is not changed.
    """
    node: JsonSchema = {}
    for key, value in schema.items():
        if key in _SCHEMA_KEYWORDS and isinstance(value, dict):
            node[key] = map_schema(value, visit)
        elif key in _SCHEMA_LIST_KEYWORDS and isinstance(value, list):
            node[key] = [
                map_schema(item, visit) if isinstance(item, dict) else item for item in value
            ]
        elif key in _SCHEMA_MAP_KEYWORDS and isinstance(value, dict):
            node[key] = {
                name: map_schema(sub, visit) if isinstance(sub, dict) else sub
                for name, sub in value.items()
            }
        else:
            node[key] = value
    return visit(node)


def iter_schema_nodes(schema: JsonSchema, path: str = "#") -> list[tuple[str, JsonSchema]]:
    """List every schema node with its JSON pointer, parents before children."""
    found: list[tuple[str, JsonSchema]] = [(path, schema)]
    for key, value in schema.items():
        if key in _SCHEMA_KEYWORDS and isinstance(value, dict):
            found.extend(iter_schema_nodes(value, f"{path}/{key}"))
        elif key in _SCHEMA_LIST_KEYWORDS and isinstance(value, list):
            for index, item in enumerate(value):
                if isinstance(item, dict):
                    found.extend(iter_schema_nodes(item, f"{path}/{key}/{index}"))
        elif key in _SCHEMA_MAP_KEYWORDS and isinstance(value, dict):
            for name, sub in value.items():
                if isinstance(sub, dict):
                    found.extend(iter_schema_nodes(sub, f"{path}/{key}/{name}"))
    return found
