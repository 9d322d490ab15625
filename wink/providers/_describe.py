"""Keywords a dialect cannot enforce still reach the model: as text in the description."""

from __future__ import annotations

import json
from typing import Any

from wink.contract.walk import JsonSchema

__all__ = ["describe_moved"]


def describe_moved(node: JsonSchema, moved: dict[str, Any]) -> JsonSchema:
    """``node`` with ``moved`` keywords appended to its description as compact JSON.

    ``{"type": "string", "minLength": 1}`` becomes
    ``{"type": "string", "description": "JSON Schema: {\\"minLength\\": 1}"}``.
    """
    if not moved:
        return node
    text = "JSON Schema: " + json.dumps(moved, separators=(", ", ": "), ensure_ascii=False)
    description = node.get("description")
    node["description"] = f"{description}\n\n{text}" if description else text
    return node
