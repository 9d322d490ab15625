"""Test configuration: hypothesis profiles (``long`` is for ``make fuzz``)."""

from __future__ import annotations

import logging
import os
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("default", max_examples=60, deadline=None)
settings.register_profile(
    "long", max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

# DBOS gives its logger a console handler bound to the sys.stderr of the moment when it
# first starts, unless the logger has a handler already. Under pytest that stream is one
# test's capture, closed after it, and every later start then fails writing to it. With
# a handler of no output, DBOS's records propagate to the root logger, where pytest's
# own capture reads them.
if not logging.getLogger("dbos").handlers:
    logging.getLogger("dbos").addHandler(logging.NullHandler())


@pytest.fixture(params=["direct", "phased"])
def executor_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run a test once as executors run it (a plain handler's call in one direct phase
    where nothing is built per call), and once with every call taking the phases that
    calls with call-scoped resources or limits take: both must behave the same."""
    path: str = request.param
    if path == "phased":
        from wink.runtime.executor import ToolExecutor

        original = ToolExecutor.__init__

        def phased(self: ToolExecutor, **options: Any) -> None:
            original(self, **options)
            self._direct = False

        monkeypatch.setattr(ToolExecutor, "__init__", phased)
    return path


# Session stores (wink.store): SQLite in a temporary file, PostgreSQL in a schema of its own.

POSTGRES_URL = os.environ.get("WINK_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")
_postgres_reachable: list[str | None] = []  # the reason it is not, once checked


def postgres_or_skip() -> str:
    """The test server's URL; a failure in CI when it cannot be reached, else a skip."""
    if not _postgres_reachable:
        reason: str | None = None
        try:
            import psycopg

            psycopg.connect(POSTGRES_URL, connect_timeout=3).close()
        except Exception as error:  # missing extra, or no server
            reason = f"{type(error).__name__}: {str(error).splitlines()[0][:120]}"
        _postgres_reachable.append(reason)
    reason = _postgres_reachable[0]
    if reason is not None:
        message = f"PostgreSQL not reachable at WINK_TEST_POSTGRES ({reason})"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return POSTGRES_URL


@pytest.fixture
def postgres_schema() -> Any:
    """``(url, schema)``: a fresh schema on the test server, dropped after the test."""
    import uuid

    url = postgres_or_skip()
    schema = f"wink_test_{uuid.uuid4().hex[:12]}"
    yield url, schema
    import psycopg
    from psycopg import sql

    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(
            sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema))
        )


@pytest.fixture(params=["sqlite", "postgres"])
def store_backend(request: pytest.FixtureRequest, tmp_path: Any) -> Any:
    """``(url, options)`` of an empty store of each kind, for ``open_store(url, **options)``."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'sessions.db'}", {}
    url, schema = request.getfixturevalue("postgres_schema")
    return url, {"schema": schema}


@pytest.fixture
def store(store_backend: Any) -> Any:
    """An empty store of each kind (``SqliteStore``, ``PostgresStore``), closed after."""
    from wink.store import open_store

    url, options = store_backend
    opened = open_store(url, **options)
    yield opened
    opened.close()
