"""Fault injection at every step of a tool call.

Each input makes one step fail (a policy's check or on_result, a resource's
snapshot or restore, the handler, the result's render, a reducer on the call's
record, the close of a per-call resource) with an ``Exception``, a
``BaseException``, or an exception whose ``str()`` and ``repr()`` raise. The
outcome must follow the executor's failure table: exactly one ``ToolInvoked``
per call, LOG events kept, nothing else changed by a failed call, and only
the documented errors leaving ``execute``.
"""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass
from typing import Any

from stress.report import FamilyReport
from wink import (
    Binding,
    Filesystem,
    InMemoryFilesystem,
    MarkdownSection,
    Prompt,
    PromptEvaluationError,
    PromptTemplate,
    ResourceRegistry,
    Scope,
    Tool,
    ToolContext,
    ToolResult,
)
from wink.policy import PolicyDecision
from wink.runtime import Session, SliceKind, SliceValues, ToolCall, ToolExecutor, ToolInvoked

STEPS = (
    "check",
    "snapshot",
    "handler",
    "render",
    "on_result",
    "reducer",
    "restore",
    "close",
    "none",
)
FAULTS = ("exception", "base_exception", "unprintable", "returns_none")


class Interrupt(BaseException):
    """A ``BaseException`` of the campaign's own, so none is mistaken for a real interrupt."""


class Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("str failed")

    def __repr__(self) -> str:
        raise RuntimeError("repr failed")


@dataclass
class Plan:
    """Where the current input injects its fault, and which."""

    step: str = "none"
    fault: str = "exception"
    fail_handler: bool = False

    def hit(self, step: str) -> None:
        if self.step != step:
            return
        if self.fault == "base_exception":
            raise Interrupt(step)
        if self.fault == "unprintable":
            raise Unprintable()
        raise RuntimeError(f"fault in {step}")


PLAN = Plan()


@dataclass(frozen=True)
class Mark:
    text: str


@dataclass(frozen=True)
class Audit:
    text: str


@dataclass(frozen=True)
class Output:
    text: str

    def render(self) -> str:
        PLAN.hit("render")
        return self.text


class Probe:
    """A snapshotable resource whose snapshot and restore take the plan's faults."""

    def __init__(self) -> None:
        self.value = 0

    def snapshot(self) -> object:
        PLAN.hit("snapshot")
        return self.value

    def restore(self, snapshot: object) -> None:
        PLAN.hit("restore")
        assert isinstance(snapshot, int)
        self.value = snapshot


class Closing:
    def close(self) -> None:
        PLAN.hit("close")


class Policy:
    name = "injected"

    def check(self, tool: Tool[Any, Any], params: Any, *, context: ToolContext) -> Any:
        if PLAN.step == "check" and PLAN.fault == "returns_none":
            return None
        PLAN.hit("check")
        return PolicyDecision.allow()

    def on_result(self, *args: Any, context: ToolContext) -> None:
        PLAN.hit("on_result")


@dataclass(frozen=True)
class Params:
    label: str


def handler(params: Params, *, context: ToolContext) -> ToolResult[Output]:
    session = context.session
    assert session is not None
    context.resources.get(Closing)
    session.dispatch(Mark(params.label))
    session.dispatch(Audit(params.label))
    context.require_filesystem().write(f"{params.label}.txt", params.label)
    context.resources.get(Probe).value += 1
    PLAN.hit("handler")
    if PLAN.fail_handler:
        raise ValueError("the handler failed so that restores run")
    return ToolResult.ok(Output(params.label), message="done")


def reducer(values: SliceValues[int], event: ToolInvoked) -> SliceValues[int]:
    if event.success:
        PLAN.hit("reducer")
    return values.append(len(values))


tool = Tool[Params, Output](name="act", description="Act.", handler=handler)


