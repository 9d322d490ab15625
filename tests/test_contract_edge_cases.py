"""Specification of contracts at pydantic's edges: aliases, root models, model config,
non-finite numbers, lookalike literals and very long error messages."""

from __future__ import annotations

import dataclasses
import json
from decimal import Decimal
from typing import Annotated, Any, Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import AliasChoices, AliasPath, BaseModel, ConfigDict, Field, RootModel
from pydantic.dataclasses import dataclass as pydantic_dataclass

from wink.contract import (
    ContractViolation,
    FieldProblem,
    compile_contract,
    describe_problems,
    format_path,
)
from wink.contract.messages import short_repr
from wink.errors import PromptValidationError
from wink.tools import Tool, ToolContext, ToolExample, ToolResult


def problems(contract_type: Any, payload: Any) -> list[tuple[str, str]]:
    """Parse ``payload`` expecting failure; return ``(path, reason)`` pairs."""
    with pytest.raises(ContractViolation) as raised:
        compile_contract(contract_type).parse(payload)
    return [(problem.path, problem.reason) for problem in raised.value.problems]


# Aliases ---------------------------------------------------------------------------------


class Account(BaseModel):
    user_name: str = Field(alias="userName")
    display: str = Field(default="", validation_alias="shown", serialization_alias="display_as")


@dataclasses.dataclass
class AccountFacade:
    user_name: Annotated[str, Field(alias="userName")]


def test_dump_names_keys_as_the_output_schema_does() -> None:
    contract = compile_contract(Account)
    dumped = contract.dump(Account(userName="bob", shown="Bob"))
    assert dumped == {"userName": "bob", "display_as": "Bob"}
    assert list(dumped) == list(contract.output_schema["properties"])


def test_dump_json_names_keys_by_alias() -> None:
    contract = compile_contract(Account)
    assert contract.dump_json(Account(userName="bob")) == '{"userName":"bob","display_as":""}'


def test_a_dump_of_an_aliased_dataclass_parses_back_to_the_same_value() -> None:
    contract = compile_contract(AccountFacade)
    dumped = contract.dump(AccountFacade("bob"))
    assert dumped == {"userName": "bob"}
    assert contract.parse(dumped) == AccountFacade("bob")


def _greet(params: AccountFacade, *, context: ToolContext) -> ToolResult[AccountFacade]:
    return ToolResult.ok(params)


def test_a_tool_example_with_aliased_params_is_accepted() -> None:
    example = ToolExample("greets bob", AccountFacade("bob"), AccountFacade("bob"))
    tool = Tool[AccountFacade, AccountFacade](
        name="greet", description="Greet a user.", handler=_greet, examples=(example,)
    )
    assert tool.examples == (example,)


class NestedAlias(BaseModel):
    value: str = Field(validation_alias=AliasPath("outer", 0))


class KeyPathAlias(BaseModel):
    value: str = Field(validation_alias=AliasPath("outer"))


@pytest.mark.parametrize("contract_type", [NestedAlias, KeyPathAlias])
def test_an_alias_path_is_refused_at_compile_naming_the_field(contract_type: type) -> None:
    with pytest.raises(PromptValidationError) as raised:
        compile_contract(contract_type)
    alias = ["outer", 0] if contract_type is NestedAlias else ["outer"]
    assert str(raised.value) == (
        f"{contract_type.__name__}.value: validation alias {alias!r} reads a value nested in "
        "another key, which the JSON Schema cannot show (it would show 'value', which parsing "
        "refuses); use a plain alias or AliasChoices with a plain name first"
    )


@dataclasses.dataclass
class ChoiceFacade:
    value: Annotated[str, Field(validation_alias=AliasChoices("first", "second"))]


class ChoiceModel(BaseModel):
    value: str = Field(validation_alias=AliasChoices(AliasPath("outer", 0), "plain"))


def test_alias_choices_on_a_dataclass_show_the_first_choice_and_parse_it() -> None:
    contract = compile_contract(ChoiceFacade)
    assert contract.input_schema == {
        "properties": {"first": {"type": "string"}},
        "required": ["first"],
        "type": "object",
        "additionalProperties": False,
    }
    assert contract.parse({"first": "a"}) == ChoiceFacade("a")


