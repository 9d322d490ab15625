"""OpenAI's documented strict-mode rules, as a checker for emitted ``parameters``.

Source: OpenAI, Structured Outputs, "Supported schemas": supported types and
keywords, the root must be an object and not ``anyOf``, every object sets
``additionalProperties: false`` and lists every property in ``required``,
``$defs``/``$ref`` (including recursion) are allowed, and the size limits
(5000 properties, 10 nesting levels, 1000 enum values, 120,000 characters of
names and enum/const values, 15,000 for one enum of more than 250 values).
Written independently of ``wink.providers`` so that it can catch its mistakes.
"""

from __future__ import annotations

from typing import Any

__all__ = ["strict_violations"]

TYPES = frozenset({"string", "number", "boolean", "integer", "object", "array", "null"})
KEYWORDS = frozenset(
    {
        # structure
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "anyOf",
        "$ref",
        "$defs",
        "enum",
        "const",
        "description",
        "title",
        # strings
        "pattern",
        "format",
        # numbers
        "multipleOf",
        "maximum",
        "exclusiveMaximum",
        "minimum",
        "exclusiveMinimum",
        # arrays
        "minItems",
        "maxItems",
    }
)
FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)
MAX_PROPERTIES = 5000
MAX_DEPTH = 10
MAX_ENUM_VALUES = 1000
MAX_CHARACTERS = 120_000


def strict_violations(parameters: dict[str, Any]) -> list[str]:
    """Every way ``parameters`` breaks a documented strict-mode rule (empty when none)."""
    problems: list[str] = []
    if parameters.get("type") != "object":
        problems.append("#: the root must be an object")
    if "anyOf" in parameters:
        problems.append("#: the root must not be anyOf")
    tally = {"properties": 0, "enum": 0, "characters": 0}
    definitions = parameters.get("$defs", {})
    tally["characters"] += sum(len(name) for name in definitions)
    _check(parameters, "#", parameters, problems, tally, depth=0)
    if tally["properties"] > MAX_PROPERTIES:
        problems.append(f"#: {tally['properties']} properties (limit {MAX_PROPERTIES})")
    if tally["enum"] > MAX_ENUM_VALUES:
        problems.append(f"#: {tally['enum']} enum values (limit {MAX_ENUM_VALUES})")
    if tally["characters"] > MAX_CHARACTERS:
        problems.append(f"#: {tally['characters']} characters (limit {MAX_CHARACTERS})")
    return problems


def _check(
    node: Any,
    path: str,
    root: dict[str, Any],
    problems: list[str],
    tally: dict[str, int],
    depth: int,
) -> None:
    if not isinstance(node, dict):
        problems.append(f"{path}: not a schema object")
        return
    unsupported = sorted(set(node) - KEYWORDS)
    if unsupported:
        problems.append(f"{path}: unsupported keywords {unsupported}")
    if "$defs" in node and path != "#":
        problems.append(f"{path}: $defs only at the root")
    for name, definition in node.get("$defs", {}).items():
        _check(definition, f"{path}/$defs/{name}", root, problems, tally, depth=0)
    if "$ref" in node:
        _check_ref(node, path, root, problems)
        return
    if not {"type", "anyOf", "enum", "const"} & node.keys():
        problems.append(f"{path}: no type (a schema accepting anything)")
    types = node.get("type", [])
    types = types if isinstance(types, list) else [types]
    for kind in types:
        if kind not in TYPES:
            problems.append(f"{path}: unsupported type {kind!r}")
    if "format" in node and node["format"] not in FORMATS:
        problems.append(f"{path}: unsupported format {node['format']!r}")
    _check_values(node, path, problems, tally)
    if "object" in types or "properties" in node:
        _check_object(node, path, root, problems, tally, depth + 1)
    if "array" in types:
        if "items" not in node:
            problems.append(f"{path}: an array needs items")
        else:
            _check(node["items"], f"{path}/items", root, problems, tally, depth)
    for index, branch in enumerate(node.get("anyOf", [])):
        _check(branch, f"{path}/anyOf/{index}", root, problems, tally, depth)


def _check_object(
    node: dict[str, Any],
    path: str,
    root: dict[str, Any],
    problems: list[str],
    tally: dict[str, int],
    depth: int,
) -> None:
    if depth > MAX_DEPTH:
        problems.append(f"{path}: nested {depth} objects deep (limit {MAX_DEPTH})")
    if node.get("additionalProperties") is not False:
        problems.append(f"{path}: additionalProperties must be false")
    properties = node.get("properties", {})
    required = node.get("required", [])
    if sorted(required) != sorted(properties) or len(set(required)) != len(required):
        problems.append(
            f"{path}: required {sorted(required)} must list every property {sorted(properties)}"
        )
    tally["properties"] += len(properties)
    tally["characters"] += sum(len(name) for name in properties)
    for name, sub in properties.items():
        _check(sub, f"{path}/properties/{name}", root, problems, tally, depth)


def _check_ref(node: dict[str, Any], path: str, root: dict[str, Any], problems: list[str]) -> None:
    if len(node) > 1:
        problems.append(f"{path}: $ref must stand alone, has {sorted(set(node) - {'$ref'})}")
    ref = node["$ref"]
    if ref == "#":
        return
    prefix = "#/$defs/"
    if not ref.startswith(prefix) or ref[len(prefix) :] not in root.get("$defs", {}):
        problems.append(f"{path}: $ref {ref!r} does not name a root definition")


def _check_values(
    node: dict[str, Any], path: str, problems: list[str], tally: dict[str, int]
) -> None:
    enum = node.get("enum")
    if enum is not None:
        if not isinstance(enum, list) or not enum:
            problems.append(f"{path}: enum must be a non-empty list")
            return
        strings = [value for value in enum if isinstance(value, str)]
        length = sum(len(value) for value in strings)
        tally["enum"] += len(enum)
        tally["characters"] += length
        if len(enum) > 250 and length > 15_000:
            problems.append(f"{path}: an enum of {len(enum)} values has {length} characters")
    if isinstance(node.get("const"), str):
        tally["characters"] += len(node["const"])
