"""The calls the store tests and ``family_store`` run, in this process or in others.

One tool, ``add``: it dispatches an ``Added`` event (a ``STATE`` slice) and returns the
running ``Total`` (which joins its own slice), so the stored state depends on the
order the calls landed in. Workers run in separate processes (``multiprocessing``
or a subprocess killed at random); everything they import is here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from wink import MarkdownSection, Prompt, PromptTemplate, Tool, ToolContext, ToolResult
from wink.runtime import Session, ToolCall, ToolExecutor, ToolInvoked
from wink.store import SessionStore, open_store

__all__ = [
    "AddParams",
    "Added",
    "Total",
    "add_call",
    "append_worker",
    "executor_for",
    "landed_calls",
    "replayed",
    "run_until_killed",
    "KILLED_WORKER",
]


@dataclass(frozen=True)
class AddParams:
    """Which worker adds, and how much."""

    worker: int
    n: int


@dataclass(frozen=True)
class Added:
    """What one call added (dispatched by the handler)."""

    worker: int
    n: int


@dataclass(frozen=True)
class Total:
    """The running total after a call (the call's result value)."""

    value: int

    def render(self) -> str:
        """The total as the model sees it."""
        return str(self.value)


def _add(params: AddParams, *, context: ToolContext) -> ToolResult[Total]:
    session = context.session
    assert session is not None
    latest = session[Total].latest()
    session.dispatch(Added(params.worker, params.n))
    return ToolResult(message="added", value=Total((latest.value if latest else 0) + params.n))


_TOOL = Tool[AddParams, Total](name="add", description="Add n to the total.", handler=_add)
_TEMPLATE = PromptTemplate(
    ns="stress", key="store", sections=[MarkdownSection(title="Tools", tools=[_TOOL])]
)


def executor_for(session: Session) -> ToolExecutor:
    """An executor running ``add`` on ``session``."""
    return ToolExecutor(prompt=Prompt(_TEMPLATE), session=session)


def add_call(worker: int, n: int) -> ToolCall:
    """The call of ``add`` for ``worker`` and ``n`` (its call id names both)."""
    return ToolCall("add", json.dumps({"worker": worker, "n": n}), call_id=f"{worker}-{n}")


def append_worker(
    url: str, session_id: str, worker: int, count: int, options: dict[str, Any] | None = None
) -> list[bool]:
    """Run ``count`` calls on the stored session; for each, whether it landed (``False``:
    refused with ``VersionConflict``, after which the session is opened again).
    ``options``: for ``open_store``."""
    store = open_store(url, **(options or {}))
    try:
        session = Session.open(store, session_id)
        executor = executor_for(session)
        landed: list[bool] = []
        for n in range(count):
            result = executor.execute(add_call(worker, n))
            if result.success:
                landed.append(True)
                continue
            if "VersionConflict" not in result.message:
                raise AssertionError(f"call {worker}-{n} failed: {result.message}")
            landed.append(False)
            session = Session.open(store, session_id)
            executor = executor_for(session)
        return landed
    finally:
        store.close()


def landed_calls(session: Session) -> list[tuple[int, int]]:
    """``(worker, n)`` of each successful call the session holds, in order."""
    calls: list[tuple[int, int]] = []
    for event in session[ToolInvoked].all():
        if event.success:
            params = event.params  # loaded from a store: JSON data (the field is ``Any``)
            if isinstance(params, AddParams):
                calls.append((params.worker, params.n))
            else:
                calls.append((params["worker"], params["n"]))
    return calls


def replayed(calls: list[tuple[int, int]]) -> Session:
    """A session in memory that ran ``calls`` one after the other."""
    session = Session()
    executor = executor_for(session)
    for worker, n in calls:
        result = executor.execute(add_call(worker, n))
        assert result.success, result.message
    return session


def run_until_killed(url: str, session_id: str, schema: str = "") -> None:
    """Append calls until killed, printing the number of each once it has landed
    (``schema``: a PostgreSQL store's)."""
    store: SessionStore = open_store(url, **({"schema": schema} if schema else {}))
    session = Session.open(store, session_id)
    executor = executor_for(session)
    start = len(landed_calls(session))
    print("ready", flush=True)
    for n in range(start, 10**9):
        result = executor.execute(add_call(0, n))
        if not result.success:
            print(f"failed {result.message}", flush=True)
            return
        print(n, flush=True)


KILLED_WORKER = (
    "import sys; from stress.store_workload import run_until_killed; "
    "run_until_killed(*sys.argv[1:])"
)
"""The ``python -c`` program of a worker that a test kills (``run_until_killed``)."""
