"""Parsing tries a narrower validator first, and answers exactly as the full one does.

The narrower validator has no whole-number-float wrapper and reaches the
``null``-means-default function only for ``null`` (see
``wink.contract._core_schema.quick_schema``), so the usual call runs no Python
function; whatever it refuses, the full validator decides. These tests
compare ``parse`` with a copy of the contract that only has the full validator, on
generated payloads full of what the wrappers are for: ``null``, whole floats, big
integers, unions, validators of the author's that see ``null``, lax fields.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Annotated, Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    RootModel,
    WrapValidator,
    model_validator,
)
from pydantic_core import SchemaValidator

from wink.contract import Contract, ContractViolation, compile_contract
from wink.contract._contract import _Shortcut
from wink.contract._core_schema import quick_schema
from wink.contract._json_text import KeyNames


@dataclasses.dataclass
class Point:
    x: int
    y: int = 0


def _none_is_zero(value: Any) -> Any:
    return 0 if value is None else value


def _refusal_is_minus_one(value: Any, handler: Any) -> Any:
    try:
        return handler(value)
    except ValueError:
        return -1


@dataclasses.dataclass
class Mixed:
    name: str
    count: int = 1
    ratio: float = 0.5
    flag: bool = False
    tags: list[str] = dataclasses.field(default_factory=list)
    point: Point = dataclasses.field(default_factory=lambda: Point(1))
    maybe: int | None = None
    either: int | str = 0
    either_point: Point | str = "none"
    zeroed: Annotated[int, BeforeValidator(_none_is_zero)] = 5
    rescued: Annotated[int, WrapValidator(_refusal_is_minus_one)] = 7
    lax: Annotated[int, Field(strict=False)] = 2


class LaxModel(BaseModel):
    model_config = ConfigDict(strict=False)

    count: int = 3
    words: list[str] = ["a"]
    inner: Point | None = None


class EmptyWhenNull(BaseModel):
    x: int = 0

    @model_validator(mode="before")
    @classmethod
    def null_is_empty(cls, data: Any) -> Any:
        return {} if data is None else data


class MaybeNumber(RootModel[int | None]):
    pass


class Holder(BaseModel):
    """Classes whose own validators take ``null``, as fields with a default."""

    fills: EmptyWhenNull = EmptyWhenNull(x=4)
    root: MaybeNumber = MaybeNumber(1)
    x: int = 9


NAMES = [field.name for field in dataclasses.fields(Mixed)] + ["x", "y", "fills", "root"]

SCALARS = st.sampled_from(
    [
        "null",
        "0",
        "3",
        "-2",
        "3.0",
        "2.5",
        "1e-400",
        "1e2",
        "9007199254740993.0",
        str(2**70),
        "true",
        "false",
        '"x"',
        '"3"',
        '""',
        "[]",
        '["a", "b"]',
        '["a", 1]',
        "{}",
    ]
)


def values(depth: int = 0) -> st.SearchStrategy[str]:
    if depth > 1:
        return SCALARS
    return st.one_of(SCALARS, objects(depth + 1))


@st.composite
def objects(draw: st.DrawFn, depth: int = 0) -> str:
    """Any object over the fields' names: mostly refused."""
    keys = draw(st.lists(st.sampled_from(NAMES), max_size=6))
    members = [f"{json.dumps(key)}: {draw(values(depth))}" for key in keys]
    return "{" + ", ".join(members) + "}"


FIELD_VALUES = {
    "name": ['"a"', '"x:y"', '"name"', "null"],
    "count": ["3", "3.0", "null", str(2**70), "1e-400", "9007199254740993.0", "2.5"],
    "ratio": ["0.25", "1", "null", "true"],
    "flag": ["true", "false", "null", "1"],
    "tags": ['["a", "b"]', "[]", "null", '["a", 1]'],
    "point": ['{"x": 1}', '{"x": 2.0, "y": null}', "null", '{"x": 1, "x": 2}', "{}"],
    "maybe": ["1", "null", "1.0", '"a"'],
    "either": ["1", '"s"', "1.0", "null", "true"],
    "either_point": ['{"x": 1}', '"s"', '{"x": 1.0}', "null", '{"x": null}'],
    "zeroed": ["1", "null", "2.0", '"a"'],
    "rescued": ["1", "null", "2.0", "2.5", '"a"'],
    "lax": ["1", "2.0", "null", '"3"'],
    "words": ['["a"]', "null", "[]", "[1]"],
    "inner": ['{"x": 1}', "null", '{"x": 1.0}', '{"y": 2}'],
    "fills": ['{"x": 1}', "null", '{"x": 2.0}', "{}", '{"x": null}'],
    "root": ["1", "null", "1.0", '"a"'],
    "x": ["1", "null", "2.0", "2.5"],
}
"""Values for each field name: the first three accepted (``null``, whole floats and the
like among them), the others refused by one validator or both."""


