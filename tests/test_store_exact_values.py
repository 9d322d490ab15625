"""Values of plain scalar dataclasses are known to read back as themselves: their
read-back comparison is skipped, while every refusal stays the one it was."""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Annotated, Any

import pytest
from pydantic import BaseModel

from wink.runtime import Session, Snapshot, ToolInvoked, _snapshot_writer
from wink.runtime._roundtrip import exact_record, holds_exact_values
from wink.runtime.snapshot import SnapshotError
from wink.store._changes import change_between


@dataclass(frozen=True)
class Reading:
    label: str
    count: int
    score: float
    note: str | None = None
    done: bool = False


@dataclass(frozen=True)
class LaterReading(Reading):
    pass


@dataclass(frozen=True)
class Adjusted:
    count: int

    def __post_init__(self) -> None:
        pass


@dataclass(frozen=True)
class Stamped:
    at: datetime


@dataclass(frozen=True)
class Described:
    count: Annotated[int, "why"]


@dataclass(frozen=True)
class Tagged:
    count: int = field(metadata={"unit": "s"})


@dataclass(frozen=True)
class Loose:
    data: Any


class Modelled(BaseModel):
    count: int


class Colour(enum.StrEnum):
    RED = "red"


def _snapshot(*values: object) -> Snapshot:
    session = Session()
    session[type(values[0])].seed(list(values))
    return session.snapshot()


def _refusing_comparison(monkeypatch: pytest.MonkeyPatch) -> None:
    def compared(*args: object) -> None:
        raise AssertionError("values were compared")

    monkeypatch.setattr(_snapshot_writer, "difference", compared)


def test_plain_scalar_dataclass_is_an_exact_record_with_each_fields_types() -> None:
    assert exact_record(Reading) == (
        Reading,
        (
            ("label", frozenset({str})),
            ("count", frozenset({int})),
            ("score", frozenset({float})),
            ("note", frozenset({str, type(None)})),
            ("done", frozenset({bool})),
        ),
    )


@pytest.mark.parametrize(
    "cls", [Adjusted, Stamped, Described, Tagged, Loose, Modelled, ToolInvoked, int]
)
def test_types_that_read_or_write_their_own_way_are_not_exact_records(cls: type[Any]) -> None:
    assert exact_record(cls) is None


@pytest.mark.parametrize(
    ("value", "exact"),
    [
        (Reading("a", 1, 0.5), True),
        (Reading("a", 1, 0.5, "n", True), True),
        (LaterReading("a", 1, 0.5), False),  # a subclass is written as its base class
        (Reading("a", True, 0.5), False),  # a bool in an int field
        (Reading("a", 1, 1), False),  # an int in a float field
        (Reading(Colour.RED, 1, 0.5), False),  # a str subclass in a str field
        (Reading("a", 1, math.nan), False),
        (Reading("a", 1, -math.inf), False),
    ],
)
def test_values_hold_exact_values_only_as_the_records_own_types(
    value: Reading, exact: bool
) -> None:
    record = exact_record(Reading)
    assert record is not None
    assert holds_exact_values(record, [Reading("b", 2, 1.5), value]) is exact


def test_exact_values_are_written_without_comparing_them(monkeypatch: pytest.MonkeyPatch) -> None:
    snapshot = _snapshot(Reading("a", 1, 0.5), Reading("b", 2, -1e300, "x", True))
    expected = snapshot.to_json()
    _refusing_comparison(monkeypatch)
    assert snapshot.to_json() == expected
    assert Snapshot.from_json(expected, types=[Reading]) == snapshot


def test_a_store_change_of_exact_values_is_encoded_without_comparing_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    before = _snapshot(Reading("a", 1, 0.5))
    session = Session()
    session[Reading].seed([Reading("a", 1, 0.5)])
    after = session.snapshot()
    _refusing_comparison(monkeypatch)
    key = f"{Reading.__module__}:Reading"
    assert change_between(before, after) == (
        f'{{"version":1,"slices":[{{"type":"{key}","kind":"state","items":'
        '[{"label":"a","count":1,"score":0.5,"note":null,"done":false}]}]}',
        f'{{"set": ["{key}"], "drop": []}}',
        1,
    )


def test_values_that_are_not_exact_are_still_compared(monkeypatch: pytest.MonkeyPatch) -> None:
    snapshot = _snapshot(Stamped(datetime(2025, 1, 1, tzinfo=UTC)))
    _refusing_comparison(monkeypatch)
    with pytest.raises(AssertionError, match="values were compared"):
        snapshot.to_json()


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (
            Reading("a", 1, math.nan),
            f"slice {Reading.__module__}:Reading cannot be written as JSON: "
            "[1].score: nan cannot be written as JSON (it has no NaN or Infinity)",
        ),
        (
            Reading("a", 1, math.inf),
            f"slice {Reading.__module__}:Reading cannot be written as JSON: "
            "[1].score: inf cannot be written as JSON (it has no NaN or Infinity)",
        ),
        (
            Reading("a", 10**5000, 0.5),
            f"slice {Reading.__module__}:Reading cannot be written as JSON: "
            "[1].count: an integer of more than 4300 digits cannot be read back from JSON",
        ),
    ],
)
def test_a_record_type_value_json_cannot_hold_is_refused_naming_it(
    value: Reading, message: str
) -> None:
    with pytest.raises(SnapshotError) as refused:
        _snapshot(Reading("b", 2, 1.5), value).to_json()
    assert str(refused.value) == message
