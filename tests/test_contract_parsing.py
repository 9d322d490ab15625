"""Specification of ``Contract.parse`` and ``Contract.dump``: strict, closed, model-friendly."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from enum import Enum, IntEnum
from typing import Annotated, Any, Literal
from uuid import UUID

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic.dataclasses import dataclass as pydantic_dataclass

from wink.contract import ContractViolation, FieldProblem, compile_contract, schema_validator
from wink.contract.messages import problems_from_validation_error
from wink.errors import ToolValidationError


@dataclass
class Inner:
    value: int


class InnerModel(BaseModel):
    value: int


@pydantic_dataclass
class InnerPydanticDataclass:
    value: int


@dataclass
class Outer:
    inner: Inner
    model: InnerModel
    pydantic_inner: InnerPydanticDataclass
    items: list[Inner] = field(default_factory=list)
    by_name: dict[str, InnerModel] = field(default_factory=dict)


class OuterModel(BaseModel):
    inner: Inner
    model: InnerModel


class TreeNode(BaseModel):
    label: str
    children: list[TreeNode] = []


@dataclass
class Scalars:
    count: int = 0
    flag: bool = False
    ratio: float = 0.0
    name: str = ""


@dataclass
class Moments:
    at: datetime
    day: date
    event_id: UUID
    pair: tuple[int, str] = (0, "")


@dataclass
class Defaults:
    limit: int = 10
    tags: list[str] = field(default_factory=list)
    note: str | None = "keep"


class DefaultsModel(BaseModel):
    limit: int = 10
    tags: list[str] = []


class Validated(BaseModel):
    low: int
    high: int

    @field_validator("low")
    @classmethod
    def low_is_not_negative(cls, value: int) -> int:
        if value < 0:
            raise ValueError("low must not be negative")
        return value

    @model_validator(mode="after")
    def ordered(self) -> Validated:
        if self.low > self.high:
            raise ValueError("low must not exceed high")
        return self


class PreValidated(BaseModel):
    text: str

    @model_validator(mode="before")
    @classmethod
    def refuse_empty(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("text") == "":
            raise ValueError("text must not be empty")
        return data


@dataclass
class HoldsValidated:
    bounds: Validated
    pre: PreValidated | None = None


@dataclass
class Circle:
    radius: float


@dataclass
class Square:
    side: float


@dataclass
class Drawing:
    shape: Circle | Square


def problems(contract_type: Any, payload: str) -> list[tuple[str, str]]:
    """Parse ``payload`` expecting failure; return ``(path, reason)`` pairs."""
    with pytest.raises(ContractViolation) as raised:
        compile_contract(contract_type).parse(payload)
    return [(problem.path, problem.reason) for problem in raised.value.problems]


VALID_OUTER = {
    "inner": {"value": 1},
    "model": {"value": 2},
    "pydantic_inner": {"value": 3},
    "items": [{"value": 4}],
    "by_name": {"a": {"value": 5}},
}


def test_a_valid_nested_payload_parses_into_the_declared_types() -> None:
    parsed = compile_contract(Outer).parse(json.dumps(VALID_OUTER))
    assert parsed == Outer(
        inner=Inner(1),
        model=InnerModel(value=2),
        pydantic_inner=InnerPydanticDataclass(3),
        items=[Inner(4)],
        by_name={"a": InnerModel(value=5)},
    )


@pytest.mark.parametrize(
    ("patch", "path", "allowed"),
    [
        ({"extra": 1}, "extra", "inner, model, pydantic_inner, items, by_name"),
        ({"inner": {"value": 1, "extra": 1}}, "inner.extra", "value"),
        ({"model": {"value": 2, "extra": 1}}, "model.extra", "value"),
        ({"pydantic_inner": {"value": 3, "extra": 1}}, "pydantic_inner.extra", "value"),
        ({"items": [{"value": 4}, {"value": 5, "extra": 1}]}, "items[1].extra", "value"),
        ({"by_name": {"a": {"value": 5, "extra": 1}}}, "by_name.a.extra", "value"),
    ],
)
def test_an_unknown_key_is_rejected_at_every_level_with_the_allowed_names(
    patch: dict[str, Any], path: str, allowed: str
) -> None:
    payload = json.dumps({**VALID_OUTER, **patch})
    assert problems(Outer, payload) == [(path, f"unknown field (allowed: {allowed})")]


def test_an_unknown_key_inside_a_dataclass_held_by_a_model_is_rejected() -> None:
    payload = '{"inner": {"value": 1, "x": 0}, "model": {"value": 1}}'
    assert problems(OuterModel, payload) == [("inner.x", "unknown field (allowed: value)")]


def test_an_unknown_key_deep_in_a_recursive_model_is_rejected() -> None:
    payload = '{"label": "a", "children": [{"label": "b", "children": [{"label": "c", "x": 1}]}]}'
    assert problems(TreeNode, payload) == [
        ("children[0].children[0].x", "unknown field (allowed: label, children)")
    ]


def test_a_recursive_model_parses_nested_levels() -> None:
    parsed = compile_contract(TreeNode).parse('{"label": "a", "children": [{"label": "b"}]}')
    assert parsed == TreeNode(label="a", children=[TreeNode(label="b")])


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        ('{"count": 3.9}', "input should be a valid integer (got 3.9)"),
        ('{"count": "3"}', 'input should be a valid integer (got "3")'),
        ('{"count": true}', "input should be a valid integer (got true)"),
        ('{"flag": "yes"}', 'input should be a valid boolean (got "yes")'),
        ('{"flag": "true"}', 'input should be a valid boolean (got "true")'),
        ('{"flag": 1}', "input should be a valid boolean (got 1)"),
        ('{"ratio": "0.5"}', 'input should be a valid number (got "0.5")'),
        ('{"name": 7}', "input should be a valid string (got 7)"),
    ],
)
def test_no_value_is_coerced_from_another_json_type(payload: str, reason: str) -> None:
    field_name = next(iter(json.loads(payload)))
    assert problems(Scalars, payload) == [(field_name, reason)]


def test_an_integral_float_is_an_integer_as_json_schema_says() -> None:
    assert compile_contract(Scalars).parse('{"count": 3.0}') == Scalars(count=3)


@dataclass
class Amounts:
    exact: int | float = 0
    either: int | str = 0


def test_an_integral_float_stays_a_float_where_the_union_accepts_floats() -> None:
    parsed = compile_contract(Amounts).parse('{"exact": 2.0, "either": 3.0}')
    assert (parsed.exact, type(parsed.exact), parsed.either, type(parsed.either)) == (
        2.0,
        float,
        3,
        int,
    )


def test_an_integer_is_accepted_for_a_float_field() -> None:
    assert compile_contract(Scalars).parse('{"ratio": 2}') == Scalars(ratio=2.0)


def test_json_strings_parse_into_datetime_date_uuid_and_arrays_into_tuples() -> None:
    payload = json.dumps(
        {
            "at": "2024-05-06T07:08:09Z",
            "day": "2024-05-06",
            "event_id": "12345678-1234-5678-1234-567812345678",
            "pair": [1, "x"],
        }
    )
    assert compile_contract(Moments).parse(payload) == Moments(
        at=datetime(2024, 5, 6, 7, 8, 9, tzinfo=UTC),
        day=date(2024, 5, 6),
        event_id=UUID("12345678-1234-5678-1234-567812345678"),
        pair=(1, "x"),
    )


def test_a_datetime_string_is_not_a_date() -> None:
    payload = json.dumps(
        {
            "at": "2024-05-06T07:08:09Z",
            "day": "2024-05-06T00:00:00",
            "event_id": "12345678-1234-5678-1234-567812345678",
        }
    )
    assert [path for path, _ in problems(Moments, payload)] == ["day"]


def test_field_and_model_validators_still_run() -> None:
    assert problems(HoldsValidated, '{"bounds": {"low": -1, "high": 0}}') == [
        ("bounds.low", "value error, low must not be negative (got -1)")
    ]
    assert problems(HoldsValidated, '{"bounds": {"low": 2, "high": 1}}') == [
        ("bounds", 'value error, low must not exceed high (got {"low":2,"high":1})')
    ]
    assert problems(HoldsValidated, '{"bounds": {"low": 0, "high": 1}, "pre": {"text": ""}}') == [
        ("pre", 'value error, text must not be empty (got {"text":""})')
    ]


def test_null_for_a_defaulted_non_nullable_field_gives_the_default() -> None:
    parsed = compile_contract(Defaults).parse('{"limit": null, "tags": null}')
    assert parsed == Defaults(limit=10, tags=[], note="keep")


def test_null_for_a_default_factory_field_gives_a_fresh_value_each_time() -> None:
    contract = compile_contract(Defaults)
    first = contract.parse('{"tags": null}')
    first.tags.append("mutated")
    assert contract.parse('{"tags": null}').tags == []


def test_null_for_a_model_field_with_a_mutable_default_gives_a_copy() -> None:
    contract = compile_contract(DefaultsModel)
    first = contract.parse('{"tags": null, "limit": null}')
    first.tags.append("mutated")
    assert contract.parse('{"tags": null}') == DefaultsModel(limit=10, tags=[])


def test_null_for_a_nullable_field_stays_none_even_with_a_default() -> None:
    assert compile_contract(Defaults).parse('{"note": null}').note is None


def test_null_for_a_required_field_is_rejected() -> None:
    assert problems(Inner, '{"value": null}') == [
        ("value", "input should be a valid integer (got null)")
    ]


def test_a_missing_required_field_is_named() -> None:
    assert problems(Inner, "{}") == [("value", "required field is missing")]


def test_invalid_json_is_reported_at_the_root() -> None:
    assert problems(Inner, '{"value": ') == [
        ("<root>", "arguments are not valid JSON (EOF while parsing a value at line 1 column 10)")
    ]


def test_a_non_object_payload_is_reported_at_the_root() -> None:
    assert problems(Inner, "[1]") == [("<root>", "input should be an object (got [1])")]


def test_union_alternatives_are_named_in_the_reason_not_in_the_path() -> None:
    assert problems(Drawing, '{"shape": {"radius": "big"}}') == [
        ("shape.radius", 'as Circle, input should be a valid number (got "big")'),
        ("shape.side", "as Square, required field is missing"),
        ("shape.radius", "as Square, unknown field (allowed: side)"),
    ]


class Cat(BaseModel):
    kind: Literal["cat"]
    lives: int


class Dog(BaseModel):
    kind: Literal["dog"]
    bark: str


class Home(BaseModel):
    pet: Annotated[Cat | Dog, Field(discriminator="kind")]


def test_a_discriminated_union_names_the_tag_in_the_reason() -> None:
    assert problems(Home, '{"pet": {"kind": "dog", "bark": "woof", "lives": 1}}') == [
        ("pet.lives", "as dog, unknown field (allowed: kind, bark)")
    ]


class OpenModel(BaseModel):
    model_config = ConfigDict(extra="allow")
    name: str


@dataclass
class HoldsOpenModel:
    inner: OpenModel


def test_a_model_that_allows_extra_keys_rejects_them_inside_a_contract() -> None:
    assert problems(HoldsOpenModel, '{"inner": {"name": "n", "more": 1}}') == [
        ("inner.more", "unknown field (allowed: name)")
    ]


def test_the_message_lists_one_problem_per_line_under_the_type_name() -> None:
    with pytest.raises(ContractViolation) as raised:
        compile_contract(Inner).parse('{"value": "x", "other": 1}')
    assert str(raised.value) == (
        "invalid Inner:\n"
        'value: input should be a valid integer (got "x")\n'
        "other: unknown field (allowed: value)"
    )
    assert isinstance(raised.value, ToolValidationError)
    assert raised.value.problems[0] == FieldProblem(
        "value", 'input should be a valid integer (got "x")'
    )


def test_a_long_rejected_value_is_shortened_in_the_message() -> None:
    payload = json.dumps({"value": "x" * 100})
    assert problems(Inner, payload) == [
        ("value", f'input should be a valid integer (got "{"x" * 56}...)')
    ]


def test_parse_accepts_bytes_and_decoded_mappings() -> None:
    contract = compile_contract(Inner)
    assert contract.parse(b'{"value": 1}') == Inner(1)
    assert contract.parse({"value": 2}) == Inner(2)


def test_a_mapping_is_parsed_as_strictly_as_json_text() -> None:
    assert problems(Inner, '{"value": "1"}') == [
        ("value", 'input should be a valid integer (got "1")')
    ]
    with pytest.raises(ContractViolation):
        compile_contract(Inner).parse({"value": "1"})


@pytest.mark.parametrize("payload", [None, {}, "", "  ", "{}", "{ }", "null", b"{}"])
def test_a_contract_of_none_accepts_only_an_empty_payload(payload: Any) -> None:
    assert compile_contract(None).parse(payload) is None


def test_a_contract_of_none_rejects_arguments() -> None:
    assert problems(None, '{"a": 1}') == [
        ("<root>", "this tool takes no arguments (got '{\"a\": 1}')")
    ]


def test_a_list_contract_parses_a_json_array() -> None:
    assert compile_contract(list[Inner]).parse('[{"value": 1}]') == [Inner(1)]


def test_dump_json_is_compact_and_can_drop_none() -> None:
    contract = compile_contract(Defaults)
    value = Defaults(limit=3, tags=["a"], note=None)
    assert contract.dump_json(value) == '{"limit":3,"tags":["a"],"note":null}'
    assert contract.dump_json(value, exclude_none=True) == '{"limit":3,"tags":["a"]}'
    assert contract.dump(value, exclude_none=True) == {"limit": 3, "tags": ["a"]}


def test_dump_writes_datetimes_and_uuids_as_json_strings() -> None:
    value = Moments(
        at=datetime(2024, 5, 6, 7, 8, 9, tzinfo=UTC),
        day=date(2024, 5, 6),
        event_id=UUID("12345678-1234-5678-1234-567812345678"),
    )
    assert compile_contract(Moments).dump(value) == {
        "at": "2024-05-06T07:08:09Z",
        "day": "2024-05-06",
        "event_id": "12345678-1234-5678-1234-567812345678",
        "pair": [0, ""],
    }


def test_a_contract_is_compiled_once_per_type() -> None:
    assert compile_contract(Outer) is compile_contract(Outer)
    assert compile_contract(list[Inner]) is compile_contract(list[Inner])


class Rank(IntEnum):
    LOW = 1
    HIGH = 2


class Setting(Enum):
    ONE = 1
    NAMED = "named"


@dataclass
class Choices:
    level: Literal[1, 2] = 1
    rank: Rank = Rank.LOW
    setting: Setting = Setting.ONE
    flag: Literal[True] = True
    either: Literal[True, 2] = 2


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        ('{"level": true}', "input should be 1 or 2, not a boolean (got true)"),
        ('{"rank": true}', "input should be 1 or 2, not a boolean (got true)"),
        ('{"setting": true}', "input should be 1 or 'named', not a boolean (got true)"),
        ('{"flag": 1}', "input should be True, not a number (got 1)"),
        ('{"either": 1}', "input should be True or 2 (got 1)"),
    ],
)
def test_a_boolean_never_matches_a_number_in_literals_and_enums(payload: str, reason: str) -> None:
    field_name = next(iter(json.loads(payload)))
    assert problems(Choices, payload) == [(field_name, reason)]


def test_literals_and_enums_still_take_their_own_values() -> None:
    payload = '{"level": 2, "rank": 2.0, "setting": 1, "flag": true, "either": true}'
    assert compile_contract(Choices).parse(payload) == Choices(
        level=2, rank=Rank.HIGH, setting=Setting.ONE, flag=True, either=True
    )


@dataclass
class Tags:
    ids: set[int] = field(default_factory=set)
    frozen: frozenset[str] = frozenset()
    groups: set[tuple[int, ...]] = field(default_factory=set)


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        ('{"ids": [1, 2, 1]}', "array items should be unique: item 2 repeats item 0 (got [1,2,1])"),
        ('{"ids": [3, 3.0]}', "array items should be unique: item 1 repeats item 0 (got [3,3.0])"),
        (
            '{"frozen": ["a", "a"]}',
            'array items should be unique: item 1 repeats item 0 (got ["a","a"])',
        ),
    ],
)
def test_a_repeated_set_item_is_refused_not_dropped(payload: str, reason: str) -> None:
    field_name = next(iter(json.loads(payload)))
    assert problems(Tags, payload) == [(field_name, reason)]


def test_distinct_set_items_parse_into_a_set_and_a_frozenset() -> None:
    parsed = compile_contract(Tags).parse(
        '{"ids": [2, 1], "frozen": ["a"], "groups": [[1], [1, 2]]}'
    )
    assert parsed == Tags(ids={1, 2}, frozen=frozenset({"a"}), groups={(1,), (1, 2)})
    assert (type(parsed.ids), type(parsed.frozen)) == (set, frozenset)


def test_a_set_item_that_breaks_its_type_is_located_by_index() -> None:
    assert problems(Tags, '{"ids": [1, "x"]}') == [
        ("ids[1]", 'input should be a valid integer (got "x")')
    ]


# --- pydantic and jsonschema agree on what a payload is ---------------------------------

TEXT = st.text(st.characters(codec="utf-8"), max_size=6)  # no lone surrogates
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | TEXT,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(TEXT, children, max_size=3),
    max_leaves=6,
).filter(lambda value: value not in (float("inf"), float("-inf")))
NOT_NULL = JSON_VALUES.filter(lambda value: value is not None)
NUMBERS = st.integers(-5, 5) | st.floats(-5, 5, allow_nan=False) | st.sampled_from([2.0, -0.0])


@dataclass
class Leaf:
    count: int
    ratio: float
    flag: bool = False
    label: str | None = None
    mode: Literal["a", "b"] = "a"
    amount: int | float | str | None = None
    level: Literal[1, 2] = 1
    rank: Rank = Rank.LOW


@dataclass
class Branch:
    leaf: Leaf
    leaves: list[Leaf] = field(default_factory=list)
    weights: dict[str, int] = field(default_factory=dict)
    pair: tuple[int, str] | None = None
    ids: set[int] = field(default_factory=set)


def _object(required: dict[str, Any], optional: dict[str, Any]) -> Any:
    """Objects with the given fields, sometimes with an unknown key added."""
    base = st.fixed_dictionaries(required, optional=optional)
    return base | st.builds(lambda value, extra: {**value, "unknown": extra}, base, JSON_VALUES)


# Defaulted fields whose type refuses null draw from NOT_NULL: null there means "the
# default" to the parser on purpose, while the schema shown to models refuses it.
LEAVES = _object(
    {"count": NUMBERS | JSON_VALUES, "ratio": NUMBERS | JSON_VALUES},
    {
        "flag": st.booleans() | NOT_NULL,
        "label": TEXT | JSON_VALUES,
        "mode": st.sampled_from(["a", "b", "c"]) | NOT_NULL,
        "amount": NUMBERS | JSON_VALUES,
        "level": NUMBERS | st.booleans() | NOT_NULL,
        "rank": NUMBERS | st.booleans() | NOT_NULL,
    },
)
BRANCHES = _object(
    {"leaf": LEAVES | JSON_VALUES},
    {
        "leaves": st.lists(LEAVES, max_size=2) | NOT_NULL,
        "weights": st.dictionaries(TEXT, NUMBERS, max_size=2) | NOT_NULL,
        "pair": st.tuples(NUMBERS, TEXT).map(list) | JSON_VALUES,
        "ids": st.lists(st.integers(0, 2) | st.sampled_from([1.0, True]), max_size=3) | NOT_NULL,
    },
)


@dataclass
class Picks:
    level: Literal[1, 2] = 1
    rank: Rank = Rank.LOW
    flag: Literal[True] = True
    ids: set[int] = field(default_factory=set)


# Values that Python equality confuses (True == 1 == 1.0) but JSON Schema keeps apart.
LOOKALIKES = st.sampled_from([0, 1, 2, 1.0, 2.5, True, False, "1"])
# One field per payload, so that each lookalike meets each field within a short run.
PICKS = st.one_of(
    *(st.fixed_dictionaries({name: LOOKALIKES}) for name in ("level", "rank", "flag")),
    st.fixed_dictionaries({"ids": st.lists(LOOKALIKES, max_size=3)}),
)


def _accepted_by_pydantic(contract_type: Any, payload: Any) -> bool:
    try:
        compile_contract(contract_type).parse(json.dumps(payload))
    except ContractViolation:
        return False
    return True


@given(LEAVES)
def test_pydantic_and_jsonschema_agree_on_flat_payloads(payload: dict[str, Any]) -> None:
    schema = compile_contract(Leaf).input_schema
    assert _accepted_by_pydantic(Leaf, payload) == schema_validator(schema).is_valid(payload)


@given(PICKS)
def test_pydantic_and_jsonschema_agree_on_literals_enums_and_sets(payload: dict[str, Any]) -> None:
    schema = compile_contract(Picks).input_schema
    assert _accepted_by_pydantic(Picks, payload) == schema_validator(schema).is_valid(payload)


@given(BRANCHES)
def test_pydantic_and_jsonschema_agree_on_nested_payloads(payload: dict[str, Any]) -> None:
    schema = compile_contract(Branch).input_schema
    assert _accepted_by_pydantic(Branch, payload) == schema_validator(schema).is_valid(payload)


@given(BRANCHES)
def test_a_parsed_payload_dumps_to_json_that_parses_to_the_same_value(
    payload: dict[str, Any],
) -> None:
    contract = compile_contract(Branch)
    try:
        value = contract.parse(json.dumps(payload))
    except ContractViolation:
        return
    assert contract.parse(contract.dump_json(value)) == value


def test_an_unknown_discriminator_tag_is_reported_on_the_tag_field_with_the_allowed_tags() -> None:
    assert problems(Home, '{"pet": {"kind": "cow"}}') == [
        ("pet.kind", "input should be one of 'cat', 'dog' (got \"cow\")")
    ]


def test_a_missing_discriminator_tag_is_reported_on_the_tag_field_with_the_allowed_tags() -> None:
    assert problems(Home, '{"pet": {"lives": 1}}') == [
        ("pet.kind", "required field is missing (one of 'cat', 'dog')")
    ]


@dataclass
class Sized:
    names: Annotated[list[str], Field(max_length=1)] = field(default_factory=list)
    labels: Annotated[dict[str, int], Field(min_length=1)] = field(default_factory=dict)


@pytest.mark.parametrize(
    ("payload", "problem"),
    [
        (
            '{"names": ["a", "b"]}',
            ("names", 'array should have at most 1 item, not 2 (got ["a","b"])'),
        ),
        ('{"labels": {}}', ("labels", "object should have at least 1 item, not 0 (got {})")),
    ],
)
def test_size_limits_speak_of_json_arrays_and_objects(
    payload: str, problem: tuple[str, str]
) -> None:
    assert problems(Sized, payload) == [problem]


def test_a_rejected_value_that_is_not_json_data_is_shown_by_its_repr() -> None:
    with pytest.raises(ValidationError) as raised:
        TypeAdapter(int).validate_python(b"\xff", strict=True)
    assert problems_from_validation_error(raised.value, {"type": "integer"}) == (
        FieldProblem("<root>", "input should be a valid integer (got b'\\xff')"),
    )
