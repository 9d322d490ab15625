"""Schema, parser and provider agree: each shape's exact schema, and the exact outcome of
parsing payloads that the schema allows and payloads that it forbids."""

from __future__ import annotations

import collections
import collections.abc as abc
import dataclasses
import datetime
import ipaddress
import json
import uuid
from decimal import Decimal
from typing import Annotated, Any, Literal, NamedTuple

import pytest
from inline_snapshot import snapshot
from jsonschema import Draft202012Validator
from pydantic import (
    AliasChoices,
    AnyUrl,
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    HttpUrl,
    NaiveDatetime,
    Tag,
)
from pydantic.dataclasses import dataclass as pydantic_dataclass
from pydantic.types import UUID4
from typing_extensions import TypedDict

from wink import Tool
from wink.contract import (
    DEFAULT_MAX_BYTES,
    ContractViolation,
    compile_contract,
    schema_validator,
)
from wink.contract._core_schema import reads_arguments_text
from wink.contract._formats import DURATION_PATTERN, NAIVE_DATETIME_PATTERN, NAIVE_TIME_PATTERN
from wink.contract._json_text import KeyNames
from wink.errors import PromptValidationError
from wink.providers import anthropic, openai


def problems(contract_type: Any, payload: str | bytes) -> list[str]:
    """Parse ``payload`` expecting failure; return the problems as ``path: reason``."""
    with pytest.raises(ContractViolation) as raised:
        compile_contract(contract_type).parse(payload)
    return [str(problem) for problem in raised.value.problems]


def schema_accepts(contract_type: Any, payload: str) -> bool:
    return schema_validator(compile_contract(contract_type).input_schema).is_valid(
        json.loads(payload)
    )


def refused_at_compile(contract_type: Any) -> str:
    with pytest.raises(PromptValidationError) as raised:
        compile_contract(contract_type)
    return str(raised.value)


# Abstract collections ---------------------------------------------------------------------


class Collections(BaseModel):
    sequence: abc.Sequence[int]
    mutable_sequence: abc.MutableSequence[int]
    abstract_set: abc.Set[int]
    mutable_set: abc.MutableSet[int]
    mapping: abc.Mapping[str, int]
    mutable_mapping: abc.MutableMapping[str, int]
    nested: abc.Mapping[str, abc.Sequence[str]]
    queue: collections.deque[int]
    counts: collections.Counter[str]


COLLECTIONS_PAYLOAD = json.dumps(
    {
        "sequence": [1, 2],
        "mutable_sequence": [3],
        "abstract_set": [4, 5],
        "mutable_set": [6],
        "mapping": {"a": 1},
        "mutable_mapping": {"b": 2},
        "nested": {"c": ["x"]},
        "queue": [7],
        "counts": {"d": 3},
    }
)


def test_abstract_collections_compile_to_arrays_and_objects() -> None:
    assert compile_contract(Collections).input_schema == snapshot(
        {
            "properties": {
                "sequence": {"items": {"type": "integer"}, "type": "array"},
                "mutable_sequence": {"items": {"type": "integer"}, "type": "array"},
                "abstract_set": {
                    "items": {"type": "integer"},
                    "type": "array",
                    "uniqueItems": True,
                },
                "mutable_set": {"items": {"type": "integer"}, "type": "array", "uniqueItems": True},
                "mapping": {"additionalProperties": {"type": "integer"}, "type": "object"},
                "mutable_mapping": {"additionalProperties": {"type": "integer"}, "type": "object"},
                "nested": {
                    "additionalProperties": {"items": {"type": "string"}, "type": "array"},
                    "type": "object",
                },
                "queue": {"items": {"type": "integer"}, "type": "array"},
                "counts": {"additionalProperties": {"type": "integer"}, "type": "object"},
            },
            "required": [
                "sequence",
                "mutable_sequence",
                "abstract_set",
                "mutable_set",
                "mapping",
                "mutable_mapping",
                "nested",
                "queue",
                "counts",
            ],
            "type": "object",
            "additionalProperties": False,
        }
    )


def test_abstract_collections_parse_into_what_pydantic_gives() -> None:
    value = compile_contract(Collections).parse(COLLECTIONS_PAYLOAD)
    assert value.sequence == [1, 2] and type(value.sequence) is list
    assert value.mutable_sequence == [3] and type(value.mutable_sequence) is list
    assert value.abstract_set == frozenset({4, 5}) and type(value.abstract_set) is frozenset
    assert value.mutable_set == {6} and type(value.mutable_set) is set
    assert value.mapping == {"a": 1} and type(value.mapping) is dict
    assert value.mutable_mapping == {"b": 2}
    assert value.nested == {"c": ["x"]}
    assert value.queue == collections.deque([7])
    assert value.counts == collections.Counter({"d": 3})


def test_abstract_collections_refuse_what_their_schema_refuses() -> None:
    payload = json.loads(COLLECTIONS_PAYLOAD)
    payload.update(sequence="12", mapping={"a": "1"}, abstract_set=[4, 4])
    text = json.dumps(payload)
    assert not schema_accepts(Collections, text)
    assert problems(Collections, text) == [
        'sequence: input should be a valid array (got "12")',
        "abstract_set: array items should be unique: item 1 repeats item 0 (got [4,4])",
        'mapping.a: input should be a valid integer (got "1")',
    ]


def test_a_tool_takes_a_sequence_field() -> None:
    tool = Tool[Collections, None](name="collections", description="Abstract collections.")
    assert tool.params_contract.parse(COLLECTIONS_PAYLOAD).sequence == [1, 2]


@dataclasses.dataclass
class Holder:
    items: abc.Collection[int]


def test_a_collection_pydantic_cannot_validate_is_refused_naming_the_field() -> None:
    assert refused_at_compile(Holder) == snapshot(
        "Holder.items: a field type cannot be sent or received as JSON (Unable to generate "
        "pydantic-core schema for collections.abc.Collection[int])"
    )


