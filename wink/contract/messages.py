"""Turn validation failures into messages a model can act on.

Each problem reads ``path.to.field: what was wrong (got <short JSON>)``; an
unknown key lists the allowed names at that level. No pydantic URLs, and no
Python words: the model sent JSON, so values are quoted as JSON (``null``,
``true``) and containers are arrays and objects. A message shows the first
problems only, so that a payload with thousands of mistakes still gets a
message a model can read.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from pydantic import ValidationError

from wink.contract._json_text import path_at, utf8_offset
from wink.contract.walk import JsonSchema

__all__ = [
    "MAX_NESTING",
    "MAX_NUMBER_DIGITS",
    "MAX_PROBLEMS_SHOWN",
    "FieldProblem",
    "Problems",
    "describe_problems",
    "format_path",
    "json_text_problem",
    "problems_from_validation_error",
]

_MAX_REPR = 60
_PYTHON_CONTAINER = re.compile(r"^(list|tuple|set|frozenset|dictionary) ")
_JSON_CONTAINER = {
    "list": "array",
    "tuple": "array",
    "set": "array",
    "frozenset": "array",
    "dictionary": "object",
}
MAX_PROBLEMS_SHOWN = 20
"""How many problems ``describe_problems`` lists before summing up the rest."""


@dataclass(frozen=True, slots=True)
class FieldProblem:
    """One reason a payload broke a contract, located by its field path."""

    path: str
    """Path to the field (``items[2].name``, ``by_key["a.b"]``); ``<root>`` for the payload."""
    reason: str
    """What was wrong, in words."""

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


class Problems(tuple[FieldProblem, ...]):
    """The first problems of a payload, and how many it had in all (``total``).

    Only the problems a message shows are described: describing each of the
    thousands a hostile payload can hold would cost more than reading it.
    """

    total: int

    def __new__(cls, problems: Sequence[FieldProblem], total: int) -> Problems:
        shown = super().__new__(cls, problems)
        shown.total = max(total, len(shown))
        return shown


def problems_from_validation_error(
    error: ValidationError,
    schema: JsonSchema,
    text: str | bytes | None = None,
    *,
    locations: dict[tuple[int | str, ...], Any] | None = None,
) -> Problems:
    """List the problems of a pydantic ``ValidationError`` in model-friendly words.

    Union alternatives that pydantic names in locations are taken out of the path
    and said in the reason (``as Circle, ...``), so the path stays a JSON path.
    Only the first ``MAX_PROBLEMS_SHOWN`` are described; ``total`` counts them all.
    ``text``, the JSON document that was parsed, locates problems of the text itself
    (a lone surrogate, an over-long number, too deep nesting) in the field they are in.
    ``locations`` keeps where each pydantic location of ``schema`` leads, for the next
    error of the same schema (at most ``_LOCATIONS_KEPT`` of them).
    """
    problems: list[FieldProblem] = []
    for detail in error.errors(include_url=False)[:MAX_PROBLEMS_SHOWN]:
        kind = detail["type"]
        if kind in ("json_invalid", "string_unicode") and not detail["loc"]:
            problems.append(json_text_problem(detail["msg"], text))
            continue
        location = detail["loc"]
        about_key = bool(location) and location[-1] == "[key]"
        if about_key:
            location = location[:-1]
        where = None if locations is None else locations.get(location)
        if where is None:
            where = _locate(schema, location)
            if locations is not None and len(locations) < _LOCATIONS_KEPT:
                locations[location] = where
        if about_key:
            message = _json_words(detail["msg"]).replace("string should", "should", 1)
            reason = f"key {message} (got {short_repr(detail.get('input'))})"
        elif kind in ("union_tag_invalid", "union_tag_not_found"):
            # The tag field joins this problem's path, not the kept location's.
            where = _Location([*where.path], where.options, where.container, where.node)
            reason = _tag_reason(schema, where, detail)
        elif kind in ("extra_forbidden", "unexpected_keyword_argument"):
            allowed = _property_names(schema, where.container)
            reason = "unknown field"
            if allowed is not None:
                reason += f" (allowed: {', '.join(allowed) if allowed else 'none'})"
        elif kind == "missing":
            reason = "required field is missing"
        elif kind in ("int_lossy", "int_ambiguous", "decimal_ambiguous"):
            reason = detail["msg"]  # the rounded input would mislead
        else:
            reason = f"{_json_words(detail['msg'])} (got {short_repr(detail.get('input'))})"
        if where.options:
            reason = f"as {' then '.join(where.options)}, {reason}"
        problems.append(FieldProblem(format_path(where.path), reason))
    return Problems(problems, error.error_count())


_LOCATIONS_KEPT = 1024
"""How many locations a ``locations`` cache keeps (array indexes make them unbounded)."""
_POSITION = re.compile(r" at line (\d+) column (\d+)$")
_SURROGATE = re.compile(r"[\ud800-\udfff]")
MAX_NUMBER_DIGITS = 4300
"""The most digits a JSON number in a payload may have (Python's own limit for ints)."""
MAX_NESTING = 200
"""The deepest nesting of arrays and objects a payload may have."""


def json_text_problem(message: str, text: str | bytes | None) -> FieldProblem:
    """The problem of a document the JSON parser refused, located at its field."""
    message = message.removeprefix("Invalid JSON: ")
    position = _POSITION.search(message)
    detail = message[: position.start()] if position else message
    offset: int | None = None
    if position is not None and text is not None:
        offset = utf8_offset(text, int(position[1]), int(position[2]))
    if (
        "surrogate" in detail
        or "unable to parse raw data" in detail
        or (detail == "unexpected end of hex escape" and _after_high_surrogate(text, offset))
    ):
        reason = (
            "string holds a lone UTF-16 surrogate (\\ud800-\\udfff without its pair), "
            "which is not Unicode text"
        )
        if isinstance(text, str) and offset is None:
            found = _SURROGATE.search(text)
            offset = found.start() if found else None
    elif detail == "invalid unicode code point":
        reason = "string is not valid UTF-8 text"
    elif detail == "number out of range":
        reason = (
            f"number has more than {MAX_NUMBER_DIGITS} digits; the limit is {MAX_NUMBER_DIGITS}"
        )
    elif detail == "recursion limit exceeded":
        reason = (
            f"arrays and objects nest more than {MAX_NESTING} levels deep; "
            f"the limit is {MAX_NESTING}"
        )
        if offset is not None and text is not None:
            # The full path would be hundreds of steps long: name the outermost field.
            return FieldProblem(format_path(path_at(_as_text(text), offset)[:1]), reason)
        return FieldProblem("<root>", reason)
    else:
        return FieldProblem("<root>", f"arguments are not valid JSON ({message})")
    if offset is None or text is None:
        return FieldProblem("<root>", reason)
    return FieldProblem(format_path(path_at(_as_text(text), offset)), reason)


_HIGH_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}")


