"""Specification of the JSON Schemas that ``wink.contract`` emits (Draft 2020-12)."""

from __future__ import annotations

import enum
import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Annotated, Any, Literal, NotRequired
from uuid import UUID

import pytest
from jsonschema import Draft202012Validator
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter
from pydantic.dataclasses import dataclass as pydantic_dataclass
from typing_extensions import TypedDict

from wink.contract import check_schema, compile_contract, iter_schema_nodes, schema_validator
from wink.contract._formats import NAIVE_DATETIME_PATTERN
from wink.errors import PromptValidationError
from wink.tools import Tool


@dataclass
class Address:
    street: str = field(metadata={"description": "Street and house number"})
    city: str


@dataclass
class Customer:
    name: str
    address: Address


@dataclass
class Contact:
    email: str | None
    phone: str | None = None


@dataclass
class SearchParams:
    query: str
    limit: int = 10
    exact: bool = False
    tags: list[str] = field(default_factory=list)


class TreeNode(BaseModel):
    label: str
    children: list[TreeNode] = []


class Point(BaseModel):
    x: float
    y: float


class Segment(BaseModel):
    start: Point
    end: Point


class Priority(enum.Enum):
    LOW = "low"
    HIGH = "high"


@dataclass
class Ticket:
    priority: Priority
    status: Literal["open", "closed"] = "open"


@dataclass
class Shapes:
    pair: tuple[int, str]
    values: tuple[float, ...] = ()


@dataclass
class Scores:
    by_player: dict[str, int]
    positions: dict[str, Point] = field(default_factory=dict)


@dataclass
class Event:
    event_id: UUID
    at: datetime
    day: date | None = None


class Document(BaseModel):
    title: str = Field(description="Heading of the document")
    body: Annotated[str, Field(description="Markdown text")]


@dataclass
class AnnotatedFacade:
    path: Annotated[str, Field(description="File to read")]
    encoding: str = field(default="utf-8", metadata={"description": "Text encoding"})


@pydantic_dataclass
class PydanticFacade:
    count: int = Field(description="How many")


class OpenModel(BaseModel):
    model_config = ConfigDict(extra="allow")
    name: str


class HoldsOpenModel(BaseModel):
    inner: OpenModel


POINT_DEF = {
    "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
    "required": ["x", "y"],
    "type": "object",
    "additionalProperties": False,
}

ALL_TYPES: list[Any] = [
    Customer,
    Contact,
    SearchParams,
    TreeNode,
    Segment,
    Ticket,
    Shapes,
    Scores,
    Event,
    Document,
    AnnotatedFacade,
    PydanticFacade,
    HoldsOpenModel,
    list[Segment],
    tuple[Point, ...],
    None,
]


def test_nested_dataclass_schema_puts_the_inner_dataclass_in_defs() -> None:
    assert compile_contract(Customer).input_schema == {
        "$defs": {
            "Address": {
                "properties": {
                    "street": {"description": "Street and house number", "type": "string"},
                    "city": {"type": "string"},
                },
                "required": ["street", "city"],
                "type": "object",
                "additionalProperties": False,
            }
        },
        "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/Address"}},
        "required": ["name", "address"],
        "type": "object",
        "additionalProperties": False,
    }


def test_optional_fields_are_any_of_the_type_and_null() -> None:
    assert compile_contract(Contact).input_schema == {
        "properties": {
            "email": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "phone": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
        },
        "required": ["email"],
        "type": "object",
        "additionalProperties": False,
    }


def test_defaulted_fields_are_optional_and_show_their_default() -> None:
    assert compile_contract(SearchParams).input_schema == {
        "properties": {
            "query": {"type": "string"},
            "limit": {"default": 10, "type": "integer"},
            "exact": {"default": False, "type": "boolean"},
            "tags": {"default": [], "items": {"type": "string"}, "type": "array"},
        },
        "required": ["query"],
        "type": "object",
        "additionalProperties": False,
    }


def test_recursive_model_is_a_root_reference_into_defs() -> None:
    assert compile_contract(TreeNode).input_schema == {
        "$defs": {
            "TreeNode": {
                "properties": {
                    "label": {"type": "string"},
                    "children": {
                        "default": [],
                        "items": {"$ref": "#/$defs/TreeNode"},
                        "type": "array",
                    },
                },
                "required": ["label"],
                "type": "object",
                "additionalProperties": False,
            }
        },
        "$ref": "#/$defs/TreeNode",
    }


