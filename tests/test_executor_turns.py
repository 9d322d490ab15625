"""Which calls take turns: per session and per resource object, by call tree.

Every test that could hang runs the call on a daemon thread and fails when the
thread is still alive after a bounded wait.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from wink import (
    Binding,
    Filesystem,
    HostFilesystem,
    InMemoryFilesystem,
    MarkdownSection,
    Prompt,
    PromptTemplate,
    ResourceRegistry,
    Scope,
    Tool,
    ToolContext,
    ToolResult,
)
from wink.resources import AmbiguousResourceError
from wink.runtime import Session, ToolCall, ToolExecutor, ToolInvoked

BOUND = 10.0  # seconds a test waits for a call before calling it a deadlock


@dataclass(frozen=True)
class Mark:
    label: str


@dataclass(frozen=True)
class WriteParams:
    path: str
    fail: bool = False


def write(params: WriteParams, *, context: ToolContext) -> ToolResult[None]:
    context.session.dispatch(Mark(params.path))
    context.require_filesystem().write(params.path, "written")
    if params.fail:
        raise RuntimeError("failed after writing")
    return ToolResult(message=f"wrote {params.path}")


write_tool = Tool[WriteParams, None](name="write", description="Write.", handler=write)


def prompt_of(*tools: Tool[Any, Any], resources: Any = None, key: str = "turns") -> Prompt:
    template = PromptTemplate(
        ns="tests", key=key, sections=[MarkdownSection(title="Tools", tools=tools)]
    )
    return Prompt(template, resources=resources)


def in_thread(function: Callable[[], object]) -> tuple[threading.Thread, list[object]]:
    """Run ``function`` on a daemon thread; its return value (or exception) lands in the list."""
    out: list[object] = []

    def run() -> None:
        try:
            out.append(function())
        except BaseException as error:
            out.append(error)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, out


def finished(thread: threading.Thread) -> bool:
    thread.join(BOUND)
    return not thread.is_alive()


# One lock per resource object, wherever it is bound


def test_two_prompts_bound_to_one_filesystem_take_turns() -> None:
    fs = InMemoryFilesystem()
    written, proceed = threading.Event(), threading.Event()

    def write_then_fail(params: WriteParams, *, context: ToolContext) -> ToolResult[None]:
        context.require_filesystem().write(params.path, "written")
        written.set()
        proceed.wait(BOUND)
        raise RuntimeError("late failure")

    failing_tool = Tool[WriteParams, None](name="write", description="W.", handler=write_then_fail)
    # The same filesystem, bound under two different keys in two prompts.
    failing = ToolExecutor(
        prompt=prompt_of(failing_tool, resources={Filesystem: fs}, key="a"), session=Session()
    )
    other = ToolExecutor(
        prompt=prompt_of(write_tool, resources={InMemoryFilesystem: fs}, key="b"),
        session=Session(),
    )
    first, _ = in_thread(lambda: failing.execute(ToolCall("write", '{"path": "a.txt"}')))
    assert written.wait(BOUND)
    second, results = in_thread(lambda: other.execute(ToolCall("write", '{"path": "b.txt"}')))
    second.join(0.2)
    assert second.is_alive()  # waiting for its turn on the filesystem
    assert fs.list(".") == ["a.txt"]
    proceed.set()
    assert finished(first) and finished(second)
    assert results == [ToolResult(message="wrote b.txt")]
    assert fs.list(".") == ["b.txt"]


def test_concurrent_calls_on_two_prompts_sharing_a_host_filesystem_never_lose_a_write(
    tmp_path: Path,
) -> None:
    fs = HostFilesystem(tmp_path)
    sessions = [Session(), Session()]
    executors = [
        ToolExecutor(prompt=prompt_of(write_tool, resources={Filesystem: fs}), session=session)
        for session in sessions
    ]
    errors: list[BaseException] = []

    def hammer(worker: int) -> None:
        executor = executors[worker % 2]
        for index in range(15):
            fail = "true" if index % 3 == 0 else "false"
            call = ToolCall("write", f'{{"path": "w{worker}-{index}.txt", "fail": {fail}}}')
            try:
                executor.execute(call)
            except BaseException as error:
                errors.append(error)

    threads = [threading.Thread(target=hammer, args=(worker,), daemon=True) for worker in range(4)]
    for thread in threads:
        thread.start()
    assert all(finished(thread) for thread in threads)
    assert errors == []
    expected = sorted(f"w{w}-{i}.txt" for w in range(4) for i in range(15) if i % 3)
    assert sorted(path.name for path in tmp_path.iterdir()) == expected
    assert all(path.read_text() == "written" for path in tmp_path.iterdir())
    assert [len(session[ToolInvoked]) for session in sessions] == [30, 30]


# Lazily built singletons are one per session: unrelated sessions never take turns


def test_sessions_get_their_own_lazily_built_filesystem_and_do_not_take_turns() -> None:
    registry = ResourceRegistry.of(Binding(Filesystem, lambda resolver: InMemoryFilesystem()))
    entered = threading.Event()
    released = threading.Event()

    def gated(params: WriteParams, *, context: ToolContext) -> ToolResult[None]:
        context.require_filesystem().write(params.path, "written")
        if params.path == "first.txt":
            entered.set()
            if not released.wait(BOUND):
                return ToolResult.error("the other session never ran")
        else:
            released.set()
        return ToolResult(message=params.path)

    tool = Tool[WriteParams, None](name="gated", description="Waits.", handler=gated)
    prompt = prompt_of(tool, resources=registry)
    first_session, second_session = Session(), Session()
    first = ToolExecutor(prompt=prompt, session=first_session)
    second = ToolExecutor(prompt=prompt, session=second_session)
    thread, results = in_thread(lambda: first.execute(ToolCall("gated", '{"path": "first.txt"}')))
    assert entered.wait(BOUND)
    assert second.execute(ToolCall("gated", '{"path": "second.txt"}')).message == "second.txt"
    assert finished(thread)
    assert results == [ToolResult(message="first.txt")]
    assert registry.for_session(first_session).get(Filesystem).list(".") == ["first.txt"]
    assert registry.for_session(second_session).get(Filesystem).list(".") == ["second.txt"]


def test_an_instance_passed_in_is_shared_by_every_session() -> None:
    fs = InMemoryFilesystem()
    prompt = prompt_of(write_tool, resources={Filesystem: fs})
    for path in ("a.txt", "b.txt"):
        ToolExecutor(prompt=prompt, session=Session()).execute(
            ToolCall("write", f'{{"path": "{path}"}}')
        )
    assert fs.list(".") == ["a.txt", "b.txt"]


# A handler's sub-calls on other threads belong to its call


def sub_calls(
    start: Callable[[Callable[[], object]], object],
) -> Callable[..., ToolResult[None]]:
    """A handler that runs a sub-call through ``start`` (which runs it on another thread)."""

    def handler(params: WriteParams, *, context: ToolContext) -> ToolResult[None]:
        inner = ToolExecutor(prompt=context.prompt, session=context.session)  # type: ignore[arg-type]
        result = start(lambda: inner.execute(ToolCall("write", f'{{"path": "{params.path}"}}')))
        assert isinstance(result, ToolResult) and result.success, result
        if params.fail:
            raise RuntimeError("outer failed")
        return ToolResult(message="outer done")

    return handler


def on_context_thread(function: Callable[[], object]) -> object:
    out: list[object] = []
    context = contextvars.copy_context()
    thread = threading.Thread(target=context.run, args=(lambda: out.append(function()),))
    thread.start()
    thread.join(BOUND)
    assert not thread.is_alive(), "the sub-call deadlocked"
    return out[0]


def on_pool(function: Callable[[], object]) -> object:
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(contextvars.copy_context().run, function).result(BOUND)


def on_asyncio_to_thread(function: Callable[[], object]) -> object:
    return asyncio.run(asyncio.wait_for(asyncio.to_thread(function), BOUND))


STARTERS = {
    "thread in the call's context": on_context_thread,
    "thread pool with copy_context": on_pool,
    "asyncio.to_thread": on_asyncio_to_thread,
}


@pytest.mark.parametrize("how", list(STARTERS))
def test_a_handler_running_sub_calls_on_a_worker_thread_does_not_deadlock(how: str) -> None:
    fs = InMemoryFilesystem()
    outer = Tool[WriteParams, None](
        name="outer", description="O.", handler=sub_calls(STARTERS[how])
    )
    session = Session()
    executor = ToolExecutor(
        prompt=prompt_of(outer, write_tool, resources={Filesystem: fs}), session=session
    )
    thread, results = in_thread(lambda: executor.execute(ToolCall("outer", '{"path": "a.txt"}')))
    assert finished(thread), "the call deadlocked"
    assert results == [ToolResult(message="outer done")]
    assert [(e.name, e.success) for e in session[ToolInvoked].all()] == [
        ("write", True),
        ("outer", True),
    ]
    assert fs.read("a.txt") == "written"


def mark(params: Mark, *, context: ToolContext) -> ToolResult[None]:
    context.session.dispatch(params)
    return ToolResult(message="marked")


@pytest.mark.parametrize("how", list(STARTERS))
def test_sub_calls_on_a_worker_thread_of_a_prompt_without_resources_do_not_deadlock(
    how: str,
) -> None:
    def mark_on_worker(params: WriteParams, *, context: ToolContext) -> ToolResult[None]:
        inner = ToolExecutor(prompt=context.prompt, session=context.session)  # type: ignore[arg-type]
        STARTERS[how](lambda: inner.execute(ToolCall("mark", f'{{"label": "{params.path}"}}')))
        return ToolResult(message="marked")

    outer = Tool[WriteParams, None](name="outer", description="O.", handler=mark_on_worker)
    inner = Tool[Mark, None](name="mark", description="M.", handler=mark)
    session = Session()
    executor = ToolExecutor(prompt=prompt_of(outer, inner), session=session)
    thread, results = in_thread(lambda: executor.execute(ToolCall("outer", '{"path": "x"}')))
    assert finished(thread), "the call deadlocked"
    assert results == [ToolResult(message="marked")]
    assert session[Mark].all() == (Mark("x"),)


def test_a_failed_outer_call_rolls_back_what_its_worker_thread_sub_calls_did() -> None:
    fs = InMemoryFilesystem()
    outer = Tool[WriteParams, None](
        name="outer", description="O.", handler=sub_calls(on_context_thread)
    )
    session = Session()
    executor = ToolExecutor(
        prompt=prompt_of(outer, write_tool, resources={Filesystem: fs}), session=session
    )
    thread, results = in_thread(
        lambda: executor.execute(ToolCall("outer", '{"path": "a.txt", "fail": true}'))
    )
    assert finished(thread)
    assert results == [ToolResult.error("Tool 'outer' raised RuntimeError: outer failed")]
    assert fs.list(".") == []
    assert session[Mark].all() == ()
    assert [(e.name, e.success) for e in session[ToolInvoked].all()] == [
        ("write", True),  # the sub-call's record stays: ToolInvoked is a LOG slice
        ("outer", False),
    ]


def test_a_sub_call_on_another_prompt_sharing_the_filesystem_runs_on_a_worker_thread() -> None:
    fs = InMemoryFilesystem()
    other_prompt = prompt_of(write_tool, resources={InMemoryFilesystem: fs}, key="other")

    def delegate(params: WriteParams, *, context: ToolContext) -> ToolResult[None]:
        context.require_filesystem().write("outer.txt", "outer")
        inner = ToolExecutor(prompt=other_prompt, session=Session())
        result = on_context_thread(
            lambda: inner.execute(ToolCall("write", f'{{"path": "{params.path}"}}'))
        )
        assert isinstance(result, ToolResult)
        return ToolResult(message=result.message)

    outer = Tool[WriteParams, None](name="delegate", description="D.", handler=delegate)
    executor = ToolExecutor(prompt=prompt_of(outer, resources={Filesystem: fs}), session=Session())
    thread, results = in_thread(
        lambda: executor.execute(ToolCall("delegate", '{"path": "in.txt"}'))
    )
    assert finished(thread), "the call deadlocked"
    assert results == [ToolResult(message="wrote in.txt")]
    assert fs.list(".") == ["in.txt", "outer.txt"]


def test_a_call_from_an_unrelated_thread_waits_for_the_running_call() -> None:
    entered, release = threading.Event(), threading.Event()

    def hold(params: Mark, *, context: ToolContext) -> ToolResult[None]:
        context.session.dispatch(params)
        entered.set()
        release.wait(BOUND)
        raise RuntimeError("rolled back")

    holder = Tool[Mark, None](name="hold", description="H.", handler=hold)
    session = Session()
    executor = ToolExecutor(
        prompt=prompt_of(holder, Tool[Mark, None](name="mark", description="M.", handler=mark)),
        session=session,
    )
    first, _ = in_thread(lambda: executor.execute(ToolCall("hold", '{"label": "held"}')))
    assert entered.wait(BOUND)
    second, _ = in_thread(lambda: executor.execute(ToolCall("mark", '{"label": "other"}')))
    second.join(0.2)
    assert second.is_alive()  # a plain thread is another caller: it takes its turn
    release.set()
    assert finished(first) and finished(second)
    assert session[Mark].all() == (Mark("other"),)


# A wait that would deadlock fails the call that would close the cycle


def test_crossed_nested_calls_fail_one_call_instead_of_deadlocking() -> None:
    sessions = {"one": Session(session_id="one"), "two": Session(session_id="two")}
    barrier = threading.Barrier(2, timeout=BOUND)
    inner_results: list[ToolResult[Any]] = []
    inner_tool = Tool[Mark, None](name="inner", description="I.", handler=mark)
    inner_prompt = prompt_of(inner_tool, key="inner")

    def cross(params: Mark, *, context: ToolContext) -> ToolResult[None]:
        barrier.wait()  # both calls hold their own session now
        other = sessions["two" if params.label == "one" else "one"]
        inner = ToolExecutor(prompt=inner_prompt, session=other)
        inner_results.append(inner.execute(ToolCall("inner", '{"label": "x"}')))
        return ToolResult(message="crossed")

    outer = Tool[Mark, None](name="cross", description="C.", handler=cross)
    prompt = prompt_of(outer, key="outer")
    threads = [
        in_thread(
            lambda name=name: ToolExecutor(prompt=prompt, session=sessions[name]).execute(
                ToolCall("cross", f'{{"label": "{name}"}}')
            )
        )[0]
        for name in ("one", "two")
    ]
    assert all(finished(thread) for thread in threads), "the calls deadlocked"
    failures = sorted(result.message for result in inner_results if not result.success)
    expected = {
        f"Tool 'inner' could not start: waiting for session {held} would deadlock: the call "
        f"holding it waits, directly or through other calls, for session {mine}, held by "
        "this call"
        for held, mine in (("one", "two"), ("two", "one"))
    }
    assert len(failures) == 1 and failures[0] in expected
    assert sum(result.success for result in inner_results) == 1


# context.filesystem and resources.get(Filesystem) are one object


def same_filesystem(params: None, *, context: ToolContext) -> ToolResult[None]:
    assert context.filesystem is not None
    assert context.filesystem is context.resources.get(Filesystem)
    assert context.resources.get_optional(Filesystem) is context.filesystem
    return ToolResult(message=type(context.filesystem).__name__)


@pytest.mark.parametrize(
    "resources",
    [
        {Filesystem: InMemoryFilesystem()},
        {InMemoryFilesystem: InMemoryFilesystem()},
        ResourceRegistry.of(Binding(Filesystem, lambda r: InMemoryFilesystem())),
        ResourceRegistry.of(Binding(InMemoryFilesystem, lambda r: InMemoryFilesystem())),
        ResourceRegistry.of(
            Binding(InMemoryFilesystem, lambda r: InMemoryFilesystem(), Scope.TOOL_CALL)
        ),
    ],
    ids=[
        "instance under Filesystem",
        "instance under its class",
        "lazy under Filesystem",
        "lazy under its class",
        "per call under its class",
    ],
)
def test_context_filesystem_is_resources_get_filesystem_however_it_is_bound(
    resources: Any,
) -> None:
    tool = Tool[None, None](name="same", description="S.", handler=same_filesystem)
    executor = ToolExecutor(prompt=prompt_of(tool, resources=resources), session=Session())
    assert executor.execute(ToolCall("same", "{}")) == ToolResult(message="InMemoryFilesystem")


def test_an_instance_bound_under_filesystem_is_found_by_its_class_too() -> None:
    fs = InMemoryFilesystem()
    registry = ResourceRegistry.from_mapping({Filesystem: fs})
    assert registry.get(InMemoryFilesystem) is fs
    assert registry.get_optional(HostFilesystem) is None


def test_two_filesystems_are_bound_and_filesystem_is_the_one_under_filesystem(
    tmp_path: Path,
) -> None:
    memory, host = InMemoryFilesystem(), HostFilesystem(tmp_path)
    registry = ResourceRegistry.from_mapping({InMemoryFilesystem: memory, HostFilesystem: host})
    assert (registry.get(InMemoryFilesystem), registry.get(HostFilesystem)) == (memory, host)
    with pytest.raises(AmbiguousResourceError) as raised:
        registry.get(Filesystem)
    assert str(raised.value).startswith("Filesystem (context.filesystem) is ambiguous: 2 bound")
    lazy = ResourceRegistry.of(
        Binding(Filesystem, lambda r: InMemoryFilesystem("/workspace")),
        Binding(InMemoryFilesystem, lambda r: InMemoryFilesystem("/reference")),
    )
    assert lazy.get(Filesystem) is lazy.filesystem
    assert [lazy.get(key).mount_point for key in (Filesystem, InMemoryFilesystem)] == [
        "/workspace",
        "/reference",
    ]


def test_a_long_wait_for_another_call_tree_is_logged_with_the_fix(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr("wink.runtime._turns._PATIENCE", 0.05)
    entered, release = threading.Event(), threading.Event()

    def hold(params: Mark, *, context: ToolContext) -> ToolResult[None]:
        entered.set()
        release.wait(BOUND)
        return ToolResult(message="held")

    holder = Tool[Mark, None](name="hold", description="H.", handler=hold)
    session = Session(session_id="busy")
    executor = ToolExecutor(prompt=prompt_of(holder), session=session)
    first, _ = in_thread(lambda: executor.execute(ToolCall("hold", '{"label": "a"}')))
    assert entered.wait(BOUND)
    with caplog.at_level(logging.WARNING, logger="wink.runtime.executor"):
        second, _ = in_thread(lambda: executor.execute(ToolCall("hold", '{"label": "b"}')))
        second.join(0.3)
        release.set()
        assert finished(first) and finished(second)
    assert caplog.messages[0] == (
        "a tool call has waited 0 s for session busy, held by another call; if a handler "
        "runs sub-calls on a thread of its own and waits for them, start that thread in the "
        "call's context (contextvars.copy_context().run, or asyncio.to_thread) so that they "
        "belong to its call"
    )


def test_sessions_with_their_own_host_filesystems_over_one_directory_take_turns(
    tmp_path: Path,
) -> None:
    (tmp_path / "x.txt").write_text("original")
    registry = ResourceRegistry.of(Binding(Filesystem, lambda resolver: HostFilesystem(tmp_path)))
    written, proceed = threading.Event(), threading.Event()

    def overwrite(params: WriteParams, *, context: ToolContext) -> ToolResult[None]:
        context.require_filesystem().write("x.txt", params.path)
        if params.fail:
            written.set()
            proceed.wait(BOUND)
            raise RuntimeError("late failure")
        return ToolResult(message=params.path)

    tool = Tool[WriteParams, None](name="overwrite", description="O.", handler=overwrite)
    prompt = prompt_of(tool, resources=registry)
    first_session, second_session = Session(), Session()
    failing = ToolExecutor(prompt=prompt, session=first_session)
    other = ToolExecutor(prompt=prompt, session=second_session)
    first, _ = in_thread(
        lambda: failing.execute(ToolCall("overwrite", '{"path": "A", "fail": true}'))
    )
    assert written.wait(BOUND)
    second, results = in_thread(lambda: other.execute(ToolCall("overwrite", '{"path": "B"}')))
    second.join(0.2)
    assert second.is_alive()  # the same directory: it waits for the failing call
    proceed.set()
    assert finished(first) and finished(second)
    assert results == [ToolResult(message="B")]
    assert (tmp_path / "x.txt").read_text() == "B"
    first_fs = registry.for_session(first_session).get(Filesystem)
    assert first_fs is not registry.for_session(second_session).get(Filesystem)


def test_one_filesystem_instance_bound_under_two_keys_is_one_filesystem() -> None:
    fs = InMemoryFilesystem()
    registry = ResourceRegistry.from_mapping({Filesystem: fs, InMemoryFilesystem: fs})
    assert registry.filesystem is fs
    assert registry.get(Filesystem) is registry.get(InMemoryFilesystem) is fs


def test_a_sub_call_that_outlives_its_call_runs_as_a_call_of_its_own() -> None:
    go = threading.Event()
    results: list[ToolResult[Any]] = []
    workers: list[threading.Thread] = []

    def fire_and_forget(params: WriteParams, *, context: ToolContext) -> ToolResult[None]:
        inner = ToolExecutor(prompt=context.prompt, session=context.session)  # type: ignore[arg-type]

        def later() -> None:
            go.wait(BOUND)
            results.append(inner.execute(ToolCall("write", f'{{"path": "{params.path}"}}')))

        worker = threading.Thread(target=contextvars.copy_context().run, args=(later,))
        workers.append(worker)
        worker.start()
        return ToolResult(message="started")

    fs = InMemoryFilesystem()
    outer = Tool[WriteParams, None](name="outer", description="O.", handler=fire_and_forget)
    session = Session()
    executor = ToolExecutor(
        prompt=prompt_of(outer, write_tool, resources={Filesystem: fs}), session=session
    )
    assert executor.execute(ToolCall("outer", '{"path": "late.txt"}')).success
    go.set()
    assert finished(workers[0])
    assert results == [ToolResult(message="wrote late.txt")]
    assert fs.list(".") == ["late.txt"]
    # The session is free again: the late call released its turn.
    assert executor.execute(ToolCall("write", '{"path": "next.txt"}')).success