def _after_high_surrogate(text: str | bytes | None, offset: int | None) -> bool:
    """Whether the escape ending near ``offset`` is a high surrogate left without its pair."""
    if text is None or offset is None:
        return False
    return (
        _HIGH_SURROGATE_ESCAPE.search(_as_text(text)[max(0, offset - 12) : offset + 1]) is not None
    )


def _as_text(text: str | bytes) -> str:
    return text.decode("utf-8", "replace") if isinstance(text, bytes) else text


def describe_problems(problems: Sequence[FieldProblem], total: int | None = None) -> str:
    """Join problems into one message, one per line, at most ``MAX_PROBLEMS_SHOWN`` of them.

    ``total`` (by default ``problems.total`` for ``Problems``, else their number)
    is how many there were, shown or not.
    """
    if total is None:
        total = problems.total if isinstance(problems, Problems) else len(problems)
    lines = [str(problem) for problem in problems[:MAX_PROBLEMS_SHOWN]]
    hidden = total - len(lines)
    if hidden > 0:
        lines.append(f"... and {hidden} more problem{'s' if hidden > 1 else ''}")
    return "\n".join(lines)


def format_path(location: Sequence[int | str]) -> str:
    """Render a pydantic location as ``a.b[2].c``; other keys quoted: ``m["a.b"]``."""
    text = ""
    for part in location:
        if isinstance(part, int):
            text += f"[{part}]"
        elif not part.isidentifier():
            # A key with a dot, bracket or space (or an empty one) would blur the path.
            text += f"[{json.dumps(part, ensure_ascii=False)}]"
        else:
            text += f".{part}" if text else part
    return text or "<root>"


