"""Durable evaluations on DBOS: what a durable tool call costs.

A durable call against its floor, both on SQLite, in the same DBOS instance and
system database, each timed from inside its workflow over ``CALLS`` calls on a
session that starts empty (so both sessions end ``CALLS`` calls long):

- durable: from the model's reply naming ``CALLS`` calls (returned inside its
  request step) to the next request, in ``wink.evaluate``. It includes each call's
  ``wink.tool.call`` step (``executor.execute``, the change the call made encoded
  once, the outcome's checkpoint) and the session store's append of that change,
  plus, once for all the calls, the reply's checkpoint and the loop's parsing of
  the calls (a fraction of one call's cost, spread over ``CALLS``).
- floor: a plain DBOS step doing nothing but ``executor.execute(call)``, called
  ``CALLS`` times in a workflow (its executor's session records ``ToolInvoked`` as
  the durable one does). Aim: the durable call at most 1.3x.

The two run interleaved, ``ROUNDS`` times (which one goes first alternates), and
each figure is its best round, so that a burst of load on the machine (the system
database commits each step to disk) weighs on neither alone. The same call
without DBOS is printed for scale.

Recovery: an evaluation of ``RECOVERED_CALLS`` calls whose process died (``os._exit``)
at its last model request, after every call was stored, recovered by this process's
``DBOS.launch()``: the time from the recovering run's start (its adapter built) to
that request, next to the same span of the same evaluation run fresh here (its
floor: the calls executed and stored rather than replayed) and to loading the stored
session (``Session.open``). DBOS's wait before it picks up a recovered workflow (its
queue polling, about 1 s) is not counted.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from dbos import DBOS, DBOSConfig

from wink import MarkdownSection, Prompt, PromptTemplate, Tool, ToolContext, ToolResult
from wink.contrib.dbos import start_evaluation
from wink.runtime import Session, ToolCall, ToolExecutor
from wink.store import open_store
from wink.testing import FunctionAdapter, ModelInput, Reply, call

CALLS = 200
"""Tool calls in each timed evaluation (one model turn) and floor workflow."""
ROUNDS = 5
"""Interleaved rounds of the durable evaluation and the floor; each figure is its best."""
RECOVERED_CALLS = 100
"""Tool calls completed before the crash in the recovered evaluation."""
_MARKS: dict[str, float] = {}
"""When the running evaluation built its adapter (``start``) and sent its last request
(``answer``); in the timed one, when the model named the calls (``called``) and when
the next request came (``next``)."""


def _noop(params: None, *, context: ToolContext) -> ToolResult[None]:
    return ToolResult(message="ok")


_TEMPLATE = PromptTemplate(
    ns="bench",
    key="dbos",
    sections=[
        MarkdownSection(
            title="Tools",
            tools=[Tool[None, None](name="noop", description="Nothing.", handler=_noop)],
        )
    ],
)


def prompt() -> Prompt[None]:
    """The timed prompt: one tool that does nothing."""
    return Prompt(_TEMPLATE)


def _model(model_input: ModelInput) -> Reply:
    if model_input.turn == 1:
        calls = [call("noop", {}, f"c{index}") for index in range(CALLS)]
        _MARKS["called"] = time.perf_counter()
        return calls
    _MARKS["next"] = time.perf_counter()
    return "done"


def adapter() -> FunctionAdapter:
    """A model that calls ``noop`` CALLS times, then answers."""
    return FunctionAdapter(_model)


def _config(system_db: str) -> DBOSConfig:
    # A fixed version: DBOS recovers only the workflows of the version it runs.
    return {"name": "wink_bench", "application_version": "bench", "system_database_url": system_db}


def _recovery_model(model_input: ModelInput) -> Reply:
    if model_input.turn == 1:
        return [call("noop", {}, f"c{index}") for index in range(RECOVERED_CALLS)]
    _MARKS["answer"] = time.perf_counter()
    if os.environ.get("WINK_BENCH_CRASH"):
        os._exit(3)
    return "done"


def recovery_adapter() -> FunctionAdapter:
    """A model that calls ``noop`` RECOVERED_CALLS times, then answers (or, in the
    crashing process, exits)."""
    _MARKS.setdefault("start", time.perf_counter())
    return FunctionAdapter(_recovery_model)


def crash_run(argv: list[str]) -> None:
    """In a subprocess: run the recovery evaluation until it exits at its last request."""
    system_db, store, calls = argv
    global RECOVERED_CALLS
    RECOVERED_CALLS = int(calls)
    DBOS(config=_config(system_db))
    DBOS.launch()
    os.environ["WINK_BENCH_CRASH"] = "1"
    start_evaluation(
        store, "recovered", prompt=f"{__name__}:prompt", adapter=f"{__name__}:recovery_adapter"
    ).result()


def _crashed_evaluation(system_db: str, store: str) -> None:
    code = "import sys; from benchmarks import bench_dbos; bench_dbos.crash_run(sys.argv[1:])"
    crashed = subprocess.run(
        [sys.executable, "-c", code, system_db, store, str(RECOVERED_CALLS)],
        cwd=Path(__file__).resolve().parent.parent,
        env={**os.environ, "WINK_BENCH_CRASH": ""},
        capture_output=True,
        text=True,
        timeout=120,
    )
    if crashed.returncode != 3:
        raise RuntimeError(
            f"the crashing evaluation exited {crashed.returncode}: {crashed.stderr[-2000:]}"
        )


def _span_ms() -> float:
    return (_MARKS.pop("answer") - _MARKS.pop("start")) * 1e3


@DBOS.step(name="bench.execute")
def _execute_step(executor: ToolExecutor, tool_call: ToolCall) -> Any:
    return executor.execute(tool_call)


@DBOS.workflow(name="bench.floor")
def _floor_workflow(calls: int) -> float:
    """Seconds that ``calls`` steps calling ``execute`` took, on a session starting empty."""
    executor = ToolExecutor(prompt=prompt(), session=Session())
    tool_calls = [ToolCall("noop", "{}", f"c{index}") for index in range(calls)]
    started = time.perf_counter()
    for tool_call in tool_calls:
        _execute_step(executor, tool_call)
    return time.perf_counter() - started


def _durable_seconds(store: str, session_id: str) -> float:
    """Seconds that the ``CALLS`` durable calls of a new evaluation of ``session_id`` took."""
    start_evaluation(
        store, session_id, prompt=f"{__name__}:prompt", adapter=f"{__name__}:adapter"
    ).result()
    return _MARKS.pop("next") - _MARKS.pop("called")


def _floor_seconds() -> float:
    """Seconds that the floor workflow's ``CALLS`` steps took."""
    seconds: float = DBOS.start_workflow(_floor_workflow, CALLS).get_result()
    return seconds


