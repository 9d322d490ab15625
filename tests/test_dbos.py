"""Durable evaluations on DBOS, in this process: the persisted names, the idempotency key,
prompts rebuilt by reference, changed tools refused, queues, the async workflow."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("dbos")

from dbos import DBOS

from stress import dbos_agent
from wink.contrib.dbos import (
    STEP_NAMES,
    WORKFLOW_NAMES,
    DurableEvaluation,
    DurableEvaluationError,
    _evaluate_workflow,
    astart_evaluation,
    cancel_evaluation,
    lookup_evaluation,
    start_evaluation,
    workflow_id_of,
)
from wink.store._changes import change_between
from wink.tools import ToolContext

PROMPT = "stress.dbos_agent:prompt"
ADAPTER = "stress.dbos_agent:adapter"


@pytest.fixture(scope="module")
def system_database(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """DBOS launched once for this module, on a SQLite system database."""
    where = tmp_path_factory.mktemp("dbos") / "sys.db"
    DBOS(config={"name": "wink_test", "system_database_url": f"sqlite:///{where}"})
    try:
        DBOS.launch()
        DBOS.register_queue("evaluations", worker_concurrency=1, polling_interval_sec=0.05)
        yield
    finally:
        DBOS.destroy()


@pytest.fixture
def launched(system_database: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The session store's URL for this test; the agent's files go to ``tmp_path``."""
    monkeypatch.setenv("WINK_DBOS_DIR", str(tmp_path))
    return f"sqlite:///{tmp_path / 'store.db'}"


def test_workflow_and_step_names_are_pinned() -> None:
    # Recorded in DBOS's system database: a rename strands the workflows in flight.
    assert WORKFLOW_NAMES == ("wink.evaluate", "wink.aevaluate")
    assert STEP_NAMES == (
        "wink.session.begin",
        "wink.model.request",
        "wink.model.stream",
        "wink.tool.call",
        "wink.model.arequest",
        "wink.model.astream",
        "wink.tool.acall",
    )


def test_the_workflow_id_names_the_session_and_the_evaluation() -> None:
    assert workflow_id_of("agent-1", "7") == "wink:agent-1:7"


def test_an_evaluation_records_one_step_per_request_and_per_call(launched: str) -> None:
    handle = start_evaluation(launched, "s2", prompt=PROMPT, adapter=ADAPTER)
    assert handle.result().text == "done"
    assert handle.status() == "SUCCESS"
    steps = [step["function_name"] for step in DBOS.list_workflow_steps(handle.workflow_id)]
    turn = ["wink.model.request", "wink.tool.call", "wink.tool.call"]
    assert steps == ["wink.session.begin", *turn * 4, "wink.model.request"]


def test_each_call_sees_the_workflow_id_and_its_call_id_as_idempotency_key(
    launched: str, tmp_path: Path
) -> None:
    start_evaluation(launched, "s3", prompt=PROMPT, adapter=ADAPTER, evaluation="e").result()
    keys = [line.split()[0] for line in (tmp_path / "calls.txt").read_text().splitlines()]
    assert keys == [f"wink:s3:e/c{turn}.{index}" for turn in (1, 2, 3, 4) for index in (1, 2)]


def test_outside_a_durable_evaluation_the_idempotency_key_is_none() -> None:
    assert ToolContext().idempotency_key is None


def test_the_stored_session_holds_every_call_and_the_evaluation(launched: str) -> None:
    start_evaluation(launched, "s5", prompt=PROMPT, adapter=ADAPTER).result()
    from wink.runtime import Session, ToolInvoked
    from wink.store import open_store

    store = open_store(launched)
    try:
        session = Session.open(store, "s5")
        items = [noted.item for noted in session[dbos_agent.Noted].values()]
        # Each item twice: the handler's event, then the call's value joining its slice.
        expected = [f"t{turn}c{index}" for turn in (1, 2, 3, 4) for index in (1, 2)]
        assert items == [item for item in expected for _ in (1, 2)]
        assert len(session[ToolInvoked].values()) == 8
        # One version per call, and one for the evaluation's end.
        assert session.stored_version == 9
    finally:
        store.close()


def test_starting_the_same_evaluation_again_returns_the_first_run(
    launched: str, tmp_path: Path
) -> None:
    start_evaluation(launched, "s6", prompt=PROMPT, adapter=ADAPTER).result()
    again = start_evaluation(launched, "s6", prompt=PROMPT, adapter=ADAPTER)
    assert again.result().text == "done"
    assert len((tmp_path / "requests.txt").read_text().splitlines()) == 5