# Patterns a strict dialect cannot compile -------------------------------------------------


class Prices(BaseModel):
    model_config = ConfigDict(regex_engine="python-re")

    amount: Annotated[str, Field(pattern=r"(?<=USD)\d+")]
    code: Annotated[str, Field(pattern=r"^[A-Z]{3}$")]


PRICES = Tool[Prices, None](name="prices", description="Prices with patterns.")


def _function(spec: Any) -> Any:
    return spec["function"]


def test_strict_auto_sends_a_tool_with_look_around_non_strict_with_its_pattern() -> None:
    function = _function(openai.tool_specs([PRICES])[0])
    assert function["strict"] is False
    assert function["parameters"]["properties"]["amount"] == {
        "pattern": r"(?<=USD)\d+",
        "type": "string",
    }
    assert openai.strict_issues(PRICES) == [
        "amount: pattern uses look-around, which OpenAI strict mode does not support; "
        "moved into the description"
    ]


def test_strict_true_moves_a_look_around_pattern_into_the_description_and_keeps_the_rest() -> None:
    function = _function(openai.tool_specs([PRICES], strict=True)[0])
    assert function["strict"] is True
    assert function["parameters"] == snapshot(
        {
            "properties": {
                "amount": {
                    "type": "string",
                    "description": 'JSON Schema: {"pattern": "(?<=USD)\\\\d+"}',
                },
                "code": {"pattern": "^[A-Z]{3}$", "type": "string"},
            },
            "required": ["amount", "code"],
            "type": "object",
            "additionalProperties": False,
        }
    )


@pytest.mark.parametrize(
    ("pattern", "problem"),
    [
        (r"(?<=USD)\d+", "look-around"),
        (r"(?<!x)y", "look-around"),
        (r"\d+(?!USD)", "look-around"),
        (r"a(?=b)", "look-around"),
        (r"(a)\1", "a backreference"),
        (r"(a)(?P=x)", "a backreference"),
        (r"(?<x>a)\k<x>", "a backreference"),
        (r"a++", "a possessive quantifier"),
        (r"a*+", "a possessive quantifier"),
        (r"a?+", "a possessive quantifier"),
        (r"a{2}+", "a possessive quantifier"),
        (r"(?>ab)", "an atomic group"),
        (r"(?(1)a|b)", "a conditional"),
        (r"(?i)abc", "inline flags"),
        (r"(?P<x>a)", "a Python named group (write (?<name>...))"),
        (r"\Aabc", r"the anchor \A (not JSON Schema syntax)"),
        (r"abc\Z", r"the anchor \Z (not JSON Schema syntax)"),
        (r"(?#note)a", "a comment group"),
        (r"^[a-z]+$", None),
        (r"a+?", None),
        (r"(?:ab)+", None),
        (r"\(?=x", None),
        (r"[(?=]", None),
        (r"[\]a]+", None),
        (r"(?<name>a)", None),
    ],
)
def test_each_non_portable_regex_feature_is_named(pattern: str, problem: str | None) -> None:
    from wink.providers._strict import pattern_problem

    assert pattern_problem(pattern) == problem


def test_anthropic_strict_moves_every_pattern_into_the_description() -> None:
    schema = anthropic.tool_specs([PRICES], strict=True)[0]["input_schema"]
    assert schema["properties"]["code"] == {
        "type": "string",
        "description": 'JSON Schema: {"pattern": "^[A-Z]{3}$"}',
    }


# Mappings with patterned keys ------------------------------------------------------------


class Labels(BaseModel):
    labels: dict[Annotated[str, Field(pattern=r"^x-")], str]


def test_a_mapping_with_patterned_keys_is_closed_to_other_keys() -> None:
    assert compile_contract(Labels).input_schema == snapshot(
        {
            "properties": {
                "labels": {
                    "patternProperties": {"^x-": {"type": "string"}},
                    "type": "object",
                    "additionalProperties": False,
                }
            },
            "required": ["labels"],
            "type": "object",
            "additionalProperties": False,
        }
    )


def test_a_key_matching_no_pattern_is_refused_by_schema_and_parser() -> None:
    text = '{"labels": {"other": "v"}}'
    assert not schema_accepts(Labels, text)
    assert problems(Labels, text) == [
        "labels.other: key should match pattern '^x-' (got \"other\")"
    ]
    good = '{"labels": {"x-a": "v"}}'
    assert schema_accepts(Labels, good)
    assert compile_contract(Labels).parse(good).labels == {"x-a": "v"}


# Alias choices ---------------------------------------------------------------------------


class Place(BaseModel):
    city: str = Field(validation_alias=AliasChoices("argument", "town"))


def test_alias_choices_parse_only_the_name_the_schema_shows() -> None:
    assert compile_contract(Place).input_schema == snapshot(
        {
            "properties": {"argument": {"type": "string"}},
            "required": ["argument"],
            "type": "object",
            "additionalProperties": False,
        }
    )
    assert compile_contract(Place).parse('{"argument": "Oslo"}').city == "Oslo"
    assert problems(Place, '{"town": "Oslo"}') == [
        "argument: required field is missing",
        "town: unknown field (allowed: argument)",
    ]
    assert not schema_accepts(Place, '{"town": "Oslo"}')


@pydantic_dataclass
class PlaceDataclass:
    city: Annotated[str, Field(validation_alias=AliasChoices("argument", "town"))]


class PlaceDict(TypedDict):
    city: Annotated[str, Field(validation_alias=AliasChoices("argument", "town"))]


@pytest.mark.parametrize("contract_type", [PlaceDataclass, PlaceDict])
def test_alias_choices_of_dataclasses_and_typed_dicts_parse_only_the_shown_name(
    contract_type: Any,
) -> None:
    assert list(compile_contract(contract_type).input_schema["properties"]) == ["argument"]
    assert problems(contract_type, '{"town": "Oslo"}') == [
        "argument: required field is missing",
        "town: unknown field (allowed: argument)",
    ]