def _executor() -> tuple[ToolExecutor, Session, InMemoryFilesystem, Probe]:
    fs, probe = InMemoryFilesystem(), Probe()
    registry = ResourceRegistry.of(
        Binding.instance(Filesystem, fs),
        Binding.instance(Probe, probe),
        Binding(Closing, lambda resolver: Closing(), Scope.TOOL_CALL),
    )
    template = PromptTemplate(
        ns="stress",
        key="faults",
        sections=[MarkdownSection(title="T", tools=[tool], policies=[Policy()])],
    )
    session = Session()
    session[Audit].declare(SliceKind.LOG)
    session[int].register(ToolInvoked, reducer)
    return (
        ToolExecutor(prompt=Prompt(template, resources=registry), session=session),
        session,
        fs,
        probe,
    )


def run(scale: float) -> FamilyReport:
    """Try about ``300 * scale`` calls, each with one injected fault (or none)."""
    report = FamilyReport("fault_injection")
    chooser = random.Random(8)
    # The injected faults are logged by design; the tally is what this family reports.
    quiet = [
        logging.getLogger(name) for name in ("wink.runtime.executor", "wink.resources.registry")
    ]
    was_disabled = [quiet_logger.disabled for quiet_logger in quiet]
    for quiet_logger in quiet:
        quiet_logger.disabled = True
    try:
        executor, session, fs, probe = _executor()
        for index in range(max(1, int(300 * scale))):
            step = chooser.choice(STEPS)
            fault = chooser.choice(FAULTS if step == "check" else FAULTS[:3])
            PLAN.step, PLAN.fault = step, fault
            # A restore runs only for a failing call: make it fail for the restore step.
            PLAN.fail_handler = step == "restore"
            with report.measure():
                _one(report, executor, session, fs, probe, f"c{index}", step, fault)
            if step == "restore":
                # The probe's state is unknown after a broken restore: start afresh.
                executor, session, fs, probe = _executor()
    finally:
        for quiet_logger, disabled in zip(quiet, was_disabled, strict=True):
            quiet_logger.disabled = disabled
        PLAN.step = "none"
        PLAN.fail_handler = False
    return report


def _one(
    report: FamilyReport,
    executor: ToolExecutor,
    session: Session,
    fs: InMemoryFilesystem,
    probe: Probe,
    label: str,
    step: str,
    fault: str,
) -> None:
    before = (session[Mark].all(), fs.list("."), probe.value)
    audits = len(session[Audit])
    records = len(session[ToolInvoked])
    where = f"{step}/{fault}"
    raised: BaseException | None = None
    result: ToolResult[Any] | None = None
    try:
        result = executor.execute(ToolCall("act", f'{{"label": "{label}"}}', label))
    except BaseException as error:
        raised = error
    expect_raise = _expected_raise(step, fault)
    if expect_raise is None and raised is not None:
        report.note("uncaught", f"{where}: {type(raised).__name__} left execute")
        return
    if expect_raise is not None and not isinstance(raised, expect_raise):
        report.note("uncaught", f"{where}: expected {expect_raise.__name__}, got {raised!r}")
        return
    if len(session[ToolInvoked]) != records + 1:
        report.note("lost_events", f"{where}: {len(session[ToolInvoked]) - records} records")
        return
    handler_ran = step not in ("check", "snapshot")
    if handler_ran and len(session[Audit]) != audits + 1:
        report.note("lost_events", f"{where}: the handler's LOG event was lost")
    succeeded = step in ("none", "close") and raised is None
    if succeeded:
        if result is None or not result.success or not fs.exists(f"{label}.txt"):
            report.note("state_leaks", f"{where}: a successful call's changes are missing")
        return
    after = (session[Mark].all(), fs.list("."), probe.value)
    if step == "restore":
        # The broken probe's state is unknown: compare the rest.
        after, before = (after[0], after[1], 0), (before[0], before[1], 0)
    if after != before:
        report.note("state_leaks", f"{where}: a failed call left changes")


def _expected_raise(step: str, fault: str) -> type[BaseException] | None:
    if fault == "base_exception" and step != "none":
        return Interrupt
    if step == "restore":
        return PromptEvaluationError  # the resource's state is unknown: stop
    return None
