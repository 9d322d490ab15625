"""The durable evaluation the DBOS tests, ``family_dbos`` and ``bench_dbos`` run, in
this process or in a subprocess that may crash on purpose.

The model is a function of the request's turn (so a recovering process answers as the
crashed one did): turns 1 to ``TURNS`` each call ``record`` twice, then it answers
"done". ``record`` appends its idempotency key to ``calls.txt`` and dispatches a
``Noted`` event; the model appends each request (its turn and workflow id) to
``requests.txt``. ``WINK_DBOS_CRASH`` makes the process exit (``os._exit``) at one
point:

- ``handler:K``: inside the K-th handler run, after its side effect, before its step
  is recorded;
- ``model:T``: after counting request T, before its reply is recorded;
- ``append:K``: the K-th session append about to start (the step before it recorded,
  the session's version not stored);
- ``appended:K``: the K-th session append committed, the workflow not yet gone on.

``python -m stress.dbos_agent SYSTEM_DB STORE_URL DIRECTORY MODE [ARGS]``: ``start``
or ``astart`` runs the evaluation (blocking or async workflow) and prints the
response's text; ``recover`` launches DBOS, which recovers it, and prints the text;
``worker EXECUTOR_ID COUNT`` enqueues evaluations ``agent-1`` to ``agent-COUNT`` on the
queue ``evaluations`` (a second enqueue of one finds the first), works that queue as
executor ``EXECUTOR_ID`` until all are done, and prints ``finished COUNT``.
"""

from __future__ import annotations

import asyncio
import os
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wink import MarkdownSection, Prompt, PromptTemplate, Tool, ToolContext, ToolResult
from wink.runtime import Session
from wink.store import open_store
from wink.testing import FunctionAdapter, ModelInput, Reply, call

__all__ = [
    "SESSION_ID",
    "TURNS",
    "Noted",
    "RecordParams",
    "adapter",
    "aprompt",
    "main",
    "normalized_session",
    "prompt",
]

TURNS = 4
"""Model turns with tool calls (two each) before the answer."""
SESSION_ID = "agent-1"


@dataclass(frozen=True)
class RecordParams:
    """What to record."""

    item: str


@dataclass(frozen=True)
class Noted:
    """One recorded item, as the session keeps it."""

    item: str

    def render(self) -> str:
        """The item as the model sees it."""
        return self.item


def _directory() -> Path:
    return Path(os.environ["WINK_DBOS_DIR"])


def _crash_point(kind: str, count: int) -> None:
    if os.environ.get("WINK_DBOS_CRASH") == f"{kind}:{count}":
        sys.stdout.flush()
        os._exit(3)


def _lines(name: str) -> int:
    path = _directory() / name
    return len(path.read_text().splitlines()) if path.exists() else 0


def _append(name: str, line: str) -> int:
    with open(_directory() / name, "a") as file:
        file.write(line + "\n")
    return _lines(name)


def _record(params: RecordParams, *, context: ToolContext) -> ToolResult[Noted]:
    session = context.session
    assert session is not None
    runs = _append("calls.txt", f"{context.idempotency_key} {params.item}")
    _crash_point("handler", runs)
    session.dispatch(Noted(params.item))
    return ToolResult(message="recorded", value=Noted(params.item))


async def _arecord(params: RecordParams, *, context: ToolContext) -> ToolResult[Noted]:
    await asyncio.sleep(0)
    return _record(params, context=context)


_TEMPLATE = PromptTemplate(
    ns="stress",
    key="dbos-agent",
    sections=[
        MarkdownSection(
            title="Task",
            template="Record each item asked for.",
            tools=[
                Tool[RecordParams, Noted](
                    name="record", description="Record an item.", handler=_record
                )
            ],
        )
    ],
)
_ATEMPLATE = PromptTemplate(
    ns="stress",
    key="dbos-agent-async",
    sections=[
        MarkdownSection(
            title="Task",
            template="Record each item asked for.",
            tools=[
                Tool[RecordParams, Noted](
                    name="record", description="Record an item.", handler=_arecord
                )
            ],
        )
    ],
)


def prompt() -> Prompt[None]:
    """The evaluated prompt (a blocking tool)."""
    return Prompt(_TEMPLATE)


def aprompt() -> Prompt[None]:
    """The same prompt with an async tool."""
    return Prompt(_ATEMPLATE)


def _model(model_input: ModelInput) -> Reply:
    from dbos import DBOS

    turn = model_input.turn
    requests = _append("requests.txt", f"{turn} {DBOS.workflow_id}")
    _crash_point("model", requests)
    if turn > TURNS:
        return "done"
    return [call("record", {"item": f"t{turn}c{index}"}, f"c{turn}.{index}") for index in (1, 2)]


def adapter() -> FunctionAdapter:
    """The scripted model."""
    return FunctionAdapter(_model)


