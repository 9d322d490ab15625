"""Per-tool controls: timeouts, retries (and ``ToolRetry``), and output limits."""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass
from typing import Any

import pytest

from wink import (
    Deadline,
    InMemoryFilesystem,
    MarkdownSection,
    Prompt,
    PromptEvaluationError,
    PromptTemplate,
    PromptValidationError,
    Tool,
    ToolContext,
    ToolResult,
    tool,
)
from wink.resources import Filesystem
from wink.runtime import Session, ToolCall, ToolExecutor, ToolInvoked
from wink.runtime.snapshot import Snapshot
from wink.testing import ScriptedAdapter
from wink.tools import Retries, ToolRetry
from wink.tools.controls import cut_output


@dataclass(frozen=True)
class Note:
    text: str


@dataclass(frozen=True)
class Text:
    body: str

    def render(self) -> str:
        return self.body


@dataclass(frozen=True)
class Size:
    size: int


def executor_for(
    *tools: Tool[Any, Any],
    session: Session | None = None,
    filesystem: InMemoryFilesystem | None = None,
    max_output_chars: int | None = None,
    deadline: Deadline | None = None,
) -> ToolExecutor:
    template = PromptTemplate(
        ns="tests",
        key="controls",
        sections=[MarkdownSection(title="Tools", tools=tools)],
        max_output_chars=max_output_chars,
    )
    resources = None if filesystem is None else {Filesystem: filesystem}
    return ToolExecutor(
        prompt=Prompt(template, resources=resources),
        session=session or Session(),
        deadline=deadline,
    )


# --- timeouts ---------------------------------------------------------------------


def test_sync_handler_in_thread_over_its_timeout_fails_and_its_late_writes_are_undone() -> None:
    release = threading.Event()
    finished = threading.Event()

    def slow(params: None, *, context: ToolContext) -> ToolResult[None]:
        release.wait(5)
        assert context.session is not None and context.filesystem is not None
        # After the call timed out and was rolled back: these must not stay.
        context.session.dispatch(Note("late"))
        context.filesystem.write("late.txt", "late")
        finished.set()
        return ToolResult(message="done late")

    session = Session()
    filesystem = InMemoryFilesystem()
    executor = executor_for(
        Tool[None, None](
            name="slow", description="Slow.", handler=slow, timeout=0.05, in_thread=True
        ),
        session=session,
        filesystem=filesystem,
    )
    result = executor.execute(ToolCall("slow", "{}", call_id="c1"))
    assert result.success is False
    assert result.message == (
        "Tool 'slow' did not finish within its timeout of 0.05s, so nothing it did was "
        "kept; try a smaller request, or another way"
    )
    recorded = session[ToolInvoked].latest()
    assert recorded is not None and recorded.rolled_back is True
    release.set()
    assert finished.wait(5)
    deadline = time.monotonic() + 5
    while session.call_lock.owner is not None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert session[Note].all() == ()
    assert not filesystem.exists("late.txt")
    assert session.call_lock.owner is None  # the turn ended once the late writes were undone


@pytest.mark.usefixtures("executor_path")
def test_inline_sync_handler_over_its_timeout_has_its_result_discarded_and_rolled_back() -> None:
    def slow(params: None, *, context: ToolContext) -> ToolResult[None]:
        assert context.session is not None
        context.session.dispatch(Note("written"))
        time.sleep(0.06)
        return ToolResult(message="done")

    session = Session()
    executor = executor_for(
        Tool[None, None](name="slow", description="Slow.", handler=slow, timeout=0.02),
        session=session,
    )
    result = executor.execute(ToolCall("slow", "{}"))
    assert result.success is False
    assert "timeout of 0.02s" in result.message
    assert session[Note].all() == ()


@pytest.mark.usefixtures("executor_path")
def test_async_handler_over_its_timeout_is_cancelled_and_rolled_back() -> None:
    cancelled: list[bool] = []

    async def slow(params: None, *, context: ToolContext) -> ToolResult[None]:
        assert context.session is not None
        context.session.dispatch(Note("before"))
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            cancelled.append(True)
            raise
        return ToolResult(message="done")

    session = Session()
    executor = executor_for(
        Tool[None, None](name="slow", description="Slow.", handler=slow, timeout=0.05),
        session=session,
    )
    result = asyncio.run(executor.aexecute(ToolCall("slow", "{}")))
    assert result.success is False
    assert result.message.startswith("Tool 'slow' did not finish within its timeout of 0.05s")
    assert cancelled == [True]
    assert session[Note].all() == ()


@pytest.mark.usefixtures("executor_path")
def test_a_handler_within_its_timeout_succeeds() -> None:
    def quick(params: None, *, context: ToolContext) -> ToolResult[None]:
        return ToolResult(message="quick")

    executor = executor_for(
        Tool[None, None](name="quick", description="Quick.", handler=quick, timeout=5)
    )
    assert executor.execute(ToolCall("quick", "{}")).message == "quick"


