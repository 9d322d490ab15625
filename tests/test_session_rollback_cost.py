"""A rollback's cost follows what the call did, not how much the session's LOG holds."""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wink.runtime import Session, SliceKind, SliceValues


@dataclass(frozen=True)
class Entry:
    n: int


def logged_session(size: int) -> Session:
    session = Session()
    session[Entry].declare(SliceKind.LOG)
    session[Entry].seed([Entry(n) for n in range(size)])
    return session


class Reads:
    """Counts the identity comparisons made and the sequences iterated from start."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.compared = 0
        self.iterated = 0
        real_is: Callable[[object, object], bool] = operator.is_
        real_iter = SliceValues.__iter__

        def counted_is(first: object, second: object) -> bool:
            self.compared += 1
            return real_is(first, second)

        def counted_iter(values: SliceValues[Any]) -> Iterator[Any]:
            self.iterated += 1
            return real_iter(values)

        monkeypatch.setattr(operator, "is_", counted_is)
        monkeypatch.setattr(SliceValues, "__iter__", counted_iter)


def rollback_after_one_append(session: Session, monkeypatch: pytest.MonkeyPatch) -> Reads:
    snapshot = session.snapshot()
    session.dispatch(Entry(-1))
    with monkeypatch.context() as patched:
        reads = Reads(patched)
        session.restore(snapshot, declarations=True)
    return reads


@pytest.mark.parametrize("size", [1_000, 100_000])
def test_a_rollback_after_one_log_append_compares_at_most_one_block_and_iterates_nothing(
    size: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = logged_session(size)
    reads = rollback_after_one_append(session, monkeypatch)
    assert (reads.compared, reads.iterated) == (size % 32 or 32, 0)
    assert len(session[Entry]) == size + 1
    assert session[Entry].latest() == Entry(-1)


def test_a_rollback_compares_as_many_values_at_a_thousand_as_at_a_hundred_thousand_events(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    small = rollback_after_one_append(logged_session(1024 + 5), monkeypatch)
    large = rollback_after_one_append(logged_session(32 * 3125 + 5), monkeypatch)
    assert small.compared == large.compared == 5


def test_a_rollback_after_a_log_slice_was_rebuilt_with_its_values_keeps_them_all() -> None:
    session = logged_session(100)
    snapshot = session.snapshot()
    session[Entry].clear(lambda entry: False)  # rebuilt: same values, new blocks
    session.dispatch(Entry(-1))
    session.restore(snapshot)
    assert [entry.n for entry in session[Entry]] == [*range(100), -1]


def test_a_rollback_after_a_log_slice_was_reset_brings_its_values_back_first() -> None:
    session = logged_session(40)
    snapshot = session.snapshot()
    session.reset()
    session.dispatch(Entry(-1))
    session.restore(snapshot)
    assert [entry.n for entry in session[Entry]] == [*range(40), -1]


def test_the_same_event_logged_again_inside_a_rolled_back_call_is_kept_twice() -> None:
    session = Session()
    session[Entry].declare(SliceKind.LOG)
    event = Entry(7)
    session.dispatch(event)
    snapshot = session.snapshot()
    session.dispatch(event)
    session.restore(snapshot)
    assert session[Entry].all() == (event, event)


# SliceValues._grew_from: answered from shared blocks, never wrongly True

EDGES = [0, 1, 31, 32, 33, 64, 65, 1023, 1024, 1025, 1056, 1057, 32 * 32 * 32 + 33]


def appended(values: SliceValues[int], count: int) -> SliceValues[int]:
    for value in range(count):
        values = values.append(-value)
    return values


@pytest.mark.parametrize("size", EDGES)
@pytest.mark.parametrize("added", [0, 1, 31, 32, 33, 100])
def test_a_sequence_appended_to_grew_from_every_earlier_version(size: int, added: int) -> None:
    earlier = SliceValues(range(size))
    assert appended(earlier, added)._grew_from(earlier) is True
    assert earlier.extend(range(added))._grew_from(earlier) is True


@pytest.mark.parametrize("size", EDGES[1:])
def test_a_branch_did_not_grow_from_its_sibling(size: int) -> None:
    base = SliceValues(range(size))
    left, right = base.append(1), base.append(2)
    assert left._grew_from(right) is False
    assert appended(left, 40)._grew_from(right) is False


@pytest.mark.parametrize("size", EDGES[1:])
def test_a_sequence_built_anew_from_the_same_values_is_not_said_to_have_grown(size: int) -> None:
    earlier = SliceValues([Entry(n) for n in range(size)])
    rebuilt = SliceValues(list(earlier))
    assert rebuilt._grew_from(earlier) is (size <= 32)


def test_a_shorter_sequence_did_not_grow_from_a_longer_one() -> None:
    longer = SliceValues(range(100))
    assert SliceValues(range(99))._grew_from(longer) is False


@given(st.lists(st.integers(0, 80), min_size=1, max_size=6), st.integers(0, 5))
def test_grew_from_is_true_exactly_when_the_earlier_values_are_a_prefix_of_a_lineage(
    steps: list[int], pick: int
) -> None:
    versions = [SliceValues[Entry]()]
    for count in steps:
        versions.append(versions[-1].extend(Entry(n) for n in range(count)))
    earlier = versions[min(pick, len(versions) - 1)]
    later = versions[-1]
    assert later._grew_from(earlier) is True
    assert earlier._grew_from(later) is (len(earlier) == len(later))
