"""``ParamHint``: what a model is told about one parameter: description, type, default."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from wink.contract.walk import JsonSchema

__all__ = ["ParamHint", "param_hints"]


@dataclass(frozen=True, slots=True)
class ParamHint:
    """One top-level parameter of a tool, as its JSON Schema describes it."""

    description: str | None
    """The field's description (after overrides), or ``None`` when it has none."""
    type: str
    """The JSON type in short: ``"string"``, ``"integer | null"``, ``"array of string"``,
    ``'"pending" | "done"'`` for an enumeration, a ``$defs`` name for a nested object."""
    required: bool
    """Whether the arguments must hold the field."""
    has_default: bool = False
    """Whether the schema gives a default."""
    default: Any = None
    """The default as a JSON value; meaningful only when ``has_default``."""

    def __str__(self) -> str:
        """One line: ``Most hits to return (integer, default 5)``."""
        extras = [self.type]
        if self.has_default:
            extras.append(f"default {json.dumps(self.default, ensure_ascii=False)}")
        elif self.required:
            extras.append("required")
        details = ", ".join(extras)
        return f"{self.description} ({details})" if self.description else f"({details})"


def param_hints(schema: JsonSchema) -> dict[str, ParamHint]:
    """The hint of every top-level property of an arguments schema, in schema order."""
    properties = schema.get("properties", {})
    required = set(schema.get("required", ()))
    definitions = schema.get("$defs", {})
    hints: dict[str, ParamHint] = {}
    for name, node in properties.items():
        if not isinstance(node, Mapping):
            continue
        description = node.get("description")
        hints[name] = ParamHint(
            description=description if isinstance(description, str) else None,
            type=_type_text(node, definitions),
            required=name in required,
            has_default="default" in node,
            default=node.get("default"),
        )
    return hints


def _type_text(node: Mapping[str, Any], definitions: Mapping[str, Any]) -> str:
    if "const" in node:
        return _literal(node["const"])
    if "enum" in node:
        return " | ".join(_literal(value) for value in node["enum"])
    reference = node.get("$ref")
    if isinstance(reference, str):
        return reference.rsplit("/", 1)[-1]
    for keyword in ("anyOf", "oneOf"):
        branches = node.get(keyword)
        if isinstance(branches, list):
            return " | ".join(_type_text(branch, definitions) for branch in branches)
    kind = node.get("type")
    if isinstance(kind, list):
        return " | ".join(str(part) for part in kind)
    if kind == "array":
        items = node.get("items")
        return f"array of {_type_text(items, definitions)}" if isinstance(items, dict) else kind
    if kind == "object" and isinstance(node.get("title"), str):
        return f"object ({node['title']})"
    return kind if isinstance(kind, str) else "any"


def _literal(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