def test_shared_nested_type_is_defined_once_and_referenced_twice() -> None:
    assert compile_contract(Segment).input_schema == {
        "$defs": {"Point": POINT_DEF},
        "properties": {"start": {"$ref": "#/$defs/Point"}, "end": {"$ref": "#/$defs/Point"}},
        "required": ["start", "end"],
        "type": "object",
        "additionalProperties": False,
    }


def test_enum_and_literal_fields_list_their_values() -> None:
    assert compile_contract(Ticket).input_schema == {
        "$defs": {"Priority": {"enum": ["low", "high"], "type": "string"}},
        "properties": {
            "priority": {"$ref": "#/$defs/Priority"},
            "status": {"default": "open", "enum": ["open", "closed"], "type": "string"},
        },
        "required": ["priority"],
        "type": "object",
        "additionalProperties": False,
    }


def test_fixed_tuples_use_prefix_items_and_variadic_tuples_use_items() -> None:
    assert compile_contract(Shapes).input_schema == {
        "properties": {
            "pair": {
                "maxItems": 2,
                "minItems": 2,
                "prefixItems": [{"type": "integer"}, {"type": "string"}],
                "type": "array",
            },
            "values": {"default": [], "items": {"type": "number"}, "type": "array"},
        },
        "required": ["pair"],
        "type": "object",
        "additionalProperties": False,
    }


def test_string_keyed_dicts_describe_their_values_with_additional_properties() -> None:
    assert compile_contract(Scores).input_schema == {
        "$defs": {"Point": POINT_DEF},
        "properties": {
            "by_player": {"additionalProperties": {"type": "integer"}, "type": "object"},
            "positions": {
                "additionalProperties": {"$ref": "#/$defs/Point"},
                "default": {},
                "type": "object",
            },
        },
        "required": ["by_player"],
        "type": "object",
        "additionalProperties": False,
    }


def test_datetime_date_and_uuid_are_formatted_strings() -> None:
    # A datetime may come with or without a UTC offset; RFC 3339's date-time has one.
    assert compile_contract(Event).input_schema == {
        "properties": {
            "event_id": {"format": "uuid", "type": "string"},
            "at": {
                "anyOf": [
                    {"format": "date-time", "type": "string"},
                    {"pattern": NAIVE_DATETIME_PATTERN, "type": "string"},
                ]
            },
            "day": {
                "anyOf": [{"format": "date", "type": "string"}, {"type": "null"}],
                "default": None,
            },
        },
        "required": ["event_id", "at"],
        "type": "object",
        "additionalProperties": False,
    }


def test_a_property_named_title_survives_while_generated_titles_are_dropped() -> None:
    assert compile_contract(Document).input_schema == {
        "properties": {
            "title": {"description": "Heading of the document", "type": "string"},
            "body": {"description": "Markdown text", "type": "string"},
        },
        "required": ["title", "body"],
        "type": "object",
        "additionalProperties": False,
    }


def test_dataclass_descriptions_come_from_annotated_field_and_from_field_metadata() -> None:
    assert compile_contract(AnnotatedFacade).input_schema == {
        "properties": {
            "path": {"description": "File to read", "type": "string"},
            "encoding": {"default": "utf-8", "description": "Text encoding", "type": "string"},
        },
        "required": ["path"],
        "type": "object",
        "additionalProperties": False,
    }


def test_pydantic_dataclass_descriptions_come_from_field_defaults() -> None:
    assert compile_contract(PydanticFacade).input_schema == {
        "properties": {"count": {"description": "How many", "type": "integer"}},
        "required": ["count"],
        "type": "object",
        "additionalProperties": False,
    }


def test_a_list_result_schema_is_an_array_of_the_item_reference() -> None:
    assert compile_contract(list[Segment]).output_schema == {
        "$defs": {
            "Point": POINT_DEF,
            "Segment": {
                "properties": {
                    "start": {"$ref": "#/$defs/Point"},
                    "end": {"$ref": "#/$defs/Point"},
                },
                "required": ["start", "end"],
                "type": "object",
                "additionalProperties": False,
            },
        },
        "items": {"$ref": "#/$defs/Segment"},
        "type": "array",
    }