# Sets of unhashable items ----------------------------------------------------------------


class Entry(TypedDict):
    name: str


class Mutable(BaseModel):
    name: str


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str


class FrozenHoldingList(BaseModel):
    model_config = ConfigDict(frozen=True)

    names: list[str]


@dataclasses.dataclass
class PlainData:
    name: str


@dataclasses.dataclass(frozen=True)
class FrozenData:
    name: str


class SetOfTypedDicts(BaseModel):
    entries: set[Entry]


class FrozensetOfModels(BaseModel):
    entries: frozenset[Mutable]


class SetOfDicts(BaseModel):
    entries: set[dict[str, int]]  # type: ignore[type-var]  # the unhashable shape under test


class SetOfLists(BaseModel):
    entries: frozenset[list[int]]  # type: ignore[type-var]  # the unhashable shape under test


class SetOfAny(BaseModel):
    entries: set[Any]


class SetOfTuplesOfDicts(BaseModel):
    entries: set[tuple[int, Entry]]


class SetOfDataclasses(BaseModel):
    entries: set[PlainData]


class SetOfFrozenHoldingList(BaseModel):
    entries: set[FrozenHoldingList]


class SetOfUnion(BaseModel):
    entries: set[int | Entry]


@pytest.mark.parametrize(
    ("contract_type", "message"),
    [
        (SetOfTypedDicts, "SetOfTypedDicts.entries: a set cannot hold objects (TypedDicts)"),
        (
            FrozensetOfModels,
            "FrozensetOfModels.entries: a set cannot hold Mutable objects (a model that is "
            "not frozen)",
        ),
        (SetOfDicts, "SetOfDicts.entries: a set cannot hold objects (dicts)"),
        (SetOfLists, "SetOfLists.entries: a set cannot hold arrays (lists)"),
        (
            SetOfAny,
            "SetOfAny.entries: a set cannot hold any JSON value, arrays and objects included",
        ),
        (SetOfTuplesOfDicts, "SetOfTuplesOfDicts.entries: a set cannot hold objects (TypedDicts)"),
        (
            SetOfDataclasses,
            "SetOfDataclasses.entries: a set cannot hold PlainData objects (a dataclass that "
            "is not frozen)",
        ),
        (
            SetOfFrozenHoldingList,
            "SetOfFrozenHoldingList.entries: a set cannot hold FrozenHoldingList objects "
            "(field names holds arrays (lists))",
        ),
        (SetOfUnion, "SetOfUnion.entries: a set cannot hold objects (TypedDicts)"),
    ],
)
def test_a_set_of_unhashable_items_is_refused_at_construction_naming_the_field(
    contract_type: Any, message: str
) -> None:
    assert refused_at_compile(contract_type) == (
        f"{message}, since they are not hashable, so no non-empty array would parse; "
        "use a list, or frozen items"
    )


class SetOfFrozen(BaseModel):
    models: frozenset[Frozen]
    data: set[FrozenData]
    pairs: set[tuple[int, str]]


def test_a_set_of_frozen_models_dataclasses_and_tuples_parses() -> None:
    value = compile_contract(SetOfFrozen).parse(
        '{"models": [{"name": "a"}], "data": [{"name": "b"}], "pairs": [[1, "c"]]}'
    )
    assert value.models == frozenset({Frozen(name="a")})
    assert value.data == {FrozenData("b")}
    assert value.pairs == {(1, "c")}


# Callable discriminators -----------------------------------------------------------------


class Cat(BaseModel):
    kind: Literal["cat"] = "cat"
    lives: int = 9


class Dog(BaseModel):
    kind: Literal["dog"] = "dog"
    good: bool = True


def _python_only(value: Any) -> str:
    return "cat" if isinstance(value, Cat) else "dog"


def _reads_dicts_too(value: Any) -> Any:
    return value.get("kind") if isinstance(value, dict) else value.kind


class PythonOnlyTag(BaseModel):
    pet: Annotated[
        Annotated[Cat, Tag("cat")] | Annotated[Dog, Tag("dog")], Discriminator(_python_only)
    ]


class DictTag(BaseModel):
    pet: Annotated[
        Annotated[Cat, Tag("cat")] | Annotated[Dog, Tag("dog")], Discriminator(_reads_dicts_too)
    ]


def test_a_discriminator_that_json_objects_can_never_satisfy_is_refused_naming_the_field() -> None:
    assert refused_at_compile(PythonOnlyTag) == (
        "PythonOnlyTag.pet: the callable discriminator returns 'cat' for a model or "
        "dataclass instance but not for the JSON object that parsing gives it, so that "
        "branch could never be chosen from JSON; read the tag from a dict too "
        "(v.get('kind') for a dict), or use Field(discriminator='kind')"
    )


def test_a_discriminator_that_reads_dicts_parses_every_branch() -> None:
    contract = compile_contract(DictTag)
    assert contract.parse('{"pet": {"kind": "cat"}}').pet == Cat()
    assert contract.parse('{"pet": {"kind": "dog", "good": false}}').pet == Dog(good=False)


# Dates, times and durations --------------------------------------------------------------


class Moments(BaseModel):
    at: datetime.datetime
    day: datetime.date
    clock: datetime.time
    span: datetime.timedelta
    aware: AwareDatetime
    naive: NaiveDatetime


MOMENTS = {
    "at": "2024-05-01T10:20:30Z",
    "day": "2024-05-01",
    "clock": "10:20:30+02:00",
    "span": "P1DT2H",
    "aware": "2024-05-01T10:20:30.5-01:00",
    "naive": "2024-05-01T10:20:30",
}


