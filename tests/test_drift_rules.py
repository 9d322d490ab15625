"""Drift rules: each change, read as params (backward) and as results (forward).

Every row gives an old and a new schema and the exact (rule, level, pointer) found
from old to new, as params and as a result; the reverse change is a row of its own.
"""

from __future__ import annotations

from typing import Any

import pytest

from wink.contract.drift import compare_schemas


def closed(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
    }
    if required:
        schema["required"] = required
    return schema


def of_x(schema: Any, *, required: bool = True) -> dict[str, Any]:
    return closed({"x": schema}, ["x"] if required else None)


STRING = {"type": "string"}
X = "/properties/x"

Found = list[tuple[str, str, str]]

ROWS: list[tuple[str, dict[str, Any], dict[str, Any], Found, Found]] = [
    (
        "optional property added",
        closed({}),
        closed({"y": STRING}),
        [("params-optional-property-added", "info", "/properties/y")],
        [("result-optional-property-added", "warning", "/properties/y")],
    ),
    (
        "optional property removed",
        closed({"y": STRING}),
        closed({}),
        [("params-optional-property-removed", "breaking", "/properties/y")],
        [("result-optional-property-removed", "info", "/properties/y")],
    ),
    (
        "required property added",
        closed({}),
        closed({"y": STRING}, ["y"]),
        [("params-required-property-added", "breaking", "/properties/y")],
        [("result-required-property-added", "warning", "/properties/y")],
    ),
    (
        "required property removed",
        closed({"y": STRING}, ["y"]),
        closed({}),
        [("params-required-property-removed", "breaking", "/properties/y")],
        [("result-required-property-removed", "breaking", "/properties/y")],
    ),
    (
        "optional became required",
        of_x(STRING, required=False),
        of_x(STRING),
        [("params-property-became-required", "breaking", X)],
        [("result-property-became-required", "info", X)],
    ),
    (
        "required became optional",
        of_x(STRING),
        of_x(STRING, required=False),
        [("params-property-became-optional", "info", X)],
        [("result-property-became-optional", "breaking", X)],
    ),
    (
        "nullable added",
        of_x(STRING),
        of_x({"anyOf": [STRING, {"type": "null"}]}),
        [("params-became-nullable", "info", X + "/anyOf/1")],
        [("result-became-nullable", "breaking", X + "/anyOf/1")],
    ),
    (
        "nullable removed",
        of_x({"anyOf": [STRING, {"type": "null"}]}),
        of_x(STRING),
        [("params-no-longer-nullable", "breaking", X + "/anyOf/1")],
        [("result-no-longer-nullable", "info", X + "/anyOf/1")],
    ),
    (
        "nullable added by a type list",
        of_x(STRING),
        of_x({"type": ["string", "null"]}),
        [("params-became-nullable", "info", X)],
        [("result-became-nullable", "breaking", X)],
    ),
    (
        "type widened",
        of_x({"type": "integer"}),
        of_x({"type": "number"}),
        [("params-type-widened", "info", X)],
        [("result-type-widened", "breaking", X)],
    ),
    (
        "type narrowed",
        of_x({"type": "number"}),
        of_x({"type": "integer"}),
        [("params-type-narrowed", "breaking", X)],
        [("result-type-narrowed", "info", X)],
    ),
    (
        "type changed",
        of_x(STRING),
        of_x({"type": "integer"}),
        [("params-type-changed", "breaking", X)],
        [("result-type-changed", "breaking", X)],
    ),
    (
        "union widened",
        of_x({"anyOf": [STRING, {"type": "integer"}]}),
        of_x({"anyOf": [STRING, {"type": "integer"}, {"type": "boolean"}]}),
        [("params-union-branch-added", "info", X + "/anyOf/2")],
        [("result-union-branch-added", "breaking", X + "/anyOf/2")],
    ),
    (
        "union narrowed",
        of_x({"anyOf": [STRING, {"type": "integer"}, {"type": "boolean"}]}),
        of_x({"anyOf": [STRING, {"type": "integer"}]}),
        [("params-union-branch-removed", "breaking", X + "/anyOf/2")],
        [("result-union-branch-removed", "info", X + "/anyOf/2")],
    ),
    (
        "enum value added",
        of_x({"enum": ["a", "b"], "type": "string"}),
        of_x({"enum": ["a", "b", "c"], "type": "string"}),
        [("params-enum-value-added", "info", X + "/enum")],
        [("result-enum-value-added", "breaking", X + "/enum")],
    ),
    (
        "enum value removed",
        of_x({"enum": ["a", "b", "c"], "type": "string"}),
        of_x({"enum": ["a", "b"], "type": "string"}),
        [("params-enum-value-removed", "breaking", X + "/enum")],
        [("result-enum-value-removed", "info", X + "/enum")],
    ),
    (
        "enum narrowed to one fixed value",
        of_x({"enum": ["a", "b"], "type": "string"}),
        of_x({"const": "a", "type": "string"}),
        [("params-enum-value-removed", "breaking", X + "/const")],
        [("result-enum-value-removed", "info", X + "/const")],
    ),
    (
        "bound tightened",
        of_x({"type": "integer", "maximum": 100}),
        of_x({"type": "integer", "maximum": 50}),
        [("params-bound-tightened", "breaking", X + "/maximum")],
        [("result-bound-tightened", "info", X + "/maximum")],
    ),
    (
        "bound loosened",
        of_x({"type": "integer", "minimum": 5}),
        of_x({"type": "integer", "minimum": 1}),
        [("params-bound-loosened", "info", X + "/minimum")],
        [("result-bound-loosened", "breaking", X + "/minimum")],
    ),
    (
        "bound added",
        of_x({"type": "integer"}),
        of_x({"type": "integer", "exclusiveMinimum": 0}),
        [("params-bound-tightened", "breaking", X + "/exclusiveMinimum")],
        [("result-bound-tightened", "info", X + "/exclusiveMinimum")],
    ),
    (
        "multipleOf made coarser",
        of_x({"type": "integer", "multipleOf": 2}),
        of_x({"type": "integer", "multipleOf": 4}),
        [("params-bound-tightened", "breaking", X + "/multipleOf")],
        [("result-bound-tightened", "info", X + "/multipleOf")],
    ),
    (
        "length tightened",
        of_x({"type": "string", "maxLength": 10}),
        of_x({"type": "string", "maxLength": 5}),
        [("params-length-tightened", "breaking", X + "/maxLength")],
        [("result-length-tightened", "info", X + "/maxLength")],
    ),
    (
        "length loosened",
        of_x({"type": "array", "items": STRING, "minItems": 2}),
        of_x({"type": "array", "items": STRING}),
        [("params-length-loosened", "info", X + "/minItems")],
        [("result-length-loosened", "breaking", X + "/minItems")],
    ),
    (
        "pattern added",
        of_x(STRING),
        of_x({"type": "string", "pattern": "^a"}),
        [("params-pattern-added", "breaking", X + "/pattern")],
        [("result-pattern-added", "info", X + "/pattern")],
    ),
    (
        "pattern removed",
        of_x({"type": "string", "pattern": "^a"}),
        of_x(STRING),
        [("params-pattern-removed", "info", X + "/pattern")],
        [("result-pattern-removed", "breaking", X + "/pattern")],
    ),
    (
        "pattern changed is undecided",
        of_x({"type": "string", "pattern": "^a"}),
        of_x({"type": "string", "pattern": "^b"}),
        [("params-pattern-changed", "breaking", X + "/pattern")],
        [("result-pattern-changed", "breaking", X + "/pattern")],
    ),
    (
        "format added",
        of_x(STRING),
        of_x({"type": "string", "format": "date"}),
        [("params-format-added", "breaking", X + "/format")],
        [("result-format-added", "info", X + "/format")],
    ),
    (
        "format removed",
        of_x({"type": "string", "format": "date"}),
        of_x(STRING),
        [("params-format-removed", "info", X + "/format")],
        [("result-format-removed", "breaking", X + "/format")],
    ),
    (
        "default changed",
        of_x({"type": "integer", "default": 10}, required=False),
        of_x({"type": "integer", "default": 20}, required=False),
        [("params-default-changed", "warning", X)],
        [],
    ),
    (
        "description changed",
        of_x({"type": "integer", "description": "How many"}),
        of_x({"type": "integer", "description": "How many, at most"}),
        [("params-description-changed", "info", X)],
        [("result-description-changed", "info", X)],
    ),
    (
        "example changed",
        of_x({"type": "integer", "examples": [1]}),
        of_x({"type": "integer", "examples": [2]}),
        [("params-example-changed", "info", X)],
        [("result-example-changed", "info", X)],
    ),
    (
        "other keys allowed",
        of_x(closed({})),
        of_x({"type": "object", "properties": {}}),
        [("params-additional-properties-allowed", "info", X + "/additionalProperties")],
        [("result-additional-properties-allowed", "breaking", X + "/additionalProperties")],
    ),
    (
        "other keys forbidden",
        of_x({"type": "object", "additionalProperties": {"type": "integer"}}),
        of_x({"type": "object", "additionalProperties": False}),
        [("params-additional-properties-forbidden", "breaking", X + "/additionalProperties")],
        [("result-additional-properties-forbidden", "info", X + "/additionalProperties")],
    ),
    (
        "map values narrowed",
        of_x({"type": "object", "additionalProperties": {"type": "number"}}),
        of_x({"type": "object", "additionalProperties": {"type": "integer"}}),
        [("params-type-narrowed", "breaking", X + "/additionalProperties")],
        [("result-type-narrowed", "info", X + "/additionalProperties")],
    ),
    (
        "array items widened",
        of_x({"type": "array", "items": {"type": "integer"}}),
        of_x({"type": "array", "items": {"type": ["integer", "string"]}}),
        [("params-type-widened", "info", X + "/items")],
        [("result-type-widened", "breaking", X + "/items")],
    ),
    (
        "a keyword no rule covers is undecided",
        of_x(STRING),
        of_x({"type": "string", "not": {"const": ""}}),
        [("params-undecided", "breaking", X + "/not")],
        [("result-undecided", "breaking", X + "/not")],
    ),
]