def _lower_first(message: str) -> str:
    if message[1:2].isupper():  # an acronym (``UUID version 4 expected``) keeps its case
        return message
    return message[:1].lower() + message[1:]


@lru_cache(maxsize=1024)
def _json_words(message: str) -> str:
    """Say pydantic's ``tuple should have ... after validation`` as ``array should have ...``."""
    message = _lower_first(message).replace(" after validation", "")
    return _PYTHON_CONTAINER.sub(lambda found: _JSON_CONTAINER[found[1]] + " ", message)


# One encoder for every message: ``json.dumps`` with options builds a new one per call.
_COMPACT_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


_SHORT_INT = 10 ** (_MAX_REPR - 1)
"""Integers written whole, with no truncation to check (they have fewer digits)."""


def short_repr(value: Any) -> str:
    """The value as compact JSON (the model wrote JSON), or its repr when it is not JSON data.

    Only the start of a long value is written: a rejected array of a million items
    costs what the sixty characters shown cost.
    """
    kind = type(value)
    if kind is bool or value is None:
        return "true" if value is True else "false" if value is False else "null"
    if kind is int and -_SHORT_INT < value < _SHORT_INT:
        return str(value)  # JSON writes an int as Python does
    value = _start_of(value, _MAX_REPR)
    try:
        text = _COMPACT_JSON.encode(value)
    except (TypeError, ValueError):
        text = repr(value)
    # A lone surrogate is written as its escape: the message must itself be valid text.
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text if len(text) <= _MAX_REPR else text[: _MAX_REPR - 3] + "..."