def test_dates_and_times_show_what_parsing_reads() -> None:
    naive_time = {"pattern": NAIVE_TIME_PATTERN, "type": "string"}
    naive = {"pattern": NAIVE_DATETIME_PATTERN, "type": "string"}
    assert compile_contract(Moments).input_schema["properties"] == {
        "at": {"anyOf": [{"format": "date-time", "type": "string"}, naive]},
        "day": {"format": "date", "type": "string"},
        "clock": {"anyOf": [{"format": "time", "type": "string"}, naive_time]},
        "span": {"pattern": DURATION_PATTERN, "type": "string"},
        "aware": {"format": "date-time", "type": "string"},
        "naive": naive,
    }
    assert (
        snapshot("^(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\\.[0-9]+)?$") == NAIVE_TIME_PATTERN
    )
    assert (
        snapshot(
            "^-?P(?:[0-9]+W|(?=[0-9]|T[0-9])(?:[0-9]+Y)?(?:[0-9]+M)?(?:[0-9]+D)?(?:T(?=[0-9])"
            "(?:[0-9]+H)?(?:[0-9]+M)?(?:[0-9]+(?:\\.[0-9]+)?S)?)?)$"
        )
        == DURATION_PATTERN
    )


def test_values_in_the_formats_parse() -> None:
    value = compile_contract(Moments).parse(json.dumps(MOMENTS))
    assert value.at == datetime.datetime(2024, 5, 1, 10, 20, 30, tzinfo=datetime.UTC)
    assert value.clock.utcoffset() == datetime.timedelta(hours=2)
    assert value.span == datetime.timedelta(days=1, hours=2)
    assert value.naive == datetime.datetime(2024, 5, 1, 10, 20, 30)
    assert value.aware.microsecond == 500000


def test_naive_dates_and_times_and_negative_durations_round_trip() -> None:
    contract = compile_contract(Moments)
    value = contract.parse(
        json.dumps({**MOMENTS, "at": "2024-05-01T10:20:30", "clock": "10:20:30", "span": "-PT0.5S"})
    )
    assert value.at.tzinfo is None and value.clock.tzinfo is None
    assert value.span == datetime.timedelta(seconds=-0.5)
    assert contract.parse(contract.dump_json(value)) == value


@pytest.mark.parametrize(
    ("field", "sent", "problem"),
    [
        (
            "at",
            "1700000000",
            "at: input should be an RFC 3339 date-time, with or without a UTC offset, such as "
            '2024-05-01T10:20:30Z (got "1700000000")',
        ),
        (
            "at",
            "2024-05-01 10:20:30Z",
            "at: input should be an RFC 3339 date-time, with or without a UTC offset, such as "
            '2024-05-01T10:20:30Z (got "2024-05-01 10:20:30Z")',
        ),
        (
            "aware",
            "2024-05-01T10:20:30",
            "aware: input should be an RFC 3339 date-time with a UTC offset, such as "
            '2024-05-01T10:20:30Z (got "2024-05-01T10:20:30")',
        ),
        (
            "clock",
            "10:20",
            "clock: input should be an RFC 3339 time, with or without a UTC offset, such as "
            '10:20:30+02:00 (got "10:20")',
        ),
        (
            "span",
            "1 day, 01:00:00",
            'span: input should be an ISO 8601 duration, such as P1DT2H (got "1 day, 01:00:00")',
        ),
        ("span", "PT", 'span: input should be an ISO 8601 duration, such as P1DT2H (got "PT")'),
        (
            "naive",
            "2024-05-01T10:20:30Z",
            "naive: input should be a date-time without a UTC offset, such as "
            '2024-05-01T10:20:30 (got "2024-05-01T10:20:30Z")',
        ),
        (
            "day",
            "2024-05-41",
            'day: input should be an RFC 3339 full-date, such as 2024-05-01 (got "2024-05-41")',
        ),
        (
            "day",
            "2023-02-29",
            "day: input should be a valid date or datetime, day value is outside expected "
            'range (got "2023-02-29")',
        ),
    ],
)
def test_values_outside_the_formats_are_refused_by_the_parser(
    field: str, sent: str, problem: str
) -> None:
    assert problems(Moments, json.dumps({**MOMENTS, field: sent})) == [problem]


def test_a_naive_value_against_the_naive_pattern_is_refused_by_the_schema_too() -> None:
    assert not schema_accepts(Moments, json.dumps({**MOMENTS, "naive": "2024-05-01T10:20:30Z"}))
    assert schema_accepts(Moments, json.dumps(MOMENTS))


# Decimals --------------------------------------------------------------------------------


class Price(BaseModel):
    amount: Decimal


def test_a_decimal_string_branch_has_the_pattern_parsing_enforces() -> None:
    assert compile_contract(Price).input_schema["properties"]["amount"] == snapshot(
        {
            "anyOf": [
                {"type": "number"},
                {
                    "pattern": "^-?(?:0|[1-9][0-9]*)(?:\\.[0-9]+)?(?:[eE][+-]?[0-9]{1,9})?$",
                    "type": "string",
                },
            ]
        }
    )
    assert compile_contract(Price).output_schema["properties"]["amount"] == {"type": "string"}


@pytest.mark.parametrize("sent", ['""', '"one"', '" 1"', '"1_000"', '"NaN"', '"+1"', '".5"'])
def test_a_decimal_string_that_is_not_a_json_number_is_refused_by_schema_and_parser(
    sent: str,
) -> None:
    text = f'{{"amount": {sent}}}'
    assert not schema_accepts(Price, text)
    assert problems(Price, text) == [
        f"amount: input should be a decimal number, such as 12.50 (got {sent})"
    ]


@pytest.mark.parametrize(
    ("sent", "parsed"),
    [
        ('"12.50"', Decimal("12.50")),
        ('"-1e3"', Decimal("-1E+3")),
        ("2.5", Decimal("2.5")),
        ("3", 3),
    ],
)
def test_a_decimal_as_a_number_or_a_number_string_parses(sent: str, parsed: Decimal) -> None:
    text = f'{{"amount": {sent}}}'
    assert schema_accepts(Price, text)
    assert compile_contract(Price).parse(text).amount == parsed


