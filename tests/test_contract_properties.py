"""Property tests over every corpus shape: payloads drawn from the shape's own JSON Schema,
valid and near-valid, are accepted by the parser exactly when ``jsonschema`` accepts them.

``make test`` runs a quick pass; ``make fuzz`` (``HYPOTHESIS_PROFILE=long``) a long one.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from provider_corpus import CORPUS
from schema_payloads import near_valid_payloads, valid_payloads, validator

from wink.contract import ContractViolation

SHAPES = sorted(name for name, tool in CORPUS.items() if tool.params_type is not None)
# A fifth of the profile's examples per shape: a dozen in ``make test``, 600 in ``make fuzz``.
PER_SHAPE = settings(max_examples=max(10, settings().max_examples // 5))


@cache
def _schema_validator(name: str) -> Any:
    return validator(CORPUS[name].params_schema)


def _parser_accepts(name: str, payload: Any) -> bool:
    try:
        CORPUS[name].params_contract.parse(json.dumps(payload))
    except ContractViolation:
        return False
    return True


def _agree(name: str, payload: Any) -> None:
    schema_says = _schema_validator(name).is_valid(payload)
    assert _parser_accepts(name, payload) == schema_says, (payload, schema_says)


@pytest.mark.parametrize("name", SHAPES)
@PER_SHAPE
@given(data=st.data())
def test_the_parser_accepts_what_the_schema_accepts(name: str, data: st.DataObject) -> None:
    _agree(name, data.draw(valid_payloads(CORPUS[name].params_schema), label="payload"))


@pytest.mark.parametrize("name", SHAPES)
@PER_SHAPE
@given(data=st.data())
def test_the_parser_refuses_what_the_schema_refuses(name: str, data: st.DataObject) -> None:
    _agree(name, data.draw(near_valid_payloads(CORPUS[name].params_schema), label="payload"))


@pytest.mark.parametrize("name", SHAPES)
def test_the_generated_payloads_include_valid_ones(name: str) -> None:
    """A guard on the generator: for every shape, it draws payloads the schema accepts."""
    schema = CORPUS[name].params_schema
    check = _schema_validator(name)
    found: list[Any] = []

    @PER_SHAPE
    @given(valid_payloads(schema))
    def collect(payload: Any) -> None:
        if check.is_valid(payload):
            found.append(payload)

    collect()
    assert found, f"no valid payload drawn for {name}"
