"""The Python sandbox under denial-of-service programs: it holds its limits.

Each input is one hostile program (a huge int, a factorial, a big or deeply nested
list, a print flood, deep recursion, a kept name that bloats, a memory grab) run by
``evaluate_python`` with a small time limit on a session that already keeps a few
names, followed by ``1 + 1`` and ``del`` of a kept name. Counted:

- ``escapes``: the hostile call took longer than its limit plus 2 seconds, or this
  process's traced memory grew by more than 16 MiB during it: the limit did not hold
  where the caller lives;
- ``uncaught``: an exception out of ``execute``;
- ``lost_events``: the ``1 + 1`` or the ``del`` after a hostile call failed, or a call
  left no ``ToolInvoked``;
- ``state_leaks``: a failed hostile call changed the kept symbols.
"""

from __future__ import annotations

import json
import random
import time
import tracemalloc
from typing import Any

from stress.report import FamilyReport
from wink import Prompt, PromptTemplate, Session, ToolInvoked, ToolResult
from wink.contrib.asteval import AstevalSection, AstevalSymbols
from wink.runtime import ToolCall, ToolExecutor

QUICK_INPUTS = 8

TIMEOUT_SECONDS = 0.3
MARGIN_SECONDS = 2.0
MEMORY_BOUND = 16 * 2**20

HOSTILE = (
    "(10**10000)**{n}",
    "factorial({n}00000) > 0",
    "x = list(range(10**6))",
    "x = list(range(10**4))\ny = [x] * {n}000",
    "nested = []\nfor i in range(200):\n    nested = [nested]",
    'for i in range(10**6):\n    print("flood" * 1000)',
    "def down(n):\n    return down(n + 1)\ndown(0)",
    "10**5000",
    "big = [0] * (10**{n})",
    "while True:\n    pass",
    "s = 'a' * 200000\nt = [s] * 100",
)


def _call(executor: ToolExecutor, code: str) -> ToolResult[Any]:
    return executor.execute(ToolCall("evaluate_python", json.dumps({"code": code})))


def run(scale: float) -> FamilyReport:
    """Run about ``scale`` times ``QUICK_INPUTS`` hostile programs."""
    report = FamilyReport("sandbox")
    chooser = random.Random(20_240_611)
    section = AstevalSection(timeout_seconds=TIMEOUT_SECONDS, max_memory_bytes=256 * 2**20)
    template = PromptTemplate(ns="stress", key="sandbox", sections=[section])
    try:
        for _ in range(max(1, round(QUICK_INPUTS * scale))):
            session = Session()
            executor = ToolExecutor(prompt=Prompt(template), session=session)
            _call(executor, "kept = [1, 2, 3]\nname = 'ada'")
            program = chooser.choice(HOSTILE).format(n=chooser.randint(2, 9))
            with report.measure():
                _one(report, executor, session, program)
    finally:
        section.close()
    return report


def _one(report: FamilyReport, executor: ToolExecutor, session: Session, program: str) -> None:
    before = session[AstevalSymbols].latest()
    tracemalloc.start()
    start = time.monotonic()
    try:
        result = _call(executor, program)
    except Exception as error:
        report.note("uncaught", f"{program!r}: {type(error).__name__}: {error}")
        return
    finally:
        seconds = time.monotonic() - start
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    if seconds > TIMEOUT_SECONDS + MARGIN_SECONDS:
        report.note("escapes", f"{program!r} took {seconds:.1f} s")
    if peak > MEMORY_BOUND:
        report.note("escapes", f"{program!r} grew this process by {peak / 2**20:.0f} MiB")
    if not result.success and session[AstevalSymbols].latest() != before:
        report.note("state_leaks", f"{program!r} failed but changed the kept symbols")
    try:
        after = _call(executor, "1 + 1")
        deleted = _call(executor, "del kept")
    except Exception as error:
        report.note("uncaught", f"after {program!r}: {type(error).__name__}: {error}")
        return
    if not after.success or not deleted.success:
        report.note("lost_events", f"after {program!r}: {after.message} / {deleted.message}")
    if len(session[ToolInvoked]) != 4:
        report.note("lost_events", f"{program!r}: {len(session[ToolInvoked])} ToolInvoked, not 4")