def field_names(contract_type: Any) -> list[str]:
    if dataclasses.is_dataclass(contract_type):
        return [field.name for field in dataclasses.fields(contract_type)]
    return list(contract_type.model_fields)


@st.composite
def plausible_objects(draw: st.DrawFn, contract_type: Any) -> str:
    """An object of the type's fields, each with one of its likely values: often accepted."""
    names = field_names(contract_type)
    others = [name for name in names if name != "name"]
    keys = draw(st.lists(st.sampled_from(others), max_size=len(others), unique=True))
    if "name" in names:  # required: sent once mostly, now and then missing or twice
        keys = [*draw(st.sampled_from([["name"]] * 8 + [[], ["name", "name"]])), *keys]
    members = []
    for key in keys:
        choices = FIELD_VALUES[key] if draw(st.integers(0, 9)) == 0 else FIELD_VALUES[key][:3]
        members.append(f"{json.dumps(key)}: {draw(st.sampled_from(choices))}")
    return "{" + ", ".join(members) + "}"


def full_only(contract: Contract[Any]) -> Contract[Any]:
    """A copy of ``contract`` that parses with its full validator only."""
    return dataclasses.replace(contract, _shortcut=[_Shortcut(None, False, None)])


def outcome(contract: Contract[Any], payload: Any) -> tuple[str, str]:
    """What parsing gives: the value (``repr`` tells ``3`` from ``3.0`` and ``True``)
    or the refusal's whole message."""
    try:
        return "value", repr(contract.parse(payload))
    except ContractViolation as violation:
        return "refused", str(violation)


PARSED_TYPES = [Mixed, LaxModel, Holder]


@pytest.mark.parametrize("contract_type", PARSED_TYPES)
@given(data=st.data())
def test_parse_gives_what_the_full_validator_gives_for_any_payload(
    contract_type: Any, data: st.DataObject
) -> None:
    text = data.draw(st.one_of(plausible_objects(contract_type), objects()))
    # (Most plausible objects are accepted, some by the narrower validator and some only
    # by the full one; most other objects are refused.)
    contract = compile_contract(contract_type)
    assert outcome(contract, text) == outcome(full_only(contract), text)
    assert outcome(contract, text.encode()) == outcome(full_only(contract), text)


@pytest.mark.parametrize("contract_type", PARSED_TYPES)
@pytest.mark.parametrize(
    "text",
    [
        '{"name": "a", "count": null}',
        '{"name": "a", "count": 3.0, "point": {"x": 2.0}}',
        '{"name": "a", "count": 1e-400}',
        '{"name": "a", "either": 3.0}',
        '{"name": "a", "either_point": null}',
        '{"name": "a", "zeroed": null}',
        '{"name": "a", "rescued": null}',
        '{"name": "a", "rescued": 2.0}',
        '{"name": "a", "lax": "3"}',
        '{"count": "3", "words": null, "inner": {"x": 1.0}}',
        '{"count": "3"}',
        '{"name": "a", "name": "b"}',
        '{"fills": null, "root": null, "x": 2.0}',
    ],
)
def test_parse_gives_what_the_full_validator_gives_for_payloads_the_wrappers_are_for(
    contract_type: Any, text: str
) -> None:
    contract = compile_contract(contract_type)
    assert outcome(contract, text) == outcome(full_only(contract), text)


def test_null_for_a_default_is_the_default_whether_or_not_the_quick_path_is_ready() -> None:
    contract = compile_contract(Mixed).with_max_bytes(1000)
    first = contract.parse('{"name": "a", "count": null, "tags": null, "zeroed": null}')
    second = contract.parse('{"name": "a", "count": null, "tags": null, "zeroed": null}')
    assert first == second == Mixed("a", count=1, tags=[], zeroed=5)
    assert first.tags is not second.tags


def test_an_author_validator_that_takes_null_does_not_take_it_for_a_default() -> None:
    # The full validator gives the default before the validator sees ``null``.
    assert compile_contract(Mixed).parse('{"name": "a", "zeroed": null}').zeroed == 5


def test_a_wrap_validator_that_rescues_a_refusal_sees_what_the_full_validator_shows() -> None:
    assert compile_contract(Mixed).parse('{"name": "a", "rescued": 4.0}').rescued == 4
    assert compile_contract(Mixed).parse('{"name": "a", "rescued": 4.5}').rescued == -1


def test_a_lax_field_is_strict_on_the_quick_path_too() -> None:
    with pytest.raises(ContractViolation) as refused:
        compile_contract(Mixed).parse('{"name": "a", "lax": "3"}')
    assert [str(problem) for problem in refused.value.problems] == [
        'lax: input should be a valid integer (got "3")'
    ]


