"""Concurrent tool calls from threads: shared and unshared sessions, a shared filesystem.

Each round starts threads that run calls (a random third of them fail after
changing state) on one shared session, on a session each over one shared
filesystem (bound under different keys in two prompts), on lazily built
per-session filesystems, on a host filesystem shared by two prompts, on host
filesystems that each session builds over one directory, and through handlers
that make sub-calls on worker threads, including crossed nested calls between
two sessions, and with the application dispatching ``STATE`` events to the shared
session from a thread of its own while calls run (every one of those must survive
the failed calls' rollbacks, in order: each one lost counts in ``lost_events``).
Every call also appends its label to one shared file (a
read-modify-write), so a rollback that undid another call's committed work, or
two calls interleaving, loses a line. Every thread must
finish within a bound (a thread still running is a deadlock, counted as lost
events), each call must leave exactly one ``ToolInvoked``, the state must hold
exactly what the successful calls did, and no exception may leave ``execute``.
"""

from __future__ import annotations

import contextvars
import logging
import random
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stress.report import FamilyReport
from wink import (
    Binding,
    Filesystem,
    HostFilesystem,
    InMemoryFilesystem,
    MarkdownSection,
    Prompt,
    PromptTemplate,
    ResourceRegistry,
    Tool,
    ToolContext,
    ToolResult,
)
from wink.runtime import Session, SliceKind, ToolCall, ToolExecutor, ToolInvoked

LOG_FILE = "log.txt"
BOUND = 20.0
"""Seconds a round's threads may take before they count as deadlocked."""


@dataclass(frozen=True)
class Mark:
    label: str


@dataclass(frozen=True)
class Audit:
    label: str


@dataclass(frozen=True)
class Outside:
    """A ``STATE`` event the application dispatches from outside any call."""

    number: int


@dataclass(frozen=True)
class WriteParams:
    label: str
    fail: bool = False


def write(params: WriteParams, *, context: ToolContext) -> ToolResult[None]:
    session = context.session
    assert session is not None
    session.dispatch(Mark(params.label))
    session.dispatch(Audit(params.label))
    fs = context.require_filesystem()
    fs.write(f"{params.label}.txt", params.label)
    # A read-modify-write of one file shared by every call: a rollback that undid
    # another call's committed append, or two calls interleaving, would lose a line.
    fs.write(LOG_FILE, (fs.read(LOG_FILE) if fs.exists(LOG_FILE) else "") + params.label + "\n")
    time.sleep(0)  # let other threads in while the call is open
    if params.fail:
        raise RuntimeError("failed after writing")
    return ToolResult(message=params.label)


def delegate(params: WriteParams, *, context: ToolContext) -> ToolResult[None]:
    """Run the write as a sub-call on a worker thread in this call's context."""
    inner = ToolExecutor(prompt=context.prompt, session=context.session)  # type: ignore[arg-type]
    out: list[ToolResult[Any]] = []
    call = ToolCall("write", f'{{"label": "{params.label}"}}')
    worker = threading.Thread(
        target=contextvars.copy_context().run, args=(lambda: out.append(inner.execute(call)),)
    )
    worker.start()
    worker.join(BOUND)
    if worker.is_alive() or not out:
        return ToolResult.error("the sub-call never finished")
    if params.fail:
        raise RuntimeError("the outer call failed after its sub-call")
    return ToolResult(message=out[0].message)


write_tool = Tool[WriteParams, None](name="write", description="Write.", handler=write)
delegate_tool = Tool[WriteParams, None](name="delegate", description="D.", handler=delegate)


def _prompt(resources: Any, key: str = "concurrency") -> Prompt:
    template = PromptTemplate(
        ns="stress",
        key=key,
        sections=[MarkdownSection(title="T", tools=[write_tool, delegate_tool])],
    )
    return Prompt(template, resources=resources)


def _session() -> Session:
    session = Session()
    session[Audit].declare(SliceKind.LOG)
    return session


@dataclass
class _Expected:
    """What the calls of a round must leave behind."""

    calls: dict[Session, int]
    succeeded: set[str]
    dispatched: set[str]