def test_no_params_is_the_empty_closed_object_and_no_result_is_null() -> None:
    contract = compile_contract(None)
    assert contract.input_schema == {
        "type": "object",
        "properties": {},
        "additionalProperties": False,
    }
    assert contract.output_schema == {"type": "null"}


def test_a_model_that_allows_extra_keys_is_still_closed_because_parsing_forbids_them() -> None:
    schema = compile_contract(HoldsOpenModel).input_schema
    assert schema["$defs"]["OpenModel"]["additionalProperties"] is False


@pytest.mark.parametrize("tp", ALL_TYPES, ids=repr)
def test_every_object_node_with_properties_forbids_additional_properties(tp: Any) -> None:
    contract = compile_contract(tp)
    objects = [
        node
        for schema in (contract.input_schema, contract.output_schema)
        for _, node in iter_schema_nodes(schema)
        if "properties" in node
    ]
    assert objects
    assert all(node["additionalProperties"] is False for node in objects)


@pytest.mark.parametrize("tp", ALL_TYPES, ids=repr)
def test_every_emitted_schema_passes_the_draft_2020_12_metaschema(tp: Any) -> None:
    contract = compile_contract(tp)
    for schema in (contract.input_schema, contract.output_schema):
        Draft202012Validator.check_schema(schema)
        check_schema(schema, repr(tp))


def test_no_node_carries_a_generated_title() -> None:
    for tp in ALL_TYPES:
        for pointer, node in iter_schema_nodes(compile_contract(tp).input_schema):
            assert "title" not in node, pointer


def test_null_validates_against_an_optional_field_through_jsonschema() -> None:
    validator = schema_validator(compile_contract(Contact).input_schema)
    assert validator.is_valid({"email": None, "phone": None})
    assert not validator.is_valid({"email": 3})


def test_check_schema_names_the_subject_and_the_location_of_an_invalid_schema() -> None:
    with pytest.raises(PromptValidationError) as raised:
        check_schema({"properties": {"a": {"type": 7}}}, "tool 'x' params")
    assert str(raised.value).startswith(
        "tool 'x' params: the emitted JSON Schema is not valid Draft 2020-12 at properties/a/type:"
    )


def _fresh_segment_types() -> type[Any]:
    """Define ``Point``/``Segment`` again: new classes, so nothing comes from the cache."""

    class Point(BaseModel):
        x: float
        y: float

    class Segment(BaseModel):
        start: Point
        end: Point

    return Segment


def test_schemas_of_equal_fresh_types_are_byte_for_byte_identical() -> None:
    first = json.dumps(compile_contract(_fresh_segment_types()).input_schema)
    second = json.dumps(compile_contract(_fresh_segment_types()).input_schema)
    assert first == second == json.dumps(compile_contract(Segment).input_schema)


