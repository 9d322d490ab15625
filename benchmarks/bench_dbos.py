"""Durable evaluations on DBOS: what a durable tool call costs.

A durable call (``wink.tool.call``: the executor, the change it made, its checkpoint,
the session's next stored version) against its floor measured in the same run, a
plain DBOS step in a workflow doing nothing but ``executor.execute(call)`` (aim: at
most 1.3x), and against the same call without DBOS (printed). Both on SQLite.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from dbos import DBOS

from wink import MarkdownSection, Prompt, PromptTemplate, Tool, ToolContext, ToolResult
from wink.contrib.dbos import start_evaluation
from wink.runtime import Session, ToolCall, ToolExecutor
from wink.testing import FunctionAdapter, ModelInput, Reply, call

CALLS = 200
"""Tool calls in the timed evaluation (one model turn)."""


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
        return [call("noop", {}, f"c{index}") for index in range(CALLS)]
    return "done"


def adapter() -> FunctionAdapter:
    """A model that calls ``noop`` CALLS times, then answers."""
    return FunctionAdapter(_model)


def _empty(model_input: ModelInput) -> Reply:
    return "done"


def empty_adapter() -> FunctionAdapter:
    """A model that answers at once: the evaluation's fixed cost."""
    return FunctionAdapter(_empty)


@DBOS.step(name="bench.execute")
def _execute_step(executor: ToolExecutor, tool_call: ToolCall) -> Any:
    return executor.execute(tool_call)


@DBOS.workflow(name="bench.floor")
def _floor_workflow(calls: int) -> int:
    executor = ToolExecutor(prompt=prompt(), session=Session())
    for index in range(calls):
        _execute_step(executor, ToolCall("noop", "{}", f"c{index}"))
    return calls


def _seconds(function: Any) -> float:
    started = time.perf_counter()
    function()
    return time.perf_counter() - started


def main() -> None:
    """Print the durable call's cost next to its floor."""
    folder = Path(tempfile.mkdtemp())
    DBOS(config={"name": "wink_bench", "system_database_url": f"sqlite:///{folder / 'dbos.db'}"})
    DBOS.launch()
    try:
        store = f"sqlite:///{folder / 'sessions.db'}"
        module = __name__

        def durable(session_id: str, model: str) -> None:
            start_evaluation(
                store, session_id, prompt=f"{module}:prompt", adapter=f"{module}:{model}"
            ).result()

        fixed = _seconds(lambda: durable("empty", "empty_adapter"))
        whole = _seconds(lambda: durable("calls", "adapter"))
        durable_us = max(whole - fixed, 0.0) / CALLS * 1e6
        floor_us = _seconds(lambda: DBOS.start_workflow(_floor_workflow, CALLS).get_result())
        floor_us = floor_us / CALLS * 1e6
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
    finally:
        DBOS.destroy()


if __name__ == "__main__":
    main()
