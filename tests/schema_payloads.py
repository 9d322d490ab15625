"""Hypothesis strategies for JSON payloads drawn from a JSON Schema: valid ones, and
near-valid ones (one value changed, one key added or removed).

Written from the schema alone, independently of how wink parses, so that tests can
compare wink's parser with ``jsonschema`` on each payload. One rule of the contract
is modelled: an optional property whose schema refuses ``null`` never gets ``null``
(the parser reads it as "use the default", which the schema does not say).
"""

from __future__ import annotations

import datetime
import re
from typing import Any

from hypothesis import strategies as st
from jsonschema import Draft202012Validator, FormatChecker

from wink.contract._formats import DURATION_PATTERN, NAIVE_DATETIME_PATTERN

__all__ = ["FORMAT_CHECKER", "near_valid_payloads", "valid_payloads"]

JsonSchema = dict[str, Any]

TEXT = st.text(st.characters(codec="utf-8"), max_size=6)  # no lone surrogates
LEAVES = st.none() | st.booleans() | st.integers(-3, 3) | st.floats(-3, 3) | TEXT
JSON_VALUES = st.recursive(
    LEAVES,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(TEXT, children, max_size=3),
    max_leaves=5,
)
# Values that are wrong for most fields; ``null`` is left out on purpose (see above).
WRONG = st.sampled_from([0, 1, -1, 2.5, "x", "", True, False, [], {}, [1], {"a": 1}])

FORMAT_SAMPLES: dict[str, list[str]] = {
    "date-time": ["2024-05-01T10:20:30Z", "2024-05-01t10:20:30.25+02:00"],
    "date": ["2024-05-01", "1999-12-31"],
    "time": ["10:20:30Z", "23:59:59.5-01:00"],
    "duration": ["P1D", "PT2H30M", "P1W", "P1Y2M3DT4H5M6S"],
    "uuid": ["123e4567-e89b-12d3-a456-426614174000"],
    "uri": ["https://example.com/a?b=c", "http://x.org"],
    "ipv4": ["192.168.0.1", "10.0.0.255"],
    "ipv6": ["::1", "2001:db8::1", "::ffff:1.2.3.4"],
}
"""Valid strings of each format."""
FORMAT_NEAR_MISSES: dict[str, list[str]] = {
    "date-time": ["2024-05-01T10:20:30", "2024-05-01 10:20:30Z", "2024-05-01", "1700000000"],
    "date": ["2024-5-1", "2024-05-01T00:00:00Z", "20240501"],
    "time": ["10:20:30", "10:20", "25:00:00Z"],
    "duration": ["1 day", "-P1D", "PT", "P", "PT1.5S", "01:00:00"],
    "uuid": ["123e4567e89b12d3a456426614174000", "{123e4567-e89b-12d3-a456-426614174000}"],
    "ipv4": ["1.2.3", "01.2.3.4", "256.1.1.1"],
    "ipv6": ["fe80::1%eth0", "1:2", ":::"],
}
"""Strings that miss each format narrowly (formats the checker below can tell)."""

_RFC3339_TIME = r"\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})"
_DURATION = re.compile(
    r"P(\d+W|(?=\d|T\d)(\d+Y)?(\d+M)?(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+S)?)?)", re.ASCII
)

FORMAT_CHECKER = FormatChecker()
"""``jsonschema``'s checkers, plus RFC 3339 ones it only has with extra packages."""


