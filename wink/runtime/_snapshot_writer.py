"""Writing a snapshot's JSON to a file a block of values at a time (``Snapshot.write_json``).

The document is ``{"version":1,"slices":[{"type":...,"kind":...,"items":[...]},...]}``,
byte for byte what ``Snapshot.to_json`` returns. Each slice's items are written in
blocks: a block is dumped through the slice type's contract, read back and compared
with the values (see ``wink.runtime._roundtrip``), then written. So the memory it
takes is that of one block, whatever the session holds; a value that would not come
back as it is raises ``SnapshotError`` before its block is written.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from itertools import islice
from typing import IO, Any

from pydantic_core import from_json

from wink._error_text import bounded
from wink.contract import Contract, ContractViolation, FieldProblem
from wink.runtime._roundtrip import (
    describe,
    difference,
    exact_record,
    holds_exact_values,
    unsavable,
)
from wink.runtime._vector import SliceValues
from wink.runtime.snapshot import (
    SNAPSHOT_VERSION,
    Snapshot,
    SnapshotError,
    _items_contract,
    _type_key,
)

__all__ = ["write_snapshot"]

_BLOCK_BYTES = 256 * 1024
"""The JSON text a block of values aims at: big enough that the per-block work is
spread thin, small enough to be a constant of the memory taken."""
_FIRST_BLOCK = 64
_LARGEST_BLOCK = 8192

_Slice = tuple[str, str, type[Any], SliceValues[Any]]


def write_snapshot(snapshot: Snapshot, file: IO[bytes]) -> None:
    """Write ``snapshot`` as JSON to ``file`` (opened for binary writing)."""
    slices = _slices_of(snapshot)
    file.write(b'{"version":%d,"slices":[' % SNAPSHOT_VERSION)
    for index, (key, kind, slice_type, values) in enumerate(slices):
        head = f'{{"type":{json.dumps(key)},"kind":"{kind}","items":['
        file.write((head if not index else "," + head).encode())
        for start, text in _checked_blocks(key, slice_type, values):
            file.write(text.encode() if not start else b"," + text.encode())
        file.write(b"]}")
    file.write(b"]}")


def _slices_of(snapshot: Snapshot) -> list[_Slice]:
    """Every slice, ``STATE`` ones first; ``SnapshotError`` for a name that two would share."""
    slices: list[_Slice] = []
    known: dict[str, type[Any]] = {}
    for kind, slice_map in (("state", snapshot.state), ("log", snapshot.log)):
        for slice_type, values in slice_map.items():
            key = _type_key(slice_type)
            if key in known:
                # Reading it back would find the name twice and could not tell them apart.
                raise SnapshotError(
                    f"slice {bounded(key)} cannot be written as JSON: "
                    + (
                        "it is both a state and a log slice"
                        if known[key] is slice_type
                        else "another slice type has the same module and name"
                    )
                )
            known[key] = slice_type
            slices.append((key, kind, slice_type, values))
    return slices


def _checked_blocks(
    key: str, slice_type: type[Any], values: Iterable[Any], first: int = 0
) -> Iterator[tuple[int, str]]:
    """``(position of its first value, its items' text without the brackets)`` for each
    block of ``values`` of ``slice_type``, each one checked to read back as it is;
    ``first``: the position of the first value in its slice (a store writes the values
    a call added)."""
    contract = _items_contract(slice_type)
    record = exact_record(slice_type)
    taken = iter(values)
    start, size = first, _FIRST_BLOCK
    while block := list(islice(taken, size)):
        text = _dumped(key, contract, block, start)
        exact = record is not None and holds_exact_values(record, block)
        _check_read_back(key, contract, block, start, text, exact=exact)
        yield start - first, text[1:-1]
        start += len(block)
        # Aim each block at about _BLOCK_BYTES of text, whatever the values weigh.
        if len(text) < _BLOCK_BYTES // 2:
            size = min(size * 2, _LARGEST_BLOCK)
        elif len(text) > _BLOCK_BYTES * 2:
            size = max(size // 2, 1)


def _dumped(key: str, contract: Contract[Any], block: list[Any], start: int) -> str:
    """The block as a JSON array, or ``SnapshotError`` naming a value JSON cannot hold."""
    try:
        return contract.dump_json(block)
    except Exception:
        _refuse_unsavable(key, block, start)
        raise SnapshotError(
            f"slice {bounded(key)} cannot be written as JSON: "
            f"{bounded(_dump_failure(contract, block, start))}"
        ) from None


def _check_read_back(
    key: str, contract: Contract[Any], block: list[Any], start: int, text: str, *, exact: bool
) -> None:
    """Read ``text`` back as ``Snapshot.read_json`` would and compare it with ``block``.

    Only when something differs are the values searched for what JSON cannot hold
    (the slower walk that names the cause); a clean block costs one read and one
    comparison. ``exact``: the values are known to read back as themselves (see
    ``holds_exact_values``), so only the text's own limits are checked.
    """
    try:
        # Nested as deep as the document nests its items: the reader's limits then hold.
        from_json(f"[[[{text}]]]", allow_inf_nan=False)
    except ValueError as error:
        _refuse_unsavable(key, block, start)
        reason = bounded(str(error))
        raise SnapshotError(
            f"the snapshot would not be read back: snapshot is not valid JSON: {reason}"
        ) from None
    if exact:
        return
    try:
        loaded = contract.parse(text)
    except ContractViolation as error:
        _refuse_unsavable(key, block, start)
        problems = "; ".join(str(problem) for problem in shifted(error.problems, start))
        raise SnapshotError(
            f"slice {bounded(key)} cannot be written as JSON: it would not be read back: "
            f"{bounded(problems)}"
        ) from None
    if len(loaded) != len(block):
        raise SnapshotError(
            f"slice {bounded(key)} cannot be written as JSON: {len(block)} items would be "
            f"read back as {len(loaded)}"
        )
    for position, (before, after) in enumerate(zip(block, loaded, strict=True), start):
        found = difference(before, after, [position])
        if found is not None:
            _refuse_unsavable(key, block, start)
            raise SnapshotError(_unsavable_message(key, describe(found[0]), found[1]))


_LEADING_INDEX = re.compile(r"^\[(\d+)\]")


def shifted(problems: tuple[FieldProblem, ...], start: int) -> list[FieldProblem]:
    """``problems`` of a block whose first value is at ``start``, their paths counted
    from the slice's first value."""
    if not start:
        return list(problems)
    return [
        FieldProblem(
            _LEADING_INDEX.sub(lambda found: f"[{int(found[1]) + start}]", problem.path),
            problem.reason,
        )
        for problem in problems
    ]


def _refuse_unsavable(key: str, block: list[Any], start: int) -> None:
    """Raise ``SnapshotError`` naming the first value JSON cannot hold, if any."""
    for position, value in enumerate(block, start):
        found = unsavable(value, [position])
        if found is not None:
            raise SnapshotError(_unsavable_message(key, describe(found[0]), found[1]))


def _unsavable_message(key: str, path: str, reason: str) -> str:
    """Why a slice cannot be written as JSON: the value at ``path``, and why."""
    return f"slice {bounded(key)} cannot be written as JSON: {bounded(path)}: {bounded(reason)}"


def _dump_failure(contract: Contract[Any], block: list[Any], start: int) -> str:
    """Which item failed to serialize, and why, in one line."""
    for position, value in enumerate(block, start):
        try:
            contract.dump_json([value])
        except Exception as error:
            text = " ".join(str(error).split())
            # A serializer's own ValueError says it best; pydantic wraps it in its words.
            reason = text.rpartition("ValueError: ")[2] or text
            return f"[{position}]: {reason.removeprefix('<root>: ')}"
    return "the items cannot be serialized together"