def test_alias_choices_show_and_parse_the_first_plain_name() -> None:
    contract = compile_contract(ChoiceModel)
    assert list(contract.input_schema["properties"]) == ["plain"]
    assert contract.parse({"plain": "a"}).value == "a"


# Root models -----------------------------------------------------------------------------


class Item(BaseModel):
    count: int


class Items(RootModel[list[Item]]):
    pass


class Basket(BaseModel):
    items: Items


class Flags(BaseModel):
    flag: bool = False


class FlagsRoot(RootModel[Flags]):
    pass


def test_an_unknown_key_inside_a_root_model_field_is_rejected() -> None:
    assert problems(Basket, '{"items": [{"count": 1, "extra": 2}]}') == [
        ("items[0].extra", "unknown field (allowed: count)")
    ]


def test_an_unknown_key_inside_a_root_model_contract_is_rejected() -> None:
    assert problems(FlagsRoot, '{"flag": true, "extra": 1}') == [
        ("extra", "unknown field (allowed: flag)")
    ]


def test_a_root_model_parses_into_an_instance_of_the_root_model() -> None:
    basket = compile_contract(Basket).parse('{"items": [{"count": 1}]}')
    assert type(basket.items) is Items
    assert basket.items.root == [Item(count=1)]
    assert compile_contract(FlagsRoot).parse('{"flag": true}') == FlagsRoot(Flags(flag=True))


# Model config ----------------------------------------------------------------------------


class Tidy(BaseModel):
    model_config = ConfigDict(str_strip_whitespace=True, str_to_lower=True, str_max_length=3)
    code: str


class HoldsTidy(BaseModel):
    tidy: Tidy


class CheckedDefault(BaseModel):
    model_config = ConfigDict(validate_default=True, str_to_lower=True)
    code: str = "ABC"


class LowerRoot(RootModel[str]):
    model_config = ConfigDict(str_to_lower=True)


@dataclasses.dataclass
class TidyFacade:
    __pydantic_config__ = ConfigDict(str_strip_whitespace=True, str_max_length=3)
    code: str


@pydantic_dataclass(config=ConfigDict(str_to_upper=True))
class ShoutingDataclass:
    code: str


def test_model_config_string_rules_apply_when_parsing() -> None:
    assert compile_contract(Tidy).parse('{"code": "  AB  "}') == Tidy(code="ab")


def test_model_config_max_length_is_enforced() -> None:
    assert problems(Tidy, '{"code": "abcdef"}') == [
        ("code", 'string should have at most 3 characters (got "abcdef")')
    ]


def test_model_config_applies_to_a_nested_model() -> None:
    parsed = compile_contract(HoldsTidy).parse('{"tidy": {"code": " XY "}}')
    assert parsed.tidy == Tidy(code="xy")


def test_validate_default_from_model_config_validates_the_default() -> None:
    assert compile_contract(CheckedDefault).parse("{}").code == "abc"


def test_root_model_config_applies_to_the_root() -> None:
    assert compile_contract(LowerRoot).parse('"ABC"') == LowerRoot("abc")


def test_dataclass_config_applies_when_parsing() -> None:
    assert compile_contract(TidyFacade).parse('{"code": " ab "}') == TidyFacade("ab")
    assert compile_contract(ShoutingDataclass).parse('{"code": "ab"}') == ShoutingDataclass("AB")


# Non-finite numbers ----------------------------------------------------------------------


class Measure(BaseModel):
    ratio: float
    maybe: float | None = None
    exact: Decimal = Decimal(0)


@pytest.mark.parametrize(
    ("payload", "path", "got"),
    [
        ('{"ratio": NaN}', "ratio", "nan"),
        ('{"ratio": Infinity}', "ratio", "inf"),
        ('{"ratio": -Infinity}', "ratio", "-inf"),
        ('{"ratio": 1e400}', "ratio", "inf"),
        ('{"ratio": 1, "exact": NaN}', "exact", "nan"),
    ],
)
def test_a_non_finite_number_is_refused(payload: str, path: str, got: str) -> None:
    assert problems(Measure, payload) == [(path, f"input should be a finite number (got {got})")]


