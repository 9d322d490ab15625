"""``SliceValues``: the immutable sequence that holds one session slice.

A persistent vector (a 32-way trie plus a tail block): appending shares every
existing block and copies at most one path of 32-slot tuples, so it costs the same
for ten items as for a million, and an older version stays valid and unchanged.
That is what lets a session snapshot be a pointer and a restore a swap.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Iterator, Sequence
from itertools import chain
from typing import Any, Generic, TypeVar, get_args, overload

from pydantic import GetCoreSchemaHandler
from pydantic_core import core_schema

__all__ = ["SliceValues"]

T = TypeVar("T")

_BITS = 5
_WIDTH = 1 << _BITS
_MASK = _WIDTH - 1

_new = object.__new__

# A trie node is a tuple of child nodes; a leaf is a tuple of up to 32 values.
_Node = tuple[Any, ...]


class SliceValues(Sequence[T], Generic[T]):
    """An immutable sequence with cheap ``append``: what reducers receive and return."""

    # ``_trie``: (how many values the trie holds, its height in bits, its root), shared
    # by the versions that differ only in their tail; ``_tail``: the last 0 to 32
    # values. Two slots, as a new version is made on every dispatch.
    __slots__ = ("_tail", "_trie")

    _trie: tuple[int, int, _Node]
    _tail: _Node

    def __init__(self, values: Iterable[T] = ()) -> None:
        """A sequence holding ``values`` in order."""
        if isinstance(values, SliceValues):
            self._trie, self._tail = values._trie, values._tail
        else:
            self._trie, self._tail = _parts_of(values)

    def append(self, value: T) -> SliceValues[T]:
        """A new sequence with ``value`` added at the end; this one is unchanged."""
        tail = self._tail
        made: SliceValues[T] = _new(type(self))
        if len(tail) < _WIDTH:
            made._trie = self._trie
            made._tail = tail + (value,)  # noqa: RUF005  (concatenation is the cheaper)
        else:
            made._trie = _with_full_tail(self._trie, tail)
            made._tail = (value,)
        return made

    def extend(self, values: Iterable[T]) -> SliceValues[T]:
        """A new sequence with ``values`` added at the end."""
        trie, tail = self._trie, self._tail
        for value in values:
            if len(tail) == _WIDTH:
                trie = _with_full_tail(trie, tail)
                tail = ()
            tail = (*tail, value)
        made: SliceValues[T] = _new(type(self))
        made._trie, made._tail = trie, tail
        return made

    @property
    def _root(self) -> _Node:
        """The trie's root node: versions built from one another share it."""
        return self._trie[2]

    def _grew_from(self, earlier: SliceValues[Any]) -> bool:
        """Whether this sequence was made from ``earlier`` by appending (through any
        versions in between), told from the blocks they share in at most 32 value
        comparisons and one walk down the trie, however many values they hold.

        ``True`` means every value of ``earlier`` is, as the same object, at the same
        position here. ``False`` may also mean that this sequence holds them without
        sharing ``earlier``'s blocks (one built anew from its values): compare them then.
        """
        size = len(earlier)
        if len(self) < size:
            return False
        offset = earlier._trie[0]
        if offset:
            # A full block enters a trie at one position only, from the tail of the one
            # sequence it was made for; every sequence holding it there was appended to
            # from that one. So sharing earlier's last block means holding every value
            # up to its end: the values before it need no comparing.
            last = offset - _WIDTH
            if self._leaf(last) is not earlier._leaf(last):
                return False
        tail = earlier._tail
        # Here earlier's tail values sit in the block starting at ``offset``: still the
        # tail, or a full block of the trie when this sequence has grown past it.
        block = self._leaf(offset) if self._trie[0] > offset else self._tail
        return all(map(operator.is_, block[: len(tail)], tail))

    def latest(self) -> T | None:
        """The last value, or ``None`` when empty."""
        return self._tail[-1] if self._tail else None

    def __len__(self) -> int:
        return self._trie[0] + len(self._tail)

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[T, ...]: ...

    def __getitem__(self, index: int | slice) -> T | tuple[T, ...]:
        if isinstance(index, slice):
            return tuple(self)[index]
        offset = self._trie[0]
        count = offset + len(self._tail)
        position = index + count if index < 0 else index
        if not 0 <= position < count:
            raise IndexError(f"slice index {index} out of range for {count} values")
        if position >= offset:
            value: T = self._tail[position - offset]
            return value
        return self._leaf(position)[position & _MASK]  # type: ignore[no-any-return]  # trie leaves hold T

    def _leaf(self, position: int) -> _Node:
        _, shift, node = self._trie
        for level in range(shift, 0, -_BITS):
            node = node[(position >> level) & _MASK]
        return node

    def __iter__(self) -> Iterator[T]:
        trie = self._trie
        if not trie[0]:
            return iter(self._tail)  # small slices: no generator frames
        return chain(_iter_node(trie[2], trie[1]), self._tail)

    def __reversed__(self) -> Iterator[T]:
        yield from reversed(self._tail)
        for start in range(self._trie[0] - _WIDTH, -1, -_WIDTH):
            yield from reversed(self._leaf(start))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SliceValues):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        if isinstance(other, tuple):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"SliceValues({list(self)!r})"

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        """In JSON a list of the item type: read back as a ``SliceValues``."""
        arguments = get_args(source)
        as_list = core_schema.list_schema(
            handler.generate_schema(arguments[0] if arguments else Any)
        )
        return core_schema.no_info_after_validator_function(
            cls,
            as_list,
            serialization=core_schema.plain_serializer_function_ser_schema(
                list, return_schema=as_list
            ),
        )


_EMPTY_TRIE: tuple[int, int, _Node] = (0, _BITS, ())


def _parts_of(values: Iterable[Any]) -> tuple[tuple[int, int, _Node], _Node]:
    items = values if isinstance(values, tuple | list) else tuple(values)
    count = len(items)
    tail_start = (count - 1) & ~_MASK if count else 0
    trie = _EMPTY_TRIE
    for start in range(0, tail_start, _WIDTH):
        trie = _with_full_tail(trie, tuple(items[start : start + _WIDTH]))
    return trie, tuple(items[tail_start:])


def _with_full_tail(trie: tuple[int, int, _Node], leaf: _Node) -> tuple[int, int, _Node]:
    """``trie`` with the full tail ``leaf`` attached after its values."""
    size, shift, root = trie
    count = size + _WIDTH  # the values ending with this leaf
    if (count >> _BITS) > (1 << shift):
        # The trie is full at this height: grow a level above it.
        return count, shift + _BITS, (root, _path_to(shift, leaf))
    return count, shift, _with_leaf(count, shift, root, leaf)


def _with_leaf(count: int, level: int, node: _Node, leaf: _Node) -> _Node:
    slot = ((count - 1) >> level) & _MASK
    if level == _BITS:
        child: _Node = leaf
    elif slot < len(node):
        child = _with_leaf(count, level - _BITS, node[slot], leaf)
    else:
        child = _path_to(level - _BITS, leaf)
    if slot < len(node):
        return (*node[:slot], child, *node[slot + 1 :])
    return (*node, child)


def _path_to(level: int, leaf: _Node) -> _Node:
    node = leaf
    for _ in range(0, level, _BITS):
        node = (node,)
    return node


def _iter_node(node: _Node, level: int) -> Iterator[Any]:
    if level == 0:
        yield from node
        return
    for child in node:
        yield from _iter_node(child, level - _BITS)