_MODULE = "stress.dbos_agent"  # not ``__name__``: run as a script, that is ``__main__``
_TIME = re.compile(r'"\d{4}-\d\d-\d\dT[^"]*"')


def normalized_session(store_url: str, session_id: str = SESSION_ID) -> str:
    """The stored session's JSON with every timestamp blanked: equal for equal runs."""
    store = open_store(store_url)
    try:
        session = Session.open(store, session_id)
        return _TIME.sub('"T"', session.snapshot().to_json())
    finally:
        store.close()


async def _astart(store_url: str) -> str | None:
    from wink.contrib.dbos import astart_evaluation

    # Awaited in the loop that started it: the async workflow runs on this loop.
    handle = await astart_evaluation(
        store_url, SESSION_ID, prompt=f"{_MODULE}:aprompt", adapter=f"{_MODULE}:adapter"
    )
    return (await handle.aresult()).text


def _crash_around_appends(point: str) -> None:
    """Make the store class exit the process before or after its K-th append.

    The workflow opens its own store from the URL, so the fault is injected in the
    class: the harness has no other way in between a step's checkpoint and the append.
    """
    kind, _, count = point.partition(":")
    if kind not in ("append", "appended"):
        return
    from wink.store import PostgresStore, SqliteStore

    appends = [0]
    for store_class in (SqliteStore, PostgresStore):
        original = store_class.append

        def append(self: Any, *args: Any, _original: Any = original, **kwargs: Any) -> None:
            appends[0] += 1
            if kind == "append" and appends[0] == int(count):
                os._exit(3)
            _original(self, *args, **kwargs)
            if kind == "appended" and appends[0] == int(count):
                os._exit(3)

        # setattr: mypy refuses an assignment to a method.
        setattr(store_class, "append", append)  # noqa: B010


def _work(store_url: str, executor: str, count: int) -> None:
    from dbos import DBOS

    from wink.contrib.dbos import start_evaluation, workflow_id_of

    DBOS.register_queue("evaluations", worker_concurrency=2, polling_interval_sec=0.05)
    for number in range(1, count + 1):
        start_evaluation(
            store_url,
            f"agent-{number}",
            prompt=f"{_MODULE}:prompt",
            adapter=f"{_MODULE}:adapter",
            queue="evaluations",
        )
    waiting = [workflow_id_of(f"agent-{number}", "1") for number in range(1, count + 1)]
    deadline = time.monotonic() + 90
    while waiting and time.monotonic() < deadline:
        status = DBOS.get_workflow_status(waiting[0])
        if status is not None and status.status == "SUCCESS":
            waiting.pop(0)
        else:
            time.sleep(0.05)
    print(f"finished {count - len(waiting)}", flush=True)


def main(argv: list[str]) -> None:
    """Run, recover or work on evaluations (see the module docstring)."""
    from dbos import DBOS, WorkflowHandle

    from wink.adapters.response import PromptResponse
    from wink.contrib.dbos import lookup_evaluation, start_evaluation

    system_db, store_url, directory, mode, *rest = argv
    os.environ["WINK_DBOS_DIR"] = directory
    _crash_around_appends(os.environ.get("WINK_DBOS_CRASH", ""))
    config: dict[str, object] = {"name": "wink_dbos_agent", "system_database_url": system_db}
    schema = os.environ.get("WINK_DBOS_SCHEMA")
    if schema:
        config["dbos_system_schema"] = schema
    if mode == "worker":
        # Each worker its own executor id: DBOS recovers a restarted worker's pending
        # workflows by it, and with one shared id it would take the live one's too.
        config["executor_id"] = rest[0]
    DBOS(config=config)  # type: ignore[arg-type]  # a DBOSConfig TypedDict
    DBOS.launch()
    if mode == "worker":
        _work(store_url, rest[0], int(rest[1]))
        return
    if mode == "astart":
        print(asyncio.run(_astart(store_url)), flush=True)
        return
    if mode == "start":
        handle = start_evaluation(
            store_url, SESSION_ID, prompt=f"{_MODULE}:prompt", adapter=f"{_MODULE}:adapter"
        )
        print(handle.result().text, flush=True)
        return
    found = lookup_evaluation(SESSION_ID)
    assert found is not None, "no evaluation to recover"
    # Polled often: the recovering run is what the caller waits for.
    recovered: WorkflowHandle[PromptResponse[Any]] = DBOS.retrieve_workflow(found.workflow_id)
    print(recovered.get_result(polling_interval_sec=0.02).text, flush=True)


if __name__ == "__main__":
    # Through its import name, so that the types it stores are named by it.
    from stress import dbos_agent

    dbos_agent.main(sys.argv[1:])
    # Every result is recorded: skip DBOS's shutdown (it waits out its polling threads).
    os._exit(0)