def test_a_decimal_field_refuses_a_boolean() -> None:
    assert problems(Price, '{"amount": true}') == [
        "amount: input should be a decimal number, such as 12.50 (got true)"
    ]


def test_decimal_schemas_are_accepted_by_every_strict_dialect_with_the_pattern() -> None:
    tool = Tool[Price, None](name="price", description="A decimal amount.")
    parameters = _function(openai.tool_specs([tool], strict=True)[0])["parameters"]
    assert parameters["properties"]["amount"]["anyOf"][1]["pattern"].startswith("^-?")
    assert openai.strict_issues(tool) == []


# Integers --------------------------------------------------------------------------------


class Count(BaseModel):
    count: int


@pytest.mark.parametrize(
    ("sent", "rounded"),
    [
        ("1e-400", "0"),
        ("100.0000000000000001", "100"),
        ("-1e-400", "0"),
        ("1e-330", "0"),
    ],
)
def test_a_number_that_only_rounds_to_an_integer_is_refused(sent: str, rounded: str) -> None:
    assert problems(Count, f'{{"count": {sent}}}') == [
        "count: input should be an integer; the number sent is not exactly one "
        f"(it only rounds to {rounded})"
    ]


@pytest.mark.parametrize(
    ("sent", "parsed"),
    [
        ("3.0", 3),
        ("1e2", 100),
        ("9007199254740992.0", 9007199254740992),
        ("-0.0", 0),
        # Written exactly, though a float cannot hold it: the field gets what was written.
        ("9007199254740993.0", 9007199254740993),
        ("3.661431662591163e+16", 36614316625911630),
        ("1.00000000000000001e17", 100000000000000001),
    ],
)
def test_a_number_that_is_exactly_an_integer_is_one(sent: str, parsed: int) -> None:
    value = compile_contract(Count).parse(f'{{"count": {sent}}}').count
    assert (type(value), value) == (int, parsed)


def test_a_float_too_large_for_its_digits_parses_as_the_integer_json_schema_accepts() -> None:
    payload = {"count": 3.661431662591163e16}
    assert schema_validator(compile_contract(Count).input_schema).is_valid(payload)
    assert compile_contract(Count).parse(json.dumps(payload)).count == 36614316625911630


def test_different_numbers_that_read_as_one_float_are_refused_as_ambiguous() -> None:
    assert problems(
        Counts, '{"counts": [{"count": 9007199254740993.0}, {"count": 9007199254740992.0}]}'
    ) == [
        f"counts[{index}].count: input should be an integer written without a fraction or "
        "exponent: different numbers of these arguments read as 9007199254740992, so which "
        "one this is is not known"
        for index in (0, 1)
    ]


def test_a_literal_integer_sent_as_an_exact_large_float_is_that_literal() -> None:
    class Big(BaseModel):
        size: Literal[9007199254740993]

    assert compile_contract(Big).parse('{"size": 9007199254740993.0}').size == 9007199254740993
    assert problems(Big, '{"size": 9007199254740992.0}') == [
        "size: input should be 9007199254740993 (got 9007199254740992.0)"
    ]


def test_a_lossy_number_in_a_string_does_not_affect_an_exact_one() -> None:
    class Both(BaseModel):
        count: int
        note: str

    value = compile_contract(Both).parse('{"count": 0.0, "note": "1e-400"}')
    assert (value.count, value.note) == (0, "1e-400")


class Counts(BaseModel):
    counts: list[Count]


class OneOrTwo(BaseModel):
    level: Literal[1, 2]


class Tagged(BaseModel):
    label: Literal["a", "b"]
    on: bool = False
    day: datetime.date | None = None


@pytest.mark.parametrize(
    ("contract_type", "reads"),
    [(Count, True), (Counts, True), (Price, True), (OneOrTwo, True), (Tagged, False)],
)
def test_only_a_type_with_a_check_reading_the_json_text_is_given_it_when_parsing(
    contract_type: Any, reads: bool
) -> None:
    assert reads_arguments_text(compile_contract(contract_type)._core) is reads


def test_a_lossy_number_deep_in_an_array_is_refused() -> None:
    assert problems(Counts, '{"counts": [{"count": 1}, {"count": 1e-400}]}') == [
        "counts[1].count: input should be an integer; the number sent is not exactly one "
        "(it only rounds to 0)"
    ]


# Repeated keys ---------------------------------------------------------------------------


class Item(BaseModel):
    name: str
    tags: dict[str, int] = {}


class Basket(BaseModel):
    items: list[Item]


@pytest.mark.parametrize(
    ("payload", "problem"),
    [
        (
            '{"name": "a", "name": "b"}',
            '<root>: key "name" appears more than once; send each key once (a repeated key '
            "is ambiguous)",
        ),
        (
            '{"name": "a", "tags": {"x": 1, "x": 2}}',
            'tags: key "x" appears more than once; send each key once (a repeated key is '
            "ambiguous)",
        ),
        (
            '{"name": "a", "n\\u0061me": "b"}',
            '<root>: key "name" appears more than once; send each key once (a repeated key '
            "is ambiguous)",
        ),
    ],
)
def test_a_repeated_key_is_refused_naming_the_key(payload: str, problem: str) -> None:
    assert problems(Item, payload) == [problem]


def test_a_repeated_key_deep_in_an_array_is_located() -> None:
    payload = '{"items": [{"name": "a"}, {"name": "b", "tags": {"t": 1}, "name": "c"}]}'
    assert problems(Basket, payload) == [
        'items[1]: key "name" appears more than once; send each key once (a repeated key '
        "is ambiguous)"
    ]


def test_keys_shared_by_sibling_objects_are_not_repeats() -> None:
    payload = '{"items": [{"name": "a", "tags": {"name": 1}}, {"name": "b"}]}'
    assert [item.name for item in compile_contract(Basket).parse(payload).items] == ["a", "b"]


