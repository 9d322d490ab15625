"""``SliceValues``: the immutable sequence that holds one session slice.

A persistent vector (a 32-way trie plus a tail block): appending shares every
existing block and copies at most one path of 32-slot tuples, so it costs the same
for ten items as for a million, and an older version stays valid and unchanged.
That is what lets a session snapshot be a pointer and a restore a swap.
"""

from __future__ import annotations

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

    __slots__ = ("_count", "_root", "_shift", "_tail")

    _count: int
    _shift: int
    _root: _Node
    _tail: _Node

    def __init__(self, values: Iterable[T] = ()) -> None:
        """A sequence holding ``values`` in order."""
        if isinstance(values, SliceValues):
            built = (values._count, values._shift, values._root, values._tail)
        else:
            built = _parts_of(values)
        self._count, self._shift, self._root, self._tail = built

    @classmethod
    def _make(cls, count: int, shift: int, root: _Node, tail: _Node) -> SliceValues[T]:
        made: SliceValues[T] = object.__new__(cls)
        made._count, made._shift, made._root, made._tail = count, shift, root, tail
        return made

    def append(self, value: T) -> SliceValues[T]:
        """A new sequence with ``value`` added at the end; this one is unchanged."""
        tail = self._tail
        if len(tail) < _WIDTH:  # ``_make`` inlined: this is on every tool call's path
            made: SliceValues[T] = _new(type(self))
            made._count = self._count + 1
            made._shift = self._shift
            made._root = self._root
            made._tail = tail + (value,)  # noqa: RUF005  (concatenation is the cheaper)
            return made
        shift, root = _push_leaf(self._count, self._shift, self._root, tail)
        return self._make(self._count + 1, shift, root, (value,))

    def extend(self, values: Iterable[T]) -> SliceValues[T]:
        """A new sequence with ``values`` added at the end."""
        count, shift, root, tail = self._count, self._shift, self._root, self._tail
        for value in values:
            if len(tail) == _WIDTH:
                shift, root = _push_leaf(count, shift, root, tail)
                tail = ()
            tail = (*tail, value)
            count += 1
        return self._make(count, shift, root, tail)

    def latest(self) -> T | None:
        """The last value, or ``None`` when empty."""
        return self._tail[-1] if self._tail else None

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[T, ...]: ...

    def __getitem__(self, index: int | slice) -> T | tuple[T, ...]:
        if isinstance(index, slice):
            return tuple(self)[index]
        position = index + self._count if index < 0 else index
        if not 0 <= position < self._count:
            raise IndexError(f"slice index {index} out of range for {self._count} values")
        offset = self._count - len(self._tail)
        if position >= offset:
            value: T = self._tail[position - offset]
            return value
        return self._leaf(position)[position & _MASK]  # type: ignore[no-any-return]  # trie leaves hold T

    def _leaf(self, position: int) -> _Node:
        node = self._root
        for level in range(self._shift, 0, -_BITS):
            node = node[(position >> level) & _MASK]
        return node

    def __iter__(self) -> Iterator[T]:
        if not self._root:
            return iter(self._tail)  # small slices: no generator frames
        return chain(_iter_node(self._root, self._shift), self._tail)

    def __reversed__(self) -> Iterator[T]:
        yield from reversed(self._tail)
        offset = self._count - len(self._tail)
        for start in range(offset - _WIDTH, -1, -_WIDTH):
            yield from reversed(self._leaf(start))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SliceValues):
            return self._count == other._count and all(
                a == b for a, b in zip(self, other, strict=True)
            )
        if isinstance(other, tuple):
            return self._count == len(other) and all(
                a == b for a, b in zip(self, other, strict=True)
            )
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


def _parts_of(values: Iterable[Any]) -> tuple[int, int, _Node, _Node]:
    items = values if isinstance(values, tuple | list) else tuple(values)
    count = len(items)
    tail_start = (count - 1) & ~_MASK if count else 0
    shift, root = _BITS, ()
    for start in range(0, tail_start, _WIDTH):
        shift, root = _push_leaf(start + _WIDTH, shift, root, tuple(items[start : start + _WIDTH]))
    return count, shift, root, tuple(items[tail_start:])


def _push_leaf(count: int, shift: int, root: _Node, leaf: _Node) -> tuple[int, _Node]:
    """Attach the full ``leaf`` (the values ending at ``count``) to the trie."""
    if (count >> _BITS) > (1 << shift):
        # The trie is full at this height: grow a level above it.
        return shift + _BITS, (root, _path_to(shift, leaf))
    return shift, _with_leaf(count, shift, root, leaf)


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