@FORMAT_CHECKER.checks("date-time")
def _date_time(value: object) -> bool:
    if not isinstance(value, str):
        return True
    if not re.fullmatch(rf"\d{{4}}-\d{{2}}-\d{{2}}[Tt]{_RFC3339_TIME}", value, re.ASCII):
        return False
    try:
        datetime.datetime.fromisoformat(value.upper().replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


@FORMAT_CHECKER.checks("time")
def _time(value: object) -> bool:
    if not isinstance(value, str):
        return True
    if not re.fullmatch(_RFC3339_TIME, value, re.ASCII):
        return False
    try:
        datetime.time.fromisoformat(value.upper().replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


@FORMAT_CHECKER.checks("uri")
def _uri(value: object) -> bool:
    # An absolute URI with an authority, as URLs have (RFC 3986, section 3).
    return (
        not isinstance(value, str)
        or re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]*://\S+", value) is not None
    )


@FORMAT_CHECKER.checks("duration")
def _duration(value: object) -> bool:
    return not isinstance(value, str) or _DURATION.fullmatch(value) is not None


def validator(schema: JsonSchema) -> Draft202012Validator:
    """A validator of ``schema`` that asserts formats."""
    return Draft202012Validator(schema, format_checker=FORMAT_CHECKER)


def _resolve(node: JsonSchema, root: JsonSchema) -> JsonSchema:
    seen = 0
    while isinstance(node.get("$ref"), str) and seen < 16:
        target = root
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
        seen += 1
    return node


def _accepts_null(node: JsonSchema, root: JsonSchema) -> bool:
    node = _resolve(node, root)
    kind = node.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    if node.get("const", ...) is None or None in node.get("enum", [0]):
        return True
    return any(_accepts_null(b, root) for key in ("anyOf", "oneOf") for b in node.get(key, ()))


def valid_payloads(schema: JsonSchema) -> st.SearchStrategy[Any]:
    """Values ``schema`` describes (most of them valid; ``jsonschema`` has the last word)."""
    return _values(schema, schema, 0)


def _values(node: JsonSchema, root: JsonSchema, depth: int) -> st.SearchStrategy[Any]:
    node = _resolve(node, root)
    if "const" in node:
        return st.just(node["const"])
    if "enum" in node:
        return st.sampled_from(node["enum"])
    branches = node.get("anyOf") or node.get("oneOf")
    if branches:
        rest = {k: v for k, v in node.items() if k not in ("anyOf", "oneOf", "discriminator")}
        return st.one_of(*(_values({**rest, **b}, root, depth) for b in branches))
    kind = node.get("type")
    if isinstance(kind, list):
        return st.one_of(*(_values({**node, "type": k}, root, depth) for k in kind))
    if kind == "string":
        return _strings(node)
    if kind == "integer":
        return st.integers(node.get("minimum", -1000), node.get("maximum", 1000))
    if kind == "number":
        return _numbers(node)
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "array":
        return _arrays(node, root, depth)
    if kind == "object":
        return _objects(node, root, depth)
    return JSON_VALUES


def _strings(node: JsonSchema) -> st.SearchStrategy[str]:
    fmt = node.get("format")
    if fmt in FORMAT_SAMPLES:
        return st.sampled_from(FORMAT_SAMPLES[fmt])
    if "pattern" in node:
        strings = st.from_regex(
            node["pattern"], fullmatch=True, alphabet=st.characters(codec="utf-8")
        )
        if node["pattern"] == NAIVE_DATETIME_PATTERN:
            # A documented gap: the pattern cannot know leap years.
            strings = strings.filter(lambda text: not _february_29_of_a_common_year(text))
        if node["pattern"] == DURATION_PATTERN:
            # A documented gap: the pattern cannot bound a timedelta (999,999,999 days).
            strings = strings.filter(lambda text: not re.search(r"[0-9]{7}", text))
        return strings
    low, high = node.get("minLength", 0), node.get("maxLength", 8)
    return st.text(st.characters(codec="utf-8"), min_size=low, max_size=min(high, low + 8))


def _february_29_of_a_common_year(text: str) -> bool:
    year = int(text[:4])
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    return text[5:10] == "02-29" and not leap


def _numbers(node: JsonSchema) -> st.SearchStrategy[float | int]:
    step = node.get("multipleOf")
    if step is not None:
        return st.integers(-20, 20).map(lambda n: n * step)
    low = node.get("minimum", node.get("exclusiveMinimum", -1000))
    high = node.get("maximum", node.get("exclusiveMaximum", 1000))
    return st.floats(low, high, allow_nan=False) | st.integers(int(low), int(high))


def _arrays(node: JsonSchema, root: JsonSchema, depth: int) -> st.SearchStrategy[list[Any]]:
    if "prefixItems" in node:
        return st.tuples(*(_values(item, root, depth + 1) for item in node["prefixItems"])).map(
            list
        )
    items = node.get("items")
    low = node.get("minItems", 0)
    if depth >= 3 and low == 0:  # keep recursive types small
        return st.just([])
    element = JSON_VALUES if not isinstance(items, dict) else _values(items, root, depth + 1)
    high = node.get("maxItems", low + 2)
    unique = bool(node.get("uniqueItems"))
    return st.lists(
        element, min_size=low, max_size=min(high, low + 3), unique_by=_key if unique else None
    )


def _key(value: Any) -> str:
    import json

    return json.dumps(value, sort_keys=True)


def _objects(node: JsonSchema, root: JsonSchema, depth: int) -> st.SearchStrategy[dict[str, Any]]:
    properties: dict[str, Any] = node.get("properties", {})
    required = set(node.get("required", ()))
    if properties or (
        node.get("additionalProperties") is False and "patternProperties" not in node
    ):
        fields = {
            name: _values(prop, root, depth + 1)
            for name, prop in properties.items()
            if name in required
        }
        optional = {}
        for name in properties.keys() - required if depth < 3 else ():  # recursion stays small
            values = _values(properties[name], root, depth + 1)
            if not _accepts_null(properties[name], root):
                values = values.filter(lambda value: value is not None)
            optional[name] = values
        return st.fixed_dictionaries(fields, optional=optional)
    patterns: dict[str, Any] = node.get("patternProperties", {})
    if patterns:
        pattern, value = next(iter(patterns.items()))
        keys = st.from_regex(pattern, fullmatch=True, alphabet=st.characters(codec="utf-8"))
        return st.dictionaries(keys, _values(value, root, depth + 1), max_size=2)
    extra = node.get("additionalProperties")
    values = _values(extra, root, depth + 1) if isinstance(extra, dict) else JSON_VALUES
    return st.dictionaries(TEXT, values, max_size=2)


def near_valid_payloads(schema: JsonSchema) -> st.SearchStrategy[Any]:
    """Valid payloads with one change: a value replaced, a key added or a key removed."""
    return st.builds(_Mutation, valid_payloads(schema), st.data()).map(lambda m: m.apply(schema))


class _Mutation:
    def __init__(self, payload: Any, data: st.DataObject) -> None:
        self.payload = payload
        self.data = data

    def apply(self, schema: JsonSchema) -> Any:
        places = list(_places(self.payload, ()))
        path = self.data.draw(st.sampled_from(places), label="where")
        how = self.data.draw(st.sampled_from(["replace", "add", "remove", "format"]), label="how")
        return _changed(self.payload, path, how, self.data)


def _places(value: Any, path: tuple[Any, ...]) -> Any:
    yield path
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _places(child, (*path, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _places(child, (*path, index))


def _changed(value: Any, path: tuple[Any, ...], how: str, data: st.DataObject) -> Any:
    if path:
        head, rest = path[0], path[1:]
        copy: Any = dict(value) if isinstance(value, dict) else list(value)
        copy[head] = _changed(value[head], rest, how, data)
        return copy
    if how == "add" and isinstance(value, dict):
        return {**value, data.draw(TEXT, label="key"): data.draw(WRONG, label="value")}
    if how == "remove" and isinstance(value, dict) and value:
        key = data.draw(st.sampled_from(sorted(value)), label="removed")
        return {k: v for k, v in value.items() if k != key}
    formats = [fmt for fmt, samples in FORMAT_SAMPLES.items() if value in samples]
    if how == "format" and formats and formats[0] in FORMAT_NEAR_MISSES:
        misses = FORMAT_NEAR_MISSES[formats[0]]
        return data.draw(st.sampled_from(misses), label="near miss")
    return data.draw(WRONG, label="replacement")
