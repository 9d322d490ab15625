"""Session observers: every committed event, after it is applied; never a rolled-back one."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Any

import pytest

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
from wink.testing import ScriptedAdapter, call


@dataclass(frozen=True)
class Note:
    """Declared a LOG slice in these tests: a rollback keeps it."""

    text: str


@dataclass(frozen=True)
class Step:
    """A STATE event: a rollback undoes it."""

    name: str


@dataclass(frozen=True)
class Special(Step):
    pass


@dataclass(frozen=True)
class Work:
    fail: bool = False
    nested: bool = False


def session_with_log() -> Session:
    session = Session()
    session[Note].declare(SliceKind.LOG)
    return session


def work(params: Work, *, context: ToolContext) -> ToolResult[None]:
    session = context.session
    assert session is not None
    session.dispatch(Step("started"))
    session.dispatch(Note("working"))
    if params.nested:
        inner = context.resources.get(ToolExecutor)
        assert inner.execute(ToolCall("work", "{}")).success
    if params.fail:
        raise RuntimeError("failed on purpose")
    return ToolResult(message="Worked.")


WORK = Tool[Work, None](name="work", description="Work.", handler=work)


def executor_for(session: Session) -> ToolExecutor:
    template = PromptTemplate(
        ns="tests", key="observed", sections=[MarkdownSection(title="Work", tools=[WORK])]
    )
    executor = ToolExecutor(prompt=Prompt(template), session=session)
    # The handler's nested calls run through the same executor.
    nested = Prompt(template).bind(resources={ToolExecutor: executor})
    return ToolExecutor(prompt=nested, session=session)


def describe(event: object) -> str:
    if isinstance(event, ToolInvoked):
        return f"ToolInvoked({event.name}, success={event.success})"
    return repr(event)


def test_an_event_dispatched_outside_a_call_is_observed_once_it_is_applied() -> None:
    session = session_with_log()
    seen: list[tuple[object, tuple[Note, ...]]] = []
    session.subscribe(Note, lambda event: seen.append((event, session[Note].all())))
    session.dispatch(Note("hello"))
    assert seen == [(Note("hello"), (Note("hello"),))]


def test_a_successful_call_delivers_its_events_and_tool_invoked_when_it_ends() -> None:
    session = session_with_log()
    seen: list[str] = []
    during: list[list[str]] = []

    def watch(params: None, *, context: ToolContext) -> ToolResult[None]:
        assert context.session is not None
        context.session.dispatch(Step("inside"))
        during.append(list(seen))
        return ToolResult(message="ok")

    session.subscribe(object, lambda event: seen.append(describe(event)))
    tool = Tool[None, None](name="watch", description="Watch.", handler=watch)
    template = PromptTemplate(
        ns="tests", key="watch", sections=[MarkdownSection(title="W", tools=[tool])]
    )
    assert ToolExecutor(prompt=Prompt(template), session=session).execute(ToolCall("watch")).success
    assert during == [[]]  # held while the call runs
    assert seen == ["Step(name='inside')", "ToolInvoked(watch, success=True)"]


def test_a_failed_call_delivers_only_what_its_rollback_keeps() -> None:
    session = session_with_log()
    seen: list[str] = []
    session.subscribe(object, lambda event: seen.append(describe(event)))
    result = executor_for(session).execute(ToolCall("work", '{"fail": true}'))
    assert not result.success
    assert session[Step].all() == ()  # the STATE event was rolled back ...
    assert seen == [
        "Note(text='working')",  # ... the LOG one was kept, and so is observed
        "ToolInvoked(work, success=False)",
    ]


def test_a_nested_call_is_delivered_with_its_outer_call_and_rolled_back_with_it() -> None:
    session = session_with_log()
    seen: list[str] = []
    session.subscribe(object, lambda event: seen.append(describe(event)))
    executor = executor_for(session)
    assert executor.execute(ToolCall("work", '{"nested": true}')).success
    assert seen == [
        "Step(name='started')",
        "Note(text='working')",
        "Step(name='started')",
        "Note(text='working')",
        "ToolInvoked(work, success=True)",
        "ToolInvoked(work, success=True)",
    ]
    seen.clear()
    assert not executor.execute(ToolCall("work", '{"nested": true, "fail": true}')).success
    assert seen == [
        "Note(text='working')",
        "Note(text='working')",
        "ToolInvoked(work, success=True)",  # the nested call's record stays in the log
        "ToolInvoked(work, success=False)",
    ]


def test_an_observer_that_raises_is_logged_and_breaks_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    session = session_with_log()
    seen: list[str] = []

    def broken(event: object) -> None:
        raise ValueError("observer bug")

    session.subscribe(ToolInvoked, broken)
    session.subscribe(ToolInvoked, lambda event: seen.append(describe(event)))
    with caplog.at_level(logging.WARNING, logger="wink.runtime.observers"):
        result = executor_for(session).execute(ToolCall("work", "{}"))
    assert result.success
    assert seen == ["ToolInvoked(work, success=True)"]
    assert caplog.messages == [
        "observer test_an_observer_that_raises_is_logged_and_breaks_nothing.<locals>.broken "
        "of ToolInvoked raised; the event stays applied"
    ]
    assert [event.success for event in session[ToolInvoked]] == [True]


def test_observers_of_a_class_see_its_subclasses_and_unsubscribe_stops_them() -> None:
    session = Session()
    seen: list[object] = []
    observer = seen.append
    session.subscribe(Step, observer)
    session.dispatch(Special("sub"))
    session.dispatch(Note("other"))
    assert session.unsubscribe(Step, observer) is True
    assert session.unsubscribe(Step, observer) is False
    session.dispatch(Step("after"))
    assert seen == [Special("sub")]


def test_a_session_is_observed_while_it_has_at_least_one_subscription() -> None:
    session = Session()
    first: list[object] = []
    second: list[object] = []
    assert session._observers.active is False
    session.subscribe(Note, first.append)
    session.subscribe(Step, second.append)
    assert session.unsubscribe(Note, first.append) is True
    assert session._observers.active is True
    session.dispatch(Step("seen"))
    assert session.unsubscribe(Step, second.append) is True
    assert session._observers.active is False
    session.dispatch(Step("unseen"))
    assert (first, second) == ([], [Step("seen")])


def test_subscribe_refuses_what_is_not_a_class_or_not_callable() -> None:
    session = Session()
    bad: Any = "Step"
    with pytest.raises(TypeError) as raised:
        session.subscribe(bad, print)
    assert str(raised.value) == "subscribe() takes an event class, got 'Step'"
    with pytest.raises(TypeError) as raised:
        session.subscribe(Step, bad)
    assert str(raised.value) == "subscribe() takes a callable observer, got 'Step'"


def test_the_dispatcher_is_the_session_and_takes_subscriptions() -> None:
    session = Session()
    seen: list[object] = []
    session.dispatcher.subscribe(Step, seen.append)
    session.dispatcher.dispatch(Step("x"))
    assert seen == [Step("x")]


def test_events_of_a_call_on_another_thread_are_held_for_that_call_only() -> None:
    session = session_with_log()
    seen: list[str] = []
    session.subscribe(object, lambda event: seen.append(describe(event)))
    started, release = threading.Event(), threading.Event()

    def slow(params: None, *, context: ToolContext) -> ToolResult[None]:
        assert context.session is not None
        context.session.dispatch(Step("slow"))
        started.set()
        release.wait(5)
        return ToolResult(message="ok")

    tool = Tool[None, None](name="slow", description="Slow.", handler=slow)
    template = PromptTemplate(
        ns="tests", key="threads", sections=[MarkdownSection(title="S", tools=[tool])]
    )
    worker = threading.Thread(
        target=lambda: ToolExecutor(prompt=Prompt(template), session=session).execute(
            ToolCall("slow")
        )
    )
    worker.start()
    assert started.wait(5)
    session.dispatch(Note("outside"))  # not part of the call: delivered at once
    assert seen == ["Note(text='outside')"]
    release.set()
    worker.join(5)
    assert seen == ["Note(text='outside')", "Step(name='slow')", "ToolInvoked(slow, success=True)"]


def test_an_evaluation_delivers_the_adapters_events_and_each_tool_call() -> None:
    session = session_with_log()
    seen: list[str] = []

    def name(event: object) -> None:
        seen.append(describe(event) if isinstance(event, ToolInvoked) else type(event).__name__)

    session.subscribe(object, name)
    template = PromptTemplate(
        ns="tests", key="evaluated", sections=[MarkdownSection(title="Work", tools=[WORK])]
    )
    adapter = ScriptedAdapter([call("work", {"fail": True}), call("work", {}), "Done."])
    assert adapter.evaluate(Prompt(template), session=session).text == "Done."
    assert seen == [
        "PromptRendered",
        "Note",  # the failed call's STATE event (Step) was rolled back, its LOG one kept
        "ToolInvoked(work, success=False)",
        "Step",
        "Note",
        "ToolInvoked(work, success=True)",
        "PromptExecuted",
    ]
