"""Executor cost per call against a floor, and its independence from session size.

The tool is the spec's ``lookup_entity``: once governed by two policies with an
in-memory filesystem bound (so a snapshotable resource is saved on every call),
once alone. Each call is ``execute`` plus the text sent back (``render()``).

The floor is the least a runtime that checks what wink checks can do: a strict,
closed ``TypeAdapter`` (the params dataclass with ``strict=True, extra="forbid"``)
``.validate_json`` of the arguments, a direct handler call and ``json.dumps`` of the
result's fields. The lax floor (default ``TypeAdapter`` + ``dataclasses.asdict``) is
printed beside it.

Session size: every call leaves its record (``ToolInvoked``, its result, params and
value) for the garbage collector to scan, and a full collection scans every record
a session holds. The collector runs one when the objects that survived since the
last one reach a quarter of those it kept, so each call pays a share of it. The
figure is therefore the mean over a whole cycle of the collector (from one full
collection to the next), on an empty session and on one that has recorded
``LOG_EVENTS`` distinct calls. Any object the process keeps adds to that share, wink's
or not: the same figure on an empty session, while the process holds as many params and
values as the filled session keeps (in plain lists), shows what the user's own objects
cost, which no record that keeps them can avoid.
"""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import json
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, field

from pydantic import ConfigDict, TypeAdapter

from benchmarks import timing
from benchmarks.timing import per_call_us
from wink import (
    Filesystem,
    InMemoryFilesystem,
    MarkdownSection,
    Prompt,
    PromptTemplate,
    Retries,
    Tool,
    ToolContext,
    ToolResult,
)
from wink.policy import ReadBeforeWritePolicy, SequentialDependencyPolicy
from wink.runtime import Session, ToolCall, ToolExecutor, ToolInvoked

LOG_EVENTS = 100_000
"""Distinct calls the filled session has recorded (each also adds its value to STATE)."""
CYCLES = 3
"""Collector cycles timed per session; the best is kept."""
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


# The same tool with a timeout and retries that a successful call never triggers.
controlled_tool = Tool[LookupParams, LookupResult](
    name="lookup_entity",
    description="Fetch structured information for a given entity id.",
    handler=lookup_handler,
    timeout=5,
    retries=Retries(attempts=3),
)

controlled_template = PromptTemplate(
    ns="benchmarks",
    key="executor_controlled",
    sections=[MarkdownSection(title="Guidance", template="Use tools.", tools=[controlled_tool])],
)

AWAITED = 50
"""Calls per timing of ``aexecute``: one event loop pass awaits them in turn."""


def _executor(session: Session) -> ToolExecutor:
    prompt = Prompt(template).bind(resources={Filesystem: InMemoryFilesystem()})
    return ToolExecutor(prompt=prompt, session=session)


def _bare_executor(session: Session) -> ToolExecutor:
    return ToolExecutor(prompt=Prompt(bare_template), session=session)


def _controlled_executor(session: Session) -> ToolExecutor:
    return ToolExecutor(prompt=Prompt(controlled_template), session=session)


def _awaited(executor: ToolExecutor, loop: asyncio.AbstractEventLoop) -> Callable[[], str]:
    """``AWAITED`` calls of ``aexecute`` + render on ``loop``, awaited one after another."""
    call = ToolCall("lookup_entity", ARGUMENTS, "call-1")

    async def calls() -> str:
        text = ""
        for _ in range(AWAITED):
            text = (await executor.aexecute(call)).render()
        return text

    def run() -> str:
        return loop.run_until_complete(calls())

    expected = '{"entity_id":"entity-42","document_url":"https://example.com"}'
    assert expected in run()
    return run


def _distinct_call(index: int) -> ToolCall:
    """The ``index``-th call of a session: its own entity, arguments text and id."""
    arguments = f'{{"entity_id": "entity-{index}", "include_related": true}}'
    return ToolCall("lookup_entity", arguments, f"call-{index}")


def _distinct_calls(executor: ToolExecutor) -> Callable[[int], str]:
    def run(index: int) -> str:
        return executor.execute(_distinct_call(index)).render()

    return run


def _recorded(calls: int) -> tuple[Session, Callable[[int], str]]:
    """A session that has recorded ``calls`` distinct calls, and the way to make more."""
    session = Session()
    run = _distinct_calls(_bare_executor(session))
    for index in range(calls):
        run(index)
    assert len(session[ToolInvoked]) == calls
    assert len(session[LookupResult]) == calls
    return session, run


def _over_a_collector_cycle(run: Callable[[int], object], first: int) -> tuple[float, int]:
    """Mean microseconds per call from a full collection to the next one the calls
    cause, and how many calls that took; the calls are ``run(first)``, ``run(first + 1)``...

    Measured in CPU time: a cycle lasts up to a second, long enough for the machine's
    other work to take turns with it, which wall time would count.
    """
    full_collections: list[int] = []

    def note(phase: str, info: dict[str, int]) -> None:
        if phase == "stop" and info["generation"] == 2:
            full_collections.append(1)

    gc.collect()
    gc.callbacks.append(note)
    count = 0
    try:
        start = time.process_time()
        while not full_collections and not (timing.QUICK and count):
            run(first + count)
            count += 1
        elapsed = time.process_time() - start
    finally:
        gc.callbacks.remove(note)
    return elapsed / count * 1e6, count


