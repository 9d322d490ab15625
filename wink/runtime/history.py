"""``SliceVersion``: each committed version of a ``STATE`` slice, in a session that
keeps its history (``Session(keep_history=True)``).

Such a session adds one ``SliceVersion`` to its ``LOG`` slice ``session[SliceVersion]``
whenever a change of a ``STATE`` slice is committed. It holds the slice's new values
themselves (the immutable sequence the session holds, not a copy), so keeping a
version is O(1). Being ``LOG``, the history survives a restore; a restore that puts
a slice back (a failed tool call's rollback, or ``session.restore()``) adds a version
of its own, with ``cause="restore"``, whose ``undoes_from`` says which versions it
undid. A session without the option keeps nothing and pays nothing.

The history is saved and loaded with the rest of the session (``Snapshot.to_json``,
``from_json``); the values of each version come back as JSON data, as fields typed
``Any`` do. ``wink trace`` and ``session.to_html()`` show it as each slice's versions
over time, next to the tool call or evaluation turn that made them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from wink.runtime._raw import RawText
from wink.runtime._vector import SliceValues

__all__ = ["RESTORE", "UPDATE", "SliceVersion", "undone_positions", "undone_versions"]

UPDATE = "update"
"""The ``cause`` of a version made by ``update()``, ``seed()`` or ``clear()`` on a slice,
or by the slice's declaration."""
RESTORE = "restore"
"""The ``cause`` of a version made by a restore: a failed call's rollback, or
``session.restore()``."""


@dataclass(frozen=True, slots=True)
class SliceVersion:
    """A ``STATE`` slice's values from one committed change on."""

    slice_type: str
    """The slice's type, as a snapshot's JSON names it: ``module:QualifiedName``."""
    values: SliceValues[Any]
    """The slice's values after the change (read back from JSON as JSON data)."""
    changed_at: datetime
    """When the change was committed (UTC)."""
    cause: str
    """What changed the slice: the type of the dispatched event (``module:QualifiedName``;
    ``wink.runtime.events:ToolInvoked`` for a tool call's result value), ``"update"``
    or ``"restore"``."""
    call_id: RawText | None = None
    """The id of the tool call whose result value made this version, if one did."""
    tool: RawText | None = None
    """The name of that tool call's tool."""
    undoes_from: int | None = None
    """For a ``restore`` version of a snapshot taken from this session: the versions of
    the same slice from this position of the history on (up to this one) were undone."""


def undone_versions(history: Sequence[SliceVersion]) -> set[int]:
    """The positions in ``history`` (``session[SliceVersion].values()``) of the versions
    that a later restore undid."""
    return undone_positions([(v.slice_type, v.cause, v.undoes_from) for v in history])


def undone_positions(history: Sequence[tuple[str, str, int | None]]) -> set[int]:
    """``undone_versions`` of versions given as (slice type, cause, undoes_from)."""
    undone: set[int] = set()
    for position, (slice_type, cause, undoes_from) in enumerate(history):
        if cause == RESTORE and undoes_from is not None:
            undone.update(
                earlier
                for earlier in range(undoes_from, position)
                if history[earlier][0] == slice_type
            )
    return undone