def _seconds(function: Any) -> float:
    started = time.perf_counter()
    function()
    return time.perf_counter() - started


def main() -> None:
    """Print the durable call's cost next to its floor, and the recovery's next to its."""
    folder = Path(tempfile.mkdtemp())
    system_db = f"sqlite:///{folder / 'dbos.db'}"
    store = f"sqlite:///{folder / 'sessions.db'}"
    _crashed_evaluation(system_db, store)
    _MARKS.clear()
    DBOS(config=_config(system_db))
    DBOS.launch()  # recovers the crashed evaluation
    try:
        module = __name__
        recovered: Any = DBOS.retrieve_workflow("wink:recovered:1")
        recovered.get_result(polling_interval_sec=0.01)
        recovery_ms = _span_ms()

        def durable(session_id: str, model: str) -> None:
            start_evaluation(
                store, session_id, prompt=f"{module}:prompt", adapter=f"{module}:{model}"
            ).result()

        durable("fresh", "recovery_adapter")
        fresh_ms = _span_ms()
        opened = open_store(store)
        try:
            open_ms = _seconds(lambda: Session.open(opened, "recovered")) * 1e3
        finally:
            opened.close()
        durable_runs: list[float] = []
        floor_runs: list[float] = []
        for index in range(ROUNDS):
            if index % 2:
                floor_runs.append(_floor_seconds())
                durable_runs.append(_durable_seconds(store, f"calls-{index}"))
            else:
                durable_runs.append(_durable_seconds(store, f"calls-{index}"))
                floor_runs.append(_floor_seconds())
        durable_us = min(durable_runs) / CALLS * 1e6
        floor_us = min(floor_runs) / CALLS * 1e6
        executor = ToolExecutor(prompt=prompt(), session=Session())
        plain_us = _seconds(
            lambda: [executor.execute(ToolCall("noop", "{}", f"c{i}")) for i in range(CALLS)]
        )
        plain_us = plain_us / CALLS * 1e6
        print(f"durable tool call          {durable_us:10.1f} us/call")
        print(
            f"floor: DBOS step + execute {floor_us:10.1f} us/call  ({durable_us / floor_us:.2f}x)"
        )
        print(
            f"plain execute              {plain_us:10.1f} us/call  ({durable_us / plain_us:.0f}x)"
        )
        print(f"recovery of {RECOVERED_CALLS} done calls   {recovery_ms:10.1f} ms")
        print(
            f"floor: the same run fresh  {fresh_ms:10.1f} ms       ({recovery_ms / fresh_ms:.2f}x)"
        )
        print(f"Session.open of its session{open_ms:10.1f} ms")
    finally:
        DBOS.destroy()


if __name__ == "__main__":
    main()
