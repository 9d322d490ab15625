"""Session store costs, each beside a floor measured in the same run.

- Appending one committed call's change (its events as the store's JSON) on each
  store, against a plain parameterised ``INSERT`` of the same JSON in one transaction
  on the same database (target: <= 1.5x); and the whole commit, encoding the change
  (the snapshot writer's read-back check included) and appending it.
- ``Session.open`` of a session of ``OPENED_EVENTS`` recorded calls stored with a
  snapshot, against ``Snapshot.from_json`` of the same document (target: <= 2x).
- A tool call executed end to end on a session with a SQLite store attached, next to
  the same call on a session in memory.

PostgreSQL rows need ``WINK_TEST_POSTGRES`` (or the local default) to be reachable;
otherwise they are skipped, saying why.
"""

from __future__ import annotations

import gc
import os
import sqlite3
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from benchmarks import timing
from benchmarks.timing import per_call_us
from stress.store_workload import add_call, executor_for
from wink.runtime import Session, Snapshot, ToolInvoked
from wink.store import PostgresStore, SessionStore, SqliteStore, StoredChange
from wink.store._changes import change_between, snapshot_text
from wink.tools import ToolResult

NUMBER = 1000
REPEAT = 5
OPENED_EVENTS = 100_000
POSTGRES_URL = os.environ.get("WINK_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")


def _one_call_change() -> tuple[Snapshot, Snapshot]:
    """The session before and after one committed call of the store workload's tool."""
    session = Session()
    executor = executor_for(session)
    for n in range(100):
        executor.execute(add_call(0, n))
    before = session.snapshot()
    executor.execute(add_call(0, 100))
    return before, session.snapshot()


def _interleaved_us(*steps: Callable[[int], object]) -> list[float]:
    """Best-of microseconds per call of each ``step(n)`` (``n`` counting up across its
    calls), the steps timed in turn in each round: a figure and its floor see the same
    load on the machine and on the database."""
    calls = [_counting(step) for step in steps]
    best = [float("inf")] * len(steps)
    # Many short rounds: the best of them misses the moments the machine is busy elsewhere.
    rounds = 1 if timing.QUICK else REPEAT * 10
    for _ in range(rounds):
        for index, call in enumerate(calls):
            taken = per_call_us(call, number=max(1, NUMBER // 10), repeat=1)
            best[index] = min(best[index], taken)
    return best


def _counting(step: Callable[[int], object]) -> Callable[[], object]:
    """``step`` called with 0, 1, 2... one more each call."""
    counter = iter(range(10**9))
    return lambda: step(next(counter))


def _append_rows(label: str, store: SessionStore, floor: Callable[[int, str], None]) -> None:
    before, after = _one_call_change()
    change = change_between(before, after)
    assert change is not None
    body, ops, events = change
    store.create("bench")
    store.create("bench-commit")

    def append(n: int) -> None:
        store.append("bench", n, StoredChange(n + 1, body, ops, events))

    def commit(n: int) -> None:
        encoded = change_between(before, after)
        assert encoded is not None
        store.append("bench-commit", n, StoredChange(n + 1, *encoded))

    appended, floored, committed = _interleaved_us(append, lambda n: floor(n, body), commit)
    print(
        f"{label}: append one call's change ({len(body)} bytes, {events} events) "
        f"{appended:7.1f} us ({appended / floored:.2f}x, target <= 1.5x); "
        f"encode + append {committed:7.1f} us ({committed / floored:.2f}x); "
        f"floor INSERT of the same JSON in one transaction {floored:7.1f} us"
    )


def _sqlite_floor(folder: str) -> Callable[[int, str], None]:
    connection = sqlite3.connect(os.path.join(folder, "floor.db"), isolation_level=None)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=NORMAL")
    connection.execute(
        "CREATE TABLE rows (id TEXT, n INTEGER, body TEXT, PRIMARY KEY (id, n)) WITHOUT ROWID"
    )

    def insert(n: int, body: str) -> None:
        connection.execute("BEGIN IMMEDIATE")
        connection.execute("INSERT INTO rows VALUES (?, ?, ?)", ("bench", n, body))
        connection.execute("COMMIT")

    return insert


@contextmanager
def _postgres() -> Iterator[tuple[str, str] | str]:
    """``(url, schema)`` of a fresh schema, dropped after; or why there is none."""
    try:
        import psycopg
        from psycopg import sql

        psycopg.connect(POSTGRES_URL, connect_timeout=3).close()
    except Exception as error:
        yield f"{type(error).__name__}: {str(error).strip().splitlines()[0][:100]}"
        return
    schema = f"wink_bench_{uuid.uuid4().hex[:12]}"
    try:
        yield POSTGRES_URL, schema
    finally:
        with psycopg.connect(POSTGRES_URL, autocommit=True) as connection:
            connection.execute(
                sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema))
            )


