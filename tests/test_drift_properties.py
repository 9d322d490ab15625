"""Drift rules against sampled payloads: a schema that accepts a superset of the old
one is never a breaking params change, and its reverse never a breaking result change."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from wink.contract.drift import compare_schemas

Schema = dict[str, Any]
LEAF_TYPES = ("string", "integer", "number", "boolean")


@st.composite
def leaves(draw: st.DrawFn) -> Schema:
    kind = draw(st.sampled_from(LEAF_TYPES))
    schema: Schema = {"type": kind}
    if kind in ("integer", "number") and draw(st.booleans()):
        low = draw(st.integers(-5, 5))
        schema.update(minimum=low, maximum=low + draw(st.integers(0, 10)))
    if kind == "string":
        choice = draw(st.sampled_from(["plain", "length", "enum"]))
        if choice == "length":
            schema.update(minLength=draw(st.integers(0, 2)), maxLength=draw(st.integers(3, 6)))
        elif choice == "enum":
            schema["enum"] = draw(st.lists(st.sampled_from("abcde"), min_size=1, unique=True))
    return schema


@st.composite
def schemas(draw: st.DrawFn, depth: int = 2) -> Schema:
    if depth == 0:
        return draw(leaves())
    kind = draw(st.sampled_from(["leaf", "object", "array", "union"]))
    if kind == "leaf":
        return draw(leaves())
    if kind == "array":
        schema: Schema = {"type": "array", "items": draw(schemas(depth - 1))}
        if draw(st.booleans()):
            schema["maxItems"] = draw(st.integers(1, 4))
        return schema
    if kind == "union":
        first, second = draw(
            st.lists(st.sampled_from(LEAF_TYPES[:3]), min_size=2, max_size=2, unique=True)
        )
        return {"anyOf": [{"type": first}, {"type": second}]}
    return draw(objects(depth - 1))


@st.composite
def objects(draw: st.DrawFn, depth: int = 1) -> Schema:
    names = draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=3, unique=True))
    properties = {name: draw(schemas(depth)) for name in names}
    required = [name for name in names if draw(st.booleans())]
    schema: Schema = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = required
    return schema


def widen(schema: Schema, choice: int) -> Schema:
    """A copy of ``schema`` that accepts everything it did, and perhaps more."""
    wider = copy.deepcopy(schema)
    _widen_node(wider, choice)
    return wider


def _widen_node(node: Schema, choice: int) -> None:
    if "anyOf" in node:
        present = {branch["type"] for branch in node["anyOf"]}
        extra = [kind for kind in ("null", "boolean", "string", "integer") if kind not in present]
        node["anyOf"].append({"type": extra[0]})
        return
    kind = node.get("type")
    if kind == "object":
        names = list(node["properties"])
        if choice % 3 == 0 and node.get("required"):
            node["required"].pop()
            if not node["required"]:
                del node["required"]
        elif choice % 3 == 1 and "d" not in node["properties"]:
            node["properties"]["d"] = {"type": "string"}
        else:
            _widen_node(node["properties"][names[choice % len(names)]], choice // 3)
    elif kind == "array":
        if choice % 2 and "maxItems" in node:
            del node["maxItems"]
        else:
            _widen_node(node["items"], choice // 2)
    elif kind == "integer" and choice % 2:
        node["type"] = "number"
    elif "minimum" in node:
        node["minimum"] -= 1 + choice % 3
    elif "enum" in node:
        node["enum"].append("z")
    elif "maxLength" in node:
        del node["maxLength"]
    else:
        node["type"] = [node["type"], "null"]


@st.composite
def values(draw: st.DrawFn, schema: Schema) -> Any:
    """A payload shaped like ``schema``, sometimes off it by a little."""
    if "anyOf" in schema:
        return draw(values(draw(st.sampled_from(schema["anyOf"]))))
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = draw(st.sampled_from(kind))
    if kind == "object":
        properties = schema["properties"]
        chosen = draw(st.lists(st.sampled_from([*properties, "d"]), unique=True))
        return {
            name: draw(values(properties[name])) if name in properties else draw(json_scalars)
            for name in chosen
        }
    if kind == "array":
        return draw(st.lists(values(schema["items"]), max_size=5))
    if "enum" in schema:
        return draw(st.sampled_from([*schema["enum"], "z"]))
    return draw(json_scalars)


json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-20, 20),
    st.floats(-20, 20, allow_nan=False),
    st.text("abz", max_size=8),
)


def accepts_every_sample(narrow: Schema, wide: Schema, samples: list[Any]) -> bool:
    narrow_check, wide_check = Draft202012Validator(narrow), Draft202012Validator(wide)
    return all(wide_check.is_valid(value) for value in samples if narrow_check.is_valid(value))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), old=objects(), choice=st.integers(0, 50))
def test_a_wider_params_schema_is_never_breaking_and_its_reverse_result_never_breaking(
    data: st.DataObject, old: Schema, choice: int
) -> None:
    new = widen(old, choice)
    samples = data.draw(st.lists(values(old), min_size=20, max_size=20))
    # The generator's promise, checked by sampling: everything old accepts, new accepts.
    assert accepts_every_sample(old, new, samples)
    params = compare_schemas(old, new, "params")
    assert [c.rule for c in params if c.level == "breaking"] == []
    assert params != []  # the schema did change, and some rule says how
    narrowed_result = compare_schemas(new, old, "result")
    assert [c.rule for c in narrowed_result if c.level == "breaking"] == []


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), old=objects(), choice=st.integers(0, 50))
def test_a_narrower_params_schema_is_breaking_when_a_sample_shows_a_refused_call(
    data: st.DataObject, old: Schema, choice: int
) -> None:
    wide = widen(old, choice)
    samples = data.draw(st.lists(values(wide), min_size=20, max_size=20))
    refused = [
        value
        for value in samples
        if Draft202012Validator(wide).is_valid(value)
        and not Draft202012Validator(old).is_valid(value)
    ]
    params = compare_schemas(wide, old, "params")
    result = compare_schemas(old, wide, "result")
    if refused:
        # A call the narrower schema refuses exists: params say breaking, results too.
        assert any(c.level == "breaking" for c in params)
        assert any(c.level in ("breaking", "warning") for c in result)
