"""Async tools, ``aexecute``, and the concurrent calls of one turn (``aexecute_all``).

Every test that could hang runs under ``asyncio.wait_for`` with a bound.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Coroutine
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from wink import (
    Filesystem,
    InMemoryFilesystem,
    MarkdownSection,
    Prompt,
    PromptEvaluationError,
    PromptTemplate,
    SequentialDependencyPolicy,
    Tool,
    ToolContext,
    ToolResult,
    tool,
)
from wink.runtime import Deadline, Session, ToolCall, ToolExecutor, ToolInvoked
from wink.testing import ScriptedAdapter, call

BOUND = 10.0  # seconds a test waits before calling it a deadlock


def bounded(awaitable: Coroutine[Any, Any, Any]) -> Any:
    return asyncio.run(asyncio.wait_for(awaitable, BOUND))


@dataclass(frozen=True)
class Mark:
    label: str


@dataclass(frozen=True)
class Work:
    label: str
    seconds: float = 0.0
    fail: str = ""  # "raise", "error", "wrong-type" or "" (succeed)


async def work(params: Work, *, context: ToolContext) -> ToolResult[str]:
    context.session.dispatch(Mark(params.label))
    await asyncio.sleep(params.seconds)
    if params.fail == "raise":
        raise RuntimeError(f"{params.label} broke")
    if params.fail == "error":
        return ToolResult.error(f"{params.label} refused")
    if params.fail == "wrong-type":
        return ToolResult.ok(42)  # type: ignore[arg-type]  # the executor must refuse it
    return ToolResult.ok(params.label)


work_tool = Tool[Work, str](name="work", description="Do some work.", handler=work)


def prompt_of(
    *tools: Tool[Any, Any], key: str = "async", resources: Any = None, **section: Any
) -> Prompt:
    template = PromptTemplate(
        ns="tests", key=key, sections=[MarkdownSection(title="Tools", tools=tools, **section)]
    )
    return Prompt(template, resources=resources)


def work_call(label: str, seconds: float = 0.0, fail: str = "") -> ToolCall:
    arguments = f'{{"label": "{label}", "seconds": {seconds}, "fail": "{fail}"}}'
    return ToolCall(name="work", arguments=arguments, call_id=label)


def executor(*tools: Tool[Any, Any], session: Session | None = None) -> ToolExecutor:
    return ToolExecutor(prompt=prompt_of(*(tools or (work_tool,))), session=session or Session())


def recorded(session: Session) -> list[tuple[str | None, bool, str]]:
    return [(e.call_id, e.result.success, e.result.message) for e in session[ToolInvoked]]


# --- async handlers through aexecute ---------------------------------------------------


def test_aexecute_awaits_an_async_handler_and_records_its_success() -> None:
    session = Session()
    result = bounded(executor(session=session).aexecute(work_call("a")))
    assert (result.success, result.value) == (True, "a")
    assert recorded(session) == [("a", True, "ok")]
    assert session[Mark].all() == (Mark("a"),)


FAILURES = [
    ("raise", "Tool 'work' raised RuntimeError: a broke"),
    ("error", "a refused"),
    ("wrong-type", "Tool 'work' returned int, expected str"),
]


@pytest.mark.parametrize(("fail", "message"), FAILURES, ids=[f for f, _ in FAILURES])
def test_aexecute_rolls_back_a_failing_async_handler_and_records_one_failure(
    fail: str, message: str
) -> None:
    session = Session()
    result = bounded(executor(session=session).aexecute(work_call("a", fail=fail)))
    assert (result.success, result.message) == (False, message)
    assert recorded(session) == [("a", False, message)]
    assert session[Mark].all() == ()


def test_aexecute_fails_invalid_arguments_before_the_handler_runs() -> None:
    session = Session()
    bad = ToolCall(name="work", arguments='{"label": 1}', call_id="x")
    result = bounded(executor(session=session).aexecute(bad))
    assert result.message == (
        "Invalid arguments for tool 'work':\nlabel: input should be a valid string (got 1)"
    )
    assert session[Mark].all() == ()
    assert len(session[ToolInvoked]) == 1


def test_aexecute_of_an_unknown_tool_is_a_recorded_failure() -> None:
    session = Session()
    result = bounded(executor(session=session).aexecute(ToolCall(name="nope", arguments="{}")))
    assert result.message == "Unknown tool 'nope'. Available tools: work."
    assert len(session[ToolInvoked]) == 1


def test_aexecute_stops_the_evaluation_when_the_handler_overruns_the_deadline() -> None:
    now = [datetime(2025, 1, 1, tzinfo=UTC)]
    deadline = Deadline.after(30, clock=lambda: now[0])

    async def slow(params: Work, *, context: ToolContext) -> ToolResult[str]:
        context.session.dispatch(Mark(params.label))
        await asyncio.sleep(0)
        now[0] += timedelta(minutes=1)
        return ToolResult.ok("late")

    session = Session()
    late = Tool[Work, str](name="work", description="Slow.", handler=slow)
    run = ToolExecutor(prompt=prompt_of(late), session=session, deadline=deadline)
    with pytest.raises(PromptEvaluationError) as raised:
        bounded(run.aexecute(work_call("slow")))
    message = (
        "Tool 'work' was stopped: deadline 2025-01-01T00:00:30+00:00 passed before tool "
        "'work' returned (now 2025-01-01T00:01:00+00:00)"
    )
    assert str(raised.value) == message
    assert recorded(session) == [("slow", False, message)]
    assert session[Mark].all() == ()


def test_execute_runs_an_async_tool_to_completion_when_no_loop_is_running() -> None:
    session = Session()
    result = executor(session=session).execute(work_call("a", seconds=0.01))
    assert result.value == "a"
    assert session[Mark].all() == (Mark("a"),)


def test_execute_of_an_async_tool_inside_a_running_loop_names_aexecute() -> None:
    session = Session()
    run = executor(session=session)

    async def inside() -> None:
        run.execute(work_call("a"))

    with pytest.raises(RuntimeError) as raised:
        bounded(inside())
    message = (
        "Tool 'work' is async and an event loop is running in this thread, so execute() "
        "cannot wait for it; use await executor.aexecute(call) (or await adapter.aevaluate(...))"
    )
    assert str(raised.value) == message
    assert recorded(session) == [("a", False, message)]
    assert session[Mark].all() == ()


@dataclass(frozen=True)
class Nothing:
    pass


def test_a_sync_handler_runs_inline_on_the_loop_thread_by_default() -> None:
    threads: list[int] = []

    def where(params: Nothing, *, context: ToolContext) -> ToolResult[None]:
        threads.append(threading.get_ident())
        return ToolResult(message="here")

    inline = Tool[Nothing, None](name="where", description="Where.", handler=where)

    async def run() -> int:
        await executor(inline).aexecute(ToolCall(name="where", arguments="{}"))
        return threading.get_ident()

    assert threads == [bounded(run())]


def test_in_thread_runs_a_sync_handler_in_a_worker_thread_and_overlaps_calls() -> None:
    threads: list[int] = []

    def blocking(params: Nothing, *, context: ToolContext) -> ToolResult[None]:
        threads.append(threading.get_ident())
        time.sleep(0.2)
        return ToolResult(message="slept")

    worker = Tool[Nothing, None](
        name="block", description="Block.", handler=blocking, in_thread=True
    )
    calls = [ToolCall(name="block", arguments="{}", call_id=str(i)) for i in range(3)]

    async def run() -> tuple[int, float]:
        started = time.perf_counter()
        await executor(worker).aexecute_all(calls)
        return threading.get_ident(), time.perf_counter() - started

    loop_thread, elapsed = bounded(run())
    assert loop_thread not in threads
    assert len(set(threads)) == 3
    assert elapsed < 0.4


def test_aexecute_awaits_the_async_handler_and_execute_runs_the_handler() -> None:
    ran: list[tuple[str, int]] = []

    def in_place(params: Nothing, *, context: ToolContext) -> ToolResult[None]:
        ran.append(("handler", threading.get_ident()))
        return ToolResult(message="sync")

    async def awaited(params: Nothing, *, context: ToolContext) -> ToolResult[None]:
        ran.append(("async_handler", threading.get_ident()))
        await asyncio.sleep(0)
        return ToolResult(message="async")

    twin = Tool[Nothing, None](
        name="twin", description="Twin.", handler=in_place, async_handler=awaited
    )
    session = Session()
    run = executor(twin, session=session)

    async def awaited_call() -> tuple[str, int]:
        return (await run.aexecute(ToolCall("twin", "{}", "a"))).message, threading.get_ident()

    synchronous = run.execute(ToolCall("twin", "{}", "s")).message
    asynchronous, loop_thread = bounded(awaited_call())
    here = threading.get_ident()
    assert (synchronous, asynchronous) == ("sync", "async")
    assert ran == [("handler", here), ("async_handler", loop_thread)]
    assert recorded(session) == [("s", True, "sync"), ("a", True, "async")]


def test_an_async_handler_over_its_timeout_is_cancelled_and_the_call_fails() -> None:
    cancelled: list[str] = []

    def in_place(params: Nothing, *, context: ToolContext) -> ToolResult[None]:
        return ToolResult(message="sync")

    async def slow(params: Nothing, *, context: ToolContext) -> ToolResult[None]:
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            cancelled.append("slow")
            raise
        return ToolResult(message="late")

    twin = Tool[Nothing, None](
        name="twin", description="Twin.", handler=in_place, async_handler=slow, timeout=0.05
    )
    result = bounded(executor(twin).aexecute(ToolCall("twin", "{}", "t")))
    assert (result.success, result.message, cancelled) == (
        False,
        "Tool 'twin' did not finish within its timeout of 0.05s, so nothing it did was "
        "kept; try a smaller request, or another way",
        ["slow"],
    )


def test_the_tool_decorator_makes_an_async_tool_with_its_types() -> None:
    @tool
    async def fetch(params: Work, *, context: ToolContext) -> ToolResult[str]:
        """Fetch a page."""
        return ToolResult.ok(params.label)

    fetched: Tool[Work, str] = fetch
    assert (fetched.is_async, fetched.params_type, fetched.result_type) == (True, Work, str)
    assert (
        executor(fetched).execute(ToolCall(name="fetch", arguments='{"label": "p"}')).value == "p"
    )


def test_the_tool_decorator_passes_in_thread_and_sequential() -> None:
    @tool(in_thread=True, sequential=True)
    def save(params: Work, *, context: ToolContext) -> ToolResult[str]:
        """Save a page."""
        return ToolResult.ok(params.label)

    assert (save.in_thread, save.sequential, save.is_async) == (True, True, False)


# --- a turn's calls at once --------------------------------------------------------------


def test_four_async_calls_sleeping_0_2_s_finish_together_with_results_and_events_in_order() -> None:
    session = Session()
    calls = [work_call(label, seconds=0.2) for label in ("a", "b", "c", "d")]

    async def run() -> tuple[list[ToolResult[Any]], float]:
        started = time.perf_counter()
        results = await executor(session=session).aexecute_all(calls)
        return results, time.perf_counter() - started

    results, elapsed = bounded(run())
    assert elapsed < 0.4
    assert [r.value for r in results] == ["a", "b", "c", "d"]
    assert recorded(session) == [(label, True, "ok") for label in ("a", "b", "c", "d")]
    assert session[Mark].all() == tuple(Mark(label) for label in ("a", "b", "c", "d"))


def test_execute_all_runs_the_turn_concurrently_without_a_running_loop() -> None:
    session = Session()
    started = time.perf_counter()
    results = executor(session=session).execute_all(
        [work_call(label, seconds=0.2) for label in ("a", "b")]
    )
    assert time.perf_counter() - started < 0.35
    assert [r.value for r in results] == ["a", "b"]
    assert [c for c, _, _ in recorded(session)] == ["a", "b"]


def test_a_failing_concurrent_call_rolls_back_only_its_own_changes() -> None:
    session = Session()
    session.dispatch(Mark("before"))
    calls = [work_call("kept", seconds=0.05), work_call("lost", seconds=0.01, fail="raise")]
    results = bounded(executor(session=session).aexecute_all(calls))
    assert [r.success for r in results] == [True, False]
    assert session[Mark].all() == (Mark("before"), Mark("kept"))
    assert recorded(session) == [
        ("kept", True, "ok"),
        ("lost", False, "Tool 'work' raised RuntimeError: lost broke"),
    ]


def test_concurrent_calls_changing_one_slice_combine_as_if_run_in_call_order() -> None:
    session = Session()
    session[Mark].register(Mark, lambda values, event: (*values, event))
    calls = [work_call(label, seconds=s) for label, s in (("a", 0.1), ("b", 0.0), ("c", 0.05))]
    bounded(executor(session=session).aexecute_all(calls))
    assert session[Mark].all() == (Mark("a"), Mark("b"), Mark("c"))


@dataclass(frozen=True)
class Claim:
    owner: str


def only_one(values: Any, event: Claim) -> Any:
    if values:
        raise ValueError(f"already claimed by {values[0].owner}")
    return (event,)


def test_a_call_whose_changes_cannot_be_merged_after_the_earlier_ones_becomes_a_failure() -> None:
    async def claim(params: Work, *, context: ToolContext) -> ToolResult[str]:
        context.session.dispatch(Claim(params.label))
        context.session.dispatch(Mark(params.label))
        await asyncio.sleep(0.01)
        return ToolResult.ok(params.label)

    claim_tool = Tool[Work, str](name="work", description="Claim.", handler=claim)
    session = Session()
    session[Claim].register(Claim, only_one)
    results = bounded(
        executor(claim_tool, session=session).aexecute_all([work_call("a"), work_call("b")])
    )
    message = (
        "Tool 'work' succeeded but its changes could not be applied after those of the calls "
        "before it in the same turn, so they were rolled back: ValueError: already claimed by a"
    )
    assert [(r.success, r.message) for r in results] == [(True, "ok"), (False, message)]
    assert session[Claim].all() == (Claim("a"),)
    assert session[Mark].all() == (Mark("a"),)
    assert recorded(session) == [("a", True, "ok"), ("b", False, message)]
    assert [e.rolled_back for e in session[ToolInvoked]] == [False, True]


def test_a_sequential_tool_runs_alone_between_the_calls_around_it() -> None:
    log: list[str] = []

    async def traced(params: Work, *, context: ToolContext) -> ToolResult[str]:
        log.append(f"start {params.label}")
        await asyncio.sleep(params.seconds)
        log.append(f"end {params.label}")
        return ToolResult.ok(params.label)

    free = Tool[Work, str](name="work", description="Free.", handler=traced)
    alone = Tool[Work, str](name="alone", description="Alone.", handler=traced, sequential=True)
    calls = [
        work_call("a", 0.05),
        work_call("b", 0.01),
        ToolCall(name="alone", arguments='{"label": "s", "seconds": 0.01}', call_id="s"),
        work_call("c", 0.02),
        work_call("d", 0.01),
    ]
    results = bounded(executor(free, alone).aexecute_all(calls))
    assert [r.value for r in results] == ["a", "b", "s", "c", "d"]
    assert log == [
        "start a", "start b", "end b", "end a",
        "start s", "end s",
        "start c", "start d", "end d", "end c",
    ]  # fmt: skip


def test_calls_on_a_prompt_with_a_snapshotable_resource_run_in_order_each_its_own_transaction() -> (
    None
):
    async def write(params: Work, *, context: ToolContext) -> ToolResult[str]:
        context.session.dispatch(Mark(params.label))
        context.require_filesystem().write(f"{params.label}.txt", params.label)
        await asyncio.sleep(params.seconds)
        if params.fail:
            raise RuntimeError("disk on fire")
        return ToolResult.ok(params.label)

    filesystem = InMemoryFilesystem()
    writer = Tool[Work, str](name="work", description="Write.", handler=write)
    prompt = prompt_of(writer, resources={Filesystem: filesystem})
    session = Session()
    run = ToolExecutor(prompt=prompt, session=session)
    calls = [work_call("kept", 0.05), work_call("lost", 0.0, fail="raise")]
    results = bounded(run.aexecute_all(calls))
    assert [r.success for r in results] == [True, False]
    assert filesystem.read("kept.txt") == "kept"
    assert not filesystem.exists("lost.txt")
    assert session[Mark].all() == (Mark("kept"),)


# --- policies ---------------------------------------------------------------------------


def test_a_call_governed_by_a_policy_sees_the_calls_before_it_in_the_turn() -> None:
    async def step(params: Nothing, *, context: ToolContext) -> ToolResult[None]:
        await asyncio.sleep(0.01)
        return ToolResult(message="done")

    build = Tool[Nothing, None](name="build", description="Build.", handler=step)
    deploy = Tool[Nothing, None](name="deploy", description="Deploy.", handler=step)
    policy = SequentialDependencyPolicy(dependencies={"deploy": frozenset({"build"})})
    prompt = prompt_of(build, deploy, policies=[policy])

    def turn(*names: str) -> list[tuple[str, bool]]:
        run = ToolExecutor(prompt=prompt, session=Session())
        calls = [ToolCall(name=name, arguments="{}", call_id=name) for name in names]
        results = bounded(run.aexecute_all(calls))
        return [(name, r.success) for name, r in zip(names, results, strict=True)]

    assert turn("build", "deploy") == [("build", True), ("deploy", True)]
    assert turn("deploy", "build") == [("deploy", False), ("build", True)]


# --- cancellation -----------------------------------------------------------------------


def test_cancelling_aexecute_all_rolls_back_the_calls_in_flight_and_records_them() -> None:
    session = Session()
    run = executor(session=session)

    async def scenario() -> ToolResult[Any]:
        task = asyncio.ensure_future(
            run.aexecute_all([work_call("done", 0.0), work_call("x", 5.0), work_call("y", 5.0)])
        )
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return await run.aexecute(work_call("after"))

    after = bounded(scenario())
    interrupted = "Tool 'work' was interrupted by CancelledError; rolled back"
    assert recorded(session) == [
        ("done", True, "ok"),
        ("x", False, interrupted),
        ("y", False, interrupted),
        ("after", True, "ok"),
    ]
    assert session[Mark].all() == (Mark("done"), Mark("after"))
    assert [e.rolled_back for e in session[ToolInvoked]] == [False, True, True, False]
    assert after.value == "after"


def test_cancelling_aexecute_rolls_back_and_leaves_the_executor_usable() -> None:
    session = Session()
    run = executor(session=session)

    async def scenario() -> None:
        task = asyncio.ensure_future(run.aexecute(work_call("x", 5.0)))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await run.aexecute(work_call("after"))

    bounded(scenario())
    assert recorded(session) == [
        ("x", False, "Tool 'work' was interrupted by CancelledError; rolled back"),
        ("after", True, "ok"),
    ]
    assert session[Mark].all() == (Mark("after"),)


# --- sub-calls: no deadlock -------------------------------------------------------------


@dataclass(frozen=True)
class Fan:
    how: str


def fan_tool(sub_prompt: Prompt | None) -> Tool[Fan, str]:
    async def fan(params: Fan, *, context: ToolContext) -> ToolResult[str]:
        target = context.prompt if sub_prompt is None else sub_prompt
        sub = ToolExecutor(prompt=target, session=context.session)
        calls = [work_call("s1", 0.01), work_call("s2", 0.01)]
        if params.how == "tasks":
            results = await sub.aexecute_all(calls)
        elif params.how == "thread":
            results = await asyncio.to_thread(lambda: [sub.execute(c) for c in calls])
        else:
            results = [await sub.aexecute(c) for c in calls]
        return ToolResult.ok(",".join(str(r.value) for r in results))

    return Tool[Fan, str](name="fan", description="Fan out.", handler=fan)


@pytest.mark.parametrize("how", ["tasks", "thread", "await"])
@pytest.mark.parametrize("where", ["same prompt", "other prompt"])
def test_a_handler_running_sub_calls_finishes_and_keeps_them(how: str, where: str) -> None:
    other = prompt_of(work_tool, key="other") if where == "other prompt" else None
    fan = fan_tool(other)
    session = Session()
    run = ToolExecutor(prompt=prompt_of(fan, work_tool), session=session)
    calls = [
        ToolCall(name="fan", arguments=f'{{"how": "{how}"}}', call_id="f1"),
        ToolCall(name="fan", arguments=f'{{"how": "{how}"}}', call_id="f2"),
    ]
    results = bounded(run.aexecute_all(calls))
    assert [r.value for r in results] == ["s1,s2", "s1,s2"]
    assert [c for c, _, _ in recorded(session)] == ["s1", "s2", "f1", "s1", "s2", "f2"]
    assert session[Mark].all() == tuple(Mark(label) for label in ("s1", "s2", "s1", "s2"))


def test_two_top_level_aexecute_tasks_on_one_session_take_turns_without_blocking_the_loop() -> None:
    session = Session()
    run = executor(session=session)

    async def both() -> list[ToolResult[Any]]:
        return list(
            await asyncio.gather(run.aexecute(work_call("a", 0.1)), run.aexecute(work_call("b")))
        )

    results = bounded(both())
    assert [r.value for r in results] == ["a", "b"]
    assert [c for c, _, _ in recorded(session)] == ["a", "b"]


def test_a_handler_running_a_nested_aevaluate_finishes_and_records_it() -> None:
    adapter = ScriptedAdapter(
        [
            [call("ask", {}, "outer-1"), call("ask", {}, "outer-2")],
            call("work", {"label": "inner"}, "inner-1"),
            "inner done",
            call("work", {"label": "inner"}, "inner-2"),
            "inner done",
            "outer done",
        ]
    )
    inner = prompt_of(work_tool, key="inner")

    async def ask(params: Nothing, *, context: ToolContext) -> ToolResult[str]:
        assert context.adapter is not None
        response = await context.adapter.aevaluate(inner, session=context.session)
        return ToolResult.ok(str(response.text))

    ask_tool = Tool[Nothing, str](name="ask", description="Ask.", handler=ask)
    session = Session()
    response = bounded(adapter.aevaluate(prompt_of(ask_tool, key="outer"), session=session))
    assert response.text == "outer done"
    assert [r.result.value for r in response.tool_results] == ["inner done", "inner done"]
    assert session[Mark].all() == (Mark("inner"), Mark("inner"))


def test_observers_see_a_concurrent_turn_in_call_order_without_the_failed_calls_state() -> None:
    session = Session()
    seen: list[object] = []
    session.subscribe(Mark, seen.append)
    session.subscribe(ToolInvoked, lambda event: seen.append(event.call_id))
    calls = [work_call("a", 0.05), work_call("b", 0.0, fail="raise"), work_call("c", 0.0)]
    bounded(executor(session=session).aexecute_all(calls))
    assert seen == [Mark("a"), "a", "b", Mark("c"), "c"]


def test_a_call_waiting_for_the_session_held_by_another_thread_can_be_cancelled() -> None:
    session = Session()
    release = threading.Event()
    entered = threading.Event()

    def hold(params: Nothing, *, context: ToolContext) -> ToolResult[None]:
        entered.set()
        release.wait(BOUND)
        return ToolResult(message="held")

    holder = Tool[Nothing, None](name="hold", description="Hold.", handler=hold)
    run = executor(holder, work_tool, session=session)
    thread = threading.Thread(target=lambda: run.execute(ToolCall("hold", "{}", "h")))
    thread.start()
    entered.wait(BOUND)

    async def scenario() -> float:
        task = asyncio.ensure_future(run.aexecute(work_call("waiting")))
        await asyncio.sleep(0.05)
        started = time.perf_counter()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return time.perf_counter() - started

    try:
        assert bounded(scenario()) < 1.0
    finally:
        release.set()
        thread.join(BOUND)
    assert recorded(session) == [
        ("waiting", False, "Tool 'work' was interrupted by CancelledError"),
        ("h", True, "held"),
    ]


# --- more failure paths through aexecute -------------------------------------------------


@dataclass(frozen=True)
class Save:
    path: str
    mode: str = "ok"  # "ok", "raise", "dict", "interrupt"


class Stop(BaseException):
    pass


async def save(params: Save, *, context: ToolContext) -> ToolResult[None]:
    context.session.dispatch(Mark(params.path))
    context.require_filesystem().write(params.path, "saved")
    await asyncio.sleep(0)
    if params.mode == "raise":
        raise RuntimeError("disk full")
    if params.mode == "interrupt":
        raise Stop()
    if params.mode == "dict":
        return {"saved": True}  # type: ignore[return-value]  # the executor must refuse it
    return ToolResult(message="saved")


save_tool = Tool[Save, None](name="save", description="Save.", handler=save)


def saving() -> tuple[ToolExecutor, Session, InMemoryFilesystem]:
    filesystem = InMemoryFilesystem()
    session = Session()
    prompt = prompt_of(save_tool, resources={Filesystem: filesystem})
    return ToolExecutor(prompt=prompt, session=session), session, filesystem


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("raise", "Tool 'save' raised RuntimeError: disk full"),
        ("dict", "Tool 'save' returned dict, not a ToolResult."),
    ],
)
def test_a_failing_async_handler_rolls_back_the_session_and_the_filesystem(
    mode: str, message: str
) -> None:
    run, session, filesystem = saving()
    result = bounded(run.aexecute(ToolCall("save", f'{{"path": "a.txt", "mode": "{mode}"}}')))
    assert (result.success, result.message) == (False, message)
    assert not filesystem.exists("a.txt")
    assert session[Mark].all() == ()
    assert len(session[ToolInvoked]) == 1


def test_an_interruption_in_an_async_handler_is_rolled_back_recorded_and_re_raised() -> None:
    run, session, filesystem = saving()
    with pytest.raises(Stop):
        bounded(run.aexecute(ToolCall("save", '{"path": "a.txt", "mode": "interrupt"}', "i")))
    assert not filesystem.exists("a.txt")
    assert session[Mark].all() == ()
    assert recorded(session) == [("i", False, "Tool 'save' was interrupted by Stop; rolled back")]


def test_a_policy_denial_under_aexecute_runs_no_handler_and_changes_nothing() -> None:
    policy = SequentialDependencyPolicy(dependencies={"save": frozenset({"work"})})
    prompt = prompt_of(save_tool, work_tool, policies=[policy])
    session = Session()
    result = bounded(
        ToolExecutor(prompt=prompt, session=session).aexecute(
            ToolCall("save", '{"path": "a.txt"}', "s")
        )
    )
    assert result.success is False
    assert session[Mark].all() == ()
    assert [(c, s) for c, s, _ in recorded(session)] == [("s", False)]


def test_raise_handler_errors_re_raises_an_async_handlers_error_after_rollback() -> None:
    filesystem = InMemoryFilesystem()
    session = Session()
    prompt = prompt_of(save_tool, resources={Filesystem: filesystem})
    run = ToolExecutor(prompt=prompt, session=session, raise_handler_errors=True)
    with pytest.raises(RuntimeError) as raised:
        bounded(run.aexecute(ToolCall("save", '{"path": "a.txt", "mode": "raise"}')))
    assert str(raised.value) == "disk full"
    assert not filesystem.exists("a.txt")
    assert [(s, m) for _, s, m in recorded(session)] == [
        (False, "Tool 'save' raised RuntimeError: disk full")
    ]


def test_a_sync_evaluate_nested_in_a_worker_thread_handler_of_aevaluate_finishes() -> None:
    adapter = ScriptedAdapter(
        [
            [call("ask", {}, "outer-1"), call("ask", {}, "outer-2")],
            call("work", {"label": "inner"}, "inner-1"),
            "inner done",
            call("work", {"label": "inner"}, "inner-2"),
            "inner done",
            "outer done",
        ]
    )
    inner = prompt_of(work_tool, key="inner")

    def ask(params: Nothing, *, context: ToolContext) -> ToolResult[str]:
        assert context.adapter is not None
        response = context.adapter.evaluate(inner, session=context.session)
        return ToolResult.ok(str(response.text))

    ask_tool = Tool[Nothing, str](name="ask", description="Ask.", handler=ask, in_thread=True)
    session = Session()
    response = bounded(adapter.aevaluate(prompt_of(ask_tool, key="outer"), session=session))
    assert response.text == "outer done"
    assert [r.result.value for r in response.tool_results] == ["inner done", "inner done"]
    assert session[Mark].all() == (Mark("inner"), Mark("inner"))


def test_cancelling_aevaluate_rolls_back_its_calls_and_records_the_evaluation() -> None:
    from wink.adapters import PromptExecuted

    adapter = ScriptedAdapter([[call("work", {"label": "a", "seconds": 5.0}, "c1")], "unused"])
    session = Session()

    async def scenario() -> None:
        task = asyncio.ensure_future(adapter.aevaluate(prompt_of(work_tool), session=session))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    bounded(scenario())
    assert recorded(session) == [
        ("c1", False, "Tool 'work' was interrupted by CancelledError; rolled back")
    ]
    assert session[Mark].all() == ()
    executed = session[PromptExecuted].all()
    assert [(e.text, e.error) for e in executed] == [(None, "CancelledError: ")]


def test_execute_all_inside_a_running_loop_runs_sync_calls_one_after_the_other() -> None:
    session = Session()
    threads: list[int] = []

    def where(params: Nothing, *, context: ToolContext) -> ToolResult[None]:
        threads.append(threading.get_ident())
        return ToolResult(message="here")

    inline = Tool[Nothing, None](name="where", description="Where.", handler=where)
    run = executor(inline, session=session)

    async def inside() -> list[str]:
        calls = [ToolCall("where", "{}", "1"), ToolCall("where", "{}", "2")]
        return [r.message for r in run.execute_all(calls)]

    assert bounded(inside()) == ["here", "here"]
    assert [c for c, _, _ in recorded(session)] == ["1", "2"]


def test_an_async_model_function_works_with_aevaluate_and_evaluate_names_aevaluate() -> None:
    from wink.testing import FunctionAdapter, ModelInput

    async def model(model_input: ModelInput) -> str:
        await asyncio.sleep(0)
        return f"turn {model_input.turn}"

    adapter = FunctionAdapter(model)
    response = bounded(adapter.aevaluate(prompt_of(work_tool), session=Session()))
    assert response.text == "turn 1"
    with pytest.raises(TypeError) as raised:
        adapter.evaluate(prompt_of(work_tool), session=Session())
    assert str(raised.value) == (
        "the function adapter sends asynchronously (an async client or model function); use "
        "await adapter.aevaluate(...), or give it a synchronous one"
    )


def test_cancelling_a_worker_thread_call_waits_for_the_thread_then_rolls_back() -> None:
    finished = threading.Event()

    def slow_write(params: Nothing, *, context: ToolContext) -> ToolResult[None]:
        time.sleep(0.2)
        assert context.session is not None
        context.session.dispatch(Mark("late"))  # after the cancellation: still undone
        finished.set()
        return ToolResult(message="written")

    worker = Tool[Nothing, None](
        name="slow_write", description="Write.", handler=slow_write, in_thread=True
    )
    session = Session()
    run = executor(worker, session=session)

    async def scenario() -> None:
        task = asyncio.ensure_future(run.aexecute(ToolCall("slow_write", "{}", "w")))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert finished.is_set()

    bounded(scenario())
    assert session[Mark].all() == ()
    assert recorded(session) == [
        ("w", False, "Tool 'slow_write' was interrupted by CancelledError; rolled back")
    ]


def test_a_session_keeping_history_runs_a_turns_calls_in_order() -> None:
    session = Session(keep_history=True)
    calls = [work_call("a", 0.1), work_call("b", 0.0, fail="raise"), work_call("c", 0.1)]
    started = time.perf_counter()
    results = bounded(executor(session=session).aexecute_all(calls))
    assert time.perf_counter() - started >= 0.2  # overlapping, it would take 0.1 s
    assert [r.success for r in results] == [True, False, True]
    assert session[Mark].all() == (Mark("a"), Mark("c"))
    assert [c for c, _, _ in recorded(session)] == ["a", "b", "c"]


def test_two_calls_each_sleeping_0_1_s_overlap_without_keep_history() -> None:
    started = time.perf_counter()
    bounded(executor().aexecute_all([work_call("a", 0.1), work_call("b", 0.1)]))
    assert time.perf_counter() - started < 0.19


# Every test above runs on both of the executor's paths (see ``executor_path``).
pytestmark = pytest.mark.usefixtures("executor_path")
