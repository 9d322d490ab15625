"""A stored session's changes: what a committed call changed, as the store keeps it.

Between the version stored last and the session now, each slice either only grew
(the common case: the events a call dispatched joined their slices), or was replaced
(a reducer or an update rewrote it, or it changed kind), or is gone. A change stores
the values each slice gained, written by the snapshot writer exactly as
``Snapshot.to_json`` writes them (so what ``to_json`` refuses is refused here, with
the same message), and the names of the slices replaced or gone. Loading applies the
changes in order on the latest snapshot: no reducer runs again.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterable
from typing import Any

from wink.runtime._snapshot_reader import read_snapshot
from wink.runtime._snapshot_writer import _checked_blocks, _slices_of, write_snapshot
from wink.runtime._vector import SliceValues
from wink.runtime.snapshot import SNAPSHOT_VERSION, Snapshot, _type_key

__all__ = ["Slices", "apply_change", "change_between", "read_document", "snapshot_text"]

Slices = dict[str, dict[type[Any], SliceValues[Any]]]
"""``{"state": ..., "log": ...}``: a session's slices while it is being loaded."""

_Written = tuple[str, str, type[Any], list[Any], int]
"""A slice in a change: its name, kind, type, the values written, the first one's position."""


def change_between(stored: Snapshot, now: Snapshot) -> tuple[str, str, int] | None:
    """``(body, ops, values written)`` of what ``now`` changed since ``stored``, or
    ``None`` when nothing did; ``SnapshotError`` for what ``to_json`` would refuse."""
    _slices_of(now)  # refuses two slices of one name, as to_json does
    written: list[_Written] = []
    replaced: list[str] = []
    for kind, slices, stored_slices, stored_other in (
        ("state", now._state, stored._state, stored._log),
        ("log", now._log, stored._log, stored._state),
    ):
        for slice_type, values in slices.items():
            earlier = stored_slices.get(slice_type)
            if earlier is values:
                continue
            key = _type_key(slice_type)
            if earlier is not None and values._grew_from(earlier):
                size = len(earlier)
                if len(values) > size:
                    added = [values[index] for index in range(size, len(values))]
                    written.append((key, kind, slice_type, added, size))
                continue
            if earlier is None and slice_type not in stored_other:
                written.append((key, kind, slice_type, list(values), 0))
                continue
            # Rewritten, emptied or moved to the other kind: stored whole.
            replaced.append(key)
            written.append((key, kind, slice_type, list(values), 0))
    dropped = [
        _type_key(slice_type)
        for slice_type in (*stored._state, *stored._log)
        if slice_type not in now._state and slice_type not in now._log
    ]
    if not written and not dropped:
        return None
    ops = json.dumps({"set": replaced, "drop": dropped}) if replaced or dropped else ""
    return _body(written), ops, sum(len(entry[3]) for entry in written)


def _body(written: Iterable[_Written]) -> str:
    """The values written, as a snapshot document, each block checked by the writer."""
    parts = [f'{{"version":{SNAPSHOT_VERSION},"slices":[']
    for index, (key, kind, slice_type, values, first) in enumerate(written):
        head = f'{{"type":{json.dumps(key)},"kind":"{kind}","items":['
        parts.append(head if not index else "," + head)
        for start, text in _checked_blocks(key, slice_type, values, first):
            parts.append(text if not start else "," + text)
        parts.append("]}")
    parts.append("]}")
    return "".join(parts)


def snapshot_text(snapshot: Snapshot) -> str:
    """``snapshot.to_json()``, the document a store keeps as a session's snapshot."""
    written = io.BytesIO()
    write_snapshot(snapshot, written)
    return written.getvalue().decode()


def read_document(text: str, known: dict[str, type[Any]] | None) -> Slices:
    """The slices of a snapshot document a store kept; ``SnapshotError`` saying where."""
    return read_snapshot(io.BytesIO(text.encode()), known)


def apply_change(slices: Slices, body: str, ops: str, known: dict[str, type[Any]] | None) -> None:
    """Apply one stored change to ``slices`` (loaded so far), in place."""
    added = read_document(body, known)
    state, log = slices["state"], slices["log"]
    replaced: set[str] = set()
    if ops:
        named = json.loads(ops)
        replaced = set(named["set"])
        gone = set(named["drop"])
        for kept in (state, log):
            for slice_type in [t for t in kept if _type_key(t) in gone]:
                del kept[slice_type]
    for kind, target, other in (("state", state, log), ("log", log, state)):
        for slice_type, values in added[kind].items():
            if slice_type in other or _type_key(slice_type) in replaced:
                other.pop(slice_type, None)
                target[slice_type] = values
            else:
                earlier = target.get(slice_type)
                target[slice_type] = values if earlier is None else earlier.extend(values)
