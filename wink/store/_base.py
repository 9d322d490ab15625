"""What every backend shares: opening a stored session, storing its calls, the async twins.

A backend implements the rows (``read``, ``create``, ``append``, ``sessions``,
``delete``, ``prune``, ``close``); ``StoreBase`` builds sessions on them.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from wink._error_text import bounded, error_message
from wink.runtime.deadline import Clock, utc_now
from wink.runtime.events import ToolInvoked
from wink.runtime.history import SliceVersion
from wink.runtime.session import Session
from wink.runtime.snapshot import Snapshot, SnapshotError, _known_types
from wink.store._changes import Slices, apply_change, change_between, read_document, snapshot_text
from wink.store._protocol import PruneReport, SessionInfo, StoredChange, StoredHistory
from wink.store.errors import StoreError

__all__ = ["FORMAT", "MAX_ID_LENGTH", "StoreBase", "checked_id", "schema_refused"]

FORMAT = 1
"""The layout of a session's rows that this wink writes and reads."""
MAX_ID_LENGTH = 512
"""The longest session id a store takes."""


def checked_id(session_id: object) -> str:
    """``session_id``, or ``ValueError`` saying why a store cannot keep it."""
    if not isinstance(session_id, str) or not session_id:
        raise ValueError(f"a session id is a non-empty str, got {bounded(repr(session_id))}")
    if len(session_id) > MAX_ID_LENGTH:
        raise ValueError(
            f"session id {bounded(session_id)!r} is {len(session_id)} characters long; "
            f"a store takes at most {MAX_ID_LENGTH}"
        )
    if "\x00" in session_id:
        raise ValueError(f"session id {bounded(session_id)!r} holds a NUL character")
    return session_id


def schema_refused(where: str, found: int, reads: int) -> str:
    """Why a store whose tables are of layout ``found`` is not opened by this wink."""
    if found > reads:
        return (
            f"{where} was written by a newer wink (schema {found}; this wink reads schema "
            f"{reads}); upgrade wink to open it"
        )
    return (
        f"{where} was written by an earlier wink (schema {found}; this wink reads schema "
        f"{reads}, whose tables keep one row per version); export its sessions with that "
        "wink (wink sessions export) and store them anew"
    )


class StoreBase:
    """``SessionStore``'s shared part; a backend adds the rows."""

    _snapshot_every: int

    @property
    def snapshot_every(self) -> int:
        """A snapshot is stored with every version that is a multiple of it."""
        return self._snapshot_every

    # What a backend provides.

    def read(self, session_id: str) -> StoredHistory | None:
        raise NotImplementedError

    def create(self, session_id: str) -> None:
        raise NotImplementedError

    def append(
        self, session_id: str, expected: int, change: StoredChange, snapshot: str | None = None
    ) -> None:
        raise NotImplementedError

    def sessions(self) -> list[SessionInfo]:
        raise NotImplementedError

    def delete(self, session_id: str) -> bool:
        raise NotImplementedError

    def prune(self, *, history: bool = True, updated_before: datetime | None = None) -> PruneReport:
        raise NotImplementedError

    # Built on it.

    def open_session(
        self,
        session_id: str,
        *,
        types: Iterable[type[Any]] | None = None,
        keep_history: bool = False,
        clock: Clock | None = None,
    ) -> Session:
        """``Session.open(store, session_id)``: the session, created when new."""
        checked_id(session_id)
        # wink's own records are known whatever ``types`` lists.
        known = None if types is None else _known_types([*types, ToolInvoked, SliceVersion])
        stored = self.read(session_id)
        if stored is None:
            self.create(session_id)
            stored = self.read(session_id)
            if stored is None:
                raise StoreError(f"session {bounded(session_id)!r} was deleted while opened")
        slices = _loaded(session_id, stored, known)
        session = Session(session_id=session_id, keep_history=keep_history, clock=clock or utc_now)
        try:
            session._load_stored(Snapshot(slices["state"], slices["log"]))
        except SnapshotError as error:
            raise StoreError(
                f"session {bounded(session_id)!r} cannot be loaded: {error_message(error)}"
            ) from None
        session._attach_store(_Link(self, session_id, stored.version, session.snapshot()))
        return session

    def _snapshot_due(self, version: int) -> bool:
        return version % self._snapshot_every == 0

    @staticmethod
    def _append_values(session_id: str, expected: int, change: StoredChange) -> dict[str, Any]:
        """The named parameters of an ``append`` statement for ``change``."""
        return {
            "id": session_id,
            "expected": expected,
            "version": change.version,
            "ops": change.ops,
            "body": change.body,
            "events": change.events,
            "now": time.time(),
        }

    async def asessions(self) -> list[SessionInfo]:
        """``sessions``, in a worker thread."""
        return await asyncio.to_thread(self.sessions)

    async def adelete(self, session_id: str) -> bool:
        """``delete``, in a worker thread."""
        return await asyncio.to_thread(self.delete, session_id)

    async def aprune(
        self, *, history: bool = True, updated_before: datetime | None = None
    ) -> PruneReport:
        """``prune``, in a worker thread."""
        return await asyncio.to_thread(self.prune, history=history, updated_before=updated_before)

    def __enter__(self) -> StoreBase:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        raise NotImplementedError


def _loaded(session_id: str, stored: StoredHistory, known: dict[str, type[Any]] | None) -> Slices:
    """The slices of a stored session: its snapshot, then each change after it."""
    where = f"session {bounded(session_id)!r}"
    if stored.format > FORMAT:
        raise StoreError(
            f"{where} was stored by a newer wink (format {stored.format}; "
            f"this wink reads format {FORMAT}); upgrade wink to load it"
        )
    expected = stored.snapshot_version + 1
    for change in stored.changes:
        if change.version != expected:
            raise StoreError(f"{where}: version {expected} is missing from the store")
        expected += 1
    if expected != stored.version + 1:
        raise StoreError(f"{where}: version {expected} is missing from the store")
    slices: Slices = {"state": {}, "log": {}}
    if stored.snapshot is not None:
        try:
            slices = read_document(stored.snapshot, known)
        except SnapshotError as error:
            raise StoreError(
                f"{where}: its snapshot at version {stored.snapshot_version} cannot be read: "
                f"{error_message(error)}"
            ) from None
    elif stored.snapshot_version:
        raise StoreError(f"{where}: its snapshot at version {stored.snapshot_version} is missing")
    for change in stored.changes:
        try:
            apply_change(slices, change.body, change.ops, known)
        except (SnapshotError, ValueError, KeyError, TypeError) as error:
            raise StoreError(
                f"{where}: version {change.version} cannot be read: {error_message(error)}"
            ) from None
    return slices


class _Link:
    """A stored session's writer: what was stored last, and its version."""

    __slots__ = ("_session_id", "_store", "_stored", "_version")

    def __init__(self, store: StoreBase, session_id: str, version: int, stored: Snapshot) -> None:
        self._store = store
        self._session_id = session_id
        self._version = version
        self._stored = stored

    @property
    def store(self) -> Any:  # the SessionStore; typed Any: a backend is a StoreBase
        return self._store

    @property
    def version(self) -> int:
        return self._version

    def commit(self, snapshot: Snapshot) -> None:
        """Store what ``snapshot`` changed since the last stored version, as the next."""
        change = change_between(self._stored, snapshot)
        if change is None:
            return
        body, ops, events = change
        version = self._version + 1
        document = snapshot_text(snapshot) if self._store._snapshot_due(version) else None
        self._store.append(
            self._session_id, self._version, StoredChange(version, body, ops, events), document
        )
        self._stored = snapshot
        self._version = version
