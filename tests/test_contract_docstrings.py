"""Attribute docstrings become field descriptions, for every kind of params type."""

from __future__ import annotations

import dataclasses
import importlib
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, NotRequired

import pydantic
import pytest
from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypedDict  # pydantic needs it before Python 3.12

from wink import Tool, ToolContext, ToolResult, compile_contract


def descriptions(tp: Any, mode: str = "input") -> dict[str, str | None]:
    contract = compile_contract(tp)
    schema = contract.input_schema if mode == "input" else contract.output_schema
    return {name: prop.get("description") for name, prop in schema["properties"].items()}


class ModelParams(BaseModel):
    query: str
    """What to search for."""
    limit: int = 5
    """Most hits to return,
    at most 50.

    Counted after deduplication."""
    lang: str = "en"


def test_a_model_field_takes_the_docstring_under_it() -> None:
    assert descriptions(ModelParams) == {
        "query": "What to search for.",
        "limit": "Most hits to return,\nat most 50.\n\nCounted after deduplication.",
        "lang": None,
    }
    assert "description" not in compile_contract(ModelParams).input_schema["properties"]["lang"]


@dataclass(frozen=True)
class DataclassParams:
    path: str
    """File to read, relative to the workspace."""
    start: int = 0
    """First line, counted from 0."""


@pydantic.dataclasses.dataclass
class PydanticDataclassParams:
    path: str
    """File to read."""


class TypedDictParams(TypedDict):
    city: str
    """City name, in English."""
    units: NotRequired[str]
    """'metric' or 'imperial'."""


def test_dataclasses_and_typed_dicts_take_their_docstrings() -> None:
    assert descriptions(DataclassParams) == {
        "path": "File to read, relative to the workspace.",
        "start": "First line, counted from 0.",
    }
    assert descriptions(PydanticDataclassParams) == {"path": "File to read."}
    assert descriptions(TypedDictParams) == {
        "city": "City name, in English.",
        "units": "'metric' or 'imperial'.",
    }


class Explicit(BaseModel):
    by_field: int = Field(default=1, description="From Field")
    """From the docstring"""
    by_annotated: Annotated[int, Field(description="From Annotated")] = 2
    """From the docstring"""


@dataclass
class ExplicitMetadata:
    by_metadata: int = dataclasses.field(default=1, metadata={"description": "From metadata"})
    """From the docstring"""


class PydanticOwnDocstrings(BaseModel):
    model_config = ConfigDict(use_attribute_docstrings=True)
    flag: bool = False
    """Set by pydantic itself."""


def test_an_explicit_description_wins_over_the_docstring() -> None:
    assert descriptions(Explicit) == {
        "by_field": "From Field",
        "by_annotated": "From Annotated",
    }
    assert descriptions(ExplicitMetadata) == {"by_metadata": "From metadata"}
    assert descriptions(PydanticOwnDocstrings) == {"flag": "Set by pydantic itself."}


class Inner(BaseModel):
    value: int
    """The inner value."""


class Outer(BaseModel):
    inner: Inner
    """The nested part."""
    items: list[DataclassParams] = []
    """Files to read."""


def test_nested_types_are_described_in_their_definitions() -> None:
    schema = compile_contract(Outer).input_schema
    assert schema["properties"]["inner"] == {
        "$ref": "#/$defs/Inner",
        "description": "The nested part.",
    }
    assert schema["$defs"]["Inner"]["properties"]["value"] == {
        "type": "integer",
        "description": "The inner value.",
    }
    assert schema["$defs"]["DataclassParams"]["properties"]["path"]["description"] == (
        "File to read, relative to the workspace."
    )
    assert schema["properties"]["items"]["description"] == "Files to read."


class Base(BaseModel):
    shared: str
    """Declared on the base."""
    redocumented: str
    """The base's words."""


class Derived(Base):
    redocumented: str
    """The subclass's words."""
    own: int
    """Declared on the subclass."""


def test_inherited_fields_keep_the_base_docstring_unless_the_subclass_redocuments() -> None:
    assert descriptions(Derived) == {
        "shared": "Declared on the base.",
        "redocumented": "The subclass's words.",
        "own": "Declared on the subclass.",
    }


class Aliased(BaseModel):
    model_config = ConfigDict(serialize_by_alias=True)
    user_name: str = Field(alias="userName")
    """Login name."""


def test_an_aliased_field_is_described_under_its_alias() -> None:
    assert descriptions(Aliased) == {"userName": "Login name."}
    assert descriptions(Aliased, mode="output") == {"userName": "Login name."}


class NotDirectlyUnder(BaseModel):
    first: int
    second: int
    """Describes second only."""
    third: int = 3

    def method(self) -> None:
        """A method's docstring describes no field."""


def test_only_a_string_directly_under_a_field_describes_it() -> None:
    assert descriptions(NotDirectlyUnder) == {
        "first": None,
        "second": "Describes second only.",
        "third": None,
    }


def test_classes_defined_in_a_function_are_read_too() -> None:
    @dataclass
    class Local:
        name: str
        """A local name."""

    assert descriptions(Local) == {"name": "A local name."}


def test_a_class_without_source_has_no_docstring_descriptions() -> None:
    source = "@dataclass\nclass Generated:\n    name: str\n    'Unreadable.'\n"
    namespace: dict[str, Any] = {"dataclass": dataclass, "__name__": __name__}
    # A class made at run time: there is nothing to read, and nothing fails.
    exec(compile(source, "<generated>", "exec", dont_inherit=True), namespace)
    assert descriptions(namespace["Generated"]) == {"name": None}


def read(params: DataclassParams, *, context: ToolContext) -> ToolResult[None]:
    return ToolResult(message="")


def test_a_tool_shows_the_docstrings_as_parameter_descriptions() -> None:
    tool = Tool[DataclassParams, None](name="read", description="Read a file.", handler=read)
    assert tool.param_descriptions() == {
        "path": "File to read, relative to the workspace.",
        "start": "First line, counted from 0.",
    }


def test_each_source_file_is_parsed_once_for_all_its_classes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from wink.contract import _docstrings

    parsed: list[int] = []
    original = _docstrings._docstrings_by_class

    def counting(lines: list[str]) -> dict[str, dict[str, str]]:
        parsed.append(len(lines))
        return original(lines)

    monkeypatch.setattr(_docstrings, "_by_file", {})
    monkeypatch.setattr(_docstrings, "_docstrings_by_class", counting)

    @dataclass
    class First:
        name: str
        """The first name."""

    @dataclass
    class Second:
        title: str
        """The second title."""

    assert descriptions(First) == {"name": "The first name."}
    assert descriptions(Second) == {"title": "The second title."}
    assert len(parsed) == 1


def test_a_source_file_changed_on_disk_is_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module_file = tmp_path / "changing_params.py"
    template = (
        "from dataclasses import dataclass\n@dataclass\nclass Params:\n    q: str\n    {!r}\n"
    )
    module_file.write_text(template.format("Before."))
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("changing_params")
    try:
        assert descriptions(module.Params) == {"q": "Before."}
        module_file.write_text(template.format("After, longer."))
        module = importlib.reload(module)
        assert descriptions(module.Params) == {"q": "After, longer."}
    finally:
        sys.modules.pop("changing_params", None)
