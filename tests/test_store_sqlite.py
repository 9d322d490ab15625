"""What only the SQLite store does: its file's mode, damaged files, newer schemas, URLs."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from stress.store_workload import add_call, executor_for, landed_calls
from wink.runtime import Session
from wink.store import SqliteStore, StoreError, open_store


def test_the_file_is_in_wal_mode(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "s.db")
    try:
        assert store._connection.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    finally:
        store.close()


def test_open_store_reads_sqlite_urls(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'a.db'}", snapshot_every=7)
    try:
        assert isinstance(store, SqliteStore)
        assert store.path == str(tmp_path / "a.db")
        assert store.snapshot_every == 7
    finally:
        store.close()


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("sqlite://host/a.db", "a SQLite store URL is sqlite:///relative/path"),
        ("sqlite:///", "a SQLite store URL is sqlite:///relative/path"),
        ("mysql://x", "unknown store URL scheme 'mysql'"),
    ],
)
def test_open_store_refuses_other_urls(url: str, message: str) -> None:
    with pytest.raises(ValueError) as raised:
        open_store(url)
    assert str(raised.value).startswith(message)


def test_a_file_from_a_newer_wink_is_refused_naming_it(tmp_path: Path) -> None:
    SqliteStore(tmp_path / "s.db").close()
    with sqlite3.connect(tmp_path / "s.db") as connection:
        connection.execute("UPDATE wink_store SET value = 3 WHERE name = 'schema'")
    with pytest.raises(StoreError) as raised:
        SqliteStore(tmp_path / "s.db")
    assert str(raised.value) == (
        f"SQLite store {str(tmp_path / 's.db')!r} was written by a newer wink (schema 3; this "
        "wink reads schema 2); upgrade wink to open it"
    )


# The tables of schema 1: a sessions row updated by every version beside its change.
SCHEMA_1 = (
    "CREATE TABLE wink_store (name TEXT PRIMARY KEY, value INTEGER NOT NULL)",
    "CREATE TABLE wink_sessions (session_id TEXT PRIMARY KEY, version INTEGER NOT NULL, "
    "snapshot_version INTEGER NOT NULL, event_count INTEGER NOT NULL, format INTEGER NOT NULL, "
    "created_at REAL NOT NULL, updated_at REAL NOT NULL)",
    "CREATE TABLE wink_changes (session_id TEXT NOT NULL, version INTEGER NOT NULL, "
    "ops TEXT NOT NULL, body TEXT NOT NULL, events INTEGER NOT NULL, "
    "PRIMARY KEY (session_id, version)) WITHOUT ROWID",
    "INSERT INTO wink_store VALUES ('schema', 1)",
    "INSERT INTO wink_sessions VALUES ('old', 0, 0, 0, 1, 0, 0)",
)


def test_a_file_of_the_earlier_layout_is_refused_naming_it_and_left_as_it_was(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.db"
    with sqlite3.connect(path) as connection:
        for statement in SCHEMA_1:
            connection.execute(statement)
    with pytest.raises(StoreError) as raised:
        SqliteStore(path)
    assert str(raised.value) == (
        f"SQLite store {str(path)!r} was written by an earlier wink (schema 1; this wink "
        "reads schema 2, whose tables keep one row per version); export its sessions with "
        "that wink (wink sessions export) and store them anew"
    )
    with sqlite3.connect(path) as connection:
        tables = connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        assert sorted(name for (name,) in tables) == ["wink_changes", "wink_sessions", "wink_store"]
        assert connection.execute("SELECT * FROM wink_sessions").fetchall() == [
            ("old", 0, 0, 0, 1, 0.0, 0.0)
        ]


def test_a_committed_call_writes_one_row(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "s.db")
    try:
        executor = executor_for(Session.open(store, "s"))
        before = store._connection.total_changes
        assert executor.execute(add_call(0, 1)).success
        assert store._connection.total_changes - before == 1
        rows = store._connection.execute("SELECT version FROM wink_changes").fetchall()
        assert rows == [(0,), (1,)]  # version 0 is the session's first row
    finally:
        store.close()


def test_a_file_that_is_not_a_database_is_refused_naming_it(tmp_path: Path) -> None:
    (tmp_path / "s.db").write_bytes(b"not a database at all" * 100)
    with pytest.raises(StoreError) as raised:
        SqliteStore(tmp_path / "s.db")
    assert str(raised.value) == (
        f"SQLite store {str(tmp_path / 's.db')!r}: opening it failed: file is not a database"
    )


def test_a_truncated_file_raises_store_error_and_never_loads_wrong_state(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = SqliteStore(path)
    for name in ("first", "second"):
        executor = executor_for(Session.open(store, name))
        for n in range(300):
            assert executor.execute(add_call(0, n)).success
    store.close()  # checkpoints the log into the file
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    outcomes: list[str] = []
    try:
        store = SqliteStore(path)
    except StoreError as error:
        outcomes.append(str(error))
    else:
        for name in ("first", "second"):
            try:
                outcomes.append(str(len(landed_calls(Session.open(store, name)))))
            except StoreError as error:
                outcomes.append(str(error))
        store.close()
    for outcome in outcomes:
        # Either the whole session, or an error naming the file.
        assert outcome == "300" or f"SQLite store {str(path)!r}" in outcome, outcome
    assert any(outcome != "300" for outcome in outcomes)


def test_options_are_checked(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="snapshot_every must be a positive int, got 0"):
        SqliteStore(tmp_path / "s.db", snapshot_every=0)
    with pytest.raises(ValueError, match="synchronous must be 'NORMAL' or 'FULL', got 'OFF'"):
        SqliteStore(tmp_path / "s.db", synchronous="OFF")