def _start_of(value: Any, budget: int) -> Any:
    """As much of ``value`` as ``budget`` characters of JSON could show, and a little more."""
    if isinstance(value, str):
        return value[: budget + 1]
    if isinstance(value, list | tuple) and len(value) > budget // 2:
        return [_start_of(item, budget) for item in value[: budget // 2 + 1]]
    if isinstance(value, list):
        return [_start_of(item, budget) for item in value]
    if isinstance(value, dict):
        items = list(itertools.islice(value.items(), budget // 4 + 1))
        return {
            key[: budget + 1] if isinstance(key, str) else key: _start_of(item, budget)
            for key, item in items
        }
    return value


def _tag_reason(root: JsonSchema, where: _Location, detail: Any) -> str:
    """Say a bad or missing discriminator tag as a problem of the tag field itself.

    The tag field joins the path (``shape.kind``) when the schema names it, and the
    reason lists the allowed tags.
    """
    union = None if where.node is None else _resolve(root, where.node)
    discriminator = {} if union is None else union.get("discriminator", {})
    tag_field = discriminator.get("propertyName")
    mapping = discriminator.get("mapping", {})
    context = detail.get("ctx", {})
    expected = context.get("expected_tags") or ", ".join(repr(tag) for tag in mapping)
    if not expected and isinstance(tag_field, str) and union is not None:
        # A callable discriminator has no mapping: the branches' constant tags say it.
        branches = [
            _follow_refs(root, b) or {} for b in union.get("oneOf", ()) if isinstance(b, dict)
        ]
        tags = [b.get("properties", {}).get(tag_field, {}).get("const") for b in branches]
        expected = ", ".join(repr(tag) for tag in tags if tag is not None)
    payload = detail.get("input")
    if isinstance(tag_field, str):
        where.path.append(tag_field)
    if detail["type"] == "union_tag_not_found":
        return f"required field is missing (one of {expected})"
    if isinstance(tag_field, str) and isinstance(payload, dict) and tag_field in payload:
        got = short_repr(payload[tag_field])
    else:
        got = short_repr(context.get("tag"))
    return f"input should be one of {expected} (got {got})"


@dataclass(frozen=True, slots=True)
class _Location:
    """Where a validation error points: its JSON path and the schema found there."""

    path: list[int | str]
    """The JSON path: keys and indexes only."""
    options: list[str]
    """Union alternatives pydantic tried on the way, by name."""
    container: JsonSchema | None
    """Schema of the value holding the last path element, when known."""
    node: JsonSchema | None
    """Schema of the value at the path, when known."""


def _locate(root: JsonSchema, location: Sequence[int | str]) -> _Location:
    """Split a pydantic location into a JSON path and the union alternatives on it."""
    path: list[int | str] = []
    options: list[str] = []
    node: JsonSchema | None = root
    container: JsonSchema | None = None
    for part in location:
        if node is not None and isinstance(part, str) and _is_union(root, node):
            options.append(part)
            node = _branch(root, node, part)
            continue
        container = node
        path.append(part)
        node = None if node is None else _step(root, node, part)
    return _Location(path, options, container, node)


def _property_names(root: JsonSchema, node: JsonSchema | None) -> list[str] | None:
    """Property names allowed in the object ``node`` describes, if it is one."""
    resolved = None if node is None else _resolve(root, node)
    properties = None if resolved is None else resolved.get("properties")
    return list(properties) if isinstance(properties, dict) else None


def _step(root: JsonSchema, node: JsonSchema, part: int | str) -> JsonSchema | None:
    resolved = _resolve(root, node)
    if resolved is None:
        return None
    if isinstance(part, int):
        prefix = resolved.get("prefixItems")
        if isinstance(prefix, list) and part < len(prefix):
            return prefix[part] if isinstance(prefix[part], dict) else None
        items = resolved.get("items")
        return items if isinstance(items, dict) else None
    properties = resolved.get("properties")
    if isinstance(properties, dict) and part in properties:
        found = properties[part]
        return found if isinstance(found, dict) else None
    values = resolved.get("additionalProperties")
    return values if isinstance(values, dict) else None


def _alternatives(root: JsonSchema, node: JsonSchema) -> list[JsonSchema]:
    resolved = _follow_refs(root, node)
    if resolved is None:
        return []
    branches = [*resolved.get("anyOf", []), *resolved.get("oneOf", [])]
    return [b for b in branches if isinstance(b, dict) and b.get("type") != "null"]


def _is_union(root: JsonSchema, node: JsonSchema) -> bool:
    return len(_alternatives(root, node)) > 1


def _branch(root: JsonSchema, node: JsonSchema, label: str) -> JsonSchema | None:
    """The alternative pydantic calls ``label``: a class name or a discriminator value."""
    resolved = _follow_refs(root, node) or {}
    mapping = resolved.get("discriminator", {}).get("mapping", {})
    if isinstance(mapping.get(label), str):
        return _follow_refs(root, {"$ref": mapping[label]})
    for branch in _alternatives(root, node):
        if branch.get("$ref") == f"#/$defs/{label}":
            return _follow_refs(root, branch)
    return None


def _follow_refs(root: JsonSchema, node: JsonSchema) -> JsonSchema | None:
    """Follow local ``$ref``s to the schema they name."""
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
    return node


def _resolve(root: JsonSchema, node: JsonSchema) -> JsonSchema | None:
    """Follow local ``$ref``s; pick the only non-null branch of a nullable ``anyOf``."""
    resolved = _follow_refs(root, node)
    if resolved is None:
        return None
    alternatives = _alternatives(root, resolved)
    if len(alternatives) == 1 and "properties" not in resolved:
        return _resolve(root, alternatives[0])
    return resolved
