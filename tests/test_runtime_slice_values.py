"""SliceValues: the persistent sequence behind every session slice."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wink.runtime import SliceValues

# Sizes either side of the tail block (32) and of each trie level (1024, 32768).
EDGES = [0, 1, 31, 32, 33, 64, 1023, 1024, 1025, 1056, 1057, 32 * 32 * 32 + 33]


@pytest.mark.parametrize("size", EDGES)
def test_built_and_appended_sequences_hold_the_same_values(size: int) -> None:
    expected = list(range(size))
    appended: SliceValues[int] = SliceValues()
    for value in expected:
        appended = appended.append(value)
    built = SliceValues(expected)
    assert list(appended) == expected
    assert list(built) == expected
    assert list(reversed(built)) == expected[::-1]
    assert len(built) == size


@pytest.mark.parametrize("size", EDGES[1:])
def test_every_index_reads_its_value(size: int) -> None:
    values = SliceValues(range(size))
    assert [values[i] for i in range(size)] == list(range(size))
    assert values[-1] == size - 1


def test_append_leaves_the_original_unchanged() -> None:
    original = SliceValues(range(40))
    longer = original.append(40)
    forked = original.append(-1)
    assert list(original) == list(range(40))
    assert longer[40] == 40
    assert forked[40] == -1


def test_extend_adds_values_in_order() -> None:
    assert list(SliceValues([1, 2]).extend(range(3, 40))) == list(range(1, 40))


def test_latest_is_the_last_value_or_none() -> None:
    assert SliceValues().latest() is None
    assert SliceValues(range(100)).latest() == 99


def test_index_out_of_range_names_the_index_and_length() -> None:
    with pytest.raises(IndexError, match="slice index 5 out of range for 5 values"):
        SliceValues(range(5))[5]


def test_slicing_returns_a_tuple() -> None:
    assert SliceValues(range(10))[2:5] == (2, 3, 4)


def test_equal_to_a_tuple_with_the_same_values() -> None:
    assert SliceValues([1, 2]) == (1, 2)
    assert SliceValues([1, 2]) != (1, 2, 3)
    assert SliceValues([1, 2]) == SliceValues([1]).append(2)
    assert hash(SliceValues([1, 2])) == hash(SliceValues([1, 2]))


def test_building_from_slice_values_shares_its_blocks() -> None:
    original = SliceValues(range(2000))
    copy = SliceValues(original)
    assert copy == original
    assert copy._root is original._root


@given(st.lists(st.integers()), st.lists(st.integers()))
def test_behaves_like_a_tuple(first: list[int], second: list[int]) -> None:
    values = SliceValues(first).extend(second)
    expected = (*first, *second)
    assert tuple(values) == expected
    assert tuple(reversed(values)) == expected[::-1]
    assert all(values[i] == expected[i] for i in range(-len(expected), len(expected)))


# Each step appends one value to an earlier version (by index, modulo how many exist).
_branches = st.lists(st.tuples(st.integers(0, 10_000), st.integers()), max_size=120)


@given(_branches)
def test_every_version_keeps_its_values_when_later_ones_branch_from_any_of_them(
    steps: list[tuple[int, int]],
) -> None:
    versions: list[SliceValues[int]] = [SliceValues(), SliceValues(range(31))]
    expected: list[list[int]] = [[], list(range(31))]
    for source, value in steps:
        index = source % len(versions)
        versions.append(versions[index].append(value))
        expected.append([*expected[index], value])
    for version, values in zip(versions, expected, strict=True):
        assert list(version) == values
        assert len(version) == len(values)
        assert version.latest() == (values[-1] if values else None)
        assert list(reversed(version)) == values[::-1]
        assert [version[i] for i in range(len(values))] == values


def test_versions_appended_within_one_tail_block_share_the_trie() -> None:
    base = SliceValues(range(40))
    first, second = base.append(40), base.append(41)
    assert first._root is base._root
    assert second._root is base._root
    assert (list(first)[-2:], list(second)[-2:]) == ([39, 40], [39, 41])


def test_appending_to_a_full_tail_block_moves_it_into_the_trie() -> None:
    full = SliceValues(range(64))
    longer = full.append(64)
    assert len(full._root) == 1
    assert len(longer._root) == 2
    assert longer._root[0] is full._root[0]
    assert list(longer) == list(range(65))
    assert list(full) == list(range(64))
