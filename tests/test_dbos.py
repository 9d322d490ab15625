"""Durable evaluations on DBOS, in this process: the persisted names, the idempotency key,
prompts rebuilt by reference, changed tools refused, queues, the async workflow."""

from __future__ import annotations

import asyncio
import itertools
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("dbos")

from dbos import DBOS

from stress import dbos_agent
from wink import (
    Approval,
    ApprovalPolicy,
    MarkdownSection,
    Prompt,
    PromptTemplate,
    Tool,
    ToolCall,
    ToolResult,
)
from wink.contrib.dbos import (
    AWAITING_EVENT,
    DECISIONS_TOPIC,
    STEP_NAMES,
    WORKFLOW_NAMES,
    DurableEvaluation,
    DurableEvaluationError,
    EvaluationHandle,
    _evaluate_workflow,
    asend_decisions,
    astart_evaluation,
    cancel_evaluation,
    lookup_evaluation,
    send_decisions,
    start_evaluation,
    workflow_id_of,
)
from wink.policy.approval import ApprovalRequest
from wink.runtime import Session, ToolInvoked
from wink.store import open_store
from wink.store._changes import change_between
from wink.testing import FunctionAdapter, ModelInput, Reply
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


# Approvals inside a durable evaluation.

PAID: list[int] = []
"""The amounts the approval agent's handler paid out, in this process."""


@dataclass(frozen=True)
class Payment:
    """What to pay."""

    amount: int


@dataclass(frozen=True)
class Paid:
    """A payment made."""

    amount: int

    def render(self) -> str:
        """The payment as the model sees it."""
        return f"paid {self.amount}"


def _pay(params: Payment, *, context: ToolContext) -> ToolResult[Paid]:
    PAID.append(params.amount)
    return ToolResult(message="paid", value=Paid(params.amount))


_APPROVAL_TEMPLATE = PromptTemplate(
    ns="tests",
    key="dbos-approval",
    sections=[
        MarkdownSection(
            title="Bills",
            template="Pay the bills.",
            tools=[Tool[Payment, Paid](name="pay", description="Pay.", handler=_pay)],
            policies=[ApprovalPolicy(tools=frozenset({"pay"}))],
        )
    ],
)


def approval_prompt() -> Prompt[None]:
    """The prompt whose every payment awaits a person."""
    return Prompt(_APPROVAL_TEMPLATE)


def _bills_model(model_input: ModelInput) -> Reply:
    # Not the request's turn: a resumed conversation counts its requests afresh.
    if not model_input.tool_messages():
        return [
            ToolCall("pay", '{"amount": 500}', "p1"),
            ToolCall("pay", '{"amount": 700}', "p2"),
        ]
    return " | ".join(message.content for message in model_input.tool_messages())


def approval_adapter() -> FunctionAdapter:
    """A model that pays two bills, then answers with the tool messages it got."""
    return FunctionAdapter(_bills_model)


APPROVAL_PROMPT = f"{__name__}:approval_prompt"
APPROVAL_ADAPTER = f"{__name__}:approval_adapter"


def _awaiting(handle: EvaluationHandle) -> tuple[ApprovalRequest, ...]:
    """The calls the evaluation awaits, once its workflow has reached the pause."""
    for _ in range(200):
        found = handle.awaiting()
        if found:
            return found
        time.sleep(0.02)
    raise AssertionError(f"{handle.workflow_id} never paused (status {handle.status()})")


def test_the_event_and_topic_names_are_pinned() -> None:
    # Recorded in DBOS's system database, as the step names are.
    assert (AWAITING_EVENT, DECISIONS_TOPIC) == ("wink.awaiting", "wink.decisions")


def test_a_deferred_call_pauses_the_workflow_and_decisions_resume_it(launched: str) -> None:
    PAID.clear()
    handle = start_evaluation(launched, "ap1", prompt=APPROVAL_PROMPT, adapter=APPROVAL_ADAPTER)
    reason = "policy 'approval' asks a person to approve 'pay'"
    assert _awaiting(handle) == (
        ApprovalRequest("p1", "pay", '{"amount": 500}', reason),
        ApprovalRequest("p2", "pay", '{"amount": 700}', reason),
    )
    assert handle.status() == "PENDING"
    assert PAID == []
    send_decisions(
        handle, {"p1": Approval.approve(), "p2": Approval.deny("over the monthly limit")}
    )
    response = handle.result()
    denied = "A person denied this call of tool 'pay': over the monthly limit"
    assert response.text == f"paid\n\npaid 500 | {denied}"
    assert PAID == [500]
    assert handle.awaiting() == ()
    store = open_store(launched)
    try:
        session = Session.open(store, "ap1")
        results = [
            (event.call_id, event.result.success, event.result.message)
            for event in session[ToolInvoked].values()
        ]
        assert results == [("p1", True, "paid"), ("p2", False, denied)]
        assert session[Paid].all() == (Paid(500),)
    finally:
        store.close()


def test_the_workflow_records_the_pause_as_an_event_and_a_message(launched: str) -> None:
    handle = start_evaluation(launched, "ap2", prompt=APPROVAL_PROMPT, adapter=APPROVAL_ADAPTER)
    _awaiting(handle)
    send_decisions(handle, {"p1": Approval.deny("no"), "p2": Approval.deny("no")})
    handle.result()
    steps = [step["function_name"] for step in DBOS.list_workflow_steps(handle.workflow_id)]
    assert steps == [
        "wink.session.begin",
        "wink.model.request",
        "DBOS.setEvent",
        "DBOS.recv",
        "DBOS.sleep",
        "DBOS.setEvent",
        "wink.tool.call",
        "wink.tool.call",
        "wink.model.request",
    ]