def test_a_repeated_key_is_found_in_bytes_too() -> None:
    assert problems(Item, b'{"name": "a", "name": "b"}') == [
        '<root>: key "name" appears more than once; send each key once (a repeated key '
        "is ambiguous)"
    ]


def test_a_key_written_inside_a_string_value_is_not_a_key() -> None:
    value = compile_contract(Item).parse('{"name": "\\"name\\": 1"}')
    assert value.name == '"name": 1'


class Closed(BaseModel):
    name: str
    note: str = ""


_NAME_REPEATED = (
    '<root>: key "name" appears more than once; send each key once (a repeated key is ambiguous)'
)


@pytest.mark.parametrize(
    "payload",
    [
        '{"name":"a","name":"b"}',
        '{"name": "a", "note": "x", "name": "b"}',
        '{"name" : "a", "name" : "b"}',
        b'{"name":"a","note":"name","name":"b"}',
    ],
)
def test_a_closed_model_refuses_a_repeated_key_however_it_is_written(
    payload: str | bytes,
) -> None:
    assert problems(Closed, payload) == [_NAME_REPEATED]


def test_a_name_written_once_as_a_key_and_once_as_a_value_is_not_a_repeat() -> None:
    value = compile_contract(Closed).parse('{"name":"note","note":"name"}')
    assert (value.name, value.note) == ("note", "name")


@pytest.mark.parametrize(
    ("text", "unique"),
    [
        ('{"name": "name"}', True),  # one colon: at most one key
        (b'{"name": "name"}', True),
        ('{"name":"name","note":"x"}', True),  # the second "name" is no key
        ('{"name" :"name","note":"x"}', False),  # a quote before space: every "name" counts
        ('{"name":"a","note":"\\u0041"}', False),  # an escape may spell a name
        ('{"name":"a","name":"b"}', False),
        (b'{"name":"a","name":"b"}', False),
    ],
)
def test_the_quick_repeated_key_pass_settles_only_texts_that_cannot_repeat_a_key(
    text: str | bytes, unique: bool
) -> None:
    assert KeyNames(["name", "note"]).unique_in(text) is unique


# Lone surrogates and text limits ---------------------------------------------------------


class Note(BaseModel):
    title: str
    body: list[str] = []


SURROGATE = (
    "string holds a lone UTF-16 surrogate (\\ud800-\\udfff without its pair), "
    "which is not Unicode text"
)


@pytest.mark.parametrize(
    ("payload", "path"),
    [
        ('{"title": "\\udc80"}', "title"),
        ('{"title": "ok", "body": ["a", "x\\ud800y"]}', "body[1]"),
        ('{"title": "\udc80"}', "title"),
        ('{"title": "ok", "body": ["\udfff"]}', "body[0]"),
    ],
)
def test_a_lone_surrogate_is_reported_in_its_field(payload: str, path: str) -> None:
    assert problems(Note, payload) == [f"{path}: {SURROGATE}"]


def test_a_raw_lone_surrogate_in_bytes_is_reported_as_invalid_utf8_in_its_field() -> None:
    payload = '{"title": "\udc80"}'.encode("utf-8", "surrogatepass")
    assert problems(Note, payload) == ["title: string is not valid UTF-8 text"]


def test_a_surrogate_pair_is_one_character() -> None:
    assert compile_contract(Note).parse('{"title": "\\ud83d\\ude00"}').title == "\U0001f600"


def test_an_integer_over_the_digit_limit_says_the_limit() -> None:
    assert problems(Count, '{"count": ' + "7" * 4301 + "}") == [
        "count: number has more than 4300 digits; the limit is 4300"
    ]
    assert compile_contract(Count).parse('{"count": ' + "7" * 4300 + "}").count == int("7" * 4300)


def test_nesting_over_the_limit_says_the_limit_at_the_outermost_field() -> None:
    class Deep(BaseModel):
        value: Any

    deep = "[" * 201 + "]" * 201
    assert problems(Deep, '{"value": ' + deep + "}") == [
        "value: arrays and objects nest more than 200 levels deep; the limit is 200"
    ]


# Bounded cost for hostile input ----------------------------------------------------------


class Ids(BaseModel):
    ids: list[int]


def test_arguments_over_the_size_limit_are_refused_unread_naming_limit_and_size() -> None:
    payload = '{"ids": [' + ",".join(["1"] * 600_000) + "]}"
    assert len(payload) == 1_200_010
    tool = Tool[Ids, None](name="ids", description="Ids.")
    assert tool.params_contract.max_bytes == DEFAULT_MAX_BYTES
    with pytest.raises(ContractViolation) as raised:
        tool.params_contract.parse(payload)
    assert [str(problem) for problem in raised.value.problems] == [
        "<root>: arguments are 1,200,010 bytes of JSON, over the limit of 1,048,576 bytes; "
        "send less data"
    ]
    assert DEFAULT_MAX_BYTES == 1024 * 1024


def test_a_contract_outside_a_tool_reads_documents_of_any_size() -> None:
    payload = '{"ids": [' + ",".join(["1"] * 600_000) + "]}"
    assert len(compile_contract(Ids).parse(payload).ids) == 600_000


def test_the_size_limit_counts_utf8_bytes_not_characters() -> None:
    contract = compile_contract(Note).with_max_bytes(20)
    assert contract.parse('{"title": "ééé"}').title == "ééé"  # 16 characters, 19 bytes
    with pytest.raises(ContractViolation) as raised:
        contract.parse('{"title": "éééé"}')
    assert [str(p) for p in raised.value.problems] == [
        "<root>: arguments are 21 bytes of JSON, over the limit of 20 bytes; send less data"
    ]


