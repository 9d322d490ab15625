"""Executor cost per call against a floor, and its independence from session size.

The tool is the spec's ``lookup_entity``: once governed by two policies with an
in-memory filesystem bound (so a snapshotable resource is saved on every call),
once alone. Each call is ``execute`` plus the text sent back (``render()``).

The floor is the least a runtime that checks what wink checks can do: a strict,
closed ``TypeAdapter`` (the params dataclass with ``strict=True, extra="forbid"``)
``.validate_json`` of the arguments, a direct handler call and ``json.dumps`` of the
result's fields. The lax floor (default ``TypeAdapter`` + ``dataclasses.asdict``) is
printed beside it.
"""

from __future__ import annotations

import dataclasses
import gc
import json
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from pydantic import ConfigDict, TypeAdapter

from benchmarks.timing import per_call_us
from wink import (
    Filesystem,
    InMemoryFilesystem,
    MarkdownSection,
    Prompt,
    PromptTemplate,
    Tool,
    ToolContext,
    ToolResult,
)
from wink.policy import ReadBeforeWritePolicy, SequentialDependencyPolicy
from wink.runtime import Session, ToolCall, ToolExecutor, ToolInvoked

LOG_EVENTS = 100_000
STATE_ITEMS = 10_000
ARGUMENTS = '{"entity_id": "entity-42", "include_related": true}'


@dataclass
class LookupParams:
    entity_id: str = field(metadata={"description": "Global identifier to fetch"})
    include_related: bool = field(default=False)


@dataclass
class StrictLookupParams:
    """The floor's params: the same fields, validated strictly and closed."""

    __pydantic_config__ = ConfigDict(strict=True, extra="forbid")
    entity_id: str = field(metadata={"description": "Global identifier to fetch"})
    include_related: bool = field(default=False)


@dataclass
class LookupResult:
    entity_id: str
    document_url: str


def lookup_handler(params: LookupParams, *, context: ToolContext) -> ToolResult[LookupResult]:
    result = LookupResult(entity_id=params.entity_id, document_url="https://example.com")
    return ToolResult(message=f"Fetched entity {result.entity_id}.", value=result)


lookup_tool = Tool[LookupParams, LookupResult](
    name="lookup_entity",
    description="Fetch structured information for a given entity id.",
    handler=lookup_handler,
)

# Only advertised: the dependency policy below must name tools of the prompt.
publish_tool = Tool[None, None](name="publish", description="Publish the fetched entity.")

template = PromptTemplate(
    ns="benchmarks",
    key="executor",
    sections=[
        MarkdownSection(
            title="Guidance",
            template="Use tools when you need up-to-date context.",
            tools=[lookup_tool, publish_tool],
            policies=[
                SequentialDependencyPolicy(dependencies={"publish": frozenset({"lookup_entity"})}),
                ReadBeforeWritePolicy(),
            ],
        )
    ],
)


bare_template = PromptTemplate(
    ns="benchmarks",
    key="executor_bare",
    sections=[MarkdownSection(title="Guidance", template="Use tools.", tools=[lookup_tool])],
)


def _executor(session: Session) -> ToolExecutor:
    prompt = Prompt(template).bind(resources={Filesystem: InMemoryFilesystem()})
    return ToolExecutor(prompt=prompt, session=session)


def _bare_executor(session: Session) -> ToolExecutor:
    return ToolExecutor(prompt=Prompt(bare_template), session=session)


def _filled_session() -> Session:
    session = Session()
    executor = _executor(session)
    sample = executor.execute(ToolCall("lookup_entity", ARGUMENTS, "seed"))
    now = datetime.now(UTC)
    event = ToolInvoked("executor", "lookup_entity", "old", None, ARGUMENTS, sample, "", now, now)
    session[ToolInvoked].seed([event] * LOG_EVENTS)
    session[LookupResult].seed(
        LookupResult(f"entity-{i}", "https://example.com") for i in range(STATE_ITEMS)
    )
    return session


