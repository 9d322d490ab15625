"""A call waits for another call tree's turn at most ``turn_timeout`` seconds; then it
fails, naming the lock and the fix, instead of waiting forever."""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass
from typing import Any

import pytest

from wink import MarkdownSection, Prompt, PromptTemplate, Tool, ToolContext, ToolResult
from wink.runtime import Session, ToolCall, ToolExecutor, ToolInvoked
from wink.runtime.executor import DEFAULT_TURN_TIMEOUT

BOUND = 10.0  # seconds before a test calls a wait a deadlock

WAITED = (
    "Tool 'mark' could not start: waited 0.2 s for session plain, held by another call. "
    "If a handler runs this call on a thread of its own (threading.Thread, or a pool that "
    "does not copy the context) and waits for it, it can never start: run it in the "
    "handler's context (contextvars.copy_context().run(...), asyncio.to_thread, or a pool "
    "whose tasks run in a copy of the context) so that it belongs to the handler's call. "
    "If another call simply runs that long, raise ToolExecutor(turn_timeout=...)"
)


@dataclass(frozen=True)
class Mark:
    label: str


def mark(params: Mark, *, context: ToolContext) -> ToolResult[None]:
    context.session.dispatch(params)
    return ToolResult(message=params.label)


mark_tool = Tool[Mark, None](name="mark", description="M.", handler=mark)


def prompt_of(*tools: Tool[Any, Any]) -> Prompt:
    template = PromptTemplate(
        ns="tests", key="timeout", sections=[MarkdownSection(title="Tools", tools=tools)]
    )
    return Prompt(template)


def test_a_sub_call_on_a_plain_thread_joined_by_its_handler_fails_after_the_timeout() -> None:
    sub_results: list[ToolResult[Any]] = []

    def joins_a_plain_thread(params: Mark, *, context: ToolContext) -> ToolResult[None]:
        inner = ToolExecutor(prompt=context.prompt, session=context.session, turn_timeout=0.2)
        worker = threading.Thread(
            target=lambda: sub_results.append(inner.execute(ToolCall("mark", '{"label": "x"}')))
        )
        worker.start()
        worker.join(BOUND)
        assert not worker.is_alive()
        return ToolResult(message="joined")

    outer = Tool[Mark, None](name="outer", description="O.", handler=joins_a_plain_thread)
    session = Session(session_id="plain")
    executor = ToolExecutor(prompt=prompt_of(outer, mark_tool), session=session)
    started = time.monotonic()
    result = executor.execute(ToolCall("outer", '{"label": "o"}'))
    elapsed = time.monotonic() - started
    assert result.message == "joined"
    assert 0.2 <= elapsed < BOUND
    assert [r.message for r in sub_results] == [WAITED]
    assert [(e.name, e.success, e.result.message) for e in session[ToolInvoked].all()] == [
        ("mark", False, WAITED),
        ("outer", True, "joined"),
    ]
    assert session[Mark].all() == ()


def test_an_async_call_waiting_for_a_held_session_fails_after_the_timeout() -> None:
    entered, release = threading.Event(), threading.Event()

    def hold(params: Mark, *, context: ToolContext) -> ToolResult[None]:
        entered.set()
        release.wait(BOUND)
        return ToolResult(message="held")

    holder = Tool[Mark, None](name="hold", description="H.", handler=hold)
    session = Session(session_id="plain")
    prompt = prompt_of(holder, mark_tool)
    first = threading.Thread(
        target=lambda: ToolExecutor(prompt=prompt, session=session).execute(
            ToolCall("hold", '{"label": "h"}')
        )
    )
    first.start()
    try:
        assert entered.wait(BOUND)
        waiting = ToolExecutor(prompt=prompt, session=session, turn_timeout=0.2)
        result = asyncio.run(waiting.aexecute(ToolCall("mark", '{"label": "x"}')))
        turn = asyncio.run(waiting.aexecute_all([ToolCall("mark", '{"label": "y"}')]))
    finally:
        release.set()
        first.join(BOUND)
    assert result.message == WAITED
    assert [r.message for r in turn] == [WAITED]


def test_a_wait_shorter_than_the_timeout_still_takes_its_turn() -> None:
    entered, release = threading.Event(), threading.Event()

    def hold(params: Mark, *, context: ToolContext) -> ToolResult[None]:
        entered.set()
        release.wait(BOUND)
        return ToolResult(message="held")

    holder = Tool[Mark, None](name="hold", description="H.", handler=hold)
    session = Session()
    prompt = prompt_of(holder, mark_tool)
    first = threading.Thread(
        target=lambda: ToolExecutor(prompt=prompt, session=session).execute(
            ToolCall("hold", '{"label": "h"}')
        )
    )
    first.start()
    assert entered.wait(BOUND)
    threading.Timer(0.1, release.set).start()
    result = ToolExecutor(prompt=prompt, session=session, turn_timeout=BOUND).execute(
        ToolCall("mark", '{"label": "x"}')
    )
    first.join(BOUND)
    assert result.message == "x"


def test_the_default_turn_timeout_is_ten_seconds() -> None:
    assert DEFAULT_TURN_TIMEOUT == 10.0


@pytest.mark.parametrize("bad", [0, -1.0, float("inf"), float("nan"), "5", True])
def test_a_turn_timeout_that_is_not_a_positive_number_is_refused(bad: object) -> None:
    with pytest.raises(ValueError) as raised:
        ToolExecutor(prompt=prompt_of(mark_tool), session=Session(), turn_timeout=bad)  # type: ignore[arg-type]  # the point
    assert str(raised.value) == (
        f"ToolExecutor(turn_timeout=...) takes a positive number of seconds or None, got {bad!r}"
    )
