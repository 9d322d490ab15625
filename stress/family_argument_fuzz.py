"""Argument fuzzing: payloads drawn from each example tool's JSON Schema, through a real
``ToolExecutor``.

Each tool's schema gives valid payloads and near-valid ones (one value replaced, one
key added or removed); hostile payloads come on top: over the size limit, nested
thousands deep, repeated keys, lone surrogates (raw and escaped), invalid UTF-8, a
5,000-digit number and an array of 100,000 wrong items. Whether a payload is valid
is decided by ``jsonschema`` on the tool's schema (a hostile one never is).

Counts: ``uncaught`` is an exception out of ``execute``; ``lost_events`` a call that
left other than one ``ToolInvoked``; ``state_leaks`` counts **handlers that ran with
invalid params** (a payload the schema refuses reached the handler). Worst time and
peak memory are per input.
"""

from __future__ import annotations

import datetime
import json
import random
import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Annotated, Any, Literal

from jsonschema import Draft202012Validator, FormatChecker
from pydantic import BaseModel, Field

from stress.report import FamilyReport
from wink import MarkdownSection, Prompt, PromptTemplate, Tool, ToolContext, ToolResult
from wink.contract import DEFAULT_MAX_BYTES, JsonSchema
from wink.runtime import Session, ToolCall, ToolExecutor
from wink.runtime.events import ToolInvoked

__all__ = ["run"]

QUICK_INPUTS_PER_TOOL = 24


@dataclass
class LookupParams:
    """The spec's first example's parameters."""

    entity_id: str = field(metadata={"description": "Global identifier to fetch"})
    include_related: bool = False


@dataclass(frozen=True)
class WriteNote:
    """The notes example's write parameters."""

    path: str
    text: str
    append: bool = False


class Line(BaseModel):
    sku: Annotated[str, Field(pattern=r"^[A-Z]{3}-[0-9]{3}$")]
    quantity: Annotated[int, Field(ge=1, le=100)]
    price: Decimal


class Pickup(BaseModel):
    kind: Literal["pickup"]
    store: str


class Delivery(BaseModel):
    kind: Literal["delivery"]
    street: str
    floor: int | None = None


class Order(BaseModel):
    """Nested models, a discriminated union, a set, a tuple, dates and bounds."""

    lines: list[Line]
    shipping: Annotated[Pickup | Delivery, Field(discriminator="kind")]
    tags: set[str] = set()
    window: tuple[datetime.date, datetime.date] | None = None
    due: datetime.datetime | None = None
    notes: dict[str, str] = {}
    priority: Literal[1, 2, 3] = 2


ARGUMENTS: dict[str, type[Any]] = {
    "lookup_entity": LookupParams,
    "write_note": WriteNote,
    "place_order": Order,
}


def run(scale: float) -> FamilyReport:
    """Fuzz every tool's arguments about ``scale`` times the quick number of inputs."""
    report = FamilyReport("argument_fuzz")
    randomness = random.Random(20240501)
    ran: list[Any] = []

    def handler(params: Any, *, context: ToolContext) -> ToolResult[None]:
        ran.append(params)
        return ToolResult(message="done")

    tools = [
        Tool[params_type, None](  # type: ignore[valid-type]  # the types are data here
            name=name, description=f"Fuzzed {name}.", handler=handler
        )
        for name, params_type in ARGUMENTS.items()
    ]
    template = PromptTemplate(
        ns="stress",
        key="argument_fuzz",
        sections=[MarkdownSection(title="Tools", template="Fuzzed tools.", tools=tools)],
    )
    session = Session()
    executor = ToolExecutor(prompt=Prompt(template), session=session)
    count = max(1, round(QUICK_INPUTS_PER_TOOL * scale))
    for tool in tools:
        schema = tool.params_schema
        check = Draft202012Validator(schema, format_checker=_FORMAT_CHECKER)
        cases: list[tuple[str, str | bytes, bool]] = []
        for _ in range(count):
            payload = _valid(schema, schema, randomness, 0)
            if randomness.random() < 0.5:
                payload = _mutated(payload, randomness)
            cases.append(
                ("drawn", json.dumps(payload, ensure_ascii=False), check.is_valid(payload))
            )
        cases.extend(_hostile(_valid(schema, schema, randomness, 0), randomness))
        for kind, arguments, valid in cases:
            _execute(
                report, executor, session, ran, ToolCall(tool.name, arguments, "c"), kind, valid
            )
    return report


