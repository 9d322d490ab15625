"""jsonschema-rs (the fast check) and jsonschema (the explaining one) agree on wink's schemas.

wink asks jsonschema-rs first and the pure-Python ``jsonschema`` only for what it
refuses, so every verdict below must be the same from both, on every schema of the
project's corpus and on documents built to hit each property's edges.
"""

from __future__ import annotations

import itertools
from typing import Any

import jsonschema
import jsonschema_rs
import pytest
from provider_corpus import CORPUS
from test_contract_schema import ALL_TYPES

from wink.contract import (
    JsonSchema,
    compile_contract,
    iter_schema_nodes,
    schema_checker,
    schema_validator,
)
from wink.contract.frozen import thaw

_VALUES: tuple[Any, ...] = (
    None,
    True,
    0,
    1,
    -3,
    2.5,
    10**20,
    "",
    "x",
    "2024-01-02T03:04:05Z",
    "not a date",
    "123e4567-e89b-12d3-a456-426614174000",
    "https://example.com/a",
    [],
    [1, "x"],
    ["a", "b"],
    {},
    {"x": 1.0, "y": 2.0},
    {"kind": "cat"},
    {"kind": "dog", "good": True},
)


def _schemas() -> dict[str, JsonSchema]:
    schemas: dict[str, JsonSchema] = {}
    for name, tool in CORPUS.items():
        schemas[f"{name} params"] = thaw(tool.params_schema)
        schemas[f"{name} result"] = thaw(tool.result_schema)
    for tp in ALL_TYPES:
        contract = compile_contract(tp)
        schemas[f"{tp!r} parsing"] = thaw(contract.input_schema)
        schemas[f"{tp!r} serializing"] = thaw(contract.output_schema)
    return schemas


SCHEMAS = _schemas()


def _documents(schema: JsonSchema) -> list[Any]:
    """Whole values, and objects filling each named property with each value."""
    names = sorted(
        {
            name
            for _, node in iter_schema_nodes(schema)
            for name in (node.get("properties") or {})
            if isinstance(node, dict)
        }
    )
    documents: list[Any] = list(_VALUES)
    for value in _VALUES:
        documents.append(dict.fromkeys(names, value))
        documents.extend({name: value} for name in names)
    for first, second in itertools.combinations(names, 2):
        documents.append({first: "x", second: 1})
    documents.append({**dict.fromkeys(names, 1), "unexpected": 1})
    return documents


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_both_validators_accept_the_same_documents(name: str) -> None:
    schema = SCHEMAS[name]
    python = jsonschema.Draft202012Validator(schema)
    rust = jsonschema_rs.Draft202012Validator(schema)
    checker = schema_checker(schema)
    for document in _documents(schema):
        expected = python.is_valid(document)
        assert rust.is_valid(document) == expected, document
        assert checker.is_valid(document) == expected, document
        # What is reported is what the Python validator alone reported.
        assert [e.message for e in checker.iter_errors(document)] == [
            e.message for e in schema_validator(schema).iter_errors(document)
        ]


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_both_metaschema_checks_accept_every_emitted_schema(name: str) -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMAS[name])
    assert jsonschema_rs.meta.is_valid(SCHEMAS[name])


BROKEN_SCHEMAS: list[JsonSchema] = [
    {"type": 7},
    {"type": "integr"},
    {"properties": 5},
    {"properties": {"a": {"type": ["string", 3]}}},
    {"required": "a"},
    {"required": [1]},
    {"minimum": "x"},
    {"minLength": -1},
    {"$defs": 5},
    {"items": 3},
    {"additionalProperties": "no"},
    {"anyOf": []},
    {"oneOf": {}},
    {"enum": 3},
    {"$ref": 5},
    {"description": 1},
]


@pytest.mark.parametrize("schema", BROKEN_SCHEMAS, ids=repr)
def test_both_metaschema_checks_refuse_the_same_broken_schemas(schema: JsonSchema) -> None:
    assert not jsonschema.Draft202012Validator(
        jsonschema.Draft202012Validator.META_SCHEMA
    ).is_valid(schema)
    assert not jsonschema_rs.meta.is_valid(schema)
