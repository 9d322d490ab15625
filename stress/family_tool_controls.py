"""Tool controls under random inputs: timeouts, retries, output limits and approvals.

Each input is one call (or one paused and resumed evaluation) of a tool with a
control: a sync handler in its own thread, a sync one inline or an async one, each
writing to the session and a filesystem and then running past its timeout or not;
a handler failing a random number of times under random ``Retries``; a value of
random multi-byte text (astral characters as surrogate pairs included) cut to a
random ``max_output_chars``; transfers deferred to a person, then approved, approved
with edited arguments or denied, and resumed.

Counts: ``state_leaks`` is a timed-out or failed attempt's change that survived (or
a successful one that is missing); ``lost_events`` a call without exactly one
``ToolInvoked`` (or whose record miscounts its attempts), or a cut that lost or
changed characters of the shown text; ``uncaught`` an exception out of the call.
"""

from __future__ import annotations

import asyncio
import logging
import random
import threading
import time
from dataclasses import dataclass
from typing import Any

from stress.report import FamilyReport
from wink import (
    Approval,
    ApprovalPending,
    ApprovalPolicy,
    Filesystem,
    InMemoryFilesystem,
    MarkdownSection,
    Prompt,
    PromptTemplate,
    Retries,
    Tool,
    ToolContext,
    ToolResult,
)
from wink.runtime import Session, ToolCall, ToolExecutor, ToolInvoked
from wink.testing import ScriptedAdapter

TIMEOUT = 0.01
"""Seconds a timed tool may run; a late handler sleeps twice that."""


@dataclass(frozen=True)
class Step:
    mark: str
    late: bool = False
    failures: int = 0


@dataclass(frozen=True)
class Note:
    mark: str


@dataclass(frozen=True)
class Text:
    body: str

    def render(self) -> str:
        return self.body


def _write(context: ToolContext, mark: str) -> None:
    assert context.session is not None and context.filesystem is not None
    context.session.dispatch(Note(mark))
    context.filesystem.write(f"{mark}.txt", mark)


_attempts: dict[str, int] = {}
_attempts_lock = threading.Lock()


def _attempt(mark: str) -> int:
    """Which attempt of the call marked ``mark`` this is (from 1)."""
    with _attempts_lock:
        _attempts[mark] = _attempts.get(mark, 0) + 1
        return _attempts[mark]


def _sync(params: Step, *, context: ToolContext) -> ToolResult[None]:
    attempt = _attempt(params.mark)
    _write(context, f"{params.mark}-{attempt}")
    if params.late:
        time.sleep(TIMEOUT * 2)
        _write(context, f"{params.mark}-{attempt}-late")
    if attempt <= params.failures:
        raise ConnectionError(f"attempt {attempt} of {params.mark} failed")
    return ToolResult(message="ok")


async def _async(params: Step, *, context: ToolContext) -> ToolResult[None]:
    attempt = _attempt(params.mark)
    _write(context, f"{params.mark}-{attempt}")
    if params.late:
        await asyncio.sleep(TIMEOUT * 20)  # cancelled at the timeout
        _write(context, f"{params.mark}-{attempt}-late")
    if attempt <= params.failures:
        raise ConnectionError(f"attempt {attempt} of {params.mark} failed")
    return ToolResult(message="ok")


def _text(params: Step, *, context: ToolContext) -> ToolResult[Text]:
    return ToolResult.ok(Text(_body(int(params.mark))))


def _tools(chooser: random.Random) -> list[Tool[Any, Any]]:
    retries = Retries(attempts=chooser.randint(2, 4), backoff=0, jitter=0)
    return [
        Tool[Step, None](
            name="in_thread", description="d", handler=_sync, timeout=TIMEOUT, in_thread=True
        ),
        Tool[Step, None](name="inline", description="d", handler=_sync, timeout=TIMEOUT),
        Tool[Step, None](name="awaited", description="d", handler=_async, timeout=TIMEOUT),
        Tool[Step, None](name="retried", description="d", handler=_sync, retries=retries),
        Tool[Step, None](name="aretried", description="d", handler=_async, retries=retries),
        Tool[Step, Text](
            name="text", description="d", handler=_text, max_output_chars=chooser.randint(1, 40)
        ),
    ]


_ALPHABET = ("a", "é", "中", "\u0301", "\U0001f600", "\ud83d\ude00", "\u00a0")
"""Letters of one code point, a combining mark, an astral character, and a surrogate
pair written as two code units (as text decoded from UTF-16 may hold one)."""


def _body(seed: int) -> str:
    """The text of seed ``seed``: made by the handler, since arguments are JSON, which
    cannot carry a surrogate pair's code units as they are."""
    chooser = random.Random(seed)
    return "".join(chooser.choice(_ALPHABET) for _ in range(chooser.randint(0, 60)))


