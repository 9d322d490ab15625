"""Specification of the dataclass facade check and of types that cannot round-trip JSON."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import InitVar, dataclass, field
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter
from pydantic.dataclasses import dataclass as pydantic_dataclass

from wink.contract import compile_contract
from wink.contract.facade import check_dataclass_facade
from wink.errors import PromptValidationError
from wink.tools import Tool


@dataclass
class Filters:
    """A facade exercising every way a dataclass declares a field."""

    query: str = field(metadata={"description": "Text to search for"})
    path: Annotated[str, Field(description="Folder to search in")]
    limit: int = field(default=20, metadata={"description": "Most results to return"})
    kinds: list[str] = field(default_factory=list)
    case_sensitive: bool = False


@dataclass
class Found:
    paths: list[str]


def test_a_facade_compiles_to_a_schema_that_agrees_with_the_dataclass_field_by_field() -> None:
    schema = compile_contract(Filters).input_schema
    fields = dataclasses.fields(Filters)
    assert list(schema["properties"]) == [f.name for f in fields]
    assert schema["required"] == ["query", "path"]
    assert schema["properties"]["limit"]["default"] == 20
    assert schema["properties"]["kinds"]["default"] == []
    assert schema["properties"]["case_sensitive"]["default"] is False
    assert {name: prop.get("description") for name, prop in schema["properties"].items()} == {
        "query": "Text to search for",
        "path": "Folder to search in",
        "limit": "Most results to return",
        "kinds": None,
        "case_sensitive": None,
    }


def test_the_facade_parses_what_its_schema_describes() -> None:
    parsed = compile_contract(Filters).parse('{"query": "q", "path": "src", "kinds": ["py"]}')
    assert parsed == Filters(query="q", path="src", kinds=["py"])


def _facade_views(cls: type[Any]) -> tuple[Any, dict[str, Any]]:
    adapter = TypeAdapter(cls)
    schema = compile_contract(cls).input_schema
    return adapter.core_schema, schema


def test_the_check_reports_a_required_field_the_schema_makes_optional() -> None:
    core, schema = _facade_views(Filters)
    tampered = {**schema, "required": ["query"]}
    with pytest.raises(PromptValidationError) as raised:
        check_dataclass_facade(Filters, core, tampered)
    assert str(raised.value) == (
        "Filters.path: the dataclass makes it required but the JSON Schema does not"
    )


def test_the_check_reports_a_default_the_schema_shows_differently() -> None:
    core, schema = _facade_views(Filters)
    properties = {**schema["properties"], "limit": {"type": "integer", "default": 5}}
    with pytest.raises(PromptValidationError) as raised:
        check_dataclass_facade(Filters, core, {**schema, "properties": properties})
    assert str(raised.value) == "Filters.limit: default 20 is shown to the model as 5"


def test_the_check_reports_a_description_the_schema_shows_differently() -> None:
    core, schema = _facade_views(Filters)
    properties = {**schema["properties"], "query": {"type": "string"}}
    with pytest.raises(PromptValidationError) as raised:
        check_dataclass_facade(Filters, core, {**schema, "properties": properties})
    assert str(raised.value) == (
        "Filters.query: description 'Text to search for' is shown to the model as None"
    )


def test_the_check_reports_a_field_missing_from_the_schema() -> None:
    core, schema = _facade_views(Filters)
    properties = {k: v for k, v in schema["properties"].items() if k != "case_sensitive"}
    with pytest.raises(PromptValidationError) as raised:
        check_dataclass_facade(Filters, core, {**schema, "properties": properties})
    assert str(raised.value) == ("Filters.case_sensitive: missing from the JSON Schema properties")


@dataclass
class ConflictingDescriptions:
    name: Annotated[str, Field(description="Display name")] = field(
        metadata={"description": "Login name"}
    )


def test_conflicting_descriptions_are_a_facade_disagreement() -> None:
    with pytest.raises(PromptValidationError) as raised:
        compile_contract(ConflictingDescriptions)
    assert str(raised.value) == (
        "ConflictingDescriptions.name: conflicting descriptions 'Login name' (field metadata) "
        "and 'Display name' (Annotated Field)"
    )


def test_conflicting_descriptions_are_found_in_annotations_written_as_objects() -> None:
    # Built at run time, the field's annotation is the Annotated object, not its text.
    conflicting = dataclasses.make_dataclass(
        "Evaluated",
        [
            (
                "name",
                Annotated[str, Field(description="Display name")],
                field(metadata={"description": "Login name"}),
            )
        ],
    )
    with pytest.raises(PromptValidationError) as raised:
        compile_contract(conflicting)
    assert str(raised.value) == (
        "Evaluated.name: conflicting descriptions 'Login name' (field metadata) "
        "and 'Display name' (Annotated Field)"
    )


@dataclass
class AgreeingDescriptions:
    name: Annotated[str, Field(description="Login name")] = field(
        metadata={"description": "Login name"}
    )


def test_the_same_description_written_twice_is_no_disagreement() -> None:
    schema = compile_contract(AgreeingDescriptions).input_schema
    assert schema["properties"]["name"] == {"description": "Login name", "type": "string"}


@pydantic_dataclass
class PydanticFacade:
    count: int = Field(description="How many")
    unit: str = Field(default="item", description="What is counted")


def test_a_pydantic_dataclass_with_field_defaults_agrees_with_its_schema() -> None:
    assert compile_contract(PydanticFacade).input_schema == {
        "properties": {
            "count": {"description": "How many", "type": "integer"},
            "unit": {"default": "item", "description": "What is counted", "type": "string"},
        },
        "required": ["count"],
        "type": "object",
        "additionalProperties": False,
    }


# --- constructs that cannot round-trip through JSON -----------------------------------


@dataclass
class NotInit:
    name: str
    derived: str = field(init=False, default="")


@dataclass
class WithInitVar:
    name: str
    scale: InitVar[int] = 1

    def __post_init__(self, scale: int) -> None:
        del scale


@dataclass
class Unresolved:
    name: str
    owner: NoSuchType  # type: ignore[name-defined]  # noqa: F821 - the unresolved reference under test


@dataclass
class WithCallable:
    on_done: Callable[[str], None]


class Opaque:
    """A class pydantic knows no schema for."""


@dataclass
class WithOpaque:
    handle: Opaque


class ModelWithOpaque(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)
    handle: Opaque


@dataclass
class WithIntKeys:
    by_id: dict[int, str]


@dataclass
class HoldsNotInit:
    inner: list[NotInit]


@pytest.mark.parametrize(
    ("params_type", "message"),
    [
        (NotInit, "NotInit.derived: field(init=False) does not round-trip through JSON"),
        (WithInitVar, "WithInitVar.scale: InitVar fields do not round-trip through JSON"),
        (Unresolved, "Unresolved.owner: unresolved forward reference 'NoSuchType'"),
        (WithCallable, "WithCallable.on_done: a callable cannot be sent or received as JSON"),
        (
            WithOpaque,
            "WithOpaque.handle: a field type cannot be sent or received as JSON (Unable to "
            "generate pydantic-core schema for <class 'test_contract_facade.Opaque'>)",
        ),
        (
            ModelWithOpaque,
            "ModelWithOpaque.handle: arbitrary type Opaque cannot be sent or received as JSON",
        ),
        (WithIntKeys, "WithIntKeys.by_id: mapping keys must be strings in JSON, not int"),
        (
            HoldsNotInit,
            "HoldsNotInit: NotInit.derived: field(init=False) does not round-trip through JSON",
        ),
    ],
    ids=lambda value: value.__name__ if isinstance(value, type) else "",
)
def test_a_tool_with_a_field_that_cannot_round_trip_json_is_rejected_naming_type_and_field(
    params_type: type[Any], message: str
) -> None:
    with pytest.raises(PromptValidationError) as raised:
        Tool[params_type, Found](name="search", description="Search files.")  # type: ignore[valid-type]  # the type under test is a variable
    assert str(raised.value) == f"tool 'search': {message}"


def test_a_root_mapping_with_non_string_keys_is_rejected() -> None:
    with pytest.raises(PromptValidationError) as raised:
        compile_contract(dict[int, str])
    assert str(raised.value) == "dict[int, str]: mapping keys must be strings in JSON, not int"


def test_string_like_mapping_keys_are_accepted() -> None:
    schema = compile_contract(dict[str, int]).input_schema
    assert schema == {"additionalProperties": {"type": "integer"}, "type": "object"}
