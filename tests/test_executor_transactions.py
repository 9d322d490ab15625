"""Executor transactions at their edges: lazy resources, closing, policies, threads."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from wink import (
    Binding,
    DeadlineExceededError,
    Filesystem,
    HostFilesystem,
    InMemoryFilesystem,
    MarkdownSection,
    Prompt,
    PromptEvaluationError,
    PromptTemplate,
    ReadBeforeWritePolicy,
    ResourceRegistry,
    Scope,
    Tool,
    ToolContext,
    ToolResult,
)
from wink.policy import PolicyDecision
from wink.runtime import Session, SliceValues, ToolCall, ToolExecutor, ToolInvoked


@dataclass(frozen=True)
class WriteParams:
    path: str
    fail: bool = False


@dataclass(frozen=True)
class Mark:
    label: str


def write_file(params: WriteParams, *, context: ToolContext) -> ToolResult[None]:
    context.session.dispatch(Mark(params.path))
    context.filesystem.write(params.path, "written")
    if params.fail:
        raise RuntimeError("failed after writing")
    return ToolResult(message="written")


write_tool = Tool[WriteParams, None](
    name="write_file", description="Write a file.", handler=write_file
)


def executor_for(
    *tools: Tool[Any, Any],
    resources: Any = None,
    policies: tuple[Any, ...] = (),
    session: Session | None = None,
) -> ToolExecutor:
    template = PromptTemplate(
        ns="tests",
        key="transactions",
        sections=[MarkdownSection(title="Tools", tools=tools, policies=policies)],
    )
    return ToolExecutor(prompt=Prompt(template, resources=resources), session=session or Session())


def test_lazily_bound_host_filesystem_with_a_policy_is_rolled_back(tmp_path: Path) -> None:
    (tmp_path / "kept.txt").write_text("original")
    registry = ResourceRegistry.of(Binding(Filesystem, lambda resolver: HostFilesystem(tmp_path)))
    executor = executor_for(write_tool, resources=registry, policies=(ReadBeforeWritePolicy(),))
    result = executor.execute(ToolCall("write_file", '{"path": "new.txt", "fail": true}'))
    assert result.message == "Tool 'write_file' raised RuntimeError: failed after writing"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.txt"]


class Repository:
    """A singleton whose factory builds the filesystem it writes to."""

    def __init__(self, fs: InMemoryFilesystem) -> None:
        self.fs = fs


def save(params: WriteParams, *, context: ToolContext) -> ToolResult[None]:
    context.resources.get(Repository).fs.write(params.path, "saved")
    if params.fail:
        raise RuntimeError("failed after saving")
    return ToolResult(message="saved")


save_tool = Tool[WriteParams, None](name="save", description="Save a file.", handler=save)


def test_snapshotable_built_by_another_singletons_factory_is_rolled_back() -> None:
    built: list[InMemoryFilesystem] = []

    def build_fs(resolver: Any) -> InMemoryFilesystem:
        built.append(InMemoryFilesystem())
        return built[-1]

    registry = ResourceRegistry.of(
        Binding(InMemoryFilesystem, build_fs),
        Binding(Repository, lambda resolver: Repository(resolver.get(InMemoryFilesystem))),
    )
    executor = executor_for(save_tool, resources=registry)
    executor.execute(ToolCall("save", '{"path": "x.txt", "fail": true}'))
    assert len(built) == 1
    assert built[0].exists("x.txt") is False


class Flaky:
    """A per-call resource whose close fails."""

    def close(self) -> None:
        raise OSError("close failed")


def use_flaky(params: None, *, context: ToolContext) -> ToolResult[None]:
    context.resources.get(Flaky)
    return ToolResult(message="used")


flaky_tool = Tool[None, None](name="use_flaky", description="Use it.", handler=use_flaky)


def test_resource_failing_to_close_does_not_lose_the_result(
    caplog: pytest.LogCaptureFixture,
) -> None:
    registry = ResourceRegistry.of(Binding(Flaky, lambda r: Flaky(), scope=Scope.TOOL_CALL))
    executor = executor_for(flaky_tool, resources=registry)
    with caplog.at_level(logging.WARNING, logger="wink.runtime.executor"):
        result = executor.execute(ToolCall("use_flaky", "{}"))
    assert result == ToolResult(message="used")
    assert caplog.messages == ["closing the resources of tool 'use_flaky' failed"]


def count(values: SliceValues[int], event: ToolInvoked) -> SliceValues[int]:
    return values.append(len(values) + 1)


def test_tool_invoked_stays_in_its_slice_when_a_reducer_routes_it_elsewhere() -> None:
    session = Session()
    session[int].register(ToolInvoked, count)
    executor = executor_for(
        write_tool, resources={Filesystem: InMemoryFilesystem()}, session=session
    )
    executor.execute(ToolCall("write_file", '{"path": "a.txt"}'))
    assert [event.name for event in session[ToolInvoked].all()] == ["write_file"]
    assert session[int].all() == (1,)


def explode(values: SliceValues[int], event: ToolInvoked) -> SliceValues[int]:
    raise ValueError("reducer broke")


def test_failing_tool_invoked_reducer_keeps_the_failed_call_on_record() -> None:
    session = Session()
    session[int].register(ToolInvoked, explode)
    executor = executor_for(
        write_tool, resources={Filesystem: InMemoryFilesystem()}, session=session
    )
    result = executor.execute(ToolCall("missing", "{}"))
    assert result.message == "Unknown tool 'missing'. Available tools: write_file."
    assert [event.name for event in session[ToolInvoked].all()] == ["missing"]


def test_failing_tool_invoked_reducer_rolls_a_successful_call_back() -> None:
    session = Session()
    session[int].register(ToolInvoked, explode)
    fs = InMemoryFilesystem()
    executor = executor_for(write_tool, resources={Filesystem: fs}, session=session)
    result = executor.execute(ToolCall("write_file", '{"path": "a.txt"}'))
    assert result.success is False
    assert result.message.startswith("Tool 'write_file' succeeded but its result could not")
    assert fs.exists("a.txt") is False
    assert session[Mark].all() == ()
    assert [event.success for event in session[ToolInvoked].all()] == [False]


class StatefulDenial:
    """Changes the session while checking, then denies (or raises) as told."""

    name = "stateful"

    def __init__(self, error: Exception | None = None) -> None:
        self.error = error

    def check(self, tool: Tool[Any, Any], params: Any, *, context: ToolContext) -> PolicyDecision:
        context.session.dispatch(Mark("from policy"))
        if self.error is not None:
            raise self.error
        return PolicyDecision.deny("no")

    def on_result(self, *args: Any, context: ToolContext) -> None:
        raise AssertionError("never called")


def test_policy_that_changes_state_and_denies_leaves_no_state() -> None:
    session = Session()
    fs = InMemoryFilesystem()
    executor = executor_for(
        write_tool, resources={Filesystem: fs}, policies=(StatefulDenial(),), session=session
    )
    assert executor.execute(ToolCall("write_file", '{"path": "a.txt"}')) == ToolResult.error("no")
    assert session[Mark].all() == ()


def test_deadline_raised_inside_a_policy_stops_the_evaluation() -> None:
    session = Session()
    policy = StatefulDenial(DeadlineExceededError("too late"))
    executor = executor_for(
        write_tool,
        resources={Filesystem: InMemoryFilesystem()},
        policies=(policy,),
        session=session,
    )
    with pytest.raises(PromptEvaluationError) as raised:
        executor.execute(ToolCall("write_file", '{"path": "a.txt"}'))
    assert str(raised.value) == "Tool 'write_file' was stopped: too late"
    assert session[Mark].all() == ()


@dataclass(frozen=True)
class StepParams:
    label: str
    fail: bool


def step(params: StepParams, *, context: ToolContext) -> ToolResult[None]:
    context.session.dispatch(Mark(params.label))
    if params.fail:
        # Give a concurrent call every chance to finish in between.
        threading.Event().wait(0.2)
        raise RuntimeError("late failure")
    return ToolResult(message="done")


step_tool = Tool[StepParams, None](name="step", description="A step.", handler=step)


def test_a_failing_call_does_not_undo_a_concurrent_successful_call() -> None:
    session = Session()
    executor = executor_for(step_tool, session=session)
    failing = threading.Thread(
        target=executor.execute, args=(ToolCall("step", '{"label": "a", "fail": true}'),)
    )
    failing.start()
    while not session[Mark].all() and failing.is_alive():
        threading.Event().wait(0.001)
    succeeded = executor.execute(ToolCall("step", '{"label": "b", "fail": false}'))
    failing.join()
    assert succeeded == ToolResult(message="done")
    assert session[Mark].all() == (Mark("b"),)


def shared_write(params: WriteParams, *, context: ToolContext) -> ToolResult[None]:
    context.filesystem.write(params.path, "written")
    if params.fail:
        WRITTEN.set()
        # Give a concurrent call every chance to finish in between.
        threading.Event().wait(0.2)
        raise RuntimeError("late failure")
    return ToolResult(message="written")


WRITTEN = threading.Event()
shared_write_tool = Tool[WriteParams, None](
    name="shared_write", description="Write, then maybe fail.", handler=shared_write
)


def test_a_failing_call_does_not_undo_a_successful_call_of_another_session() -> None:
    # Both executors share the prompt, so its filesystem: the failed call restores
    # that filesystem, which must not drop the other session's write.
    fs = InMemoryFilesystem()
    template = PromptTemplate(
        ns="tests", key="shared", sections=[MarkdownSection(title="T", tools=[shared_write_tool])]
    )
    prompt = Prompt(template, resources={Filesystem: fs})
    failing_executor = ToolExecutor(prompt=prompt, session=Session())
    other_executor = ToolExecutor(prompt=prompt, session=Session())
    WRITTEN.clear()
    failing = threading.Thread(
        target=failing_executor.execute,
        args=(ToolCall("shared_write", '{"path": "a.txt", "fail": true}'),),
    )
    failing.start()
    WRITTEN.wait(5)
    succeeded = other_executor.execute(ToolCall("shared_write", '{"path": "b.txt"}'))
    failing.join()
    assert succeeded == ToolResult(message="written")
    assert fs.list(".") == ["b.txt"]


def test_no_build_log_outlives_the_calls() -> None:
    registry = ResourceRegistry.of(Binding(Filesystem, lambda resolver: InMemoryFilesystem()))
    session = Session()
    executor = executor_for(write_tool, resources=registry, session=session)
    executor.execute(ToolCall("write_file", '{"path": "a.txt"}'))
    executor.execute(ToolCall("write_file", '{"path": "b.txt", "fail": true}'))
    assert registry.for_session(session).built_since(0) == []


def nested(params: WriteParams, *, context: ToolContext) -> ToolResult[None]:
    # A nested call through a second executor for the same prompt and session.
    inner = ToolExecutor(prompt=context.prompt, session=context.session)
    inner.execute(ToolCall("write_file", f'{{"path": "{params.path}"}}'))
    return ToolResult(message="nested")


nested_tool = Tool[WriteParams, None](name="nested", description="Nest.", handler=nested)


def test_nested_call_on_the_same_prompt_and_session_runs_and_clears_the_build_log() -> None:
    registry = ResourceRegistry.of(Binding(Filesystem, lambda resolver: InMemoryFilesystem()))
    session = Session()
    executor = executor_for(write_tool, nested_tool, resources=registry, session=session)
    assert executor.execute(ToolCall("nested", '{"path": "a.txt"}')) == ToolResult(message="nested")
    assert registry.for_session(session).get(Filesystem).exists("a.txt")
    assert registry.for_session(session).built_since(0) == []


@dataclass(frozen=True)
class Count:
    n: int


def miscount(params: None, *, context: ToolContext) -> ToolResult[Count]:
    context.session.dispatch(Mark("before the bad result"))
    return ToolResult.ok(Count(n="many"))  # type: ignore[arg-type]  # the wrong value under test


miscount_tool = Tool[None, Count](name="miscount", description="Count.", handler=miscount)


def test_result_with_a_wrongly_typed_field_fails_and_rolls_back() -> None:
    session = Session()
    executor = executor_for(miscount_tool, session=session)
    result = executor.execute(ToolCall("miscount", "{}"))
    assert result.success is False
    assert result.message == (
        "Tool 'miscount' returned a value that does not match its result type Count:\n"
        'n: expected int (got "many")'
    )
    assert session[Mark].all() == ()
    assert session[Count].all() == ()


def halve(params: None, *, context: ToolContext) -> ToolResult[float]:
    return ToolResult.ok(2)  # an int is a JSON number, so a valid float


halve_tool = Tool[None, float](name="halve", description="A number.", handler=halve)


def test_an_int_value_is_a_valid_float_result() -> None:
    result = executor_for(halve_tool).execute(ToolCall("halve", "{}"))
    assert result == ToolResult.ok(2)
    assert result.render() == "2.0"


class ModelPolicy(BaseModel):
    """A policy written as a pydantic model (which has a ``validate`` classmethod)."""

    name: str = "model_policy"

    def check(self, tool: Tool[Any, Any], params: Any, *, context: ToolContext) -> PolicyDecision:
        return PolicyDecision.allow()

    def on_result(self, *args: Any, context: ToolContext) -> None:
        return None


def test_a_policy_that_is_a_pydantic_model_is_accepted() -> None:
    executor = executor_for(halve_tool, policies=(ModelPolicy(),))
    assert executor.execute(ToolCall("halve", "{}")).success is True


@dataclass(frozen=True)
class Gate:
    label: str


entered = threading.Event()
released = threading.Event()


def gated(params: Gate, *, context: ToolContext) -> ToolResult[None]:
    if params.label == "first":
        entered.set()
        if not released.wait(5):
            return ToolResult.error("the other session never ran")
    else:
        released.set()
    return ToolResult(message=params.label)


gated_tool = Tool[Gate, None](name="gated", description="Waits.", handler=gated)


def test_sessions_sharing_a_prompt_without_resources_run_side_by_side() -> None:
    template = PromptTemplate(
        ns="tests", key="side_by_side", sections=[MarkdownSection(title="T", tools=[gated_tool])]
    )
    prompt = Prompt(template)
    first = ToolExecutor(prompt=prompt, session=Session())
    second = ToolExecutor(prompt=prompt, session=Session())
    results: list[ToolResult[Any]] = []
    thread = threading.Thread(
        target=lambda: results.append(first.execute(ToolCall("gated", '{"label": "first"}')))
    )
    thread.start()
    assert entered.wait(5)
    assert second.execute(ToolCall("gated", '{"label": "second"}')).message == "second"
    thread.join()
    assert results == [ToolResult(message="first")]


# Every test above runs on both of the executor's paths (see ``executor_path``).
pytestmark = pytest.mark.usefixtures("executor_path")
