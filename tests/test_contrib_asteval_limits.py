"""The sandbox holds its limits: time, memory, kept symbols, output, values it cannot show,
and its worker processes never outlive the section."""

from __future__ import annotations

import gc
import json
import os
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from wink import Prompt, PromptTemplate, Session, ToolResult
from wink.contrib.asteval import AstevalSection, AstevalSymbols, Evaluation, KeptSymbol
from wink.runtime import ToolCall, ToolExecutor

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")


def sandbox_workers() -> list[int]:
    """Process ids of this process's live sandbox workers."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue  # ended while we looked
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        if parent == os.getpid() and b"_sandbox_worker" in command:
            found.append(int(entry.name))
    return found


@pytest.fixture(autouse=True)
def no_worker_is_left_over() -> Iterator[None]:
    yield
    gc.collect()  # a section no longer referenced ends its workers
    assert sandbox_workers() == []


def executor_for(session: Session, section: AstevalSection) -> ToolExecutor:
    template = PromptTemplate(ns="tests", key="sandbox", sections=[section])
    return ToolExecutor(prompt=Prompt(template), session=session)


def run(executor: ToolExecutor, code: str) -> ToolResult[Any]:
    return executor.execute(ToolCall("evaluate_python", json.dumps({"code": code})))


def timed(call: Callable[[], ToolResult[Any]]) -> tuple[ToolResult[Any], float]:
    start = time.monotonic()
    result = call()
    return result, time.monotonic() - start


def traced_peak(call: Callable[[], ToolResult[Any]]) -> tuple[ToolResult[Any], int]:
    """The result and the peak of memory this process allocated during the call."""
    tracemalloc.start()
    try:
        result = call()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return result, peak


KILLED = (
    "evaluate_python stopped the code after 0.5 seconds, its time limit (a built-in call was "
    "still running, so its output is lost); make it do less work per call."
)


def test_a_long_builtin_call_is_stopped_near_the_limit_without_freezing_other_threads() -> None:
    section = AstevalSection(timeout_seconds=0.5)
    executor = executor_for(Session(), section)
    gaps: list[float] = []
    stop = threading.Event()

    def tick() -> None:
        last = time.monotonic()
        while not stop.is_set():
            time.sleep(0.01)
            now = time.monotonic()
            gaps.append(now - last)
            last = now

    ticker = threading.Thread(target=tick)
    ticker.start()
    try:
        result, seconds = timed(lambda: run(executor, "factorial(600000) > 0"))
    finally:
        stop.set()
        ticker.join()
    assert (result.success, result.message) == (False, KILLED)
    assert seconds < 3.0
    assert max(gaps) < 0.4
    section.close()


def test_a_huge_power_is_stopped_near_the_limit() -> None:
    section = AstevalSection(timeout_seconds=0.5)
    result, seconds = timed(lambda: run(executor_for(Session(), section), "(10**10000)**10000"))
    assert (result.success, result.message) == (False, KILLED)
    assert seconds < 3.0
    section.close()


def test_a_killed_worker_is_replaced_and_the_session_keeps_its_symbols() -> None:
    section = AstevalSection(timeout_seconds=0.5)
    session = Session()
    executor = executor_for(session, section)
    assert run(executor, "kept = [1, 2]").success
    assert run(executor, "kept.append(3)\nfactorial(600000) > 0").message == KILLED
    assert run(executor, "kept").value == Evaluation("[1, 2]", "", ())
    section.close()


def test_calls_from_other_threads_do_not_wait_for_a_long_call() -> None:
    section = AstevalSection(timeout_seconds=1)
    slow = threading.Thread(target=run, args=(executor_for(Session(), section), "factorial(10**6)"))
    slow.start()
    time.sleep(0.2)
    try:
        quick, seconds = timed(lambda: run(executor_for(Session(), section), "1 + 1"))
    finally:
        slow.join()
    assert quick.value == Evaluation("2", "", ())
    assert seconds < 1.5
    section.close()


def test_keeping_a_name_too_big_is_refused_naming_it_within_the_limits() -> None:
    section = AstevalSection(timeout_seconds=1)
    session = Session()
    executor = executor_for(session, section)
    (result, peak) = traced_peak(lambda: run(executor, "x = list(range(10**6))"))
    assert (result.success, result.message) == (
        False,
        "evaluate_python refused to keep 'x': written out it takes more than 1000000 "
        "characters, and all kept names together may take 1000000; `del x` or keep less.",
    )
    assert peak < 20 * 2**20
    assert session[AstevalSymbols].all() == ()
    section.close()


def test_a_name_that_repeats_a_big_list_is_refused_quickly() -> None:
    section = AstevalSection(timeout_seconds=1)
    executor = executor_for(Session(), section)
    small = len(repr(list(range(10**4))))
    result, seconds = timed(lambda: run(executor, "x = list(range(10**4))\ny = [x] * 10**6"))
    assert result.message == (
        f"evaluate_python refused to keep 'y': written out it takes more than {10**6 - small} "
        f"characters, and all kept names together may take 1000000 ({small} are taken by the "
        "names before it); `del y` or keep less."
    )
    assert seconds < 3.0
    section.close()


def test_kept_symbols_are_defined_before_the_time_limit_starts() -> None:
    session = Session()
    roomy, tight = AstevalSection(timeout_seconds=30), AstevalSection(timeout_seconds=0.02)
    assert run(executor_for(session, roomy), "a = list(range(100_000))").success
    executor = executor_for(session, tight)
    assert run(executor, "1 + 1").value == Evaluation("2", "", ())
    assert run(executor, "del a").value == Evaluation(None, "", ())
    assert session[AstevalSymbols].latest() == AstevalSymbols(())
    roomy.close()
    tight.close()


def test_a_print_flood_keeps_only_what_is_returned() -> None:
    section = AstevalSection(timeout_seconds=10)
    executor = executor_for(Session(), section)
    code = 'for i in range(600):\n    print("x" * 100_000)'
    result, peak = traced_peak(lambda: run(executor, code))
    left_out = 600 * 100_001 - 4_000
    assert result.value == Evaluation(
        None, "x" * 4_000 + f"\n[output cut: {left_out} more characters]", ("i",)
    )
    assert peak < 20 * 2**20
    section.close()


@pytest.mark.parametrize(
    ("code", "reason"),
    [
        (
            "10**5000",
            "ValueError: Exceeds the limit (4300 digits) for integer string conversion; "
            "use sys.set_int_max_str_digits() to increase the limit",
        ),
        (
            "nested = []\nfor i in range(5_000):\n    nested = [nested]\ndel i\n[nested]",
            "RecursionError: maximum recursion depth exceeded while getting the repr of an object",
        ),
    ],
)
def test_a_value_that_cannot_be_shown_is_a_failure_saying_so(code: str, reason: str) -> None:
    section = AstevalSection()
    result = run(executor_for(Session(), section), code)
    assert (result.success, result.message) == (
        False,
        f"evaluate_python failed: the value cannot be shown: {reason}; show a part of it instead",
    )
    section.close()


def test_a_name_nested_too_deep_is_refused_naming_it() -> None:
    section = AstevalSection()
    code = "nested = []\nfor i in range(101):\n    nested = [nested]"
    result = run(executor_for(Session(), section), code)
    assert result.message == (
        "evaluate_python refused to keep 'nested': it is nested more than 100 levels deep; "
        "`del nested` or flatten it."
    )
    section.close()


def test_an_int_past_the_digit_limit_is_kept_in_hex() -> None:
    section = AstevalSection()
    session = Session()
    executor = executor_for(session, section)
    assert run(executor, "big = 10**5000").value == Evaluation(None, "", ("big",))
    assert session[AstevalSymbols].latest() == AstevalSymbols(
        (KeptSymbol("big", "value", hex(10**5000)),)
    )
    assert run(executor, "big == 10**5000, big % 7").value == Evaluation(
        f"(True, {10**5000 % 7})", "", ()
    )
    section.close()


def test_the_worker_runs_under_os_limits() -> None:
    section = AstevalSection(max_memory_bytes=300 * 2**20)
    assert run(executor_for(Session(), section), "1").success
    (pid,) = section._pool.pids()
    limits = {
        line[:26].strip(): line[26:].split()[0]
        for line in Path(f"/proc/{pid}/limits").read_text().splitlines()[1:]
    }
    assert limits["Max address space"] == str(300 * 2**20)
    assert limits["Max file size"] == "0"
    assert limits["Max processes"] == "0"
    assert limits["Max core file size"] == "0"
    assert int(limits["Max open files"]) <= 8
    section.close()


def test_memory_past_the_limit_fails_the_call_and_the_next_call_works() -> None:
    section = AstevalSection(max_memory_bytes=200 * 2**20, timeout_seconds=5)
    executor = executor_for(Session(), section)
    result = run(executor, "x = [0] * (10**8)")
    assert (result.success, result.message) == (
        False,
        "evaluate_python failed: MemoryError (in: x = [0] * (10**8))",
    )
    assert run(executor, "1 + 1").value == Evaluation("2", "", ())
    section.close()


def test_closing_the_section_ends_its_workers_and_later_calls_fail() -> None:
    section = AstevalSection()
    executor = executor_for(Session(), section)
    assert run(executor, "1").success
    assert len(sandbox_workers()) == 1
    section.close()
    assert sandbox_workers() == []
    assert run(executor, "1").message == (
        "evaluate_python is not available: its sandbox was closed."
    )


def test_a_section_that_is_collected_ends_its_workers() -> None:
    def use_a_sandbox() -> list[int]:
        section = AstevalSection()
        assert run(executor_for(Session(), section), "1").success
        return section._pool.pids()

    started = use_a_sandbox()
    assert len(started) == 1
    gc.collect()
    assert sandbox_workers() == []


def test_a_worker_exits_when_its_input_closes() -> None:
    section = AstevalSection()
    assert run(executor_for(Session(), section), "1").success
    (worker,) = section._pool.idle
    assert worker.process.stdin is not None
    worker.process.stdin.close()
    assert worker.process.wait(timeout=5) == 0
    section.close()


def test_printed_text_without_a_utf8_form_comes_back_replaced() -> None:
    section = AstevalSection()
    executor = executor_for(Session(), section)
    assert run(executor, 'print("a" + chr(0xD800) + "b")').value == Evaluation(None, "a?b\n", ())
    section.close()
