"""Human approval that can wait: a deferred call stops the evaluation before it runs;
``resume`` continues it with a person's decisions, in this process or another."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.approval_bank import Sent, bank_prompt
from wink import (
    Approval,
    ApprovalError,
    ApprovalPending,
    ApprovalRequest,
    PolicyDecision,
    ToolInvoked,
)
from wink.runtime import Session, ToolCall, ToolExecutor
from wink.testing import ModelInput, ScriptedAdapter, ToolMessage

ROOT = Path(__file__).resolve().parent.parent


def pause(session: Session) -> ApprovalPending:
    adapter = ScriptedAdapter(
        [
            [
                ToolCall("transfer", '{"amount": 5}', "small"),
                ToolCall("transfer", '{"amount": 500}', "big"),
            ]
        ]
    )
    with pytest.raises(ApprovalPending) as raised:
        adapter.evaluate(bank_prompt(), session=session)
    return raised.value


def test_a_deferred_call_stops_the_evaluation_before_any_call_of_its_turn_runs() -> None:
    session = Session()
    pending = pause(session)
    assert pending.requests == (
        ApprovalRequest(
            "big",
            "transfer",
            '{"amount": 500}',
            "policy 'approval' asks a person to approve 'transfer'",
        ),
    )
    assert session[Sent].all() == ()
    assert session[ToolInvoked].all() == ()


def test_resume_runs_approved_calls_and_continues_the_same_transcript() -> None:
    session = Session()
    pause(session)
    seen: list[ModelInput] = []

    def model(model_input: ModelInput) -> str:
        seen.append(model_input)
        return "Paid."

    from wink.testing import FunctionAdapter

    response = FunctionAdapter(model).resume(
        bank_prompt(), session=session, decisions={"big": Approval.approve()}
    )
    assert response.text == "Paid."
    assert session[Sent].all() == (Sent(5), Sent(500))
    assert [m for m in seen[0].messages if isinstance(m, ToolMessage)] == [
        ToolMessage("small", "transfer", "done\n\nsent 5", True),
        ToolMessage("big", "transfer", "done\n\nsent 500", True),
    ]
    assert [event.call_id for event in response.tool_results] == ["small", "big"]
    assert response.turns == 2


def test_a_denied_call_is_reported_to_the_model_with_the_reason() -> None:
    session = Session()
    pause(session)
    adapter = ScriptedAdapter(["Understood."])
    response = adapter.resume(
        bank_prompt(), session=session, decisions={"big": Approval.deny("over the monthly limit")}
    )
    assert session[Sent].all() == (Sent(5),)
    denied = response.tool_results[-1]
    assert (denied.denied, denied.result.message) == (
        True,
        "A person denied this call of tool 'transfer': over the monthly limit",
    )
    assert adapter.inputs[0].tool_messages()[-1].content == (
        "A person denied this call of tool 'transfer': over the monthly limit"
    )


def test_approval_with_edited_arguments_runs_the_edited_call() -> None:
    session = Session()
    pause(session)
    ScriptedAdapter(["ok"]).resume(
        bank_prompt(),
        session=session,
        decisions={"big": Approval.approve(arguments={"amount": 250})},
    )
    assert session[Sent].all() == (Sent(5), Sent(250))
    assert session[ToolInvoked].latest().arguments == '{"amount": 250}'  # type: ignore[union-attr]


def test_resume_with_a_decision_for_an_unknown_call_id_is_refused() -> None:
    session = Session()
    pause(session)
    with pytest.raises(ApprovalError) as raised:
        ScriptedAdapter(["ok"]).resume(
            bank_prompt(), session=session, decisions={"nope": Approval.approve()}
        )
    assert str(raised.value) == (
        "a decision was given for call 'nope', which does not await one; the calls awaiting "
        "a decision are 'big' (transfer)"
    )
    assert session[Sent].all() == ()


def test_resume_without_a_decision_for_each_awaiting_call_is_refused() -> None:
    session = Session()
    pause(session)
    with pytest.raises(ApprovalError, match=r"no decision was given for 'big' \(transfer\)"):
        ScriptedAdapter(["ok"]).resume(bank_prompt(), session=session, decisions={})


def test_resuming_twice_is_refused() -> None:
    session = Session()
    pause(session)
    ScriptedAdapter(["ok"]).resume(
        bank_prompt(), session=session, decisions={"big": Approval.approve()}
    )
    with pytest.raises(ApprovalError, match="was resumed already"):
        ScriptedAdapter(["ok"]).resume(
            bank_prompt(), session=session, decisions={"big": Approval.approve()}
        )
    assert session[Sent].all() == (Sent(5), Sent(500))


def test_resume_after_the_prompt_changed_is_refused() -> None:
    session = Session()
    pause(session)
    with pytest.raises(ApprovalError, match="renders differently from when its evaluation paused"):
        ScriptedAdapter(["ok"]).resume(
            bank_prompt("Pay every bill."), session=session, decisions={"big": Approval.approve()}
        )


def test_resume_of_a_session_with_nothing_awaiting_is_refused() -> None:
    with pytest.raises(ApprovalError, match="has no evaluation of prompt 'bank' awaiting approval"):
        ScriptedAdapter(["ok"]).resume(bank_prompt(), session=Session(), decisions={})


def test_aevaluate_pauses_and_aresume_continues() -> None:
    async def run() -> tuple[str | None, tuple[Sent, ...]]:
        session = Session()
        adapter = ScriptedAdapter([ToolCall("transfer", '{"amount": 900}', "big")])
        with pytest.raises(ApprovalPending):
            await adapter.aevaluate(bank_prompt(), session=session)
        response = await ScriptedAdapter(["Paid."]).aresume(
            bank_prompt(), session=session, decisions={"big": Approval.approve()}
        )
        return response.text, session[Sent].all()

    assert asyncio.run(run()) == ("Paid.", (Sent(900),))


def test_an_executor_outside_an_evaluation_denies_a_deferred_call() -> None:
    session = Session()
    executor = ToolExecutor(prompt=bank_prompt(), session=session)
    result = executor.execute(ToolCall("transfer", '{"amount": 500}', "c"))
    assert result.message == (
        "Tool 'transfer' needs a person's approval (policy 'approval' asks a person to approve "
        "'transfer'); this call could not wait for one, so it was not run"
    )
    assert session[Sent].all() == ()


def test_a_deferred_decision_never_allows() -> None:
    decision = PolicyDecision.defer("ask")
    assert (decision.allowed, decision.deferred, decision.reason) == (False, True, "ask")
    with pytest.raises(TypeError):
        PolicyDecision(allowed=True, deferred=True)


PAUSE = """
from wink import ApprovalPending, Session, SqliteStore, ToolCall
from wink.testing import ScriptedAdapter
from tests.approval_bank import bank_prompt
store = SqliteStore({db!r})
session = Session.open(store, "s1")
adapter = ScriptedAdapter([ToolCall("transfer", '{{"amount": 700}}', "big")])
try:
    adapter.evaluate(bank_prompt(), session=session)
except ApprovalPending as pending:
    print([r.call_id for r in pending.requests])
store.close()
"""

RESUME = """
from wink import Approval, Session, SqliteStore
from wink.testing import ScriptedAdapter
from tests.approval_bank import Sent, bank_prompt
store = SqliteStore({db!r})
session = Session.open(store, "s1")
adapter = ScriptedAdapter(["Paid 700."])
response = adapter.resume(bank_prompt(), session=session, decisions={{"big": Approval.approve()}})
print(response.text, session[Sent].all(), adapter.inputs[0].tool_messages()[0].content)
store.close()
"""


def run_python(code: str) -> str:
    finished = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert finished.returncode == 0, finished.stderr[-2000:]
    return finished.stdout.strip()


def test_a_pending_evaluation_is_resumed_in_another_process(tmp_path: Path) -> None:
    db = str(tmp_path / "sessions.db")
    assert run_python(PAUSE.format(db=db)) == "['big']"
    assert run_python(RESUME.format(db=db)) == "Paid 700. (Sent(amount=700),) done\n\nsent 700"