def _empty_session_cost() -> tuple[float, int]:
    """Best per-call cost over a collector cycle on ``CYCLES`` new sessions, and the
    calls a cycle took."""
    best, calls = float("inf"), 0
    for _ in range(CYCLES):
        cost, calls = _over_a_collector_cycle(_distinct_calls(_bare_executor(Session())), 0)
        best = min(best, cost)
    return best, calls


def _user_objects_cost() -> float:
    """Best per-call cost over a collector cycle on ``CYCLES`` new sessions, while the
    process holds ``LOG_EVENTS`` params and values like those a filled session keeps (the
    user's objects, which a record must keep), in plain lists and in no session."""
    params = [LookupParams(f"entity-{index}", True) for index in range(LOG_EVENTS)]
    values = [LookupResult(f"entity-{index}", "https://example.com") for index in range(LOG_EVENTS)]
    best = float("inf")
    for _ in range(CYCLES):
        run = _distinct_calls(_bare_executor(Session()))
        best = min(best, _over_a_collector_cycle(run, 0)[0])
    assert len(params) == len(values) == LOG_EVENTS
    return best


def _session_size_cost() -> tuple[float, float, int, int, Session]:
    """Best per-call cost over a collector cycle on empty sessions and on one that has
    recorded ``LOG_EVENTS`` calls; the calls per cycle of each; that session.

    No filled session is alive while the empty ones are timed (a full collection
    scans every session alive): they are timed before it is made and after it is
    dropped, so that a change in the machine's load affects both alike.
    """
    empty, empty_calls = _empty_session_cost()
    session, run = _recorded(LOG_EVENTS)
    filled, filled_calls = float("inf"), 0
    made = LOG_EVENTS
    for _ in range(CYCLES):
        cost, calls = _over_a_collector_cycle(run, made)
        made += calls
        if cost < filled:
            filled, filled_calls = cost, calls
    snapshot_restore = _snapshot_restore_us(session)
    del session, run
    empty = min(empty, _empty_session_cost()[0])
    return empty, filled, empty_calls, filled_calls, snapshot_restore


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
    # Interleaved rounds, best of each: the machine's load changes between rows.
    loop = asyncio.new_event_loop()
    try:
        floor, lax_floor, bare, governed, controlled, awaited, awaited_controlled = _interleaved(
            [
                _floor(),
                _lax_floor(),
                _call(_bare_executor(Session())),
                _call(_executor(Session())),
                _call(_controlled_executor(Session())),
                _awaited(_bare_executor(Session()), loop),
                _awaited(_controlled_executor(Session()), loop),
            ]
        )
    finally:
        loop.close()
    awaited, awaited_controlled = awaited / AWAITED, awaited_controlled / AWAITED
    objects, kept_bytes = _kept_per_call(_call(_executor(Session())))
    bare_objects, bare_bytes = _kept_per_call(_call(_bare_executor(Session())))
    empty, filled, empty_calls, filled_calls, filled_restore = _session_size_cost()
    held = _user_objects_cost()
    rows = [
        ("floor: strict validate_json + handler + json.dumps", f"{floor:8.2f} us/call"),
        ("  (lax floor: validate_json + handler + asdict + dumps)", f"{lax_floor:8.2f} us/call"),
        ("execute + render, no policy, no resource", f"{bare:8.2f} us/call"),
        ("  / floor (target <= 1.6x)", f"{bare / floor:8.2f}x"),
        ("execute + render, 2 policies + in-memory filesystem", f"{governed:8.2f} us/call"),
        ("  / floor (target <= 2.0x)", f"{governed / floor:8.2f}x"),
        ("execute + render, timeout + retries, neither triggered", f"{controlled:8.2f} us/call"),
        ("  / the same tool without them (target <= 1.10x)", f"{controlled / bare:8.2f}x"),
        ("aexecute + render, no policy, no resource", f"{awaited:8.2f} us/call"),
        (
            "aexecute + render, timeout + retries, neither triggered",
            f"{awaited_controlled:8.2f} us/call",
        ),
        (
            "  / the same tool without them (target <= 1.10x)",
            f"{awaited_controlled / awaited:8.2f}x",
        ),
        ("no policy, CPU time per call over a whole collector cycle:", ""),
        (f"  empty session ({empty_calls:,} calls in the cycle)", f"{empty:8.2f} us/call"),
        ("  / floor", f"{empty / floor:8.2f}x"),
        (
            f"  after {LOG_EVENTS:,} distinct calls ({filled_calls:,} in the cycle)",
            f"{filled:8.2f} us/call",
        ),
        ("  / floor", f"{filled / floor:8.2f}x"),
        (f"  {LOG_EVENTS:,} calls / empty (target <= 1.15x)", f"{filled / empty:8.2f}x"),
        (f"  empty, the process holding {LOG_EVENTS:,} params + values", f"{held:8.2f} us/call"),
        ("  / empty (the same user objects held, no record at all)", f"{held / empty:8.2f}x"),
        (f"  {LOG_EVENTS:,} calls / that (what the records add)", f"{filled / held:8.2f}x"),
        (
            "kept per call (GC-tracked objects, bytes), 2 policies",
            f"{objects:8.1f} objects, {kept_bytes:,.0f} B",
        ),
        (
            "kept per call (GC-tracked objects, bytes), no policy",
            f"{bare_objects:8.1f} objects, {bare_bytes:,.0f} B",
        ),
        ("snapshot + restore, empty session", f"{_snapshot_restore_us(Session()):8.2f} us"),
        (f"snapshot + restore, after {LOG_EVENTS:,} calls", f"{filled_restore:8.2f} us"),
    ]
    for label, figure in rows:
        print(f"{label:<64}{figure}")