def _one_call(report: FamilyReport, chooser: random.Random, index: int) -> None:
    tools = _tools(chooser)
    tool = chooser.choice(tools)
    template = PromptTemplate(
        ns="stress", key="controls", sections=[MarkdownSection(title="T", tools=tools)]
    )
    session, filesystem = Session(), InMemoryFilesystem()
    executor = ToolExecutor(
        prompt=Prompt(template, resources={Filesystem: filesystem}), session=session
    )
    mark = f"c{index}"
    late = tool.timeout is not None and chooser.random() < 0.5
    failures = chooser.randint(0, 4) if tool.retries is not None else 0
    seed = chooser.randrange(1 << 30)
    arguments = {"mark": str(seed) if tool.name == "text" else mark, "late": late}
    call = ToolCall(tool.name, {**arguments, "failures": failures}, mark)
    try:
        if tool.is_async or chooser.random() < 0.5:
            result = asyncio.run(executor.aexecute(call))
        else:
            result = executor.execute(call)
    except Exception as error:
        report.note("uncaught", f"{tool.name}: {error!r}"[:200])
        return
    # A late in_thread handler still runs: its call keeps the session until it is undone.
    waited = time.monotonic() + 5
    while session.call_lock.owner is not None and time.monotonic() < waited:
        time.sleep(0.002)
    records = [e for e in session[ToolInvoked].all() if e.call_id == mark]
    if len(records) != 1:
        report.note("lost_events", f"{tool.name}: {len(records)} records")
        return
    record = records[0]
    if tool.name == "text":
        _check_cut(report, tool, _body(seed), result, record)
        return
    ran = _attempts.pop(mark, 0)
    if record.attempts != ran or len(record.earlier_attempts) != ran - 1:
        report.note("lost_events", f"{tool.name}: ran {ran}, recorded {record.attempts}")
    kept = {note.mark for note in session[Note].all()}
    written = {f"{mark}-{n}{late}" for n in range(1, 6) for late in ("", "-late")}
    files = {name for name in written if filesystem.exists(f"{name}.txt")}
    expected = {f"{mark}-{ran}"} if result.success else set()
    if kept != expected or files != expected:
        report.note("state_leaks", f"{tool.name} ({result.success}): kept {sorted(kept)}")


def _check_cut(
    report: FamilyReport, tool: Tool[Any, Any], body: str, result: Any, record: ToolInvoked
) -> None:
    limit = tool.max_output_chars
    assert limit is not None
    shown = record.rendered_output
    whole = isinstance(result.value, Text) and result.value.body == body
    if len(body) <= limit:
        fine = shown == body
    else:
        kept = limit - 1 if "\ud800" <= body[limit - 1] <= "\udbff" else limit
        fine = shown.startswith(body[:kept] + "\n[cut: ") and f"{kept} of {len(body)}" in shown
    if not (fine and whole):
        report.note("lost_events", f"cut of {len(body)} to {limit}: {shown[:60]!r}")


@dataclass(frozen=True)
class Transfer:
    amount: int


@dataclass(frozen=True)
class Sent:
    amount: int

    def render(self) -> str:
        return f"sent {self.amount}"


def _transfer(params: Transfer, *, context: ToolContext) -> ToolResult[Sent]:
    return ToolResult.ok(Sent(params.amount))


def _large(tool: Tool[Any, Any], params: Any) -> bool:
    return bool(params.amount > 100)


_bank = PromptTemplate(
    ns="stress",
    key="bank",
    sections=[
        MarkdownSection(
            title="Bank",
            tools=[Tool[Transfer, Sent](name="transfer", description="d", handler=_transfer)],
            policies=[ApprovalPolicy(tools=frozenset({"transfer"}), when=_large)],
        )
    ],
)


def _one_approval(report: FamilyReport, chooser: random.Random, index: int) -> None:
    amounts = [chooser.choice((5, 50, 500, 5000)) for _ in range(chooser.randint(1, 4))]
    calls = [ToolCall("transfer", f'{{"amount": {a}}}', f"t{n}") for n, a in enumerate(amounts)]
    session = Session()
    expected: list[int] = []
    decisions: dict[str, Approval] = {}
    for call, amount in zip(calls, amounts, strict=True):
        choice = "run" if amount <= 100 else chooser.choice(("approve", "edit", "deny"))
        if choice in ("run", "approve"):
            expected.append(amount)
        if choice == "approve":
            decisions[call.call_id or ""] = Approval.approve()
        elif choice == "edit":
            decisions[call.call_id or ""] = Approval.approve(arguments={"amount": amount // 10})
            expected.append(amount // 10)
        elif choice == "deny":
            decisions[call.call_id or ""] = Approval.deny("not now")
    try:
        try:
            ScriptedAdapter([calls, "done"]).evaluate(Prompt(_bank), session=session)
        except ApprovalPending as pending:
            if {r.call_id for r in pending.requests} != set(decisions):
                report.note("lost_events", f"approval {index}: asked for {pending.requests}")
                return
            if session[ToolInvoked].all() or session[Sent].all():
                report.note("state_leaks", f"approval {index}: a call ran before the decision")
            ScriptedAdapter(["done"]).resume(Prompt(_bank), session=session, decisions=decisions)
        else:
            if decisions:
                report.note("lost_events", f"approval {index}: no pause for {sorted(decisions)}")
    except Exception as error:
        report.note("uncaught", f"approval {index}: {error!r}"[:200])
        return
    ids = [event.call_id for event in session[ToolInvoked].all()]
    if ids != [call.call_id for call in calls]:
        report.note("lost_events", f"approval {index}: recorded {ids}")
    if [sent.amount for sent in session[Sent].all()] != expected:
        report.note("state_leaks", f"approval {index}: sent {session[Sent].all()}, not {expected}")


def run(scale: float) -> FamilyReport:
    """Try about ``120 * scale`` calls and ``40 * scale`` paused evaluations."""
    report = FamilyReport("tool_controls")
    chooser = random.Random(29)
    quiet = logging.getLogger("wink")
    level = quiet.level
    quiet.setLevel(logging.ERROR)  # the failures are on purpose; the tally counts them
    try:
        for index in range(max(1, int(120 * scale))):
            with report.measure():
                _one_call(report, chooser, index)
        for index in range(max(1, int(40 * scale))):
            with report.measure():
                _one_approval(report, chooser, index)
    finally:
        quiet.setLevel(level)
    return report
