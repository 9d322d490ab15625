"""The snapshot a store keeps is ``to_json``'s document, and what it refuses is refused alike."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pytest

from stress.store_workload import add_call, executor_for
from wink.runtime import Session, SliceKind, SnapshotError
from wink.store._changes import snapshot_text


@dataclass
class Reading:
    value: float


def test_the_stored_snapshot_is_to_jsons_document_byte_for_byte() -> None:
    session = Session()
    executor = executor_for(session)
    for n in range(150):  # past the writer's first blocks of 64 and 128 values
        executor.execute(add_call(n % 3, n))
    session[Reading].declare(SliceKind.LOG)
    session[Reading].seed([Reading(0.5), Reading(-2.0)])
    session[Reading].clear()  # an empty slice keeps its declaration
    assert snapshot_text(session.snapshot()) == session.snapshot().to_json()


def test_a_value_changed_in_place_since_its_change_is_refused_as_to_json_refuses() -> None:
    session = Session()
    reading = Reading(1.0)
    session[Reading].seed([reading])
    reading.value = math.nan  # a mutable value changed after its change was checked
    with pytest.raises(SnapshotError) as from_store:
        snapshot_text(session.snapshot())
    with pytest.raises(SnapshotError) as from_json:
        session.snapshot().to_json()
    assert str(from_store.value) == str(from_json.value)