def test_a_deadline_shorter_than_the_timeout_stops_the_evaluation() -> None:
    async def slow(params: None, *, context: ToolContext) -> ToolResult[None]:
        await asyncio.sleep(5)
        return ToolResult(message="done")

    executor = executor_for(
        Tool[None, None](name="slow", description="Slow.", handler=slow, timeout=30),
        deadline=Deadline.after(0.05),
    )
    with pytest.raises(PromptEvaluationError, match="the deadline passed while tool 'slow' ran"):
        executor.execute(ToolCall("slow", "{}"))


def test_a_timeout_that_is_not_a_positive_number_is_refused() -> None:
    def quick(params: None, *, context: ToolContext) -> ToolResult[None]:
        return ToolResult(message="quick")

    with pytest.raises(PromptValidationError, match="timeout must be a positive number"):
        Tool[None, None](name="quick", description="Quick.", handler=quick, timeout=0)


# --- retries ----------------------------------------------------------------------


def flaky_tool(failures: int, retries: Retries | int | None, log: list[str]) -> Tool[None, None]:
    def flaky(params: None, *, context: ToolContext) -> ToolResult[None]:
        assert context.session is not None
        context.session.dispatch(Note(f"attempt {len(log) + 1}"))
        log.append("ran")
        if len(log) <= failures:
            raise ConnectionError(f"down {len(log)}")
        return ToolResult(message=f"ok after {len(log)}")

    return Tool[None, None](name="flaky", description="Flaky.", handler=flaky, retries=retries)


@pytest.mark.usefixtures("executor_path")
def test_a_retried_call_commits_only_its_last_attempt_in_one_record_listing_the_others() -> None:
    log: list[str] = []
    session = Session()
    executor = executor_for(
        flaky_tool(2, Retries(attempts=3, backoff=0.001, jitter=0), log), session=session
    )
    result = executor.execute(ToolCall("flaky", "{}", call_id="c1"))
    assert result.message == "ok after 3"
    assert session[Note].all() == (Note("attempt 3"),)
    (record,) = session[ToolInvoked].all()
    assert (record.success, record.rolled_back, record.attempts) == (True, False, 3)
    assert record.earlier_attempts == (
        "Tool 'flaky' attempt 1 of 3 failed: raised ConnectionError: down 1; rolled back, "
        "tried again in 0.001s",
        "Tool 'flaky' attempt 2 of 3 failed: raised ConnectionError: down 2; rolled back, "
        "tried again in 0.002s",
    )


@pytest.mark.usefixtures("executor_path")
def test_retries_exhausted_fail_with_the_last_error_rolled_back() -> None:
    log: list[str] = []
    session = Session()
    executor = executor_for(
        flaky_tool(5, Retries(attempts=2, backoff=0, jitter=0), log), session=session
    )
    result = executor.execute(ToolCall("flaky", "{}"))
    assert result.message == "Tool 'flaky' raised ConnectionError: down 2 (attempt 2, the last)"
    assert log == ["ran", "ran"]
    assert session[Note].all() == ()
    (record,) = session[ToolInvoked].all()
    assert (record.success, record.rolled_back, record.attempts) == (False, True, 2)
    assert record.result is result


def test_a_tool_without_retries_runs_once() -> None:
    log: list[str] = []
    executor = executor_for(flaky_tool(1, None, log))
    assert executor.execute(ToolCall("flaky", "{}")).success is False
    assert log == ["ran"]


@pytest.mark.usefixtures("executor_path")
def test_an_error_the_predicate_refuses_is_not_retried() -> None:
    log: list[str] = []
    retries = Retries(attempts=3, backoff=0, when=lambda error: isinstance(error, TimeoutError))
    executor = executor_for(flaky_tool(1, retries, log))
    assert executor.execute(ToolCall("flaky", "{}")).success is False
    assert log == ["ran"]


def test_no_retry_waits_past_the_deadline() -> None:
    log: list[str] = []
    executor = executor_for(
        flaky_tool(1, Retries(attempts=3, backoff=30, max_backoff=60, jitter=0), log),
        deadline=Deadline.after(10),
    )
    result = executor.execute(ToolCall("flaky", "{}"))
    assert result.message == "Tool 'flaky' raised ConnectionError: down 1"
    assert log == ["ran"]