@pytest.mark.parametrize(
    ("old", "new", "as_params", "as_result"),
    [row[1:] for row in ROWS],
    ids=[row[0] for row in ROWS],
)
def test_each_rule_as_params_and_as_result(
    old: dict[str, Any], new: dict[str, Any], as_params: Found, as_result: Found
) -> None:
    found_params = [(c.rule, c.level, c.pointer) for c in compare_schemas(old, new, "params")]
    found_result = [(c.rule, c.level, c.pointer) for c in compare_schemas(old, new, "result")]
    assert (found_params, found_result) == (as_params, as_result)


def test_identical_schemas_have_no_changes() -> None:
    schema = of_x({"anyOf": [STRING, {"type": "null"}], "default": None}, required=False)
    assert compare_schemas(schema, schema, "params") == []


def test_refs_are_followed_into_definitions_and_pointed_at_there() -> None:
    def with_kinds(*kinds: str) -> dict[str, Any]:
        return {
            "$defs": {"Filters": closed({"kind": {"enum": list(kinds), "type": "string"}})},
            **closed({"filters": {"$ref": "#/$defs/Filters"}}, ["filters"]),
        }

    [change] = compare_schemas(with_kinds("book", "film"), with_kinds("book"), "params")
    assert (change.rule, change.level, change.pointer, change.location) == (
        "params-enum-value-removed",
        "breaking",
        "/$defs/Filters/properties/kind/enum",
        ("filters", "kind"),
    )
    assert change.message == (
        'filters.kind: no longer accepts "film"; some calls that worked are now refused'
    )