@dataclasses.dataclass
class Lookup:
    entity_id: str
    include_related: bool = False
    limit: int = 10
    tags: list[str] = dataclasses.field(default_factory=list)


def _functions(schema: Any) -> list[str]:
    """Each function node of a core schema, with the kind of node it validates."""
    if isinstance(schema, list | tuple):
        return [found for item in schema for found in _functions(item)]
    if not isinstance(schema, dict):
        return []
    kind = str(schema.get("type", ""))
    own = [f"{kind} of {schema['schema']['type']}"] if kind.startswith("function") else []
    return own + [found for value in schema.values() for found in _functions(value)]


def test_the_quick_schema_of_a_record_with_defaults_calls_python_only_for_null() -> None:
    core = compile_contract(Lookup)._core
    assert _functions(core) == [
        "function-after of nullable",
        "function-after of nullable",
        "function-before of int",
        "function-after of nullable",
    ]
    narrowed, reads_text = quick_schema(core)
    assert _functions(narrowed) == ["function-after of none"] * 3
    assert reads_text is False  # the whole-float check of ``limit`` read it
    quick = SchemaValidator(narrowed)
    parsed = quick.validate_json('{"entity_id": "a", "limit": null, "tags": null}')
    assert parsed == Lookup("a", include_related=False, limit=10, tags=[])


@dataclasses.dataclass
class Either:
    value: int | str = 0


def test_wrappers_under_a_union_are_kept_in_the_narrower_schema() -> None:
    # Refusing ``null`` or ``3.0`` in one choice could let another choice take it.
    core = compile_contract(Either)._core
    assert _functions(core) == ["function-after of nullable", "function-before of int"]
    narrowed, reads_text = quick_schema(core)
    assert _functions(narrowed) == ["function-after of nullable", "function-before of int"]
    assert reads_text is True


def test_the_quick_schema_turns_every_lax_setting_strict() -> None:
    schema = {
        "type": "model",
        "config": {"strict": False, "title": "M"},
        "schema": {"type": "int", "strict": False},
        "metadata": {"strict": False},
    }
    assert quick_schema(schema)[0] == {
        "type": "model",
        "config": {"strict": True, "title": "M"},
        "schema": {"type": "int", "strict": True},
        "metadata": {"strict": False},
    }


def test_a_copy_with_a_smaller_size_limit_refuses_what_its_original_took() -> None:
    contract = compile_contract(Lookup)
    text = json.dumps({"entity_id": "e" * 100})
    assert contract.parse(text) == Lookup("e" * 100)
    with pytest.raises(ContractViolation) as refused:
        contract.with_max_bytes(50).parse(text)
    assert [str(problem) for problem in refused.value.problems] == [
        "<root>: arguments are 117 bytes of JSON, over the limit of 50 bytes; send less data"
    ]


@pytest.mark.parametrize(
    ("text", "repeated"),
    [
        ('{"entity_id": "a", "limit": 1}', None),
        ('{"entity_id": "a:b", "limit": 1}', None),  # a colon in a value
        ('{"entity_id": "limit", "limit": 1}', None),  # a name as a value
        ('{"entity_id": "a", "limit": 1, "limit": 2}', "limit"),
        ('{"entity_id": "a", "limit" : 1, "limit": 2}', "limit"),  # space before a colon
        ('{"entity_id": "a", "tags": ["limit"], "entity_id": "b"}', "entity_id"),
        ('{"entity_id": "a", "lim\\u0069t": 1, "limit": 2}', "limit"),  # an escape
    ],
)
def test_a_repeated_key_is_refused_on_the_quick_path(text: str, repeated: str | None) -> None:
    contract = compile_contract(Lookup)
    contract.parse('{"entity_id": "ready"}')  # the quick path is prepared by a first parse
    if repeated is None:
        assert contract.parse(text).entity_id in ("a", "a:b", "limit")
        return
    with pytest.raises(ContractViolation) as refused:
        contract.parse(text)
    assert [str(problem) for problem in refused.value.problems] == [
        f'<root>: key "{repeated}" appears more than once; '
        "send each key once (a repeated key is ambiguous)"
    ]


def test_names_written_as_keys_are_given_only_when_no_name_needs_care() -> None:
    assert KeyNames(["b", "a"]).written_keys == ('"a":', '"b":')
    for awkward in ["x y", "n:", 'q"t', "a,b", "[", "tab\t"]:
        assert KeyNames(["a", awkward]).written_keys is None


def test_the_quick_schema_stops_arrays_at_their_first_error() -> None:
    schema = {"type": "list", "items_schema": {"type": "dict", "values_schema": {"type": "int"}}}
    assert quick_schema(schema) == (
        {
            "type": "list",
            "items_schema": {"type": "dict", "values_schema": {"type": "int"}, "fail_fast": True},
            "fail_fast": True,
        },
        False,
    )