@pytest.mark.usefixtures("executor_path")
def test_async_retries_run_each_attempt_in_turn() -> None:
    attempts: list[int] = []

    async def flaky(params: None, *, context: ToolContext) -> ToolResult[None]:
        attempts.append(len(attempts) + 1)
        if len(attempts) < 2:
            raise OSError("busy")
        return ToolResult(message="ok")

    executor = executor_for(
        Tool[None, None](name="flaky", description="Flaky.", handler=flaky, retries=2)
    )
    session = executor._session
    assert asyncio.run(executor.aexecute(ToolCall("flaky", "{}"))).message == "ok"
    assert attempts == [1, 2]
    (record,) = session[ToolInvoked].all()
    assert (record.success, record.attempts) == (True, 2)
    (earlier,) = record.earlier_attempts  # the wait has jitter: only its prefix is fixed
    assert earlier.startswith(
        "Tool 'flaky' attempt 1 of 2 failed: raised OSError: busy; rolled back, tried again in 0.1"
    )


@pytest.mark.usefixtures("executor_path")
@pytest.mark.usefixtures("executor_path")
def test_a_late_inline_attempt_is_rolled_back_and_retried_in_one_record() -> None:
    def slow_once(params: None, *, context: ToolContext) -> ToolResult[None]:
        assert context.session is not None
        attempt = len(context.session[Note].all()) + 1  # the first one's note is undone
        context.session.dispatch(Note(f"attempt {attempt}"))
        if not ran:
            ran.append(True)
            time.sleep(0.03)
        return ToolResult(message="in time")

    ran: list[bool] = []
    session = Session()
    executor = executor_for(
        Tool[None, None](
            name="slow",
            description="Slow.",
            handler=slow_once,
            timeout=0.02,
            retries=Retries(attempts=2, backoff=0, jitter=0),
        ),
        session=session,
    )
    assert executor.execute(ToolCall("slow", "{}")).message == "in time"
    assert session[Note].all() == (Note("attempt 1"),)
    (record,) = session[ToolInvoked].all()
    assert record.earlier_attempts == (
        "Tool 'slow' attempt 1 of 2 failed: timed out after 0.02s; rolled back, "
        "tried again in 0.000s",
    )


@pytest.mark.usefixtures("executor_path")
def test_a_call_that_ran_once_saves_no_attempts_and_reads_back_as_one_attempt() -> None:
    session = Session()
    log: list[str] = []
    executor = executor_for(flaky_tool(0, Retries(attempts=3), log), session=session)
    executor.execute(ToolCall("flaky", "{}", call_id="c1"))
    text = session.snapshot().to_json()
    assert '"rolled_back":false}' in text and "earlier_attempts" not in text
    (record,) = Snapshot.from_json(text).log[ToolInvoked]
    assert (record.attempts, record.earlier_attempts) == (1, ())


def test_a_retried_record_round_trips_its_earlier_attempts_through_json() -> None:
    session = Session()
    log: list[str] = []
    executor = executor_for(flaky_tool(1, Retries(attempts=2, backoff=0), log), session=session)
    executor.execute(ToolCall("flaky", "{}", call_id="c1"))
    text = session.snapshot().to_json()
    assert '"earlier_attempts":["Tool \'flaky\' attempt 1 of 2 failed: ' in text
    (record,) = Snapshot.from_json(text).log[ToolInvoked]
    assert record == session[ToolInvoked].latest()


def test_a_retried_call_is_one_of_an_evaluations_tool_results() -> None:
    log: list[str] = []
    tool_ = flaky_tool(1, Retries(attempts=2, backoff=0), log)
    template = PromptTemplate(
        ns="tests", key="retried", sections=[MarkdownSection(title="T", tools=[tool_])]
    )
    response = ScriptedAdapter([ToolCall("flaky", "{}", "c1"), "done"]).evaluate(
        Prompt(template), session=Session()
    )
    assert [(r.call_id, r.success, r.attempts) for r in response.tool_results] == [("c1", True, 2)]


def test_a_rollback_that_fails_between_attempts_stops_the_retries() -> None:
    class Broken(InMemoryFilesystem):
        def restore(self, snapshot: object) -> None:
            raise OSError("disk gone")

    log: list[str] = []
    executor = executor_for(flaky_tool(1, Retries(attempts=3, backoff=0), log), filesystem=Broken())
    with pytest.raises(PromptEvaluationError, match="could not all be rolled back"):
        executor.execute(ToolCall("flaky", "{}"))
    assert log == ["ran"]


def test_tool_retry_tells_the_model_its_message_and_is_never_retried() -> None:
    log: list[str] = []

    def picky(params: None, *, context: ToolContext) -> ToolResult[None]:
        assert context.session is not None
        context.session.dispatch(Note("x"))
        log.append("ran")
        raise ToolRetry("Give a date in YYYY-MM-DD form.")

    session = Session()
    executor = executor_for(
        Tool[None, None](name="picky", description="Picky.", handler=picky, retries=3),
        session=session,
    )
    result = executor.execute(ToolCall("picky", "{}"))
    assert (result.success, result.message) == (False, "Give a date in YYYY-MM-DD form.")
    assert log == ["ran"]
    assert session[Note].all() == ()