def _floor() -> Callable[[], str]:
    adapter = TypeAdapter(StrictLookupParams)
    context = ToolContext(session=Session())

    def floor() -> str:
        params = adapter.validate_json(ARGUMENTS)
        value = lookup_handler(params, context=context).value
        return json.dumps({"entity_id": value.entity_id, "document_url": value.document_url})

    assert json.loads(floor()) == {"entity_id": "entity-42", "document_url": "https://example.com"}
    return floor


def _lax_floor() -> Callable[[], str]:
    adapter = TypeAdapter(LookupParams)
    context = ToolContext(session=Session())

    def floor() -> str:
        params = adapter.validate_json(ARGUMENTS)
        result = lookup_handler(params, context=context)
        return json.dumps(dataclasses.asdict(result.value))

    return floor


def _call(executor: ToolExecutor) -> Callable[[], str]:
    call = ToolCall("lookup_entity", ARGUMENTS, "call-1")

    def run() -> str:
        return executor.execute(call).render()

    expected = '{"entity_id":"entity-42","document_url":"https://example.com"}'
    assert expected in run(), run()
    return run


def _interleaved(
    functions: list[Callable[[], object]], rounds: int = 7, number: int = 2000
) -> list[float]:
    """Best microseconds per call of each function, timed in turn in every round."""
    best = [float("inf")] * len(functions)
    for _ in range(rounds):
        for index, function in enumerate(functions):
            best[index] = min(best[index], per_call_us(function, number=number, repeat=1))
    return best


def _kept_per_call(run: Callable[[], object], calls: int = 2000) -> tuple[float, float]:
    """GC-tracked objects and bytes that each call leaves allocated (its recorded event)."""
    run()
    gc.collect()
    gc.disable()
    try:
        tracemalloc.start()
        before_objects, before_bytes = gc.get_count()[0], tracemalloc.get_traced_memory()[0]
        for _ in range(calls):
            run()
        after_objects, after_bytes = gc.get_count()[0], tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
    finally:
        gc.enable()
    return (after_objects - before_objects) / calls, (after_bytes - before_bytes) / calls


def _snapshot_restore_us(session: Session) -> float:
    def cycle() -> None:
        session.restore(session.snapshot())

    return per_call_us(cycle, number=20_000)


def main() -> None:
    """Print the executor's cost next to the floor, and empty vs filled sessions."""
    filled_session = _filled_session()
    # Interleaved rounds, best of each: the machine's load changes between rows.
    floor, lax_floor, bare, empty, filled = _interleaved(
        [
            _floor(),
            _lax_floor(),
            _call(_bare_executor(Session())),
            _call(_executor(Session())),
            _call(_executor(filled_session)),
        ]
    )
    objects, kept_bytes = _kept_per_call(_call(_executor(Session())))
    bare_objects, bare_bytes = _kept_per_call(_call(_bare_executor(Session())))
    filled_label = f"2 policies + filesystem, {LOG_EVENTS:,} LOG + {STATE_ITEMS:,} STATE"
    rows = [
        ("floor: strict validate_json + handler + json.dumps", f"{floor:8.2f} us/call"),
        ("  (lax floor: validate_json + handler + asdict + dumps)", f"{lax_floor:8.2f} us/call"),
        ("execute + render, no policy, no resource", f"{bare:8.2f} us/call"),
        ("  / floor (target <= 1.6x)", f"{bare / floor:8.2f}x"),
        ("execute + render, 2 policies + in-memory filesystem", f"{empty:8.2f} us/call"),
        ("  / floor (target <= 2.0x)", f"{empty / floor:8.2f}x"),
        (filled_label, f"{filled:8.2f} us/call"),
        ("  filled / empty (target <= 1.1x)", f"{filled / empty:8.2f}x"),
        (
            "kept per call (GC-tracked objects, bytes), 2 policies",
            f"{objects:8.1f} objects, {kept_bytes:,.0f} B",
        ),
        (
            "kept per call (GC-tracked objects, bytes), no policy",
            f"{bare_objects:8.1f} objects, {bare_bytes:,.0f} B",
        ),
        ("snapshot + restore, empty session", f"{_snapshot_restore_us(Session()):8.2f} us"),
        ("snapshot + restore, filled session", f"{_snapshot_restore_us(filled_session):8.2f} us"),
    ]
    for label, figure in rows:
        print(f"{label:<58}{figure}")