class _Round:
    def __init__(self, report: FamilyReport, chooser: random.Random) -> None:
        self.report = report
        self.chooser = chooser
        self.lock = threading.Lock()
        self.expected = _Expected({}, set(), set())
        self.threads: list[threading.Thread] = []

    def start(self, executor: ToolExecutor, session: Session, labels: list[str]) -> None:
        plan = [
            (label, self.chooser.random() < 0.33, self.chooser.random() < 0.25) for label in labels
        ]
        with self.lock:
            for label, fail, nested in plan:
                # A delegated call records the sub-call and itself.
                self.expected.calls[session] = self.expected.calls.get(session, 0) + (
                    2 if nested else 1
                )
                self.expected.dispatched.add(label)
                if not fail:
                    self.expected.succeeded.add(label)

        def work() -> None:
            for label, fail, nested in plan:
                name = "delegate" if nested else "write"
                arguments = f'{{"label": "{label}", "fail": {"true" if fail else "false"}}}'
                try:
                    executor.execute(ToolCall(name, arguments, label))
                except BaseException as error:
                    with self.lock:
                        self.report.note("uncaught", f"{label}: {type(error).__name__}: {error}")

        thread = threading.Thread(target=work, daemon=True)
        self.threads.append(thread)
        thread.start()

    def finish(self) -> bool:
        deadline = time.monotonic() + BOUND
        for thread in self.threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        stuck = sum(thread.is_alive() for thread in self.threads)
        if stuck:
            self.report.note("lost_events", f"{stuck} threads deadlocked")
        return not stuck

    def check(
        self, sessions: list[Session], files: Callable[[], dict[str, str]], scenario: str
    ) -> None:
        expected = self.expected
        for session in sessions:
            records = len(session[ToolInvoked])
            if records != expected.calls.get(session, 0):
                self.report.note(
                    "lost_events",
                    f"{scenario}: {records} records for {expected.calls[session]} calls",
                )
        marks = {mark.label for session in sessions for mark in session[Mark].all()}
        audits = {audit.label for session in sessions for audit in session[Audit].all()}
        if marks != expected.succeeded:
            leaked = sorted(marks - expected.succeeded)
            lost = sorted(expected.succeeded - marks)
            if leaked:
                self.report.note(
                    "state_leaks", f"{scenario}: failed calls' marks kept: {leaked[:3]}"
                )
            if lost:
                self.report.note("lost_events", f"{scenario}: successful marks lost: {lost[:3]}")
        if not expected.dispatched <= audits:
            missing = sorted(expected.dispatched - audits)
            self.report.note("lost_events", f"{scenario}: LOG events lost: {missing[:3]}")
        contents = files()
        appended = contents.pop(LOG_FILE, "").splitlines()
        if sorted(appended) != sorted(expected.succeeded):
            leaked = sorted(set(appended) - expected.succeeded)
            lost = sorted(expected.succeeded - set(appended))
            if leaked:
                self.report.note("state_leaks", f"{scenario}: failed appends kept: {leaked[:3]}")
            if lost or not leaked:
                self.report.note("lost_events", f"{scenario}: committed appends lost: {lost[:3]}")
        written = set(contents)
        wanted = {f"{label}.txt" for label in expected.succeeded}
        if written - wanted:
            self.report.note(
                "state_leaks", f"{scenario}: failed writes kept: {sorted(written - wanted)[:3]}"
            )
        if wanted - written:
            self.report.note(
                "lost_events", f"{scenario}: successful writes lost: {sorted(wanted - written)[:3]}"
            )


def _shared_session(report: FamilyReport, chooser: random.Random, calls: int) -> int:
    fs = InMemoryFilesystem()
    session = _session()
    executor = ToolExecutor(prompt=_prompt({Filesystem: fs}), session=session)
    round_ = _Round(report, chooser)
    for worker in range(4):
        round_.start(executor, session, [f"s{worker}-{i}" for i in range(calls)])
    if round_.finish():
        round_.check([session], _listing(fs), "shared session")
    return 4 * calls


def _outside_dispatches(report: FamilyReport, chooser: random.Random, calls: int) -> int:
    """Calls on one session while the application dispatches to it from its own thread."""
    fs = InMemoryFilesystem()
    session = _session()
    executor = ToolExecutor(prompt=_prompt({Filesystem: fs}), session=session)
    round_ = _Round(report, chooser)
    for worker in range(3):
        round_.start(executor, session, [f"o{worker}-{i}" for i in range(calls)])
    stop = threading.Event()
    sent: list[int] = []

    def application() -> None:
        while not stop.is_set() and len(sent) < 20_000:
            session.dispatch(Outside(len(sent)))
            sent.append(len(sent))
            time.sleep(0)

    dispatcher = threading.Thread(target=application, daemon=True)
    dispatcher.start()
    finished = round_.finish()
    stop.set()
    dispatcher.join(BOUND)
    if finished:
        round_.check([session], _listing(fs), "outside dispatches")
    kept = [event.number for event in session[Outside].all()]
    if kept != sent:
        lost = sorted(set(sent) - set(kept))
        for number in lost:
            report.note("lost_events", f"outside dispatches: Outside({number}) lost")
        if not lost:
            report.note("lost_events", f"outside dispatches: out of order or doubled: {kept[:5]}")
    return 3 * calls


def _shared_filesystem(report: FamilyReport, chooser: random.Random, calls: int) -> int:
    fs = InMemoryFilesystem()
    prompts = [_prompt({Filesystem: fs}, "a"), _prompt({InMemoryFilesystem: fs}, "b")]
    round_ = _Round(report, chooser)
    sessions = []
    for worker in range(4):
        session = _session()
        sessions.append(session)
        executor = ToolExecutor(prompt=prompts[worker % 2], session=session)
        round_.start(executor, session, [f"f{worker}-{i}" for i in range(calls)])
    if round_.finish():
        round_.check(sessions, _listing(fs), "shared filesystem")
    return 4 * calls