def test_retries_of_one_attempt_are_refused() -> None:
    with pytest.raises(PromptValidationError, match="must be 2 or more, got 1"):
        flaky_tool(0, 1, [])


def test_the_decorator_passes_the_controls_on() -> None:
    @tool(timeout=2.5, retries=4, max_output_chars=10, more_output="read from {shown}")
    def lookup(query: str, *, context: ToolContext) -> ToolResult[None]:
        """Look something up."""
        return ToolResult(message=query)

    assert (lookup.timeout, lookup.max_output_chars, lookup.more_output) == (
        2.5,
        10,
        "read from {shown}",
    )
    assert lookup.retries == Retries(attempts=4)


# --- output limits ----------------------------------------------------------------


def text_tool(body: str, **options: Any) -> Tool[None, Text]:
    def read(params: None, *, context: ToolContext) -> ToolResult[Text]:
        return ToolResult.ok(Text(body), message="read")

    return Tool[None, Text](name="read", description="Read.", handler=read, **options)


def test_a_long_value_is_cut_for_the_model_but_recorded_whole() -> None:
    session = Session()
    executor = executor_for(text_tool("a" * 50, max_output_chars=10), session=session)
    result = executor.execute(ToolCall("read", "{}"))
    cut = (
        "aaaaaaaaaa\n[cut: 10 of 50 characters shown, 40 left out. Ask for less (a narrower "
        "request) to see the rest.]"
    )
    assert result.render() == cut
    assert result.model_text() == "read\n\n" + cut
    assert result.value == Text("a" * 50)
    recorded = session[ToolInvoked].latest()
    assert recorded is not None
    assert recorded.rendered_output == cut
    assert recorded.result.value == Text("a" * 50)


def test_the_marker_says_how_to_page_when_the_tool_does() -> None:
    executor = executor_for(
        text_tool("0123456789", max_output_chars=4, more_output="Call read with offset={shown}.")
    )
    assert executor.execute(ToolCall("read", "{}")).render() == (
        "0123\n[cut: 4 of 10 characters shown, 6 left out. Call read with offset=4.]"
    )


def test_the_prompt_default_limits_tools_without_their_own() -> None:
    executor = executor_for(text_tool("x" * 30), max_output_chars=20)
    assert (
        executor.execute(ToolCall("read", "{}")).render().startswith("x" * 20 + "\n[cut: 20 of 30")
    )


def test_a_tool_limit_overrides_the_prompt_default() -> None:
    executor = executor_for(text_tool("x" * 30, max_output_chars=100), max_output_chars=5)
    assert executor.execute(ToolCall("read", "{}")).render() == "x" * 30


def test_a_value_within_the_limit_is_not_cut() -> None:
    executor = executor_for(text_tool("é😀" * 5, max_output_chars=10))
    assert executor.execute(ToolCall("read", "{}")).render() == "é😀" * 5


def test_a_cut_never_splits_a_multibyte_character() -> None:
    executor = executor_for(text_tool("é😀" * 10, max_output_chars=3))
    text = executor.execute(ToolCall("read", "{}")).render()
    assert text.startswith("é😀é\n[cut: 3 of 20 characters shown, 17 left out.")
    assert text.encode("utf-8").decode("utf-8") == text


def test_a_cut_never_splits_a_surrogate_pair() -> None:
    pair = "\ud83d\ude00"  # one emoji as UTF-16 halves, as some JSON decoders leave it
    assert cut_output("ab" + pair + "cd", 3) == (
        "ab\n[cut: 2 of 6 characters shown, 4 left out. Ask for less (a narrower request) "
        "to see the rest.]"
    )
    assert cut_output("ab" + pair + "cd", 4).startswith("ab" + pair + "\n[cut: 4 of 6")


def test_a_structured_value_is_cut_as_its_json_text() -> None:
    def sized(params: None, *, context: ToolContext) -> ToolResult[Size]:
        return ToolResult.ok(Size(123456))

    executor = executor_for(
        Tool[None, Size](name="sized", description="Sized.", handler=sized, max_output_chars=8)
    )
    assert (
        executor.execute(ToolCall("sized", "{}"))
        .render()
        .startswith('{"size":\n[cut: 8 of 15 characters shown')
    )


def test_a_limit_that_is_not_positive_is_refused() -> None:
    with pytest.raises(PromptValidationError, match="max_output_chars must be a positive"):
        text_tool("x", max_output_chars=0)
    with pytest.raises(PromptValidationError, match="max_output_chars must be a positive"):
        PromptTemplate(ns="a", key="b", max_output_chars=-1)
