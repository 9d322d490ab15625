"""Executor cost per call against a floor, and its independence from session size.

The tool is the spec's ``lookup_entity``, governed by two policies, with an
in-memory filesystem bound (so a snapshotable resource is saved on every call).
The floor is the least a runtime can do: pydantic ``validate_json`` of the
arguments, a direct handler call and ``json.dumps`` of the result value.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime

from pydantic import TypeAdapter

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


def _executor(session: Session) -> ToolExecutor:
    prompt = Prompt(template).bind(resources={Filesystem: InMemoryFilesystem()})
    return ToolExecutor(prompt=prompt, session=session)


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


def _floor_us() -> float:
    adapter = TypeAdapter(LookupParams)
    context = ToolContext(session=Session())

    def floor() -> str:
        params = adapter.validate_json(ARGUMENTS)
        result = lookup_handler(params, context=context)
        return json.dumps(dataclasses.asdict(result.value))

    return per_call_us(floor)


def _execute_us(session: Session) -> float:
    executor = _executor(session)
    call = ToolCall("lookup_entity", ARGUMENTS, "call-1")
    return per_call_us(lambda: executor.execute(call))


def _snapshot_restore_us(session: Session) -> float:
    def cycle() -> None:
        session.restore(session.snapshot())

    return per_call_us(cycle, number=20_000)


def main() -> None:
    """Print the executor's cost next to the floor, and empty vs filled sessions."""
    floor = _floor_us()
    empty = _execute_us(Session())
    filled_session = _filled_session()
    filled = _execute_us(filled_session)
    filled_label = f"executor, {LOG_EVENTS:,} LOG events + {STATE_ITEMS:,} STATE items"
    rows = [
        ("floor: validate_json + handler + json.dumps", f"{floor:8.2f} us/call"),
        ("executor, empty session", f"{empty:8.2f} us/call"),
        ("  executor / floor (aim <= 3x)", f"{empty / floor:8.2f}x"),
        (filled_label, f"{filled:8.2f} us/call"),
        ("  filled / empty (aim ~1x)", f"{filled / empty:8.2f}x"),
        ("snapshot + restore, empty session", f"{_snapshot_restore_us(Session()):8.2f} us"),
        ("snapshot + restore, filled session", f"{_snapshot_restore_us(filled_session):8.2f} us"),
    ]
    for label, figure in rows:
        print(f"{label:<58}{figure}")
