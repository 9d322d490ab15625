"""``PostgresStore``: sessions in PostgreSQL, through psycopg 3 and a ``psycopg_pool``
connection pool (the ``postgres`` extra, imported when a store is opened).

The tables live in one schema (``public`` unless told). Connections are in
autocommit mode: a call is stored by one statement, whose data-modifying parts
(move the session's version on, add the change, add the snapshot) succeed or fail
together, so storing a call costs one round trip. The version check is that
statement's ``WHERE version = expected``: of two writers, the second finds the row
changed (PostgreSQL re-reads it once the first commits) and stores nothing.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from wink._error_text import bounded
from wink.store._base import FORMAT, StoreBase, checked_id
from wink.store._protocol import PruneReport, SessionInfo, StoredChange, StoredHistory
from wink.store.errors import StoreError, VersionConflict

if TYPE_CHECKING:
    import psycopg
    from psycopg import sql
    from psycopg_pool import ConnectionPool

__all__ = ["SCHEMA", "PostgresStore"]

SCHEMA = 1
"""The version of the tables this wink creates (kept in ``wink_store``)."""

_TABLES = (
    "CREATE SCHEMA IF NOT EXISTS {schema}",
    "CREATE TABLE IF NOT EXISTS {schema}.wink_store "
    "(name TEXT PRIMARY KEY, value INTEGER NOT NULL)",
    """CREATE TABLE IF NOT EXISTS {schema}.wink_sessions (
        session_id TEXT PRIMARY KEY,
        version BIGINT NOT NULL,
        snapshot_version BIGINT NOT NULL,
        event_count BIGINT NOT NULL,
        format INTEGER NOT NULL,
        created_at DOUBLE PRECISION NOT NULL,
        updated_at DOUBLE PRECISION NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS {schema}.wink_changes (
        session_id TEXT NOT NULL,
        version BIGINT NOT NULL,
        ops TEXT NOT NULL,
        body TEXT NOT NULL,
        events BIGINT NOT NULL,
        PRIMARY KEY (session_id, version))""",
    """CREATE TABLE IF NOT EXISTS {schema}.wink_snapshots (
        session_id TEXT NOT NULL,
        version BIGINT NOT NULL,
        body TEXT NOT NULL,
        PRIMARY KEY (session_id, version))""",
    "INSERT INTO {schema}.wink_store (name, value) VALUES ('schema', 1) ON CONFLICT DO NOTHING",
)

_APPEND = """WITH bumped AS (
    UPDATE {schema}.wink_sessions SET version = %(version)s,
        event_count = event_count + %(events)s, updated_at = %(now)s,
        snapshot_version = GREATEST(snapshot_version, %(snapshot_version)s)
    WHERE session_id = %(id)s AND version = %(expected)s
    RETURNING session_id),
added AS (
    INSERT INTO {schema}.wink_changes (session_id, version, ops, body, events)
    SELECT session_id, %(version)s, %(ops)s, %(body)s, %(events)s FROM bumped)
{snapshot}SELECT count(*) FROM bumped"""

_ADD_SNAPSHOT = """, snapped AS (
    INSERT INTO {schema}.wink_snapshots (session_id, version, body)
    SELECT session_id, %(version)s, %(snapshot)s FROM bumped)
"""


class PostgresStore(StoreBase):
    """Sessions in the PostgreSQL database ``dsn`` names (a ``postgresql://`` URL or a
    ``key=value`` connection string)."""

    def __init__(
        self,
        dsn: str,
        *,
        schema: str = "public",
        snapshot_every: int = 1000,
        min_connections: int = 1,
        max_connections: int = 4,
        timeout: float = 30.0,
    ) -> None:
        """``schema``: where the tables are (created when missing). ``snapshot_every``:
        store a snapshot with every version that is a multiple of it. ``timeout``:
        seconds to wait for a connection."""
        if not isinstance(snapshot_every, int) or snapshot_every < 1:
            raise ValueError(f"snapshot_every must be a positive int, got {snapshot_every!r:.60}")
        try:
            import psycopg
            from psycopg import sql
            from psycopg_pool import ConnectionPool
        except ImportError:
            raise StoreError(
                "PostgresStore needs psycopg 3 and psycopg-pool: pip install 'wink[postgres]'"
            ) from None
        self._snapshot_every = snapshot_every
        self._where = f"PostgreSQL store {_shown(dsn)}"
        self._errors: type[Exception] = psycopg.Error
        self._sql = sql
        self.schema = schema
        """The schema holding the tables."""
        named = sql.Identifier(schema)
        self._append = {
            kept: sql.SQL(_APPEND.replace("{snapshot}", _ADD_SNAPSHOT if kept else "")).format(
                schema=named
            )
            for kept in (False, True)
        }
        self._schema_name = named
        # One plain connection first: the pool would retry a server that refuses until
        # ``timeout`` and then say only that it timed out, not why.
        try:
            psycopg.connect(dsn, connect_timeout=max(1, round(timeout))).close()
        except psycopg.Error as error:
            raise StoreError(f"{self._where} cannot be reached: {_reason(error, dsn)}") from None
        self._pool: ConnectionPool[psycopg.Connection[Any]] = ConnectionPool(
            dsn,
            min_size=min_connections,
            max_size=max_connections,
            timeout=timeout,
            kwargs={"autocommit": True},
            open=False,
        )
        try:
            self._pool.open(wait=True, timeout=timeout)
        except Exception as error:
            self._pool.close()
            raise StoreError(f"{self._where} cannot be reached: {bounded(str(error))}") from None
        try:
            schema_version = self._create_tables()
        except BaseException:
            self._pool.close()
            raise
        if schema_version > SCHEMA:
            self._pool.close()
            raise StoreError(
                f"{self._where} was written by a newer wink (schema {schema_version}; this "
                f"wink reads schema {SCHEMA}); upgrade wink to open it"
            )

    def __repr__(self) -> str:
        database = self._where.removeprefix("PostgreSQL store ")
        return f"PostgresStore({database}, schema={self.schema!r})"

    def _q(self, text: str) -> sql.Composed:
        return self._sql.SQL(text).format(schema=self._schema_name)

    @contextmanager
    def _connection(self, doing: str) -> Iterator[psycopg.Connection[Any]]:
        try:
            with self._pool.connection() as connection:
                yield connection
        except StoreError:
            raise
        except self._errors as error:
            raise StoreError(f"{self._where}: {doing} failed: {bounded(str(error))}") from None
        except Exception as error:
            if type(error).__module__.startswith("psycopg_pool"):  # a pool timeout, or closed
                raise StoreError(f"{self._where}: {doing} failed: {bounded(str(error))}") from None
            raise

    def _create_tables(self) -> int:
        with self._connection("creating its tables") as connection, connection.transaction():
            # Two processes creating the tables at once would collide in the catalog.
            connection.execute(
                "SELECT pg_advisory_xact_lock(hashtext(%s))", (f"wink store {self.schema}",)
            )
            for statement in _TABLES:
                connection.execute(self._q(statement))
            row = connection.execute(
                self._q("SELECT value FROM {schema}.wink_store WHERE name = 'schema'")
            ).fetchone()
        assert row is not None  # inserted above
        return int(row[0])

    def read(self, session_id: str) -> StoredHistory | None:
        """The latest snapshot of ``session_id`` and the changes after it."""
        checked_id(session_id)
        doing = f"reading session {bounded(session_id)!r}"
        with self._connection(doing) as connection:
            connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            try:
                row = connection.execute(
                    self._q(
                        "SELECT version, snapshot_version, format FROM {schema}.wink_sessions "
                        "WHERE session_id = %s"
                    ),
                    (session_id,),
                ).fetchone()
                if row is None:
                    return None
                version, snapshot_version, layout = row
                snapshot = None
                if snapshot_version:
                    found = connection.execute(
                        self._q(
                            "SELECT body FROM {schema}.wink_snapshots "
                            "WHERE session_id = %s AND version = %s"
                        ),
                        (session_id, snapshot_version),
                    ).fetchone()
                    snapshot = None if found is None else found[0]
                changes = tuple(
                    StoredChange(*found)
                    for found in connection.execute(
                        self._q(
                            "SELECT version, body, ops, events FROM {schema}.wink_changes "
                            "WHERE session_id = %s AND version > %s AND version <= %s "
                            "ORDER BY version"
                        ),
                        (session_id, snapshot_version, version),
                    )
                )
            finally:
                connection.execute("COMMIT")
        return StoredHistory(version, snapshot_version, snapshot, changes, layout)

    def create(self, session_id: str) -> None:
        """Store ``session_id`` at version 0, unless it is stored already."""
        checked_id(session_id)
        now = time.time()
        with self._connection(f"creating session {bounded(session_id)!r}") as connection:
            connection.execute(
                self._q(
                    "INSERT INTO {schema}.wink_sessions VALUES (%s, 0, 0, 0, %s, %s, %s) "
                    "ON CONFLICT DO NOTHING"
                ),
                (session_id, FORMAT, now, now),
            )

    def append(
        self, session_id: str, expected: int, change: StoredChange, snapshot: str | None = None
    ) -> None:
        """Store ``change`` as version ``expected + 1``, in one statement."""
        doing = f"storing version {change.version} of session {bounded(session_id)!r}"
        with self._connection(doing) as connection:
            row = connection.execute(
                self._append[snapshot is not None],
                {
                    "id": session_id,
                    "expected": expected,
                    "version": change.version,
                    "events": change.events,
                    "now": time.time(),
                    "snapshot_version": change.version if snapshot is not None else 0,
                    "ops": change.ops,
                    "body": change.body,
                    "snapshot": snapshot,
                },
            ).fetchone()
            if row is not None and row[0] == 1:
                return
            found = connection.execute(
                self._q("SELECT version FROM {schema}.wink_sessions WHERE session_id = %s"),
                (session_id,),
            ).fetchone()
        raise VersionConflict(session_id, expected, None if found is None else int(found[0]))

    def sessions(self) -> list[SessionInfo]:
        """Every stored session, oldest first."""
        with self._connection("listing sessions") as connection:
            rows = connection.execute(
                self._q(
                    "SELECT session_id, created_at, updated_at, version, event_count, "
                    "snapshot_version FROM {schema}.wink_sessions ORDER BY created_at, session_id"
                )
            ).fetchall()
        return [
            SessionInfo(
                name,
                datetime.fromtimestamp(created, UTC),
                datetime.fromtimestamp(updated, UTC),
                int(version),
                int(events),
                int(snapshot_version),
            )
            for name, created, updated, version, events, snapshot_version in rows
        ]

    def delete(self, session_id: str) -> bool:
        """Delete ``session_id`` and its history."""
        checked_id(session_id)
        doing = f"deleting session {bounded(session_id)!r}"
        with self._connection(doing) as connection, connection.transaction():
            for table in ("wink_changes", "wink_snapshots"):
                connection.execute(
                    self._q(f"DELETE FROM {{schema}}.{table} WHERE session_id = %s"), (session_id,)
                )
            deleted = connection.execute(
                self._q("DELETE FROM {schema}.wink_sessions WHERE session_id = %s"), (session_id,)
            ).rowcount
        return deleted == 1

    def prune(self, *, history: bool = True, updated_before: datetime | None = None) -> PruneReport:
        """Drop what each latest snapshot holds; delete sessions not updated since a date."""
        sessions = changes = snapshots = 0
        with self._connection("pruning") as connection, connection.transaction():
            if updated_before is not None:
                if updated_before.tzinfo is None:
                    raise ValueError(
                        f"prune(updated_before=...) takes an aware datetime, got "
                        f"{updated_before!r:.80}"
                    )
                cutoff = updated_before.timestamp()
                for table in ("wink_changes", "wink_snapshots"):
                    connection.execute(
                        self._q(
                            f"DELETE FROM {{schema}}.{table} WHERE session_id IN (SELECT "
                            "session_id FROM {schema}.wink_sessions WHERE updated_at < %s)"
                        ),
                        (cutoff,),
                    )
                sessions = connection.execute(
                    self._q("DELETE FROM {schema}.wink_sessions WHERE updated_at < %s"), (cutoff,)
                ).rowcount
            if history:
                changes = connection.execute(
                    self._q(
                        "DELETE FROM {schema}.wink_changes c USING {schema}.wink_sessions s "
                        "WHERE s.session_id = c.session_id AND c.version <= s.snapshot_version"
                    )
                ).rowcount
                snapshots = connection.execute(
                    self._q(
                        "DELETE FROM {schema}.wink_snapshots p USING {schema}.wink_sessions s "
                        "WHERE s.session_id = p.session_id AND p.version < s.snapshot_version"
                    )
                ).rowcount
        return PruneReport(sessions, changes, snapshots)

    def drop_tables(self) -> None:
        """Drop the schema's wink tables (and the schema, unless it is ``public``)."""
        with self._connection("dropping its tables") as connection:
            if self.schema == "public":
                for table in ("wink_changes", "wink_snapshots", "wink_sessions", "wink_store"):
                    connection.execute(self._q(f"DROP TABLE IF EXISTS {{schema}}.{table}"))
            else:
                connection.execute(self._q("DROP SCHEMA IF EXISTS {schema} CASCADE"))

    def close(self) -> None:
        """Close the pool's connections."""
        self._pool.close()


def _reason(error: Exception, dsn: str) -> str:
    """psycopg's message on one line, bounded, with the password (should the server
    ever echo it) blotted out."""
    text = "; ".join(line.strip() for line in str(error).splitlines() if line.strip())
    try:
        from psycopg.conninfo import conninfo_to_dict

        password = conninfo_to_dict(dsn).get("password")
    except Exception:
        password = None
    if isinstance(password, str) and password:
        text = text.replace(password, "***")
    return bounded(text)


def _shown(dsn: str) -> str:
    """The database ``dsn`` names, for messages: host, port and database, never a password."""
    try:
        from psycopg.conninfo import conninfo_to_dict

        parts = conninfo_to_dict(dsn)
    except Exception:
        return "(an unreadable connection string)"
    host = parts.get("host") or "localhost"
    port = parts.get("port") or 5432
    name = parts.get("dbname") or parts.get("user") or ""
    return bounded(f"{host}:{port}/{name}")
