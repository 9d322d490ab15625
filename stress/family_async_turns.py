"""Concurrent turns through ``aexecute_all``: random mixes of async, inline, worker-thread
and sequential tools, failures, sub-call fan-outs and cancellation.

Each round runs one model turn of random calls on one session. Every call must leave
exactly one ``ToolInvoked`` and its result must come back in its place; the session
must then hold exactly the marks of the calls that succeeded, in call order (a
parent's mark before its sub-calls'), and none of a failed call. A round that does
not finish within a bound is a deadlock (counted as lost events). One round in five
is cancelled part-way: every call that started must be recorded once (those not
started yet, after the cancelled one, are not run), and only the calls recorded as
successes may have left marks.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from dataclasses import dataclass
from typing import Any

from stress.report import FamilyReport
from wink import MarkdownSection, Prompt, PromptTemplate, Tool, ToolContext, ToolResult
from wink.runtime import Session, ToolCall, ToolExecutor, ToolInvoked

BOUND = 20.0
"""Seconds a round may take before it counts as deadlocked."""


@dataclass(frozen=True)
class Mark:
    label: str


@dataclass(frozen=True)
class Job:
    label: str
    seconds: float = 0.0
    fail: bool = False
    fan: int = 0


def _finish(params: Job) -> ToolResult[str]:
    if params.fail:
        raise RuntimeError(f"{params.label} failed")
    return ToolResult.ok(params.label)


def _session_of(context: ToolContext) -> Session:
    session = context.session
    assert session is not None  # the executor always gives one
    return session


async def async_job(params: Job, *, context: ToolContext) -> ToolResult[str]:
    _session_of(context).dispatch(Mark(params.label))
    await asyncio.sleep(params.seconds)
    if params.fan:
        assert context.prompt is not None
        sub = ToolExecutor(prompt=context.prompt, session=_session_of(context))
        calls = [_call("async_job", Job(f"{params.label}.{n}")) for n in range(params.fan)]
        results = await sub.aexecute_all(calls)
        if not all(result.success for result in results):
            raise RuntimeError("a sub-call failed")
    return _finish(params)


def sync_job(params: Job, *, context: ToolContext) -> ToolResult[str]:
    _session_of(context).dispatch(Mark(params.label))
    time.sleep(params.seconds)
    return _finish(params)


TOOLS = [
    Tool[Job, str](name="async_job", description="Async.", handler=async_job),
    Tool[Job, str](name="inline_job", description="Inline.", handler=sync_job),
    Tool[Job, str](name="thread_job", description="Thread.", handler=sync_job, in_thread=True),
    Tool[Job, str](
        name="sequential_job", description="Sequential.", handler=async_job, sequential=True
    ),
]
PROMPT = Prompt(
    PromptTemplate(ns="stress", key="async", sections=[MarkdownSection(title="T", tools=TOOLS)])
)


def _call(name: str, job: Job) -> ToolCall:
    arguments = (
        f'{{"label": "{job.label}", "seconds": {job.seconds}, '
        f'"fail": {str(job.fail).lower()}, "fan": {job.fan}}}'
    )
    return ToolCall(name, arguments, job.label)


def _turn(rng: random.Random, round_number: int) -> list[tuple[ToolCall, Job]]:
    turn = []
    for index in range(rng.randint(2, 6)):
        name = rng.choice([tool.name for tool in TOOLS])
        job = Job(
            label=f"r{round_number}c{index}",
            seconds=rng.choice([0.0, 0.001, 0.003]),
            fail=rng.random() < 0.3,
            fan=rng.choice([0, 0, 2]) if name == "async_job" else 0,
        )
        turn.append((_call(name, job), job))
    return turn


def _expected_marks(session: Session, jobs: list[Job]) -> list[str]:
    """The marks the recorded successes must have left, in call order."""
    succeeded = {e.call_id for e in session[ToolInvoked] if e.result.success}
    marks: list[str] = []
    for job in jobs:
        if job.label in succeeded:
            marks.append(job.label)
            marks.extend(f"{job.label}.{n}" for n in range(job.fan))
    return marks


def _round(rng: random.Random, round_number: int, report: FamilyReport) -> None:
    session = Session()
    executor = ToolExecutor(prompt=PROMPT, session=session)
    turn = _turn(rng, round_number)
    calls = [call for call, _ in turn]
    jobs = [job for _, job in turn]
    cancel = round_number % 5 == 4

    async def run() -> list[ToolResult[Any]] | None:
        task = asyncio.ensure_future(executor.aexecute_all(calls))
        if not cancel:
            return await task
        await asyncio.sleep(rng.choice([0.0, 0.001, 0.002]))
        task.cancel()
        try:
            return await task
        except asyncio.CancelledError:
            return None

    try:
        results = asyncio.run(asyncio.wait_for(run(), BOUND))
    except TimeoutError:
        report.note("lost_events", f"round {round_number}: deadlock")
        return
    except Exception as error:
        report.note("uncaught", f"round {round_number}: {type(error).__name__}: {error}")
        return
    top = [e for e in session[ToolInvoked] if "." not in str(e.call_id)]
    recorded_ids = sorted(str(e.call_id) for e in top)
    started = calls if results is not None else calls[: len(recorded_ids)]
    if recorded_ids != sorted(call.call_id or "" for call in started):
        report.note("lost_events", f"round {round_number}: recorded {[e.call_id for e in top]}")
        return
    if results is not None:
        for call, result in zip(calls, results, strict=True):
            recorded = next(e for e in top if e.call_id == call.call_id)
            if recorded.result is not result:
                report.note("lost_events", f"round {round_number}: {call.call_id} out of place")
    marks = [mark.label for mark in session[Mark]]
    expected = _expected_marks(session, jobs)
    if marks != expected:
        kind = "state_leaks" if len(marks) > len(expected) else "lost_events"
        report.note(kind, f"round {round_number}: marks {marks}, expected {expected}")


def run(scale: float) -> FamilyReport:
    """Run ``40 * scale`` rounds of one concurrent turn each."""
    report = FamilyReport("async_turns")
    rng = random.Random(12)
    wink_logger = logging.getLogger("wink")
    level = wink_logger.level
    wink_logger.setLevel(logging.CRITICAL)  # handler failures are expected
    try:
        for round_number in range(max(1, int(40 * scale))):
            with report.measure():
                _round(rng, round_number, report)
    finally:
        wink_logger.setLevel(level)
    return report
