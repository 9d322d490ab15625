"""A durable evaluation whose process crashes resumes where it stopped.

Each case runs ``stress.dbos_agent`` (4 model turns of 2 tool calls, then an answer) in
a subprocess that exits with ``os._exit`` at one point, then in a fresh one that
recovers it. The recovered session equals an uninterrupted run's (run once per module
and workflow kind, on SQLite: the stored session does not depend on the store); each
completed handler ran once; the interrupted one at most twice, with the same
idempotency key; no completed model request was sent again. ``family_dbos`` sweeps
every point.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

pytest.importorskip("dbos")

from stress.dbos_agent import normalized_session
from stress.family_dbos import uninterrupted_session

ROOT = Path(__file__).resolve().parent.parent
EXPECTED_KEYS = [f"wink:agent-1:1/c{turn}.{index}" for turn in (1, 2, 3, 4) for index in (1, 2)]


def _run(
    system_db: str, store_url: str, directory: Path, mode: str, crash: str = "", schema: str = ""
) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "WINK_DBOS_CRASH": crash, "WINK_DBOS_SCHEMA": schema}
    return subprocess.run(
        [sys.executable, "-m", "stress.dbos_agent", system_db, store_url, str(directory), mode],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _lines(directory: Path, name: str) -> list[str]:
    return (directory / name).read_text().splitlines()


def _crash_and_recover(
    directory: Path, system_db: str, store_url: str, mode: str, crash: str, schema: str = ""
) -> None:
    crashed = _run(system_db, store_url, directory, mode, crash, schema)
    assert crashed.returncode == 3, crashed.stderr[-2000:]
    recovered = _run(system_db, store_url, directory, "recover", schema=schema)
    assert recovered.returncode == 0, recovered.stderr[-2000:]
    assert recovered.stdout.strip().splitlines()[-1] == "done"


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], str]:
    """The session an uninterrupted run of ``start`` or ``astart`` stores, each run once."""
    found: dict[str, str] = {}

    def session(mode: str) -> str:
        if mode not in found:
            found[mode] = uninterrupted_session(tmp_path_factory.mktemp("whole") / mode, mode)
        return found[mode]

    return session


def _check_runs(directory: Path, crash: str) -> None:
    keys = Counter(line.split()[0] for line in _lines(directory, "calls.txt"))
    kind, _, count = crash.partition(":")
    interrupted = EXPECTED_KEYS[int(count) - 1] if kind == "handler" else None
    assert sorted(keys) == sorted(EXPECTED_KEYS)
    for key, runs in keys.items():
        assert runs == (2 if key == interrupted else 1), key
    requests = Counter(line.split()[0] for line in _lines(directory, "requests.txt"))
    # Each request sent once, but the one the crash cut before its reply was recorded.
    interrupted_request = count if kind == "model" else None
    assert requests == {
        str(turn): 2 if str(turn) == interrupted_request else 1 for turn in (1, 2, 3, 4, 5)
    }


def _sqlite_urls(directory: Path) -> dict[str, str]:
    return {
        "system": f"sqlite:///{directory / 'sys.db'}",
        "store": f"sqlite:///{directory / 's.db'}",
    }


@pytest.mark.parametrize(
    ("mode", "crash"),
    [("start", "handler:3"), ("start", "model:4"), ("astart", "handler:8")],
)
def test_a_crashed_evaluation_recovers_on_sqlite_as_if_uninterrupted(
    tmp_path: Path, mode: str, crash: str, uninterrupted: Callable[[str], str]
) -> None:
    expected = uninterrupted(mode)
    directory = tmp_path / "crashed"
    directory.mkdir()
    urls = _sqlite_urls(directory)
    _crash_and_recover(directory, urls["system"], urls["store"], mode, crash)
    assert normalized_session(urls["store"]) == expected
    _check_runs(directory, crash)


def test_a_crashed_evaluation_recovers_on_postgresql_as_if_uninterrupted(
    tmp_path: Path, postgres_schema: tuple[str, str], uninterrupted: Callable[[str], str]
) -> None:
    url, schema = postgres_schema
    separator = "&" if "?" in url else "?"
    store_url = f"{url}{separator}schema={schema}"
    _crash_and_recover(tmp_path, url, store_url, "start", "handler:5", schema)
    assert normalized_session(store_url) == uninterrupted("start")
    _check_runs(tmp_path, "handler:5")