def test_a_non_finite_number_is_refused_inside_a_nullable_float() -> None:
    assert problems(Measure, '{"ratio": 1, "maybe": Infinity}') == [
        ("maybe", "input should be a finite number (got inf)")
    ]


# Lookalike literals ----------------------------------------------------------------------


class Mixed(BaseModel):
    pick: Literal[1, "a", True]


@pytest.mark.parametrize(("payload", "expected"), [("1.0", 1), ("1", 1), ("true", True)])
def test_a_number_literal_never_becomes_a_boolean_literal(payload: str, expected: Any) -> None:
    parsed = compile_contract(Mixed).parse(f'{{"pick": {payload}}}')
    assert (type(parsed.pick), parsed.pick) == (type(expected), expected)


# Error messages --------------------------------------------------------------------------


class Lives(BaseModel):
    lives: int


class Registry(BaseModel):
    by_key: dict[str, Lives]


def test_a_message_lists_twenty_problems_then_counts_the_rest() -> None:
    listed = [FieldProblem(f"field{index}", "unknown field") for index in range(25)]
    lines = describe_problems(listed).splitlines()
    assert lines == [f"field{index}: unknown field" for index in range(20)] + [
        "... and 5 more problems"
    ]


def test_one_problem_past_the_limit_is_counted_in_the_singular() -> None:
    listed = [FieldProblem(f"field{index}", "unknown field") for index in range(21)]
    assert describe_problems(listed).splitlines()[-1] == "... and 1 more problem"


def test_a_payload_with_thousands_of_unknown_keys_describes_only_the_problems_shown() -> None:
    payload = {"count": 1, **{f"key{index}": index for index in range(5000)}}
    with pytest.raises(ContractViolation) as raised:
        compile_contract(Item).parse(payload)
    assert len(raised.value.problems) == 20
    assert raised.value.total == 5000
    lines = str(raised.value).splitlines()
    assert lines[0] == "invalid Item:"
    assert lines[1] == "key0: unknown field (allowed: count)"
    assert lines[21:] == ["... and 4980 more problems"]


@pytest.mark.parametrize(
    ("key", "path"),
    [
        ("a.b", 'by_key["a.b"].lives'),
        ("", 'by_key[""].lives'),
        ("x[0]", 'by_key["x[0]"].lives'),
        ('say "hi"', 'by_key["say \\"hi\\""].lives'),
        ("plain", "by_key.plain.lives"),
    ],
)
def test_a_map_key_that_is_not_an_identifier_is_quoted_in_the_path(key: str, path: str) -> None:
    assert problems(Registry, {"by_key": {key: {"lives": "x"}}}) == [
        (path, 'input should be a valid integer (got "x")')
    ]


def test_format_path_quotes_only_keys_that_are_not_identifiers() -> None:
    assert format_path(["a b", 0, "c", "", 2]) == '["a b"][0].c[""][2]'


def test_populate_by_name_does_not_open_a_key_the_schema_does_not_show() -> None:
    class Located(BaseModel):
        model_config = ConfigDict(populate_by_name=True)
        file_path: str = Field(alias="filePath")

    contract = compile_contract(Located)
    assert contract.parse('{"filePath": "x"}') == Located(filePath="x")
    with pytest.raises(ContractViolation) as raised:
        contract.parse('{"file_path": "x"}')
    assert [str(problem) for problem in raised.value.problems] == [
        "filePath: required field is missing",
        "file_path: unknown field (allowed: filePath)",
    ]


@given(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.integers(min_value=-(10**62), max_value=10**62),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(max_size=80),
    )
)
def test_a_rejected_scalar_is_quoted_as_its_json_cut_to_sixty_characters(value: Any) -> None:
    written = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    assert short_repr(value) == (written if len(written) <= 60 else f"{written[:57]}...")