def test_a_recursive_definition_is_compared_once() -> None:
    def tree(name_type: str) -> dict[str, Any]:
        node = closed(
            {
                "name": {"type": name_type},
                "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
            },
            ["name"],
        )
        return {"$defs": {"Node": node}, "$ref": "#/$defs/Node"}

    found = [
        (c.rule, c.pointer) for c in compare_schemas(tree("string"), tree("integer"), "params")
    ]
    assert found == [("params-type-changed", "/$defs/Node/properties/name")]


def test_tagged_union_branches_are_matched_by_their_tag() -> None:
    def shapes(circle_radius: str) -> dict[str, Any]:
        circle = closed({"kind": {"const": "circle"}, "r": {"type": circle_radius}}, ["kind", "r"])
        square = closed({"kind": {"const": "square"}, "side": {"type": "number"}}, ["kind"])
        return of_x({"oneOf": [square, circle]})

    found = [
        (c.rule, c.pointer) for c in compare_schemas(shapes("integer"), shapes("number"), "params")
    ]
    assert found == [("params-type-widened", X + "/oneOf/1/properties/r")]


def test_union_branches_that_cannot_be_told_apart_are_undecided() -> None:
    old = of_x({"anyOf": [closed({"a": STRING}), closed({"b": STRING})]})
    new = of_x({"anyOf": [closed({"a": STRING, "c": STRING}), closed({"b": {"type": "integer"}})]})
    [change] = compare_schemas(old, new, "result")
    assert (change.rule, change.level) == ("result-undecided", "breaking")
    assert change.message == (
        "x: wink cannot tell which alternatives of the union correspond (undecided: reported "
        "as breaking)"
    )


def test_an_unresolvable_ref_is_undecided() -> None:
    old = of_x({"$ref": "#/$defs/Missing"})
    new = of_x({"$ref": "#/$defs/Other"})
    [change] = compare_schemas(old, new, "params")
    assert (change.rule, change.level) == ("params-undecided", "breaking")


def test_a_property_added_to_an_open_object_is_compared_with_what_it_allowed() -> None:
    old = {"type": "object", "properties": {}}
    new = {"type": "object", "properties": {"y": STRING}}
    found = [(c.rule, c.level) for c in compare_schemas(old, new, "params")]
    assert found == [("params-type-narrowed", "breaking")]


def test_pointer_prefix_and_the_messages_say_what_callers_see() -> None:
    old = of_x(STRING, required=False)
    [change] = compare_schemas(old, of_x(STRING), "params", pointer="/params")
    assert change.pointer == "/params/properties/x"
    assert change.message == "x is now required; calls that leave it out are now refused"
