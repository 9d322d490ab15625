"""What only ``PostgresStore`` does: its errors name the server and never the password,
two stores create one schema's tables at once, the pool's options, URLs with a schema."""

from __future__ import annotations

import threading
import time

import pytest

from stress.store_workload import add_call, executor_for, landed_calls
from wink.runtime import Session
from wink.store import PostgresStore, StoreError, open_store

pytest.importorskip("psycopg_pool")


def test_an_unreachable_server_is_named_by_host_port_and_database_never_the_password() -> None:
    started = time.perf_counter()
    with pytest.raises(StoreError) as raised:
        PostgresStore("postgresql://wink:hunter2-secret@127.0.0.1:1/ledger", timeout=5)
    message = str(raised.value)
    assert message.startswith("PostgreSQL store 127.0.0.1:1/ledger cannot be reached: ")
    assert "Connection refused" in message
    assert "hunter2" not in message
    assert "\n" not in message
    # A refused connection is said at once, not after the pool's timeout.
    assert time.perf_counter() - started < 2


def test_a_key_value_connection_string_is_named_the_same_way() -> None:
    with pytest.raises(StoreError) as raised:
        PostgresStore("host=127.0.0.1 port=1 dbname=ledger user=wink password=hunter2", timeout=1)
    assert str(raised.value).startswith("PostgreSQL store 127.0.0.1:1/ledger cannot be reached: ")
    assert "hunter2" not in str(raised.value)


def test_a_wrong_password_is_refused_without_echoing_it(postgres_schema: tuple[str, str]) -> None:
    url, _ = postgres_schema
    with pytest.raises(StoreError) as raised:
        PostgresStore(url.replace("://", "://no_such_role_wink:hunter2@", 1), timeout=2)
    assert "cannot be reached" in str(raised.value)
    assert "hunter2" not in str(raised.value)


def test_two_stores_creating_one_schemas_tables_at_once_both_open(
    postgres_schema: tuple[str, str],
) -> None:
    url, schema = postgres_schema
    opened: list[PostgresStore] = []
    failures: list[BaseException] = []
    barrier = threading.Barrier(4)

    def open_one() -> None:
        barrier.wait()
        try:
            opened.append(PostgresStore(url, schema=schema))
        except BaseException as error:
            failures.append(error)

    threads = [threading.Thread(target=open_one) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    try:
        assert failures == []
        assert len(opened) == 4
        executor_for(Session.open(opened[0], "shared")).execute(add_call(0, 0))
        assert landed_calls(Session.open(opened[3], "shared")) == [(0, 0)]
    finally:
        for store in opened:
            store.close()


def test_the_pool_size_and_timeout_are_options(postgres_schema: tuple[str, str]) -> None:
    url, schema = postgres_schema
    store = PostgresStore(url, schema=schema, min_connections=1, max_connections=1, timeout=0.5)
    try:
        stats = store._pool.get_stats()
        assert (stats["pool_min"], stats["pool_max"]) == (1, 1)
        # The one connection is held: a second user waits ``timeout`` and is told why.
        with store._pool.connection():
            started = time.perf_counter()
            with pytest.raises(StoreError) as raised:
                store.sessions()
            waited = time.perf_counter() - started
        assert 0.4 < waited < 3
        assert str(raised.value).startswith(
            f"PostgreSQL store {_server(url)}: listing sessions failed: "
        )
        assert store.sessions() == []  # the connection is back
    finally:
        store.close()


def test_open_store_takes_the_schema_from_the_url(postgres_schema: tuple[str, str]) -> None:
    url, schema = postgres_schema
    store = open_store(f"{url}?connect_timeout=5&schema={schema}")
    try:
        assert isinstance(store, PostgresStore)
        assert store.schema == schema
        Session.open(store, "named")
    finally:
        store.close()
    with PostgresStore(url, schema=schema) as same:  # type: ignore[attr-defined]  # a StoreBase
        assert [info.session_id for info in same.sessions()] == ["named"]


def test_a_url_naming_two_schemas_is_refused() -> None:
    with pytest.raises(ValueError, match=r"at most one schema \(schema=NAME\)"):
        open_store("postgresql://127.0.0.1:1/db?schema=a&schema=b")


def _server(url: str) -> str:
    from psycopg.conninfo import conninfo_to_dict

    parts = conninfo_to_dict(url)
    return f"{parts.get('host')}:{parts.get('port', 5432)}/{parts.get('dbname')}"


def test_a_schema_of_the_earlier_layout_is_refused_naming_it_and_left_as_it_was(
    postgres_schema: tuple[str, str],
) -> None:
    import psycopg
    from psycopg import sql

    url, schema = postgres_schema
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
        connection.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))
        connection.execute("CREATE TABLE wink_store (name TEXT PRIMARY KEY, value INTEGER)")
        connection.execute("INSERT INTO wink_store VALUES ('schema', 1)")
    with pytest.raises(StoreError) as raised:
        PostgresStore(url, schema=schema)
    assert str(raised.value) == (
        "PostgreSQL store 127.0.0.1:5432/test was written by an earlier wink (schema 1; this "
        "wink reads schema 2, whose tables keep one row per version); export its sessions "
        "with that wink (wink sessions export) and store them anew"
    )
    with psycopg.connect(url, autocommit=True) as connection:
        tables = connection.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
            (schema,),
        ).fetchall()
    assert tables == [("wink_store",)]