def test_lookup_finds_a_started_evaluation_and_none_for_another(launched: str) -> None:
    start_evaluation(launched, "s7", prompt=PROMPT, adapter=ADAPTER).result()
    found = lookup_evaluation("s7")
    assert found is not None
    assert found.workflow_id == "wink:s7:1"
    assert found.status() == "SUCCESS"
    assert lookup_evaluation("s7", "2") is None


def test_a_prompt_whose_tools_changed_since_the_start_is_refused(launched: str) -> None:
    started = DurableEvaluation(
        launched, "s8", "1", PROMPT, ADAPTER, tools=(("record", "0" * 16), ("gone", "1" * 16))
    )
    handle = DBOS.start_workflow(_evaluate_workflow, started)
    with pytest.raises(DurableEvaluationError) as raised:
        handle.get_result()
    assert str(raised.value) == (
        f"workflow {handle.workflow_id!r}: the tools of prompt 'stress.dbos_agent:prompt' "
        "changed since it started ('gone' was removed; 'record' changed its description or "
        "schemas); finish or cancel it with the code it started with, then start a new "
        "evaluation"
    )


@pytest.mark.parametrize(
    ("reference", "message"),
    [
        ("stress.dbos_agent", "is not of the form 'module:attribute'"),
        ("stress.dbos_agent:nothing_here", "cannot be resolved: AttributeError: "),
        ("stress.dbos_agent:TURNS", "names a int, not a Prompt or a function"),
    ],
)
def test_a_prompt_reference_that_names_no_prompt_is_refused_at_start(
    launched: str, reference: str, message: str
) -> None:
    with pytest.raises(DurableEvaluationError, match="the prompt reference") as raised:
        start_evaluation(launched, "s9", prompt=reference, adapter=ADAPTER)
    assert message in str(raised.value)
    assert lookup_evaluation("s9") is None


def test_evaluations_enqueued_run_one_at_a_time_under_the_queue_limit(launched: str) -> None:
    handles = [
        start_evaluation(launched, f"q10-{n}", prompt=PROMPT, adapter=ADAPTER, queue="evaluations")
        for n in range(3)
    ]
    assert [handle.result().text for handle in handles] == ["done"] * 3
    for handle in handles:
        status: Any = DBOS.get_workflow_status(handle.workflow_id)
        assert status.queue_name == "evaluations"
    # worker_concurrency=1: no two evaluations of the queue ran at once.
    steps = [DBOS.list_workflow_steps(handle.workflow_id) for handle in handles]
    runs = sorted((s[0]["started_at_epoch_ms"], s[-1]["completed_at_epoch_ms"]) for s in steps)
    assert all(earlier[1] <= later[0] for earlier, later in itertools.pairwise(runs))


def test_a_cancelled_evaluation_says_so(launched: str) -> None:
    start_evaluation(launched, "s11", prompt=PROMPT, adapter=ADAPTER).result()
    cancel_evaluation("s11")
    found = lookup_evaluation("s11")
    assert found is not None
    # A finished workflow keeps its outcome; cancelling it changes nothing.
    assert found.status() == "SUCCESS"


def test_the_async_workflow_awaits_async_tools(launched: str, tmp_path: Path) -> None:
    async def run() -> str | None:
        handle = await astart_evaluation(
            launched, "a1", prompt="stress.dbos_agent:aprompt", adapter=ADAPTER
        )
        return (await handle.aresult()).text

    assert asyncio.run(run()) == "done"
    steps = [step["function_name"] for step in DBOS.list_workflow_steps("wink:a1:1")]
    turn = ["wink.model.arequest", "wink.tool.acall", "wink.tool.acall"]
    assert steps == ["wink.session.begin", *turn * 4, "wink.model.arequest"]
    assert len((tmp_path / "calls.txt").read_text().splitlines()) == 8


def test_a_call_run_here_has_its_change_encoded_once_for_its_checkpoint_and_its_store(
    launched: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    encoded: list[int] = []

    def counted(stored: Any, now: Any) -> Any:
        change = change_between(stored, now)
        encoded.append(0 if change is None else change[2])
        return change

    monkeypatch.setattr("wink.contrib.dbos.change_between", counted)
    start_evaluation(launched, "s12", prompt=PROMPT, adapter=ADAPTER).result()
    # Each of the 8 calls is encoded once (3 values: its ToolInvoked, the handler's
    # Noted event, its value joining the Noted slice) and stored as encoded; encoded
    # again only where the session changed outside a call: the first store (the
    # evaluation's PromptRendered joins call 1) and the end (PromptExecuted).
    assert encoded == [3, 4, 3, 3, 3, 3, 3, 3, 3, 1]
