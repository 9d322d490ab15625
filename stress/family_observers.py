"""Session observers under random call programs: they see exactly what the session keeps.

Each input is a random program of tool calls on one session. A call dispatches a
few ``STATE`` and ``LOG`` events, may run a nested call, and may fail at the end.
An observer of ``object`` records every delivery. Afterwards:

- ``lost_events``: a ``ToolInvoked`` or a ``LOG`` event the session holds that the
  observer did not get (or got twice);
- ``state_leaks``: a ``STATE`` event the observer got that the session does not
  hold, that is, one a rollback undid;
- ``uncaught``: an exception out of ``execute``.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from dataclasses import dataclass
from typing import Any

from stress.report import FamilyReport
from wink import (
    MarkdownSection,
    Prompt,
    PromptTemplate,
    Session,
    SliceKind,
    Tool,
    ToolContext,
    ToolInvoked,
    ToolResult,
)
from wink.runtime import ToolCall, ToolExecutor

QUICK_INPUTS = 40


@dataclass(frozen=True)
class Mark:
    """A STATE event: undone by a rollback."""

    label: str


@dataclass(frozen=True)
class Trace:
    """A LOG event: kept by a rollback."""

    label: str


@dataclass(frozen=True)
class Step:
    marks: int = 0
    traces: int = 0
    nested: str | None = None
    """Arguments (JSON) of a nested call, if any."""
    fail: bool = False


def _step(params: Step, *, context: ToolContext) -> ToolResult[None]:
    session = context.session
    assert session is not None
    for index in range(params.marks):
        session.dispatch(Mark(f"{id(params)}-{index}"))
    for index in range(params.traces):
        session.dispatch(Trace(f"{id(params)}-{index}"))
    if params.nested is not None:
        context.resources.get(ToolExecutor).execute(ToolCall("step", params.nested))
    if params.fail:
        raise RuntimeError("planned failure")
    return ToolResult(message="ok")


_STEP = Tool[Step, None](name="step", description="Dispatch events.", handler=_step)
_TEMPLATE = PromptTemplate(
    ns="stress", key="observers", sections=[MarkdownSection(title="Steps", tools=[_STEP])]
)


def _arguments(rng: random.Random, depth: int) -> dict[str, Any]:
    arguments: dict[str, Any] = {
        "marks": rng.randint(0, 3),
        "traces": rng.randint(0, 2),
        "fail": rng.random() < 0.35,
    }
    if depth < 2 and rng.random() < 0.3:
        arguments["nested"] = json.dumps(_arguments(rng, depth + 1))
    return arguments


def run(scale: float) -> FamilyReport:
    """Run ``QUICK_INPUTS * scale`` random call programs."""
    report = FamilyReport("observers")
    rng = random.Random(7)
    for _ in range(max(1, int(QUICK_INPUTS * scale))):
        with report.measure():
            session = Session()
            session[Trace].declare(SliceKind.LOG)
            seen: list[object] = []
            session.subscribe(object, seen.append)
            inner = ToolExecutor(prompt=Prompt(_TEMPLATE), session=session)
            outer = ToolExecutor(
                prompt=Prompt(_TEMPLATE).bind(resources={ToolExecutor: inner}), session=session
            )
            for _ in range(rng.randint(1, 6)):
                call = ToolCall("step", json.dumps(_arguments(rng, 0)))
                try:
                    outer.execute(call)
                except Exception as error:
                    report.note("uncaught", f"{type(error).__name__}: {error}")
            _compare(report, session, seen)
    return report


def _compare(report: FamilyReport, session: Session, seen: list[object]) -> None:
    delivered = Counter(id(event) for event in seen)
    for kept in (*session[ToolInvoked].all(), *session[Trace].all()):
        if delivered[id(kept)] != 1:
            report.note("lost_events", f"{kept!r} delivered {delivered[id(kept)]} times")
    held = {id(mark) for mark in session[Mark].all()}
    for event in seen:
        if isinstance(event, Mark) and id(event) not in held:
            report.note("state_leaks", f"{event!r} was delivered but rolled back")
