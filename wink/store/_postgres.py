"""``PostgresStore``: sessions in PostgreSQL, through psycopg 3 and a ``psycopg_pool``
connection pool (the ``postgres`` extra, imported when a store is opened).

The tables live in one schema (``public`` unless told). Connections are in
autocommit mode: a call is stored by one statement that writes one row (two when a
snapshot goes with it, which succeed or fail together), so storing a call costs one
round trip. The version check is that statement's: the row is added only on the
session's latest version, and of two writers of one version the second waits on the
primary key for the first and fails with a uniqueness error (``VersionConflict``).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from wink._error_text import bounded
from wink.store._base import FORMAT, StoreBase, checked_id, schema_refused
from wink.store._protocol import PruneReport, SessionInfo, StoredChange, StoredHistory
from wink.store.errors import StoreError, VersionConflict

if TYPE_CHECKING:
    import psycopg
    from psycopg import sql
    from psycopg_pool import ConnectionPool

__all__ = ["SCHEMA", "PostgresStore"]

SCHEMA = 2
"""The version of the tables this wink creates (kept in ``wink_store``)."""

_STORE_TABLE = (
    "CREATE SCHEMA IF NOT EXISTS {schema}",
    "CREATE TABLE IF NOT EXISTS {schema}.wink_store "
    "(name TEXT PRIMARY KEY, value INTEGER NOT NULL)",
)
# As in SQLite, a version is one row of ``wink_changes`` (see ``_sqlite``).
_TABLES = (
    """CREATE TABLE {schema}.wink_sessions (
        session_id TEXT PRIMARY KEY,
        format INTEGER NOT NULL,
        created_at DOUBLE PRECISION NOT NULL)""",
    """CREATE TABLE {schema}.wink_changes (
        session_id TEXT NOT NULL,
        version BIGINT NOT NULL,
        ops TEXT NOT NULL,
        body TEXT NOT NULL,
        events BIGINT NOT NULL,
        event_count BIGINT NOT NULL,
        stored_at DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (session_id, version))""",
    """CREATE TABLE {schema}.wink_snapshots (
        session_id TEXT NOT NULL,
        version BIGINT NOT NULL,
        body TEXT NOT NULL,
        PRIMARY KEY (session_id, version))""",
    f"INSERT INTO {{schema}}.wink_store (name, value) VALUES ('schema', {SCHEMA})",
)

# Added only on the session's latest version; of two writers of one version, the second
# waits for the first on the primary key and fails with a uniqueness error.
_ADD_CHANGE = """INSERT INTO {schema}.wink_changes
    (session_id, version, ops, body, events, event_count, stored_at)
    SELECT session_id, %(version)s, %(ops)s, %(body)s, %(events)s,
        event_count + %(events)s, %(now)s
    FROM (SELECT session_id, version, event_count FROM {schema}.wink_changes
          WHERE session_id = %(id)s ORDER BY version DESC LIMIT 1) latest
    WHERE version = %(expected)s"""
_APPEND_WITH_SNAPSHOT = """WITH added AS ({change} RETURNING session_id)
INSERT INTO {{schema}}.wink_snapshots (session_id, version, body)
    SELECT session_id, %(version)s, %(snapshot)s FROM added"""
_LATEST = "SELECT max(version) FROM {schema}.wink_changes WHERE session_id = %s"
_LISTED = """SELECT s.session_id, s.created_at, latest.stored_at, latest.version,
        latest.event_count,
        (SELECT coalesce(max(p.version), 0) FROM {schema}.wink_snapshots p
         WHERE p.session_id = s.session_id)
    FROM {schema}.wink_sessions s JOIN {schema}.wink_changes latest
        ON latest.session_id = s.session_id
        AND latest.version = (SELECT max(version) FROM {schema}.wink_changes c
                              WHERE c.session_id = s.session_id)
    ORDER BY s.created_at, s.session_id"""
_NOT_UPDATED_SINCE = """SELECT s.session_id FROM {schema}.wink_sessions s
    WHERE (SELECT stored_at FROM {schema}.wink_changes c WHERE c.session_id = s.session_id
           ORDER BY version DESC LIMIT 1) < %s"""
_PRUNE_CHANGES = """DELETE FROM {schema}.wink_changes c WHERE version > 0
    AND version <= (SELECT max(p.version) FROM {schema}.wink_snapshots p
                    WHERE p.session_id = c.session_id)
    AND version < (SELECT max(l.version) FROM {schema}.wink_changes l
                   WHERE l.session_id = c.session_id)"""
# The latest change, when a snapshot holds it, keeps only its version (the row the
# optimistic check reads): its values go, as those of the changes before it.
_EMPTY_LATEST = """UPDATE {schema}.wink_changes SET body = '', ops = '' WHERE version > 0
    AND body <> ''
    AND version <= (SELECT max(p.version) FROM {schema}.wink_snapshots p
                    WHERE p.session_id = {schema}.wink_changes.session_id)"""
_PRUNE_SNAPSHOTS = """DELETE FROM {schema}.wink_snapshots s WHERE version < (SELECT
    max(p.version) FROM {schema}.wink_snapshots p WHERE p.session_id = s.session_id)"""


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
        # Rendered once: a composed query would be rendered again at each call.
        self._add_change = sql.SQL(_ADD_CHANGE).format(schema=named).as_bytes(None)
        self._append_with_snapshot = (
            sql.SQL(_APPEND_WITH_SNAPSHOT.format(change=_ADD_CHANGE))
            .format(schema=named)
            .as_bytes(None)
        )
        self._conflict: type[Exception] = psycopg.errors.UniqueViolation
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
        if schema_version != SCHEMA:
            self._pool.close()
            raise StoreError(schema_refused(self._where, schema_version, SCHEMA))

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
        except Exception as error:
            failure = self._failure(doing, error)
            if failure is None:
                raise
            raise failure from None

    def _failure(self, doing: str, error: Exception) -> StoreError | None:
        """``StoreError`` saying what failed, for the database's and the pool's errors
        (``None`` for any other error, raised as it is)."""
        if isinstance(error, StoreError):
            return None
        # psycopg_pool's errors are a pool timeout, or the pool closed.
        if isinstance(error, self._errors) or type(error).__module__.startswith("psycopg_pool"):
            return StoreError(f"{self._where}: {doing} failed: {bounded(str(error))}")
        return None

    def _create_tables(self) -> int:
        with self._connection("creating its tables") as connection, connection.transaction():
            # Two processes creating the tables at once would collide in the catalog.
            connection.execute(
                "SELECT pg_advisory_xact_lock(hashtext(%s))", (f"wink store {self.schema}",)
            )
            for statement in _STORE_TABLE:
                connection.execute(self._q(statement))
            row = connection.execute(
                self._q("SELECT value FROM {schema}.wink_store WHERE name = 'schema'")
            ).fetchone()
            if row is None:  # new tables; those of another layout are kept as they are
                for statement in _TABLES:
                    connection.execute(self._q(statement))
        return SCHEMA if row is None else int(row[0])

    def read(self, session_id: str) -> StoredHistory | None:
        """The latest snapshot of ``session_id`` and the changes after it."""
        checked_id(session_id)
        doing = f"reading session {bounded(session_id)!r}"
        with self._connection(doing) as connection:
            connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            try:
                row = connection.execute(
                    self._q("SELECT format FROM {schema}.wink_sessions WHERE session_id = %s"),
                    (session_id,),
                ).fetchone()
                if row is None:
                    return None
                layout = row[0]
                latest = connection.execute(self._q(_LATEST), (session_id,)).fetchone()
                version = int(latest[0] or 0) if latest is not None else 0
                snapshot_version, snapshot = 0, None
                found = connection.execute(
                    self._q(
                        "SELECT version, body FROM {schema}.wink_snapshots "
                        "WHERE session_id = %s ORDER BY version DESC LIMIT 1"
                    ),
                    (session_id,),
                ).fetchone()
                if found is not None:
                    snapshot_version, snapshot = int(found[0]), found[1]
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
        doing = f"creating session {bounded(session_id)!r}"
        with self._connection(doing) as connection, connection.transaction():
            created = connection.execute(
                self._q(
                    "INSERT INTO {schema}.wink_sessions VALUES (%s, %s, %s) ON CONFLICT DO NOTHING"
                ),
                (session_id, FORMAT, now),
            )
            if created.rowcount == 1:
                connection.execute(
                    self._q("INSERT INTO {schema}.wink_changes VALUES (%s, 0, '', '', 0, 0, %s)"),
                    (session_id, now),
                )

    def append(
        self, session_id: str, expected: int, change: StoredChange, snapshot: str | None = None
    ) -> None:
        """Store ``change`` as version ``expected + 1``, in one statement."""
        # Every call of a stored session comes here: the connection is taken and given
        # back directly (autocommit leaves no transaction to end), and the message is
        # built only when something fails.
        values = {**self._append_values(session_id, expected, change), "snapshot": snapshot}
        pool = self._pool
        try:
            connection = pool.getconn()
            try:
                try:
                    added = connection.execute(
                        self._add_change if snapshot is None else self._append_with_snapshot,
                        values,
                    ).rowcount
                except self._conflict:
                    added = 0  # another writer stored this version first
                if added == 1:
                    return
                found = connection.execute(self._q(_LATEST), (session_id,)).fetchone()
            finally:
                pool.putconn(connection)
        except Exception as error:
            doing = f"storing version {change.version} of session {bounded(session_id)!r}"
            failure = self._failure(doing, error)
            if failure is None:
                raise
            raise failure from None
        raise VersionConflict(
            session_id, expected, None if found is None or found[0] is None else int(found[0])
        )

    def sessions(self) -> list[SessionInfo]:
        """Every stored session, oldest first."""
        with self._connection("listing sessions") as connection:
            rows = connection.execute(self._q(_LISTED)).fetchall()
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
            self._stop_appends(connection)
            for table in ("wink_changes", "wink_snapshots"):
                connection.execute(
                    self._q(f"DELETE FROM {{schema}}.{table} WHERE session_id = %s"), (session_id,)
                )
            deleted = connection.execute(
                self._q("DELETE FROM {schema}.wink_sessions WHERE session_id = %s"), (session_id,)
            ).rowcount
        return deleted == 1

    def _stop_appends(self, connection: psycopg.Connection[Any]) -> None:
        """Wait for the changes being stored, and hold new ones until this transaction
        ends: one stored beside a deletion would outlive its session. (A statement reads
        once it holds its tables' locks, so a held one then finds the session gone.)"""
        connection.execute(self._q("LOCK TABLE {schema}.wink_changes IN SHARE MODE"))

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
                self._stop_appends(connection)
                old = connection.execute(self._q(_NOT_UPDATED_SINCE), (cutoff,)).fetchall()
                with connection.cursor() as cursor:
                    for table in ("wink_changes", "wink_snapshots", "wink_sessions"):
                        cursor.executemany(
                            self._q(f"DELETE FROM {{schema}}.{table} WHERE session_id = %s"), old
                        )
                sessions = len(old)
            if history:
                changes = connection.execute(self._q(_PRUNE_CHANGES)).rowcount
                changes += connection.execute(self._q(_EMPTY_LATEST)).rowcount
                snapshots = connection.execute(self._q(_PRUNE_SNAPSHOTS)).rowcount
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
