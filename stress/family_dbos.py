"""Durable evaluations on DBOS crashed at every point, and two workers with one killed.

Crash sweep: the evaluation of ``stress.dbos_agent`` (4 turns of 2 tool calls, then an
answer) runs in a subprocess that exits (``os._exit``) at one point: inside each
handler, after each model request, just before each session append (its step
checkpointed) and just after each append committed; a fresh process then recovers
it. The recovered session must equal an uninterrupted run's (else ``state_leaks``);
each completed handler must have run once and the interrupted one at most twice,
each completed model request been sent once and the interrupted one at most twice
(more is a ``state_leaks``, fewer a ``lost_events``); both processes must end as
planned (else ``uncaught``). Scale 1 tries one point on SQLite; from scale 2 every
point on SQLite and on PostgreSQL.

Two workers (from scale 2, on PostgreSQL): two worker processes share one DBOS system
schema and one session store; 20 evaluations are enqueued, one worker is killed
(SIGKILL) mid-way and restarted with its executor id, which makes DBOS put its
pending workflows back on the queue. Every evaluation must finish, each stored
session equal an uninterrupted run's, and each call and request run once, but the
ones in flight at the kill, at most twice.

PostgreSQL is used when ``WINK_TEST_POSTGRES`` (or the local default) is reachable,
each run in schemas of its own, dropped after.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from stress.dbos_agent import TURNS, normalized_session
from stress.report import FamilyReport

__all__ = ["CRASH_POINTS", "WorkersOutcome", "run", "run_two_workers", "uninterrupted_session"]

REPO = Path(__file__).resolve().parent.parent
POSTGRES_URL = os.environ.get("WINK_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")
CALLS = 2 * TURNS
CRASH_POINTS = (
    *(f"handler:{k}" for k in range(1, CALLS + 1)),
    *(f"model:{t}" for t in range(1, TURNS + 2)),
    # One append per call, and one for the evaluation's end.
    *(f"append:{k}" for k in range(1, CALLS + 2)),
    *(f"appended:{k}" for k in range(1, CALLS + 2)),
)
"""Every point the sweep crashes at (see ``stress.dbos_agent``)."""
QUICK_POINT = "append:4"
"""The point tried at scale 1: a call checkpointed but not yet stored in the session."""


def run(scale: float) -> FamilyReport:
    """Crash at one point (scale 1) or at every point on each reachable store."""
    report = FamilyReport("dbos")
    points = CRASH_POINTS if scale >= 2 else (QUICK_POINT,)
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        expected = uninterrupted_session(root / "whole")
        for number, point in enumerate(points):
            directory = root / f"sqlite-{number}"
            directory.mkdir()
            urls = (f"sqlite:///{directory / 'sys.db'}", f"sqlite:///{directory / 's.db'}")
            with report.measure():
                _crash_and_check(report, directory, urls, point, expected, "")
        if scale < 2 or not _postgres_reachable():
            return report
        for number, point in enumerate(points):
            directory = root / f"postgres-{number}"
            directory.mkdir()
            schema = f"wink_stress_{uuid.uuid4().hex[:12]}"
            try:
                with report.measure():
                    urls = (POSTGRES_URL, _in_schema(POSTGRES_URL, schema))
                    _crash_and_check(report, directory, urls, point, expected, schema)
            finally:
                _drop_schema(schema)
        _two_workers_checked(report, root / "workers", expected)
    return report


def _run_agent(
    urls: tuple[str, str], directory: Path, mode: str, crash: str = "", schema: str = ""
) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "WINK_DBOS_CRASH": crash, "WINK_DBOS_SCHEMA": schema}
    return subprocess.run(
        [sys.executable, "-m", "stress.dbos_agent", *urls, str(directory), mode],
        cwd=REPO,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )


def uninterrupted_session(directory: Path, mode: str = "start") -> str:
    """The stored session an uninterrupted run (``start`` or ``astart``) leaves in a new
    folder ``directory``, on SQLite: the same on PostgreSQL."""
    directory.mkdir()
    urls = (f"sqlite:///{directory / 'sys.db'}", f"sqlite:///{directory / 's.db'}")
    finished = _run_agent(urls, directory, mode)
    if finished.returncode != 0:
        raise RuntimeError(f"the uninterrupted run failed: {finished.stderr[-2000:]}")
    return normalized_session(urls[1])


def _crash_and_check(
    report: FamilyReport,
    directory: Path,
    urls: tuple[str, str],
    point: str,
    expected: str,
    schema: str,
) -> None:
    where = f"{point} on {urls[1].partition(':')[0]}"
    crashed = _run_agent(urls, directory, "start", point, schema)
    if crashed.returncode != 3:
        report.note("uncaught", f"{where}: the crashing run exited {crashed.returncode}")
        return
    recovered = _run_agent(urls, directory, "recover", schema=schema)
    if recovered.returncode != 0 or recovered.stdout.strip().splitlines()[-1:] != ["done"]:
        tail = recovered.stderr.strip().splitlines()[-1:]
        report.note("uncaught", f"{where}: recovery exited {recovered.returncode}: {tail}")
        return
    if normalized_session(urls[1]) != expected:
        report.note("state_leaks", f"{where}: the recovered session differs")
    kind, _, count = point.partition(":")
    keys = Counter(line.split()[0] for line in _lines(directory / "calls.txt"))
    wanted_keys = [
        f"wink:agent-1:1/c{turn}.{index}" for turn in range(1, TURNS + 1) for index in (1, 2)
    ]
    interrupted_key = wanted_keys[int(count) - 1] if kind == "handler" else None
    _check_counts(report, where, "call", keys, wanted_keys, interrupted_key)
    requests = Counter(line.split()[0] for line in _lines(directory / "requests.txt"))
    wanted_requests = [str(turn) for turn in range(1, TURNS + 2)]
    _check_counts(
        report, where, "request", requests, wanted_requests, count if kind == "model" else None
    )


def _check_counts(
    report: FamilyReport,
    where: str,
    what: str,
    counts: Counter[str],
    wanted: list[str],
    interrupted: str | None,
) -> None:
    for name in wanted:
        allowed = 2 if name == interrupted else 1
        if counts[name] == 0:
            report.note("lost_events", f"{where}: {what} {name} never ran")
        elif counts[name] > allowed:
            report.note("state_leaks", f"{where}: {what} {name} ran {counts[name]} times")
    for name in set(counts) - set(wanted):
        report.note("state_leaks", f"{where}: unexpected {what} {name}")


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


# Two workers.


@dataclass(frozen=True)
class WorkersOutcome:
    """What two workers on one queue did, one of them killed and restarted."""

    finished: list[str]
    """Each surviving worker's last line (``finished COUNT``) and exit status."""
    sessions: dict[str, str]
    """Each evaluated session's stored JSON (``normalized_session``)."""
    calls: Counter[str]
    """How often each idempotency key's handler ran."""
    requests: Counter[str]
    """How often each (workflow id, turn) request was sent."""
    calls_at_kill: int
    """Handler runs recorded when the worker was killed."""


