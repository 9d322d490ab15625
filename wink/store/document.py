"""A stored session as one snapshot document, read as JSON data: no slice type imported.

``wink sessions export`` writes what ``Snapshot.to_json`` would write for the session
``Session.open`` loads, without the session's slice types: its latest snapshot and
the changes after it are merged as JSON (each change's values join their slice, a
slice it replaced is taken whole, one it dropped is removed), as loading merges them.
"""

from __future__ import annotations

import json
from typing import Any

from wink._error_text import bounded
from wink.store._protocol import StoredHistory
from wink.store.errors import StoreError

__all__ = ["TOOL_INVOKED", "session_document"]

TOOL_INVOKED = "wink.runtime.events:ToolInvoked"
"""The name of the slice of recorded tool calls in a snapshot document."""

_Slices = dict[str, dict[str, list[Any]]]


def session_document(session_id: str, history: StoredHistory) -> dict[str, Any]:
    """The snapshot document (JSON data) of ``history``'s latest version; ``StoreError``
    naming the session and the version that cannot be read."""
    where = f"session {bounded(session_id)!r}"
    slices: _Slices = {"state": {}, "log": {}}
    if history.snapshot is not None:
        slices = _slices(
            history.snapshot, f"{where}: its snapshot at version {history.snapshot_version}"
        )
    for change in history.changes:
        added = _slices(change.body, f"{where}: version {change.version}")
        _apply(slices, added, change.ops, f"{where}: version {change.version}")
    return {
        "version": 1,
        "slices": [
            {"type": key, "kind": kind, "items": items}
            for kind in ("state", "log")
            for key, items in slices[kind].items()
        ],
    }


def _slices(text: str, where: str) -> _Slices:
    try:
        document = json.loads(text)
        slices: _Slices = {"state": {}, "log": {}}
        for entry in document["slices"]:
            slices[entry["kind"]][entry["type"]] = list(entry["items"])
    except (ValueError, KeyError, TypeError) as error:
        raise StoreError(f"{where} cannot be read: {bounded(str(error))}") from None
    return slices


def _apply(slices: _Slices, added: _Slices, ops: str, where: str) -> None:
    """Merge one change into ``slices`` in place, as loading a session does."""
    state, log = slices["state"], slices["log"]
    replaced: set[str] = set()
    if ops:
        try:
            named = json.loads(ops)
            replaced = set(named["set"])
            gone = set(named["drop"])
        except (ValueError, KeyError, TypeError) as error:
            raise StoreError(f"{where} cannot be read: {bounded(str(error))}") from None
        for kept in (state, log):
            for key in [key for key in kept if key in gone]:
                del kept[key]
    for kind, target, other in (("state", state, log), ("log", log, state)):
        for key, items in added[kind].items():
            if key in other or key in replaced:
                other.pop(key, None)
                target[key] = items
            elif key in target:
                target[key].extend(items)
            else:
                target[key] = items
