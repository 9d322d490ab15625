"""What the application changes in a session while a call runs survives the call's
rollback: a failed call undoes its own changes, never those made from outside it."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from wink import MarkdownSection, Prompt, PromptTemplate, Tool, ToolContext, ToolResult
from wink.runtime import (
    Session,
    SliceKind,
    SliceValues,
    SliceVersion,
    ToolCall,
    ToolExecutor,
    ToolInvoked,
)

BOUND = 10.0  # seconds a test waits for the other thread before calling it stuck


@dataclass(frozen=True)
class Note:
    text: str


@dataclass(frozen=True)
class Audit:
    text: str


@dataclass(frozen=True)
class Steps:
    fail: bool = True
    label: str = "call"


def prompt_of(*tools: Tool[Any, Any]) -> Prompt:
    template = PromptTemplate(
        ns="tests", key="outside", sections=[MarkdownSection(title="Tools", tools=tools)]
    )
    return Prompt(template)


def interleaved(outside: Callable[[], None]) -> Callable[..., ToolResult[None]]:
    """A handler that dispatches, lets ``outside`` run on another thread, dispatches
    again, then fails (or not)."""

    def handler(params: Steps, *, context: ToolContext) -> ToolResult[None]:
        context.session.dispatch(Note(f"{params.label} before"))
        worker = threading.Thread(target=outside)
        worker.start()
        worker.join(BOUND)
        assert not worker.is_alive()
        context.session.dispatch(Note(f"{params.label} after"))
        if params.fail:
            raise RuntimeError("failed on purpose")
        return ToolResult(message="done")

    return handler


def test_events_dispatched_from_another_thread_during_a_failing_call_survive_in_order() -> None:
    session = Session()
    session.dispatch(Note("first"))

    def outside() -> None:
        for index in range(3):
            session.dispatch(Note(f"outside {index}"))

    tool = Tool[Steps, None](name="steps", description="S.", handler=interleaved(outside))
    result = ToolExecutor(prompt=prompt_of(tool), session=session).execute(ToolCall("steps", "{}"))
    assert result.message == "Tool 'steps' raised RuntimeError: failed on purpose"
    assert session[Note].all() == (
        Note("first"),
        Note("outside 0"),
        Note("outside 1"),
        Note("outside 2"),
    )


def test_a_successful_call_keeps_its_events_and_the_outside_ones_interleaved() -> None:
    session = Session()

    def outside() -> None:
        session.dispatch(Note("outside"))

    tool = Tool[Steps, None](name="steps", description="S.", handler=interleaved(outside))
    executor = ToolExecutor(prompt=prompt_of(tool), session=session)
    assert executor.execute(ToolCall("steps", '{"fail": false}')).success
    assert session[Note].all() == (Note("call before"), Note("outside"), Note("call after"))


def test_outside_events_go_through_reducers_again_on_the_restored_state() -> None:
    session = Session()
    session[Note].register(
        Note, lambda values, event: (*values, Note(f"{len(values)}:{event.text}"))
    )

    def outside() -> None:
        session.dispatch(Note("outside"))

    tool = Tool[Steps, None](name="steps", description="S.", handler=interleaved(outside))
    ToolExecutor(prompt=prompt_of(tool), session=session).execute(ToolCall("steps", "{}"))
    # Re-reduced on the state before the call: position 0, not 1.
    assert session[Note].all() == (Note("0:outside"),)


def test_outside_seed_and_clear_survive_a_failing_call() -> None:
    session = Session()
    session[Audit].seed([Audit("old")])

    def outside() -> None:
        session[Audit].clear()
        session[Audit].seed([Audit("seeded outside")])

    def handler(params: Steps, *, context: ToolContext) -> ToolResult[None]:
        context.session[Audit].seed([Audit("seeded by the call")])
        interleaved(outside)(params, context=context)
        return ToolResult(message="unreachable")

    tool = Tool[Steps, None](name="steps", description="S.", handler=handler)
    ToolExecutor(prompt=prompt_of(tool), session=session).execute(ToolCall("steps", "{}"))
    assert session[Audit].all() == (Audit("seeded outside"),)
    assert session[Note].all() == ()


def test_outside_log_events_are_kept_once_by_the_rollback() -> None:
    session = Session()
    session[Audit].declare(SliceKind.LOG)

    def outside() -> None:
        session.dispatch(Audit("outside"))

    def handler(params: Steps, *, context: ToolContext) -> ToolResult[None]:
        context.session.dispatch(Audit("call"))
        return interleaved(outside)(params, context=context)

    tool = Tool[Steps, None](name="steps", description="S.", handler=handler)
    ToolExecutor(prompt=prompt_of(tool), session=session).execute(ToolCall("steps", "{}"))
    assert session[Audit].all() == (Audit("call"), Audit("outside"))


def test_a_failed_sub_call_keeps_outside_events_and_the_outer_call_commits() -> None:
    session = Session()

    def outside() -> None:
        session.dispatch(Note("outside"))

    inner = Tool[Steps, None](name="inner", description="I.", handler=interleaved(outside))

    def outer(params: Steps, *, context: ToolContext) -> ToolResult[None]:
        context.session.dispatch(Note("outer"))
        sub = ToolExecutor(prompt=context.prompt, session=context.session)
        assert not sub.execute(ToolCall("inner", '{"label": "inner"}')).success
        return ToolResult(message="outer done")

    outer_tool = Tool[Steps, None](name="outer", description="O.", handler=outer)
    executor = ToolExecutor(prompt=prompt_of(inner, outer_tool), session=session)
    assert executor.execute(ToolCall("outer", "{}")).success
    assert session[Note].all() == (Note("outer"), Note("outside"))


def test_a_failed_outer_call_keeps_outside_events_made_during_its_sub_calls() -> None:
    session = Session()

    def outside() -> None:
        session.dispatch(Note("outside"))

    inner = Tool[Steps, None](name="inner", description="I.", handler=interleaved(outside))

    def outer(params: Steps, *, context: ToolContext) -> ToolResult[None]:
        sub = ToolExecutor(prompt=context.prompt, session=context.session)
        assert sub.execute(ToolCall("inner", '{"fail": false, "label": "inner"}')).success
        session.dispatch(Note("outer"))
        raise RuntimeError("outer fails")

    outer_tool = Tool[Steps, None](name="outer", description="O.", handler=outer)
    executor = ToolExecutor(prompt=prompt_of(inner, outer_tool), session=session)
    assert not executor.execute(ToolCall("outer", "{}")).success
    assert session[Note].all() == (Note("outside"),)


def test_observers_see_each_outside_event_once_and_never_the_rolled_back_ones() -> None:
    session = Session()
    seen: list[object] = []
    session.subscribe(Note, seen.append)

    def outside() -> None:
        session.dispatch(Note("outside"))

    tool = Tool[Steps, None](name="steps", description="S.", handler=interleaved(outside))
    ToolExecutor(prompt=prompt_of(tool), session=session).execute(ToolCall("steps", "{}"))
    assert seen == [Note("outside")]
    assert session[Note].all() == (Note("outside"),)


def test_a_session_keeping_history_records_the_rebased_state_as_a_restore() -> None:
    session = Session(keep_history=True, clock=lambda: datetime(2025, 1, 1, tzinfo=UTC))

    def outside() -> None:
        session.dispatch(Note("outside"))

    tool = Tool[Steps, None](name="steps", description="S.", handler=interleaved(outside))
    ToolExecutor(prompt=prompt_of(tool), session=session).execute(ToolCall("steps", "{}"))
    last = session[SliceVersion].all()[-1]
    assert (last.cause, tuple(last.values)) == ("restore", (Note("outside"),))
    assert session[Note].all() == (Note("outside"),)


def test_an_outside_change_that_cannot_be_reduced_again_stops_the_evaluation() -> None:
    from wink import PromptEvaluationError

    session = Session()

    def reducer(values: SliceValues[Note], event: Audit) -> tuple[Note, ...]:
        if not values:
            raise ValueError("needs a note first")
        return (*values, Note(event.text))

    session[Note].register(Audit, reducer)

    def handler(params: Steps, *, context: ToolContext) -> ToolResult[None]:
        context.session[Note].seed([Note("by the call")])
        thread = threading.Thread(target=lambda: session.dispatch(Audit("outside")))
        thread.start()
        thread.join(BOUND)
        raise RuntimeError("failed on purpose")

    tool = Tool[Steps, None](name="steps", description="S.", handler=handler)
    try:
        ToolExecutor(prompt=prompt_of(tool), session=session).execute(ToolCall("steps", "{}"))
    except PromptEvaluationError as stop:
        assert str(stop) == (
            "Tool 'steps' failed and its changes could not all be rolled back (the session: "
            "restore() raised WinkError: 1 change made from outside the call while it ran "
            "could not be applied again on the restored state (the first: Audit, ValueError: "
            "needs a note first)); that state is unknown, so the evaluation stops"
        )
    else:
        raise AssertionError("a change that cannot be applied again must stop the evaluation")
    assert session[Note].all() == ()
    assert [event.success for event in session[ToolInvoked].all()] == [False]


def test_an_async_call_keeps_what_another_task_on_its_loop_dispatched() -> None:
    session = Session()

    async def handler(params: Steps, *, context: ToolContext) -> ToolResult[None]:
        context.session.dispatch(Note("call"))
        await asyncio.sleep(0.05)  # the other task dispatches meanwhile
        raise RuntimeError("failed on purpose")

    tool = Tool[Steps, None](name="steps", description="S.", handler=handler)
    executor = ToolExecutor(prompt=prompt_of(tool), session=session)

    async def other_task() -> None:
        await asyncio.sleep(0.01)
        session.dispatch(Note("other task"))

    async def main() -> None:
        other = asyncio.create_task(other_task())  # started outside the call: not part of it
        assert not (await executor.aexecute(ToolCall("steps", "{}"))).success
        await other

    asyncio.run(main())
    assert session[Note].all() == (Note("other task"),)


def test_outside_events_during_a_turn_of_overlapping_calls_survive_their_merge() -> None:
    session = Session()

    async def handler(params: Steps, *, context: ToolContext) -> ToolResult[None]:
        context.session.dispatch(Note(params.label))
        await asyncio.sleep(0.05)
        if params.fail:
            raise RuntimeError("failed on purpose")
        return ToolResult(message="ok")

    tool = Tool[Steps, None](name="steps", description="S.", handler=handler)
    executor = ToolExecutor(prompt=prompt_of(tool), session=session)

    async def other_task() -> None:
        await asyncio.sleep(0.01)
        session.dispatch(Note("other task"))

    async def main() -> None:
        other = asyncio.create_task(other_task())
        calls = [
            ToolCall("steps", '{"label": "a", "fail": false}'),
            ToolCall("steps", '{"label": "b"}'),
        ]
        results = await executor.aexecute_all(calls)
        assert [result.success for result in results] == [True, False]
        await other

    asyncio.run(main())
    assert session[Note].all() == (Note("other task"), Note("a"))
