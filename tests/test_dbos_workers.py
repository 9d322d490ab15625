"""Two DBOS workers on one PostgreSQL schema share a queue of durable evaluations, and
killing one loses none: restarted with its executor id, it puts its pending workflows
back on the queue, where either worker finishes them."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("dbos")

from stress.dbos_agent import TURNS
from stress.family_dbos import run_two_workers, uninterrupted_session

COUNT = 20


def test_a_killed_worker_loses_no_enqueued_evaluation_and_repeats_at_most_its_steps_in_flight(
    tmp_path: Path, postgres_schema: tuple[str, str]
) -> None:
    url, schema = postgres_schema
    expected = uninterrupted_session(tmp_path / "whole")
    directory = tmp_path / "workers"
    directory.mkdir()
    outcome = run_two_workers(url, schema, directory, COUNT, kill_at_calls=40)
    assert outcome.calls_at_kill >= 40
    assert outcome.finished == [f"finished {COUNT} (exit 0)"] * 2
    assert outcome.sessions == {f"agent-{n}": expected for n in range(1, COUNT + 1)}
    workflows = [f"wink:agent-{n}:1" for n in range(1, COUNT + 1)]
    keys = {f"{w}/c{t}.{i}" for w in workflows for t in range(1, TURNS + 1) for i in (1, 2)}
    turns = {f"{w} {t}" for w in workflows for t in range(1, TURNS + 2)}
    assert set(outcome.calls) == keys
    assert set(outcome.requests) == turns
    # The killed worker ran at most two evaluations (worker_concurrency=2), each at one
    # step: only those steps may have run twice.
    again = [name for name, runs in (*outcome.calls.items(), *outcome.requests.items()) if runs > 1]
    assert len(again) <= 2, again
    assert max((*outcome.calls.values(), *outcome.requests.values())) <= 2