def test_a_decision_with_edited_arguments_runs_the_call_with_them(launched: str) -> None:
    PAID.clear()
    handle = start_evaluation(launched, "ap3", prompt=APPROVAL_PROMPT, adapter=APPROVAL_ADAPTER)
    _awaiting(handle)
    decisions = {"p1": Approval.approve(arguments={"amount": 50}), "p2": Approval.approve()}
    send_decisions(handle, decisions)
    assert handle.result().text == "paid\n\npaid 50 | paid\n\npaid 700"
    assert PAID == [50, 700]


def test_a_decision_for_a_call_that_does_not_await_one_is_refused(launched: str) -> None:
    handle = start_evaluation(launched, "ap4", prompt=APPROVAL_PROMPT, adapter=APPROVAL_ADAPTER)
    _awaiting(handle)
    decisions = {"p1": Approval.approve(), "p2": Approval.approve(), "p9": Approval.approve()}
    with pytest.raises(DurableEvaluationError) as raised:
        send_decisions(handle.workflow_id, decisions)
    assert str(raised.value) == (
        "workflow 'wink:ap4:1': a decision was given for call 'p9', which does not await "
        "one; the calls awaiting a decision are 'p1' (pay), 'p2' (pay)"
    )
    # Nothing was sent: the evaluation still awaits both calls.
    assert [request.call_id for request in handle.awaiting()] == ["p1", "p2"]
    send_decisions(handle, {"p1": Approval.deny("no"), "p2": Approval.deny("no")})
    assert handle.result().turns == 2


def test_an_undecided_call_is_refused(launched: str) -> None:
    handle = start_evaluation(launched, "ap5", prompt=APPROVAL_PROMPT, adapter=APPROVAL_ADAPTER)
    _awaiting(handle)
    with pytest.raises(DurableEvaluationError) as raised:
        send_decisions(handle, {"p1": Approval.approve()})
    assert str(raised.value) == (
        "workflow 'wink:ap5:1': no decision was given for 'p2' (pay); each awaiting call needs one"
    )
    send_decisions(handle, {"p1": Approval.deny("no"), "p2": Approval.deny("no")})
    handle.result()


def test_decisions_for_an_evaluation_that_awaits_none_are_refused(launched: str) -> None:
    handle = start_evaluation(launched, "ap6", prompt=PROMPT, adapter=ADAPTER)
    handle.result()
    with pytest.raises(DurableEvaluationError) as raised:
        send_decisions(handle, {"c1.1": Approval.approve()})
    assert str(raised.value) == (
        "workflow 'wink:ap6:1' awaits no decisions (its status is SUCCESS); send decisions "
        "once EvaluationHandle.awaiting() lists calls"
    )


def test_the_async_workflow_waits_for_decisions_too(launched: str) -> None:
    PAID.clear()

    async def run() -> str | None:
        handle = await astart_evaluation(
            launched, "ap7", prompt=APPROVAL_PROMPT, adapter=APPROVAL_ADAPTER
        )
        while not await handle.aawaiting():
            await asyncio.sleep(0.02)
        await asend_decisions(handle, {"p1": Approval.deny("no"), "p2": Approval.approve()})
        return (await handle.aresult()).text

    denied = "A person denied this call of tool 'pay': no"
    assert asyncio.run(run()) == f"{denied} | paid\n\npaid 700"
    assert PAID == [700]


_RESTART_SCRIPT = """
import os, sys, time
from dbos import DBOS
import test_dbos as agent
from wink import Approval
from wink.contrib.dbos import lookup_evaluation, send_decisions, start_evaluation
system, store, mode = sys.argv[1:4]
DBOS(config={"name": "wink_test", "system_database_url": system})
DBOS.launch()
if mode == "start":
    handle = start_evaluation(
        store, "r1", prompt=agent.APPROVAL_PROMPT, adapter=agent.APPROVAL_ADAPTER
    )
    print([request.call_id for request in agent._awaiting(handle)], flush=True)
    os._exit(3)
handle = lookup_evaluation("r1")
send_decisions(handle, {"p1": Approval.approve(), "p2": Approval.deny("no")})
print(repr(handle.result().text), agent.PAID, flush=True)
DBOS.destroy()
"""


def test_an_evaluation_awaiting_decisions_survives_a_restart(tmp_path: Path) -> None:
    system = f"sqlite:///{tmp_path / 'sys.db'}"
    store = f"sqlite:///{tmp_path / 'store.db'}"
    tests = Path(__file__).parent
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tests), str(tests.parent)])}

    def run(mode: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-c", _RESTART_SCRIPT, system, store, mode]
        return subprocess.run(
            command, capture_output=True, text=True, env=environment, timeout=60, check=False
        )

    started = run("start")
    assert (started.returncode, started.stdout) == (3, "['p1', 'p2']\n")
    recovered = run("recover")
    denied = "A person denied this call of tool 'pay': no"
    # The recovered process received the decisions and ran the approved call, once.
    text = f"paid\n\npaid 500 | {denied}"
    assert recovered.stdout == f"{text!r} [500]\n"
