"""``SessionStore``: what every backend provides, and the records it hands back."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from wink.runtime.deadline import Clock
    from wink.runtime.session import Session

__all__ = ["PruneReport", "SessionInfo", "SessionStore", "StoredChange", "StoredHistory"]


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """One stored session, as ``SessionStore.sessions()`` lists it."""

    session_id: str
    """The session's id."""
    created_at: datetime
    """When it was first stored (UTC)."""
    updated_at: datetime
    """When its latest version was stored (UTC)."""
    version: int
    """Its latest version: how many changes (committed calls, ``persist``) were stored."""
    event_count: int
    """How many values its stored changes added to its slices, over its whole life."""
    snapshot_version: int
    """The version of its latest snapshot (0: none yet)."""


@dataclass(frozen=True, slots=True)
class StoredChange:
    """One version of a session: what a committed call (or ``persist``) changed."""

    version: int
    """The session's version once this change is applied."""
    body: str
    """The values the change added, per slice: a snapshot document (``Snapshot.to_json``)."""
    ops: str
    """The slices it replaced or removed rather than appended to, as JSON
    (``{"set": [...], "drop": [...]}``); ``""`` when it only appended."""
    events: int
    """How many values ``body`` holds."""


@dataclass(frozen=True, slots=True)
class StoredHistory:
    """What loading a session reads: its latest snapshot and the changes stored after it."""

    version: int
    """The session's latest version."""
    snapshot_version: int
    """The version of ``snapshot`` (0: no snapshot, the changes start at version 1)."""
    snapshot: str | None
    """The snapshot document (``Snapshot.to_json``), or ``None``."""
    changes: tuple[StoredChange, ...]
    """The changes after the snapshot, in version order."""
    format: int
    """The layout its rows were written in (a newer wink may write a newer one)."""


@dataclass(frozen=True, slots=True)
class PruneReport:
    """What ``SessionStore.prune`` removed."""

    sessions: int
    """Sessions deleted (not updated since the date given)."""
    changes: int
    """Changes deleted (those a later snapshot holds)."""
    snapshots: int
    """Snapshots deleted (all but each session's latest)."""


class SessionStore(Protocol):
    """Where sessions outlive the process: each committed call is appended as the next
    version of its session, refused (``VersionConflict``) unless the stored version is
    the one the writer read; a snapshot every ``snapshot_every`` versions bounds loading.

    ``SqliteStore`` and ``PostgresStore`` implement it; ``open_store(url)`` opens either.
    """

    @property
    def snapshot_every(self) -> int:
        """A snapshot is stored with every version that is a multiple of it."""
        ...

    def open_session(
        self,
        session_id: str,
        *,
        types: Iterable[type[Any]] | None = None,
        keep_history: bool = False,
        clock: Clock | None = None,
    ) -> Session:
        """``Session.open(store, session_id)``: the session, created when new."""
        ...

    def read(self, session_id: str) -> StoredHistory | None:
        """The latest snapshot of ``session_id`` and the changes after it; ``None`` when
        it is not stored."""
        ...

    def create(self, session_id: str) -> None:
        """Store ``session_id`` at version 0, unless it is stored already."""
        ...

    def append(
        self, session_id: str, expected: int, change: StoredChange, snapshot: str | None = None
    ) -> None:
        """Store ``change`` (version ``expected + 1``) and, when given, the snapshot of
        the state at that version, in one transaction; ``VersionConflict`` unless the
        session is stored at version ``expected``."""
        ...

    def sessions(self) -> list[SessionInfo]:
        """Every stored session, oldest first."""
        ...

    def delete(self, session_id: str) -> bool:
        """Delete ``session_id`` and its history; ``False`` when it was not stored."""
        ...

    def prune(self, *, history: bool = True, updated_before: datetime | None = None) -> PruneReport:
        """With ``history``, drop what each session's latest snapshot holds (earlier
        changes and snapshots); with ``updated_before``, delete the sessions not
        updated since then."""
        ...

    def close(self) -> None:
        """Close the store's connections."""
        ...

    async def asessions(self) -> list[SessionInfo]:
        """``sessions``, off the event loop."""
        ...

    async def adelete(self, session_id: str) -> bool:
        """``delete``, off the event loop."""
        ...

    async def aprune(
        self, *, history: bool = True, updated_before: datetime | None = None
    ) -> PruneReport:
        """``prune``, off the event loop."""
        ...
