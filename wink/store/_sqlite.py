"""``SqliteStore``: sessions in a SQLite file (stdlib ``sqlite3``), the embedded default.

The file is in WAL mode, so readers never wait for the writer; every write is one
``BEGIN IMMEDIATE`` transaction, which takes the write lock before reading anything,
and waits (up to ``busy_timeout``) for another writer instead of failing. So two
processes writing one file take turns, and never see "database is locked" unless one
holds the lock that long. Within a process, one connection serves every thread, one
statement at a time.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from datetime import UTC, datetime

from wink._error_text import bounded
from wink.store._base import FORMAT, StoreBase, checked_id, schema_refused
from wink.store._protocol import PruneReport, SessionInfo, StoredChange, StoredHistory
from wink.store.errors import StoreError, VersionConflict

__all__ = ["SCHEMA", "SqliteStore"]

SCHEMA = 2
"""The version of the tables this wink creates (kept in ``wink_store``)."""

# A version is one row of ``wink_changes``: a session's current version, when it was
# last stored and how many values it holds are those of its latest row, which pruning
# keeps. Version 0 is the row ``create`` adds, so every stored session has one.
_TABLES = (
    """CREATE TABLE wink_sessions (
        session_id TEXT PRIMARY KEY,
        format INTEGER NOT NULL,
        created_at REAL NOT NULL)""",
    """CREATE TABLE wink_changes (
        session_id TEXT NOT NULL,
        version INTEGER NOT NULL,
        ops TEXT NOT NULL,
        body TEXT NOT NULL,
        events INTEGER NOT NULL,
        event_count INTEGER NOT NULL,
        stored_at REAL NOT NULL,
        PRIMARY KEY (session_id, version)) WITHOUT ROWID""",
    """CREATE TABLE wink_snapshots (
        session_id TEXT NOT NULL,
        version INTEGER NOT NULL,
        body TEXT NOT NULL,
        PRIMARY KEY (session_id, version)) WITHOUT ROWID""",
    f"INSERT INTO wink_store (name, value) VALUES ('schema', {SCHEMA})",
)

# The optimistic check: the row is added only on the session's latest version (one
# index probe), and the primary key refuses a second row of one version.
_APPEND = """INSERT INTO wink_changes
    (session_id, version, ops, body, events, event_count, stored_at)
    SELECT session_id, :version, :ops, :body, :events, event_count + :events, :now
    FROM (SELECT session_id, version, event_count FROM wink_changes
          WHERE session_id = :id ORDER BY version DESC LIMIT 1)
    WHERE version = :expected"""
_ADD_SNAPSHOT = "INSERT INTO wink_snapshots (session_id, version, body) VALUES (?, ?, ?)"
_LATEST = "SELECT max(version) FROM wink_changes WHERE session_id = ?"

# What the latest row of each session says, beside its own row.
_LISTED = """SELECT s.session_id, s.created_at, latest.stored_at, latest.version,
        latest.event_count,
        (SELECT coalesce(max(p.version), 0) FROM wink_snapshots p
         WHERE p.session_id = s.session_id)
    FROM wink_sessions s JOIN wink_changes latest ON latest.session_id = s.session_id
        AND latest.version = (SELECT max(version) FROM wink_changes c
                              WHERE c.session_id = s.session_id)
    ORDER BY s.created_at, s.session_id"""
_NOT_UPDATED_SINCE = """SELECT s.session_id FROM wink_sessions s
    WHERE (SELECT stored_at FROM wink_changes c WHERE c.session_id = s.session_id
           ORDER BY version DESC LIMIT 1) < ?"""
# Up to the latest snapshot, every change goes but the latest (its row holds the session's
# version for the optimistic check) and version 0 (which holds nothing).
_PRUNE_CHANGES = """DELETE FROM wink_changes WHERE version > 0
    AND version <= (SELECT max(p.version) FROM wink_snapshots p
                    WHERE p.session_id = wink_changes.session_id)
    AND version < (SELECT max(c.version) FROM wink_changes c
                   WHERE c.session_id = wink_changes.session_id)"""
# The latest change, when a snapshot holds it, keeps only its version (the row the
# optimistic check reads): its values go, as those of the changes before it.
_EMPTY_LATEST = """UPDATE wink_changes SET body = '', ops = '' WHERE version > 0
    AND body <> ''
    AND version <= (SELECT max(p.version) FROM wink_snapshots p
                    WHERE p.session_id = wink_changes.session_id)"""
_PRUNE_SNAPSHOTS = """DELETE FROM wink_snapshots WHERE version < (SELECT max(p.version)
    FROM wink_snapshots p WHERE p.session_id = wink_snapshots.session_id)"""


class SqliteStore(StoreBase):
    """Sessions in the SQLite file at ``path`` (created when missing)."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        snapshot_every: int = 1000,
        busy_timeout: float = 30.0,
        synchronous: str = "NORMAL",
    ) -> None:
        """``snapshot_every``: store a snapshot with every version that is a multiple of
        it. ``busy_timeout``: seconds a write waits for another process's. ``synchronous``:
        ``"NORMAL"`` survives a crash of the process, ``"FULL"`` also one of the machine
        (each commit waits for the disk).
        """
        if not isinstance(snapshot_every, int) or snapshot_every < 1:
            raise ValueError(f"snapshot_every must be a positive int, got {snapshot_every!r:.60}")
        if synchronous not in ("NORMAL", "FULL"):
            raise ValueError(f"synchronous must be 'NORMAL' or 'FULL', got {synchronous!r:.60}")
        self._snapshot_every = snapshot_every
        self.path = str(path)
        """The file."""
        self._where = f"SQLite store {bounded(self.path)!r}"
        self._lock = threading.Lock()
        try:
            self._connection = sqlite3.connect(
                self.path, timeout=busy_timeout, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as error:
            raise StoreError(f"{self._where} cannot be opened: {bounded(str(error))}") from None
        try:
            try:
                self._connection.execute("PRAGMA journal_mode=WAL")
                self._connection.execute(f"PRAGMA synchronous={synchronous}")
            except sqlite3.Error as error:
                raise StoreError(
                    f"{self._where}: opening it failed: {bounded(str(error))}"
                ) from None
            with self._writing("creating its tables") as cursor:
                cursor.execute(
                    "CREATE TABLE IF NOT EXISTS wink_store "
                    "(name TEXT PRIMARY KEY, value INTEGER NOT NULL)"
                )
                found = cursor.execute("SELECT value FROM wink_store WHERE name = 'schema'")
                row = found.fetchone()
                if row is None:  # a new file; one of another layout keeps its tables as they are
                    for statement in _TABLES:
                        cursor.execute(statement)
                schema = SCHEMA if row is None else row[0]
        except BaseException:
            self._connection.close()
            raise
        if schema != SCHEMA:
            self._connection.close()
            raise StoreError(schema_refused(self._where, schema, SCHEMA))
        self._appending = self._connection.cursor()

    def __repr__(self) -> str:
        return f"SqliteStore({self.path!r})"

    def _writing(self, doing: str) -> AbstractContextManager[sqlite3.Cursor]:
        """A write transaction (``BEGIN IMMEDIATE``), committed when the block ends."""
        return self._transaction("BEGIN IMMEDIATE", doing)

    def _reading(self, doing: str) -> AbstractContextManager[sqlite3.Cursor]:
        """A read transaction: what it reads is one version of the file."""
        return self._transaction("BEGIN", doing)

    @contextmanager
    def _transaction(self, begin: str, doing: str) -> Iterator[sqlite3.Cursor]:
        with self._lock:
            cursor = self._connection.cursor()
            try:
                cursor.execute(begin)
                yield cursor
                cursor.execute("COMMIT")
            except sqlite3.Error as error:
                self._roll_back()
                raise StoreError(f"{self._where}: {doing} failed: {bounded(str(error))}") from None
            except BaseException:
                self._roll_back()
                raise

    def _roll_back(self) -> None:
        if self._connection.in_transaction:
            # The transaction may be gone with the error that ended it.
            with contextlib.suppress(sqlite3.Error):
                self._connection.execute("ROLLBACK")

    def read(self, session_id: str) -> StoredHistory | None:
        """The latest snapshot of ``session_id`` and the changes after it."""
        checked_id(session_id)
        with self._reading(f"reading session {bounded(session_id)!r}") as cursor:
            row = cursor.execute(
                "SELECT format FROM wink_sessions WHERE session_id = ?", (session_id,)
            ).fetchone()
            if row is None:
                return None
            layout = row[0]
            version = cursor.execute(_LATEST, (session_id,)).fetchone()[0] or 0
            snapshot_version, snapshot = 0, None
            found = cursor.execute(
                "SELECT version, body FROM wink_snapshots WHERE session_id = ? "
                "ORDER BY version DESC LIMIT 1",
                (session_id,),
            ).fetchone()
            if found is not None:
                snapshot_version, snapshot = found
            changes = tuple(
                StoredChange(*found)
                for found in cursor.execute(
                    "SELECT version, body, ops, events FROM wink_changes WHERE session_id = ? "
                    "AND version > ? AND version <= ? ORDER BY version",
                    (session_id, snapshot_version, version),
                )
            )
        return StoredHistory(version, snapshot_version, snapshot, changes, layout)

    def create(self, session_id: str) -> None:
        """Store ``session_id`` at version 0, unless it is stored already."""
        checked_id(session_id)
        now = time.time()
        with self._writing(f"creating session {bounded(session_id)!r}") as cursor:
            created = cursor.execute(
                "INSERT OR IGNORE INTO wink_sessions VALUES (?, ?, ?)", (session_id, FORMAT, now)
            )
            if created.rowcount == 1:
                cursor.execute(
                    "INSERT INTO wink_changes VALUES (?, 0, '', '', 0, 0, ?)", (session_id, now)
                )

    def append(
        self, session_id: str, expected: int, change: StoredChange, snapshot: str | None = None
    ) -> None:
        """Store ``change`` as version ``expected + 1``, in one transaction."""
        # Every call of a stored session comes here: plain statements on the kept
        # cursor, the transaction's message built only when it fails.
        values = self._append_values(session_id, expected, change)
        with self._lock:
            cursor = self._appending
            try:
                cursor.execute("BEGIN IMMEDIATE")
                if cursor.execute(_APPEND, values).rowcount != 1:
                    found = cursor.execute(_LATEST, (session_id,)).fetchone()[0]
                    raise VersionConflict(session_id, expected, found)
                if snapshot is not None:
                    cursor.execute(_ADD_SNAPSHOT, (session_id, change.version, snapshot))
                cursor.execute("COMMIT")
            except sqlite3.Error as error:
                self._roll_back()
                doing = f"storing version {change.version} of session {session_id!r:.80}"
                raise StoreError(f"{self._where}: {doing} failed: {bounded(str(error))}") from None
            except BaseException:
                self._roll_back()
                raise

    def sessions(self) -> list[SessionInfo]:
        """Every stored session, oldest first."""
        with self._reading("listing sessions") as cursor:
            rows = cursor.execute(_LISTED).fetchall()
        return [
            SessionInfo(name, _utc(created), _utc(updated), version, events, snapshot_version)
            for name, created, updated, version, events, snapshot_version in rows
        ]

    def delete(self, session_id: str) -> bool:
        """Delete ``session_id`` and its history."""
        checked_id(session_id)
        with self._writing(f"deleting session {bounded(session_id)!r}") as cursor:
            for table in ("wink_changes", "wink_snapshots"):
                cursor.execute(f"DELETE FROM {table} WHERE session_id = ?", (session_id,))
            deleted = cursor.execute(
                "DELETE FROM wink_sessions WHERE session_id = ?", (session_id,)
            ).rowcount
        return deleted == 1

    def prune(self, *, history: bool = True, updated_before: datetime | None = None) -> PruneReport:
        """Drop what each latest snapshot holds; delete sessions not updated since a date."""
        sessions = changes = snapshots = 0
        with self._writing("pruning") as cursor:
            if updated_before is not None:
                cutoff = _epoch(updated_before)
                old = cursor.execute(_NOT_UPDATED_SINCE, (cutoff,)).fetchall()
                for table in ("wink_changes", "wink_snapshots", "wink_sessions"):
                    cursor.executemany(f"DELETE FROM {table} WHERE session_id = ?", old)
                sessions = len(old)
            if history:
                changes = cursor.execute(_PRUNE_CHANGES).rowcount
                changes += cursor.execute(_EMPTY_LATEST).rowcount
                snapshots = cursor.execute(_PRUNE_SNAPSHOTS).rowcount
        return PruneReport(sessions, changes, snapshots)

    def close(self) -> None:
        """Close the connection (checkpointing the write-ahead log into the file)."""
        with self._lock:
            self._connection.close()


def _utc(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


def _epoch(moment: datetime) -> float:
    if moment.tzinfo is None:
        raise ValueError(f"prune(updated_before=...) takes an aware datetime, got {moment!r:.80}")
    return moment.timestamp()