def _per_session_filesystems(report: FamilyReport, chooser: random.Random, calls: int) -> int:
    registry = ResourceRegistry.of(Binding(Filesystem, lambda resolver: InMemoryFilesystem()))
    prompt = _prompt(registry)
    for worker in range(3):
        round_ = _Round(report, chooser)
        session = _session()
        round_.start(
            ToolExecutor(prompt=prompt, session=session),
            session,
            [f"p{worker}-{i}" for i in range(calls)],
        )
        if round_.finish():
            session_fs = registry.for_session(session).filesystem
            assert session_fs is not None
            round_.check([session], _listing(session_fs), "per session")
    return 3 * calls


def _listing(fs: Filesystem) -> Callable[[], dict[str, str]]:
    return lambda: {name: fs.read(name) for name in fs.list(".")}


def _directory(root: str) -> Callable[[], dict[str, str]]:
    return lambda: {path.name: path.read_text() for path in Path(root).iterdir()}


def _shared_host_filesystem(report: FamilyReport, chooser: random.Random, calls: int) -> int:
    with tempfile.TemporaryDirectory() as root:
        fs = HostFilesystem(root)
        prompts = [_prompt({Filesystem: fs}, "a"), _prompt({HostFilesystem: fs}, "b")]
        round_ = _Round(report, chooser)
        sessions = []
        for worker in range(4):
            session = _session()
            sessions.append(session)
            round_.start(
                ToolExecutor(prompt=prompts[worker % 2], session=session),
                session,
                [f"h{worker}-{i}" for i in range(calls)],
            )
        if round_.finish():
            round_.check(sessions, _directory(root), "host filesystem")
    return 4 * calls


def _per_session_host_filesystems(report: FamilyReport, chooser: random.Random, calls: int) -> int:
    """Each session builds its own HostFilesystem, all over one directory."""
    with tempfile.TemporaryDirectory() as root:
        registry = ResourceRegistry.of(Binding(Filesystem, lambda resolver: HostFilesystem(root)))
        prompt = _prompt(registry)
        round_ = _Round(report, chooser)
        sessions = []
        for worker in range(4):
            session = _session()
            sessions.append(session)
            round_.start(
                ToolExecutor(prompt=prompt, session=session),
                session,
                [f"o{worker}-{i}" for i in range(calls)],
            )
        if round_.finish():
            round_.check(sessions, _directory(root), "host per session")
    return 4 * calls


def _crossed(report: FamilyReport) -> None:
    """Two calls, each making a nested call on the other's session: one must fail, none hang."""
    sessions = [Session(), Session()]
    barrier = threading.Barrier(2, timeout=BOUND)
    inner_results: list[bool] = []

    def cross(params: WriteParams, *, context: ToolContext) -> ToolResult[None]:
        barrier.wait()
        other = sessions[1 - int(params.label)]
        inner = ToolExecutor(prompt=Prompt(template), session=other)
        inner_results.append(inner.execute(ToolCall("noop", "{}")).success)
        return ToolResult(message="crossed")

    def noop(params: None, *, context: ToolContext) -> ToolResult[None]:
        return ToolResult(message="noop")

    template = PromptTemplate(
        ns="stress",
        key="crossed",
        sections=[
            MarkdownSection(
                title="T",
                tools=[
                    Tool[WriteParams, None](name="cross", description="C.", handler=cross),
                    Tool[None, None](name="noop", description="N.", handler=noop),
                ],
            )
        ],
    )
    threads = []
    for index in range(2):
        executor = ToolExecutor(prompt=Prompt(template), session=sessions[index])
        call = ToolCall("cross", f'{{"label": "{index}"}}')
        thread = threading.Thread(target=executor.execute, args=(call,), daemon=True)
        threads.append(thread)
        thread.start()
    for thread in threads:
        thread.join(BOUND)
    if any(thread.is_alive() for thread in threads):
        report.note("lost_events", "crossed nested calls deadlocked")
    elif sorted(inner_results) != [False, True] and sorted(inner_results) != [True, True]:
        report.note("lost_events", f"crossed nested calls: inner results {inner_results}")
    if any(len(session[ToolInvoked]) != 2 for session in sessions):
        counts = [len(session[ToolInvoked]) for session in sessions]
        report.note("lost_events", f"crossed nested calls recorded {counts}, not [2, 2]")


def run(scale: float) -> FamilyReport:
    """Run about ``scale`` rounds of every scenario (each round ~ 160 concurrent calls)."""
    report = FamilyReport("concurrency")
    chooser = random.Random(13)
    executor_logger = logging.getLogger("wink.runtime.executor")
    was_disabled, executor_logger.disabled = executor_logger.disabled, True
    try:
        scenarios = (
            _shared_session,
            _outside_dispatches,
            _shared_filesystem,
            _per_session_filesystems,
            _shared_host_filesystem,
            _per_session_host_filesystems,
        )
        for _ in range(max(1, round(scale))):
            for scenario in scenarios:
                calls = 0
                with report.measure():  # counts one input: the round's other calls are added
                    calls = scenario(report, chooser, 8)
                report.inputs += calls - 1
            with report.measure():
                _crossed(report)
    finally:
        executor_logger.disabled = was_disabled
    return report