def run_two_workers(
    url: str, schema: str, directory: Path, count: int = 20, kill_at_calls: int = 40
) -> WorkersOutcome:
    """Two workers on schema ``schema`` of ``url`` (DBOS and the session store), ``count``
    evaluations enqueued; worker ``a`` killed once ``kill_at_calls`` handlers ran, then
    restarted with its executor id. The caller drops the schema."""
    from wink.store import open_store

    store_url = _in_schema(url, schema)
    open_store(store_url).close()  # tables made before the workers race to make them
    urls = (url, store_url)
    environment = {**os.environ, "WINK_DBOS_CRASH": "", "WINK_DBOS_SCHEMA": schema}

    agent = [sys.executable, "-m", "stress.dbos_agent", *urls, str(directory), "worker"]

    def worker(name: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [*agent, name, str(count)],
            cwd=REPO,
            env=environment,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )

    first, second = worker("worker-a"), worker("worker-b")
    deadline = time.monotonic() + 60
    while len(_lines(directory / "calls.txt")) < kill_at_calls and time.monotonic() < deadline:
        if first.poll() is not None:
            break
        time.sleep(0.01)
    first.send_signal(signal.SIGKILL)
    first.wait()
    calls_at_kill = len(_lines(directory / "calls.txt"))
    restarted = worker("worker-a")
    finished = []
    for process in (second, restarted):
        try:
            output, _ = process.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            process.kill()
            output, _ = process.communicate()
        last = output.strip().splitlines()[-1:] or [""]
        finished.append(f"{last[0]} (exit {process.returncode})")
    sessions = {
        f"agent-{n}": normalized_session(store_url, f"agent-{n}") for n in range(1, count + 1)
    }
    calls = Counter(line.split()[0] for line in _lines(directory / "calls.txt"))
    requests = Counter(
        " ".join(reversed(line.split())) for line in _lines(directory / "requests.txt")
    )
    return WorkersOutcome(finished, sessions, calls, requests, calls_at_kill)


def _two_workers_checked(report: FamilyReport, directory: Path, expected: str) -> None:
    directory.mkdir()
    schema = f"wink_stress_{uuid.uuid4().hex[:12]}"
    count = 20
    try:
        with report.measure():
            outcome = run_two_workers(POSTGRES_URL, schema, directory, count, kill_at_calls=60)
    finally:
        _drop_schema(schema)
    where = "two workers"
    for line in outcome.finished:
        if line != f"finished {count} (exit 0)":
            report.note("uncaught", f"{where}: a worker ended with {line!r}")
    for session_id, stored in outcome.sessions.items():
        if stored != expected:
            report.note("state_leaks", f"{where}: session {session_id} differs")
    workflows = [f"wink:agent-{n}:1" for n in range(1, count + 1)]
    keys = [f"{w}/c{t}.{i}" for w in workflows for t in range(1, TURNS + 1) for i in (1, 2)]
    turns = [f"{w} {t}" for w in workflows for t in range(1, TURNS + 2)]
    for what, counts, wanted in (
        ("call", outcome.calls, keys),
        ("request", outcome.requests, turns),
    ):
        missing = [name for name in wanted if counts[name] == 0]
        if missing:
            report.note("lost_events", f"{where}: {len(missing)} {what}s never ran: {missing[:3]}")
        for name in set(counts) - set(wanted):
            report.note("state_leaks", f"{where}: unexpected {what} {name}")
        if any(runs > 2 for runs in counts.values()):
            report.note("state_leaks", f"{where}: a {what} ran more than twice")
    # Only what was in flight in the killed worker may run twice: one step of each of
    # its (at most two) running evaluations.
    again = sum(runs - 1 for runs in (*outcome.calls.values(), *outcome.requests.values()))
    if again > 2:
        report.note("state_leaks", f"{where}: {again} calls and requests ran twice")


# PostgreSQL.


def _in_schema(url: str, schema: str) -> str:
    return f"{url}{'&' if '?' in url else '?'}schema={schema}"


def _postgres_reachable() -> bool:
    try:
        import psycopg

        psycopg.connect(POSTGRES_URL, connect_timeout=3).close()
    except Exception:  # the extra missing, or no server: SQLite only
        return False
    return True


def _drop_schema(schema: str) -> None:
    import psycopg

    with psycopg.connect(POSTGRES_URL, autocommit=True) as connection:
        connection.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
