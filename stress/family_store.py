"""Session stores under two writers and under ``kill -9``, on SQLite and PostgreSQL.

Two writers: two processes append calls to one stored session at once (1,000 each at
scale 50). Every call must land once or be refused with ``VersionConflict``; at least
one must be refused (else the writers never raced and nothing was shown); reloaded,
the session must hold the landed calls, each once, and equal a session in memory
that ran them one after the other.

Killed writers: a process appending calls is killed (SIGKILL) after a random delay,
wherever it is then: in a handler, encoding a change, in the store's transaction
(50 trials per store at scale 50). The store must then hold exactly the calls the
process reported landed, plus at most the one whose commit was under way, and load.

PostgreSQL is used when ``WINK_TEST_POSTGRES`` (or the local default) is reachable,
each run in a schema of its own, dropped after.
"""

from __future__ import annotations

import multiprocessing
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from stress.report import FamilyReport
from stress.store_workload import (
    KILLED_WORKER,
    Added,
    Total,
    append_worker,
    landed_calls,
    replayed,
)
from wink.runtime import Session
from wink.store import StoreError, open_store

__all__ = ["run"]

REPO = Path(__file__).resolve().parent.parent
POSTGRES_URL = os.environ.get("WINK_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")
_CALLS_PER_WRITER = 20
"""Calls each of the two writers makes at scale 1."""


def run(scale: float) -> FamilyReport:
    """Race two writers and kill writers on each reachable store."""
    report = FamilyReport("store")
    rng = random.Random(2107)
    calls = max(2, round(_CALLS_PER_WRITER * scale))
    trials = max(1, round(scale))
    for url, options in _stores():
        open_store(url, **options).close()  # tables made before the writers start
        _two_writers(report, url, options, calls)
        _killed_writers(report, url, options, trials, rng)
    return report


@contextmanager
def _sqlite() -> Iterator[tuple[str, dict[str, Any]]]:
    with tempfile.TemporaryDirectory() as folder:
        yield f"sqlite:///{folder}/sessions.db", {}


def _stores() -> Iterator[tuple[str, dict[str, Any]]]:
    with _sqlite() as sqlite:
        yield sqlite
    if not _postgres_reachable():
        return
    schema = f"wink_stress_{uuid.uuid4().hex[:12]}"
    try:
        yield POSTGRES_URL, {"schema": schema}
    finally:
        import psycopg
        from psycopg import sql

        with psycopg.connect(POSTGRES_URL, autocommit=True) as connection:
            connection.execute(
                sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema))
            )


def _postgres_reachable() -> bool:
    try:
        import psycopg

        psycopg.connect(POSTGRES_URL, connect_timeout=3).close()
    except Exception:  # the extra is missing, or no server: SQLite alone is tried
        return False
    return True


def _racing_writer(
    url: str, options: dict[str, Any], worker: int, count: int, start: Any
) -> list[bool]:
    """``append_worker`` once both writers are ready, so that they do overlap."""
    start.wait()
    return append_worker(url, "raced", worker, count, options)


def _two_writers(report: FamilyReport, url: str, options: dict[str, Any], calls: int) -> None:
    where = url.partition(":")[0]
    context = multiprocessing.get_context("spawn")
    start = context.Manager().Barrier(2)
    with report.measure(), context.Pool(2) as pool:
        pending = [
            pool.apply_async(_racing_writer, (url, options, worker, calls, start))
            for worker in (1, 2)
        ]
        try:
            outcomes = [result.get(timeout=600) for result in pending]
        except Exception as error:  # a call failed otherwise than by VersionConflict
            report.note("uncaught", f"{where}: a writer stopped: {error!r:.300}")
            return
    landed = {
        (worker, n)
        for worker, outcome in zip((1, 2), outcomes, strict=True)
        for n, stored in enumerate(outcome)
        if stored
    }
    refused = sum(not stored for outcome in outcomes for stored in outcome)
    if refused == 0:
        report.note("lost_events", f"{where}: the two writers never conflicted; nothing was shown")
    with _opened(url, options) as store:
        session = Session.open(store, "raced")
    stored = landed_calls(session)
    if len(stored) != len(set(stored)) or set(stored) != landed:
        missing, extra = landed - set(stored), len(stored) - len(set(stored) & landed)
        report.note(
            "lost_events",
            f"{where}: {len(missing)} landed calls missing, {extra} stored calls not landed "
            "or stored twice",
        )
        return
    again = replayed(stored)
    if session[Added].all() != again[Added].all() or session[Total].all() != again[Total].all():
        report.note("state_leaks", f"{where}: the stored state differs from a sequential replay")


@contextmanager
def _opened(url: str, options: dict[str, Any]) -> Iterator[Any]:
    store = open_store(url, **options)
    try:
        yield store
    finally:
        store.close()


def _killed_writers(
    report: FamilyReport, url: str, options: dict[str, Any], trials: int, rng: random.Random
) -> None:
    where = url.partition(":")[0]
    reported: list[int] = []
    for _ in range(trials):
        with report.measure():
            child = subprocess.Popen(
                [sys.executable, "-c", KILLED_WORKER, url, "killed", options.get("schema", "")],
                cwd=REPO,
                stdout=subprocess.PIPE,
                text=True,
            )
            assert child.stdout is not None
            if child.stdout.readline() != "ready\n":
                child.kill()
                child.communicate()
                report.note("uncaught", f"{where}: a killed writer did not start")
                return
            time.sleep(rng.uniform(0.0, 0.15))
            os.kill(child.pid, signal.SIGKILL)
            output, _ = child.communicate()
            if "failed" in output:
                report.note("uncaught", f"{where}: a call of the writer failed: {output:.300}")
            reported.extend(int(line) for line in output.split() if line.isdigit())
            try:
                with _opened(url, options) as store:
                    stored = [n for _, n in landed_calls(Session.open(store, "killed"))]
            except StoreError as error:
                report.note("lost_events", f"{where}: the store no longer loads: {error}")
                return
        # Each reported call stored, in order, once; at most the one in flight besides.
        if stored != list(range(len(stored))) or stored[: len(reported)] != reported:
            report.note("lost_events", f"{where}: reported {len(reported)}, stored {stored[-5:]}")
            return
        if len(stored) - len(reported) not in (0, 1):
            report.note(
                "state_leaks",
                f"{where}: {len(stored) - len(reported)} calls stored that were not reported",
            )
            return
        reported = stored
