"""A flat record whose fields hold exactly their declared scalar types is dumped without
asking pydantic-core for its mismatch check; every other value is still checked."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, computed_field, field_serializer, model_serializer

from wink.contract import ContractViolation, compile_contract
from wink.contract._flat import FlatRecord, flat_record


@dataclass
class Entity:
    entity_id: str
    rank: int
    score: float
    active: bool
    note: str | None = None


class EntityModel(BaseModel):
    entity_id: str
    rank: int = 0
    note: str | None = None


@dataclass
class SubEntity(Entity):
    pass


def test_a_flat_dataclass_lists_each_field_with_its_exact_types() -> None:
    flat = flat_record(compile_contract(Entity)._adapter.core_schema)  # type: ignore[union-attr]
    assert isinstance(flat, FlatRecord)
    assert flat.cls is Entity
    assert flat.fields == (
        ("entity_id", frozenset({str})),
        ("rank", frozenset({int})),
        ("score", frozenset({float})),
        ("active", frozenset({bool})),
        ("note", frozenset({str, type(None)})),
    )


def test_a_flat_model_lists_its_fields() -> None:
    flat = flat_record(EntityModel.__pydantic_core_schema__)
    assert isinstance(flat, FlatRecord)
    assert flat.fields == (
        ("entity_id", frozenset({str})),
        ("rank", frozenset({int})),
        ("note", frozenset({str, type(None)})),
    )


@dataclass
class Nested:
    entity: Entity


@dataclass
class WithList:
    tags: list[str]


@dataclass
class WithLiteral:
    kind: Literal["a", "b"]


class Serialized(BaseModel):
    entity_id: str

    @field_serializer("entity_id")
    def upper(self, value: str) -> str:
        return value.upper()


class WholeSerialized(BaseModel):
    entity_id: str

    @model_serializer
    def dump(self) -> dict[str, Any]:
        return {"id": self.entity_id}


class Computed(BaseModel):
    entity_id: str

    @computed_field  # type: ignore[prop-decorator]  # pydantic's documented stacking
    @property
    def size(self) -> int:
        return len(self.entity_id)


class Open(BaseModel):
    model_config = ConfigDict(extra="allow")
    entity_id: str


@pytest.mark.parametrize(
    "tp", [Nested, WithList, WithLiteral, Serialized, WholeSerialized, Computed, Open]
)
def test_types_that_are_not_flat_records_have_none(tp: type[Any]) -> None:
    assert flat_record(compile_contract(tp)._adapter.core_schema) is None  # type: ignore[union-attr]


def test_exact_types_only_pass_the_check() -> None:
    flat = flat_record(compile_contract(Entity)._adapter.core_schema)  # type: ignore[union-attr]
    assert flat is not None
    assert flat.holds_exact_types(Entity("e", 1, 1.5, True)) is True
    assert flat.holds_exact_types(Entity("e", 1, 1.5, True, note="n")) is True
    assert flat.holds_exact_types(Entity("e", True, 1.5, True)) is False  # a bool in an int field
    assert flat.holds_exact_types(Entity("e", 1, 1, True)) is False  # an int in a float field
    assert flat.holds_exact_types(SubEntity("e", 1, 1.5, True)) is False  # a subclass
    assert flat.holds_exact_types({"entity_id": "e"}) is False


def test_a_mismatched_flat_record_is_still_refused_with_its_field() -> None:
    contract = compile_contract(Entity)
    with pytest.raises(ContractViolation) as raised:
        contract.dump_json(Entity("e", "7", 1.5, True))  # type: ignore[arg-type]
    assert str(raised.value) == 'value does not match Entity:\nrank: expected int (got "7")'
    with pytest.raises(ContractViolation):
        contract.dump(Entity(3, 1, 1.5, True))  # type: ignore[arg-type]


def test_field_serializers_still_apply_to_models_that_are_not_flat() -> None:
    assert (
        compile_contract(Serialized).dump_json(Serialized(entity_id="ab")) == '{"entity_id":"AB"}'
    )


_scalar = st.one_of(
    st.text(max_size=5), st.integers(), st.floats(allow_nan=False), st.booleans(), st.none()
)


@given(st.tuples(_scalar, _scalar, _scalar, _scalar, _scalar))
def test_dumping_answers_as_the_checked_serialization_does(values: tuple[Any, ...]) -> None:
    contract = compile_contract(Entity)
    entity = Entity(*values)
    serializer = contract._adapter.serializer  # type: ignore[union-attr]
    try:
        expected: Any = serializer.to_json(
            entity, exclude_none=True, by_alias=True, warnings="error"
        ).decode()
    except Exception:
        expected = ContractViolation
    try:
        got: Any = contract.dump_json(entity, exclude_none=True)
    except ContractViolation:
        got = ContractViolation
    assert got == expected
    try:
        expected_data: Any = serializer.to_python(
            entity, mode="json", exclude_none=True, by_alias=True, warnings="error"
        )
    except Exception:
        expected_data = ContractViolation
    try:
        got_data: Any = contract.dump(entity, exclude_none=True)
    except ContractViolation:
        got_data = ContractViolation
    assert got_data == expected_data


def test_a_value_that_is_not_an_instance_is_checked() -> None:
    with pytest.raises(ContractViolation):
        compile_contract(Entity).dump_json({"entity_id": "e"})


def test_unused_field_metadata_does_not_stop_a_record_being_flat() -> None:
    @dataclass
    class Described:
        entity_id: str = field(metadata={"description": "the id"})

    contract = compile_contract(Described)
    assert contract.dump_json(Described("x")) == '{"entity_id":"x"}'
    assert isinstance(contract._flat, FlatRecord)


def test_a_model_with_an_unset_field_is_dumped_as_the_checked_serialization_does() -> None:
    contract = compile_contract(EntityModel)
    partial = EntityModel.model_construct(rank=3)  # entity_id left unset
    assert contract.dump_json(partial) == '{"rank":3,"note":null}'
    assert contract.dump(partial) == {"rank": 3, "note": None}
