"""Keywords a dialect cannot enforce still reach the model: as text in the description.

A tuple (``prefixItems``) is the one keyword whose loss also changes the
structure: its positions widen to a single ``items`` schema.
"""

from __future__ import annotations

import json
from typing import Any

from wink.contract.walk import JsonSchema

__all__ = ["describe_moved", "readable_json", "widen_tuple"]


# ``json.dumps`` with options would build a new encoder per node described.
_READABLE_JSON = json.JSONEncoder(ensure_ascii=False, separators=(", ", ": "))


def readable_json(value: Any) -> str:
    """``value`` as JSON text for a description: non-ASCII kept, ``", "`` between items."""
    # The encoder builds a new C encoder for anything but a string; the usual
    # defaults (numbers, booleans) are spelled here exactly as it would.
    if value is True:
        return "true"
    if value is False:
        return "false"
    if type(value) is int:
        return int.__repr__(value)
    if not value and isinstance(value, list | dict):
        return "[]" if isinstance(value, list) else "{}"
    return _READABLE_JSON.encode(value)


def describe_moved(node: JsonSchema, moved: dict[str, Any]) -> JsonSchema:
    """``node`` with ``moved`` keywords appended to its description as compact JSON.

    ``{"type": "string", "minLength": 1}`` becomes
    ``{"type": "string", "description": "JSON Schema: {\\"minLength\\": 1}"}``.
    """
    if not moved:
        return node
    text = "JSON Schema: " + readable_json(moved)
    description = node.get("description")
    node["description"] = f"{description}\n\n{text}" if description else text
    return node


def widen_tuple(node: JsonSchema, prefix_items: list[JsonSchema]) -> None:
    """Set ``node``'s ``items`` to one schema accepting every position of a tuple.

    ``prefix_items`` (already removed from ``node``) and any ``items`` for the
    positions after them become ``{"anyOf": [...distinct schemas]}``, or the one
    schema when they are all the same.
    """
    rest = [node["items"]] if isinstance(node.get("items"), dict) else []
    distinct: list[JsonSchema] = []
    for item in [*prefix_items, *rest]:
        if item not in distinct:
            distinct.append(item)
    node["items"] = distinct[0] if len(distinct) == 1 else {"anyOf": distinct}
