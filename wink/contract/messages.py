"""Turn validation failures into messages a model can act on.

Each problem reads ``path.to.field: what was wrong (got <short repr>)``; an
unknown key lists the allowed names at that level. No pydantic URLs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from wink.contract.walk import JsonSchema

__all__ = ["FieldProblem", "describe_problems", "problems_from_validation_error"]

_MAX_REPR = 60


@dataclass(frozen=True, slots=True)
class FieldProblem:
    """One reason a payload broke a contract, located by its field path."""

    path: str
    """Dotted path to the field (``items[2].name``), ``<root>`` for the whole payload."""
    reason: str
    """What was wrong, in words."""

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


def problems_from_validation_error(
    error: ValidationError, schema: JsonSchema
) -> tuple[FieldProblem, ...]:
    """List the problems of a pydantic ``ValidationError`` in model-friendly words."""
    problems: list[FieldProblem] = []
    for detail in error.errors(include_url=False, include_context=False):
        location = detail["loc"]
        path = format_path(location)
        kind = detail["type"]
        if kind in ("extra_forbidden", "unexpected_keyword_argument"):
            allowed = _allowed_names(schema, location[:-1])
            reason = "unknown field"
            if allowed is not None:
                reason += f" (allowed: {', '.join(allowed) if allowed else 'none'})"
        elif kind == "missing":
            reason = "required field is missing"
        elif kind == "json_invalid":
            reason = f"arguments are not valid JSON ({detail['msg'].removeprefix('Invalid JSON: ')})"
        else:
            reason = f"{_lower_first(detail['msg'])} (got {_short_repr(detail.get('input'))})"
        problems.append(FieldProblem(path, reason))
    return tuple(problems)


def describe_problems(problems: Sequence[FieldProblem]) -> str:
    """Join problems into one message, one problem per line."""
    return "\n".join(str(problem) for problem in problems)


def format_path(location: Sequence[int | str]) -> str:
    """Render a pydantic location as ``a.b[2].c``."""
    text = ""
    for part in location:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text or "<root>"


def _lower_first(message: str) -> str:
    return message[:1].lower() + message[1:]


def _short_repr(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _MAX_REPR else text[: _MAX_REPR - 3] + "..."


def _allowed_names(schema: JsonSchema, location: Sequence[int | str]) -> list[str] | None:
    """Property names allowed at ``location``, found by following the JSON Schema."""
    node: JsonSchema | None = _resolve(schema, schema)
    for part in location:
        if node is None:
            return None
        node = _step(schema, node, part)
    if node is None:
        return None
    properties = node.get("properties")
    return list(properties) if isinstance(properties, dict) else None


def _step(root: JsonSchema, node: JsonSchema, part: int | str) -> JsonSchema | None:
    if isinstance(part, int):
        items = node.get("items")
        return _resolve(root, items) if isinstance(items, dict) else None
    properties = node.get("properties")
    if isinstance(properties, dict) and part in properties:
        return _resolve(root, properties[part])
    for branch in node.get("anyOf", []) + node.get("oneOf", []):
        resolved = _resolve(root, branch)
        if resolved is not None and isinstance(resolved.get("properties"), dict):
            found = _step(root, resolved, part)
            if found is not None:
                return found
    return None


def _resolve(root: JsonSchema, node: JsonSchema) -> JsonSchema | None:
    """Follow local ``$ref``s; pick the object branch of a nullable ``anyOf``."""
    seen = 0
    while "$ref" in node and seen < 32:
        reference = node["$ref"]
        if not isinstance(reference, str) or not reference.startswith("#/$defs/"):
            return None
        target = root.get("$defs", {}).get(reference.removeprefix("#/$defs/"))
        if not isinstance(target, dict):
            return None
        node = target
        seen += 1
    if "properties" not in node:
        for branch in node.get("anyOf", []):
            if isinstance(branch, dict) and branch.get("type") != "null":
                resolved = _resolve(root, branch)
                if resolved is not None and "properties" in resolved:
                    return resolved
    return node