def test_schema_text_does_not_depend_on_the_hash_seed() -> None:
    script = (
        "import json, sys\n"
        "sys.path.insert(0, sys.argv[1])\n"
        "import test_contract_schema as m\n"
        "from wink.contract import compile_contract\n"
        "print(json.dumps([compile_contract(t).input_schema for t in m.ALL_TYPES]))\n"
    )
    here = str(Path(__file__).parent)
    outputs = {
        subprocess.run(
            [sys.executable, "-c", script, here],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2")
    }
    assert outputs == {json.dumps([compile_contract(t).input_schema for t in ALL_TYPES]) + "\n"}


def test_the_serialization_schema_is_emitted_on_first_use_and_kept() -> None:
    from pydantic import computed_field

    class Priced(BaseModel):
        amount: int

        @computed_field  # type: ignore[prop-decorator]  # pydantic's documented form
        @property
        def doubled(self) -> int:
            return self.amount * 2

    contract = compile_contract(Priced)
    assert contract._output_schema is None  # parsing never needs it
    schema = contract.output_schema
    assert schema == {
        "type": "object",
        "properties": {
            "amount": {"type": "integer"},
            "doubled": {"type": "integer", "readOnly": True},
        },
        "required": ["amount", "doubled"],
        "additionalProperties": False,
    }
    assert contract.output_schema is schema
    with pytest.raises(TypeError):
        schema["properties"] = {}  # shared, so read-only like the parsing schema


def test_a_result_type_has_its_serialization_schema_checked_when_the_tool_is_built() -> None:
    @dataclass
    class Found:
        hits: list[str]

    tool = Tool[None, Found](name="find", description="Find.")
    assert tool.result_contract._output_schema is tool.result_schema


SHOWN_DEFAULTS = [
    0,
    -7,
    10**30,
    True,
    False,
    None,
    "",
    "text",
    1.5,
    -0.0,
    float("inf"),
    [],
    (),
    set(),
    frozenset(),
    {},
    [1, "a"],
    (1, "a"),
    {"a": [1]},
    {3, 1, 2},
    date(2024, 1, 2),
    UUID(int=5),
]


@pytest.mark.parametrize("default", SHOWN_DEFAULTS, ids=repr)
def test_a_default_is_shown_as_pydantic_itself_encodes_it(default: Any) -> None:
    class WithDefault(BaseModel):
        value: Any = default

    shown = compile_contract(WithDefault).input_schema["properties"]["value"]["default"]
    expected = TypeAdapter(WithDefault).json_schema()["properties"]["value"]["default"]
    assert json.dumps(shown) == json.dumps(expected)


def test_a_fields_json_schema_extra_is_never_read_as_a_type() -> None:
    @dataclass
    class Hinted:
        kind: Annotated[str, Field(json_schema_extra={"examples": [{"type": "callable"}]})]

    contract = compile_contract(Hinted)
    assert contract.input_schema["properties"]["kind"] == {
        "type": "string",
        "examples": [{"type": "callable"}],
    }
    assert contract.parse('{"kind": "callable"}') == Hinted(kind="callable")


def test_a_types_refs_are_looked_for_only_when_needed_and_then_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from wink.contract import _core_schema

    walks: list[object] = []
    walk = _core_schema.core_references

    def counted(schema: Any) -> tuple[dict[str, str], dict[str, Any]]:
        walks.append(schema)
        return walk(schema)

    monkeypatch.setattr(_core_schema, "core_references", counted)

    @dataclass
    class Plain:
        name: str
        tags: list[str] = field(default_factory=list)

    compile_contract(Plain)
    assert walks == []
    compile_contract(WithFrozenSet)  # a set's items are looked up among the refs
    assert len(walks) == 1


@dataclass(frozen=True)
class FrozenTag:
    name: str


@dataclass
class WithFrozenSet:
    tags: set[FrozenTag]


def test_the_metaschema_check_runs_once_per_type_however_many_tools_use_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from wink.contract import _contract

    subjects: list[str] = []
    check = _contract.check_schema

    def counted(schema: Any, subject: str) -> None:
        subjects.append(subject)
        check(schema, subject)

    monkeypatch.setattr(_contract, "check_schema", counted)

    @dataclass
    class Shared:
        query: str

    for name in ("first", "second", "third"):
        Tool[Shared, None](name=name, description="Search.")
    assert subjects == [f"{Shared.__qualname__} (parsing)"]


class Options(TypedDict):
    name: str
    note: NotRequired[str]


@dataclass
class WithOptions:
    options: Options
    first: Options | None = None


def test_fields_without_default_are_found_in_the_compiled_schema_of_the_type(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from wink.contract.schema import fields_without_default

    compile_contract(WithOptions)
    built: list[object] = []
    build = TypeAdapter.__init__

    def counted(self: TypeAdapter[Any], *args: Any, **kwargs: Any) -> None:
        built.append(args[0])
        build(self, *args, **kwargs)

    monkeypatch.setattr(TypeAdapter, "__init__", counted)
    assert fields_without_default(WithOptions) == frozenset({"#/$defs/Options/properties/note"})
    assert built == []  # the compiled schema is read again, not built again


def test_concurrent_first_uses_of_a_fresh_type_see_one_contract_and_equal_schemas() -> None:
    from concurrent.futures import ThreadPoolExecutor

    from pydantic import computed_field

    class Priced(BaseModel):
        amount: int

        @computed_field  # type: ignore[prop-decorator]  # pydantic's documented form
        @property
        def doubled(self) -> int:
            return self.amount * 2

    def first_use(_: int) -> tuple[int, str]:
        contract = compile_contract(Priced)
        return id(contract), json.dumps(contract.output_schema)

    with ThreadPoolExecutor(max_workers=8) as pool:
        seen = set(pool.map(first_use, range(32)))
    contract = compile_contract(Priced)
    assert seen == {(id(contract), json.dumps(contract.output_schema))}
    assert json.loads(next(iter(seen))[1])["required"] == ["amount", "doubled"]