def _execute(
    report: FamilyReport,
    executor: ToolExecutor,
    session: Session,
    ran: list[Any],
    call: ToolCall,
    kind: str,
    valid: bool,
) -> None:
    events = len(session[ToolInvoked])
    handled = len(ran)
    with report.measure(memory=True):
        try:
            result = executor.execute(call)
        except Exception as error:  # every failure must be a recorded, failed result
            report.note("uncaught", f"{call.name} ({kind}): {type(error).__name__}: {error}")
            return
    if len(session[ToolInvoked]) != events + 1:
        report.note("lost_events", f"{call.name} ({kind}): {len(session[ToolInvoked]) - events}")
    if len(ran) > handled and not valid:
        report.note("state_leaks", f"{call.name} ({kind}) ran with invalid params: {_short(call)}")
    if valid and not result.success and len(report.examples) < 5:
        # A valid payload refused is a disagreement, not a leak: shown, not counted.
        report.examples.append(f"note: valid payload refused: {result.message[:160]!r}")


def _short(call: ToolCall) -> str:
    text = call.arguments if isinstance(call.arguments, str) else repr(call.arguments)
    return text[:100]


def _hostile(
    valid: dict[str, Any], randomness: random.Random
) -> list[tuple[str, str | bytes, bool]]:
    """Payloads no schema allows, built around one valid payload."""
    text = json.dumps(valid)
    first_key = next(iter(valid), "x")
    body = text[1:-1]
    repeated = f"{{{body}, {json.dumps(first_key)}: {json.dumps(valid.get(first_key))}}}"
    if not body:
        repeated = '{"x": 1, "x": 2}'
    return [
        ("over the size limit", '{"pad": "' + "a" * DEFAULT_MAX_BYTES + '"}', False),
        (
            "nested 10,000 deep",
            f"{{{json.dumps(first_key)}: " + "[" * 10_000 + "]" * 10_000 + "}",
            False,
        ),
        ("repeated key", repeated, False),
        ("escaped lone surrogate", f'{{{json.dumps(first_key)}: "\\udc80"}}', False),
        ("raw lone surrogate", f'{{{json.dumps(first_key)}: "\udc80"}}', False),
        ("invalid UTF-8", b'{"' + first_key.encode() + b'": "\xff\xfe"}', False),
        ("5,000-digit number", f"{{{json.dumps(first_key)}: " + "9" * 5000 + "}", False),
        ("100,000 wrong items", json.dumps({first_key: ["x"] * 100_000}), False),
        ("truncated JSON", text[: max(1, len(text) // 2)], False),
        ("not an object", json.dumps([valid]), False),
        ("number rounding to an integer", f"{{{json.dumps(first_key)}: 1e-400}}", False),
        ("random bytes", bytes(randomness.randrange(256) for _ in range(64)), False),
    ]


def _resolve(node: JsonSchema, root: JsonSchema) -> JsonSchema:
    while isinstance(node.get("$ref"), str):
        target: Any = root
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
    return node


def _accepts_null(node: JsonSchema, root: JsonSchema) -> bool:
    node = _resolve(node, root)
    if node.get("type") == "null" or node.get("const", ...) is None:
        return True
    return any(_accepts_null(b, root) for key in ("anyOf", "oneOf") for b in node.get(key, ()))


# Formats asserted as RFC 3339 says (jsonschema checks them only with extra packages).
_FORMAT_CHECKER = FormatChecker()
_TIME = r"[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})"
_RFC3339 = {
    "date-time": rf"[0-9]{{4}}-[0-9]{{2}}-[0-9]{{2}}[Tt]{_TIME}",
    "time": _TIME,
    "duration": r"P([0-9]+W|(?=[0-9]|T[0-9])([0-9]+Y)?([0-9]+M)?([0-9]+D)?"
    r"(T(?=[0-9])([0-9]+H)?([0-9]+M)?([0-9]+S)?)?)",
}


def _format_check(pattern: str) -> Any:
    def check(value: object) -> bool:
        return not isinstance(value, str) or re.fullmatch(pattern, value) is not None

    return check


for _name, _pattern in _RFC3339.items():
    _FORMAT_CHECKER.checks(_name)(_format_check(_pattern))

_FORMATS = {
    "date": "2024-05-01",
    "date-time": "2024-05-01T10:20:30Z",
    "time": "10:20:30Z",
    "duration": "P1D",
    "uuid": "123e4567-e89b-12d3-a456-426614174000",
}
_PATTERNS = {r"^[A-Z]{3}-[0-9]{3}$": ["ABC-123", "XYZ-999"]}


def _valid(node: JsonSchema, root: JsonSchema, randomness: random.Random, depth: int) -> Any:
    """A value ``node`` describes; optional fields that refuse ``null`` never get it."""
    node = _resolve(node, root)
    if "const" in node:
        return node["const"]
    if "enum" in node:
        return randomness.choice(node["enum"])
    branches = node.get("anyOf") or node.get("oneOf")
    if branches:
        rest = {k: v for k, v in node.items() if k not in ("anyOf", "oneOf", "discriminator")}
        return _valid({**rest, **randomness.choice(branches)}, root, randomness, depth)
    kind = node.get("type")
    if kind == "string":
        if node.get("format") in _FORMATS:
            return _FORMATS[node["format"]]
        if node.get("pattern") in _PATTERNS:
            return randomness.choice(_PATTERNS[node["pattern"]])
        return "".join(randomness.choice("abcé漢 ") for _ in range(randomness.randrange(6)))
    if kind == "integer":
        return randomness.randint(node.get("minimum", -5), node.get("maximum", 5))
    if kind == "number":
        return round(randomness.uniform(-5, 5), 2)
    if kind == "boolean":
        return randomness.random() < 0.5
    if kind == "null":
        return None
    if kind == "array":
        if "prefixItems" in node:
            return [_valid(item, root, randomness, depth + 1) for item in node["prefixItems"]]
        size = 0 if depth > 3 else randomness.randrange(3)
        items = [_valid(node.get("items", {}), root, randomness, depth + 1) for _ in range(size)]
        return (
            list({json.dumps(i): i for i in items}.values()) if node.get("uniqueItems") else items
        )
    if kind == "object":
        return _object(node, root, randomness, depth)
    return randomness.choice([0, "x", None, [], {}])


def _object(node: JsonSchema, root: JsonSchema, randomness: random.Random, depth: int) -> Any:
    properties: dict[str, Any] = node.get("properties", {})
    required = set(node.get("required", ()))
    value: dict[str, Any] = {}
    for name, prop in properties.items():
        if name in required or randomness.random() < 0.5:
            chosen = _valid(prop, root, randomness, depth + 1)
            if chosen is None and name not in required and not _accepts_null(prop, root):
                continue
            value[name] = chosen
    extra = node.get("additionalProperties")
    if isinstance(extra, dict):
        for index in range(randomness.randrange(3)):
            value[f"k{index}"] = _valid(extra, root, randomness, depth + 1)
    return value


_WRONG: list[Any] = [0, 1, -1, 2.5, "x", "", True, [], {}, [1], {"a": 1}, 10**30]


def _mutated(payload: Any, randomness: random.Random) -> Any:
    """``payload`` with one change: a value replaced, or a key added or removed."""
    if isinstance(payload, dict) and payload and randomness.random() < 0.7:
        key = randomness.choice(sorted(payload))
        action = randomness.choice(["replace", "remove", "add", "inside"])
        if action == "remove":
            return {k: v for k, v in payload.items() if k != key}
        if action == "add":
            return {**payload, "unexpected": randomness.choice(_WRONG)}
        if action == "inside":
            return {**payload, key: _mutated(payload[key], randomness)}
        return {**payload, key: randomness.choice(_WRONG)}
    if isinstance(payload, list) and payload:
        index = randomness.randrange(len(payload))
        return [*payload[:index], _mutated(payload[index], randomness), *payload[index + 1 :]]
    return randomness.choice(_WRONG)