def test_a_tool_sets_its_own_size_limit() -> None:
    tool = Tool[Note, None](name="note", description="A note.", max_argument_bytes=16)
    assert tool.params_contract.max_bytes == 16
    assert compile_contract(Note).max_bytes is None  # the shared contract has no limit
    with pytest.raises(ContractViolation) as raised:
        tool.params_contract.parse('{"title": "abcdefg"}')
    assert str(raised.value.problems[0]) == (
        "<root>: arguments are 20 bytes of JSON, over the limit of 16 bytes; send less data"
    )


@pytest.mark.parametrize("limit", [0, -1, True, 1.5])
def test_a_size_limit_must_be_a_positive_integer(limit: Any) -> None:
    with pytest.raises(PromptValidationError) as raised:
        Tool[Note, None](name="note", description="A note.", max_argument_bytes=limit)
    assert str(raised.value) == (
        f"tool 'note': max_argument_bytes must be a positive integer, got {limit!r}"
    )


def _counting_locations(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    from wink.contract import messages

    compile_contract(Ids)._locations.clear()  # located by earlier tests: count them anew
    described: list[Any] = []
    locate = messages._locate
    monkeypatch.setattr(messages, "_locate", lambda *args: described.append(args) or locate(*args))
    return described


def test_rejecting_a_payload_with_many_errors_describes_only_the_problems_shown(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    described = _counting_locations(monkeypatch)
    with pytest.raises(ContractViolation) as raised:
        compile_contract(Ids).parse(json.dumps({"ids": ["x"] * 500}))
    assert len(described) == 20
    assert raised.value.total == 500
    assert str(raised.value).splitlines()[-1] == "... and 480 more problems"


def test_an_array_of_thousands_of_wrong_items_is_described_by_its_first_problem(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    described = _counting_locations(monkeypatch)
    payload = json.dumps({"ids": [1, "x", *(["y"] * 199_999)]})
    assert len(payload) < DEFAULT_MAX_BYTES
    with pytest.raises(ContractViolation) as raised:
        compile_contract(Ids).parse(payload)
    assert len(described) == 1
    assert raised.value.total == 200_000
    assert str(raised.value).splitlines() == [
        "invalid Ids:",
        'ids[1]: input should be a valid integer (got "x")',
        "... and 199999 more problems",
    ]


# Identifiers and addresses ---------------------------------------------------------------


class Identified(BaseModel):
    ident: uuid.UUID
    host: ipaddress.IPv6Address


@pytest.mark.parametrize(
    ("field", "sent", "problem"),
    [
        (
            "ident",
            "12345678123456781234567812345678",
            "ident: input should be a UUID in its hyphenated form, such as "
            '123e4567-e89b-12d3-a456-426614174000 (got "12345678123456781234567812345678")',
        ),
        (
            "ident",
            "urn:uuid:12345678-1234-5678-1234-567812345678",
            "ident: input should be a UUID in its hyphenated form, such as "
            '123e4567-e89b-12d3-a456-426614174000 (got "urn:uuid:12345678-1234-5678-1234-'
            '567812345678")',
        ),
        (
            "host",
            "fe80::1%eth0",
            "host: input should be an IPv6 address without a zone index, such as 2001:db8::1 "
            '(got "fe80::1%eth0")',
        ),
    ],
)
def test_identifiers_outside_their_format_are_refused_as_the_schema_does(
    field: str, sent: str, problem: str
) -> None:
    payload = {"ident": "12345678-1234-5678-1234-567812345678", "host": "::1", field: sent}
    schema = compile_contract(Identified).input_schema
    checker = Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
    assert not checker.is_valid(payload)
    assert problems(Identified, json.dumps(payload)) == [problem]


def test_identifiers_in_their_format_parse() -> None:
    value = compile_contract(Identified).parse(
        '{"ident": "12345678-1234-5678-1234-567812345678", "host": "::ffff:1.2.3.4"}'
    )
    assert value.ident == uuid.UUID("12345678-1234-5678-1234-567812345678")
    assert value.host == ipaddress.IPv6Address("::ffff:1.2.3.4")


class VersionedIdentifier(BaseModel):
    ident: UUID4


def test_a_versioned_uuid_shows_its_version_in_a_pattern() -> None:
    assert compile_contract(VersionedIdentifier).input_schema["properties"]["ident"] == snapshot(
        {
            "format": "uuid",
            "type": "string",
            "pattern": "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-4[0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}"
            "-[0-9a-fA-F]{12}$",
        }
    )
    version_1 = '{"ident": "123e4567-e89b-12d3-a456-426614174000"}'
    assert not schema_accepts(VersionedIdentifier, version_1)
    assert problems(VersionedIdentifier, version_1) == [
        'ident: UUID version 4 expected (got "123e4567-e89b-12d3-a456-426614174000")'
    ]
    version_4 = '{"ident": "123e4567-e89b-42d3-a456-426614174000"}'
    assert schema_accepts(VersionedIdentifier, version_4)
    assert compile_contract(VersionedIdentifier).parse(version_4).ident.version == 4


# Decimals from JSON numbers --------------------------------------------------------------


class Amounts(BaseModel):
    first: Decimal
    second: Decimal = Decimal(0)


@pytest.mark.parametrize(
    ("sent", "parsed"),
    [
        ("0.1000000000000000000001", Decimal("0.1000000000000000000001")),
        ("1e400", Decimal("1E+400")),
        ("123456789012345678901234567890.5", Decimal("123456789012345678901234567890.5")),
    ],
)
def test_a_decimal_sent_as_a_number_keeps_every_digit_written(sent: str, parsed: Decimal) -> None:
    assert compile_contract(Amounts).parse(f'{{"first": {sent}}}').first == parsed


def test_two_decimals_that_round_to_one_float_must_be_sent_as_strings() -> None:
    assert problems(Amounts, '{"first": 0.1, "second": 0.10000000000000000001}') == [
        "first: input should be sent as a string: numbers of these arguments that differ "
        "round to the same float, so the digits of this one are not known",
        "second: input should be sent as a string: numbers of these arguments that differ "
        "round to the same float, so the digits of this one are not known",
    ]
    same = compile_contract(Amounts).parse('{"first": 2.5, "second": 2.5}')
    assert (same.first, same.second) == (Decimal("2.5"), Decimal("2.5"))


class Pair(NamedTuple):
    names: list[str]


class SetOfNamedTuples(BaseModel):
    pairs: set[Pair]


def test_a_set_of_named_tuples_holding_lists_is_refused() -> None:
    assert refused_at_compile(SetOfNamedTuples) == (
        "SetOfNamedTuples.pairs: a set cannot hold arrays (lists), since they are not "
        "hashable, so no non-empty array would parse; use a list, or frozen items"
    )


# Through the executor --------------------------------------------------------------------


def _executor_for(tool: Tool[Any, Any]) -> tuple[Any, Any]:
    from wink import MarkdownSection, Prompt, PromptTemplate, Session, ToolExecutor

    template = PromptTemplate(
        ns="tests",
        key="agreement",
        sections=[MarkdownSection(title="T", template="t", tools=[tool])],
    )
    session = Session()
    return ToolExecutor(prompt=Prompt(template), session=session), session


def test_the_executor_refuses_oversized_arguments_unread_and_records_the_call() -> None:
    from wink import ToolCall, ToolContext, ToolInvoked, ToolResult

    ran: list[Any] = []

    def handler(params: Ids, *, context: ToolContext) -> ToolResult[None]:
        ran.append(params)
        return ToolResult(message="ok")

    tool = Tool[Ids, None](name="ids", description="Ids.", handler=handler, max_argument_bytes=100)
    executor, session = _executor_for(tool)
    result = executor.execute(ToolCall("ids", '{"ids": [' + ",".join(["1"] * 60) + "]}", "c1"))
    assert result.success is False
    assert result.message == (
        "Invalid arguments for tool 'ids':\n<root>: arguments are 130 bytes of JSON, over the "
        "limit of 100 bytes; send less data"
    )
    assert ran == []
    assert len(session[ToolInvoked]) == 1


def test_the_executor_message_counts_every_problem_but_lists_twenty() -> None:
    from wink import ToolCall

    executor, _ = _executor_for(Tool[Ids, None](name="ids", description="Ids."))
    result = executor.execute(ToolCall("ids", json.dumps({"ids": ["x"] * 5000}), "c1"))
    lines = result.message.splitlines()
    assert lines[0] == "Invalid arguments for tool 'ids':"
    assert lines[1] == 'ids[0]: input should be a valid integer (got "x")'
    assert lines[-1] == "... and 4999 more problems"


def test_the_executor_refuses_a_repeated_key_without_running_the_handler() -> None:
    from wink import ToolCall, ToolContext, ToolResult

    ran: list[Any] = []

    def handler(params: Item, *, context: ToolContext) -> ToolResult[None]:
        ran.append(params)
        return ToolResult(message="ok")

    executor, _ = _executor_for(Tool[Item, None](name="item", description="Item.", handler=handler))
    result = executor.execute(ToolCall("item", '{"name": "a", "name": "b"}', "c1"))
    assert result.message == (
        "Invalid arguments for tool 'item':\n<root>: key \"name\" appears more than once; send "
        "each key once (a repeated key is ambiguous)"
    )
    assert ran == []


class Links(BaseModel):
    web: HttpUrl
    any: AnyUrl


def test_a_url_with_allowed_schemes_shows_them_as_a_pattern() -> None:
    assert compile_contract(Links).input_schema["properties"]["web"] == snapshot(
        {
            "format": "uri",
            "maxLength": 2083,
            "minLength": 1,
            "pattern": "^(?:[hH][tT][tT][pP]|[hH][tT][tT][pP][sS]):",
            "type": "string",
        }
    )
    ftp = '{"web": "ftp://example.com", "any": "ftp://example.com"}'
    assert not schema_accepts(Links, ftp)
    assert problems(Links, ftp) == [
        "web: URL scheme should be 'http' or 'https' (got \"ftp://example.com\")"
    ]
    upper = '{"web": "HTTPS://example.com", "any": "ftp://example.com"}'
    assert schema_accepts(Links, upper)
    assert str(compile_contract(Links).parse(upper).web) == "https://example.com/"


class DefaultTagHome(BaseModel):
    pet: Annotated[
        Annotated[Cat, Tag("cat")] | Annotated[Dog, Tag("dog")], Discriminator(_reads_dicts_too)
    ]


def test_a_callable_discriminator_names_its_tag_so_each_branch_requires_it() -> None:
    schema = compile_contract(DefaultTagHome).input_schema
    assert schema["properties"]["pet"] == {
        "discriminator": {"propertyName": "kind"},
        "oneOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}],
    }
    assert schema["$defs"]["Cat"]["required"] == ["kind"]
    untagged = '{"pet": {"lives": 1}}'
    assert not schema_accepts(DefaultTagHome, untagged)
    assert problems(DefaultTagHome, untagged) == [
        "pet.kind: required field is missing (one of 'cat', 'dog')"
    ]


def test_a_problem_found_again_is_described_the_same_from_its_kept_location() -> None:
    untagged = '{"pet": {"lives": 1}}'
    expected = ["pet.kind: required field is missing (one of 'cat', 'dog')"]
    assert [problems(DefaultTagHome, untagged) for _ in range(3)] == [expected] * 3
    assert problems(DefaultTagHome, '{"pet": {"kind": "cow"}}') == [
        "pet.kind: input should be one of 'cat', 'dog' (got \"cow\")"
    ]


class Level(BaseModel):
    level: Literal[1, 2, 3]


def test_a_number_that_only_rounds_to_a_literal_integer_is_refused() -> None:
    assert problems(Level, '{"level": 1.0000000000000000001}') == [
        "level: input should be an integer; the number sent is not exactly one "
        "(it only rounds to 1)"
    ]
    assert compile_contract(Level).parse('{"level": 2.0}').level == 2