def _unflushed(url: str) -> str:
    """``url`` as a connection string whose sessions commit without waiting for the disk
    (``synchronous_commit=off``), as SQLite's ``synchronous=NORMAL`` in WAL mode does: the
    figures are then the work of a commit, not the disk's flush, which would dwarf it."""
    from psycopg.conninfo import make_conninfo

    return make_conninfo(url, options="-c synchronous_commit=off")


def _postgres_floor(url: str, schema: str) -> tuple[Callable[[int, str], None], Any]:
    import psycopg
    from psycopg import sql

    connection = psycopg.connect(url, autocommit=True)
    table = sql.Identifier(schema, "floor_rows")
    connection.execute(
        sql.SQL("CREATE TABLE {} (id TEXT, n BIGINT, body TEXT, PRIMARY KEY (id, n))").format(table)
    )
    insert_row = sql.SQL("INSERT INTO {} VALUES (%s, %s, %s)").format(table)

    def insert(n: int, body: str) -> None:
        connection.execute(insert_row, ("bench", n, body))  # autocommit: its own transaction

    return insert, connection


def _recorded_calls(count: int) -> list[ToolInvoked]:
    moment = datetime(2025, 1, 1, tzinfo=UTC)
    return [
        ToolInvoked(
            "research",
            "search",
            f"call-{n}",
            {"query": f"topic {n}", "limit": 3},
            f'{{"query": "topic {n}", "limit": 3}}',
            ToolResult.ok({"hits": ["a", "b"]}),
            "a, b",
            moment,
            moment,
        )
        for n in range(count)
    ]


def _open_row(folder: str) -> None:
    store = SqliteStore(os.path.join(folder, "opened.db"), snapshot_every=1)
    try:
        session = Session.open(store, "big")
        session[ToolInvoked].seed(_recorded_calls(OPENED_EVENTS))
        session.persist()  # version 1, stored with its snapshot (snapshot_every=1)
        document = snapshot_text(session.snapshot())
        del session
        gc.collect()
        opened = _best_s(lambda: Session.open(store, "big"))
        floor = _best_s(lambda: Snapshot.from_json(document))
    finally:
        store.close()
    print(
        f"Session.open of {OPENED_EVENTS:,} recorded calls from their snapshot "
        f"({len(document) / 2**20:.1f} MiB): {opened * 1e3:8.1f} ms "
        f"({opened / floor:.2f}x, target <= 2x); floor Snapshot.from_json {floor * 1e3:8.1f} ms"
    )


def _best_s(function: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(1 if timing.QUICK else 2):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best


def _call_row(folder: str) -> None:
    with SqliteStore(os.path.join(folder, "calls.db")) as store:
        stored = executor_for(Session.open(store, "calls"))
        counter = iter(range(10**9))
        stored_us = per_call_us(
            lambda: stored.execute(add_call(0, next(counter))), number=NUMBER, repeat=REPEAT
        )
    memory = executor_for(Session())
    memory_us = per_call_us(
        lambda: memory.execute(add_call(0, next(counter))), number=NUMBER, repeat=REPEAT
    )
    print(
        f"executed call, end to end: {stored_us:7.1f} us with a SQLite store "
        f"(snapshot every 1000 versions, session growing to {NUMBER * REPEAT:,} calls); "
        f"{memory_us:7.1f} us in memory"
    )


def main() -> None:
    """Print each figure beside its floor."""
    with tempfile.TemporaryDirectory() as folder:
        with SqliteStore(os.path.join(folder, "append.db"), snapshot_every=10**9) as store:
            _append_rows("SQLite", store, _sqlite_floor(folder))
        with _postgres() as postgres:
            if isinstance(postgres, str):
                print(f"PostgreSQL: skipped, not reachable at WINK_TEST_POSTGRES ({postgres})")
            else:
                url, schema = postgres
                dsn = _unflushed(url)
                store = PostgresStore(dsn, schema=schema, snapshot_every=10**9)
                floor, connection = _postgres_floor(dsn, schema)
                try:
                    _append_rows("PostgreSQL (synchronous_commit=off on both)", store, floor)
                finally:
                    connection.close()
                    store.close()
        _open_row(folder)
        _call_row(folder)


if __name__ == "__main__":
    main()
