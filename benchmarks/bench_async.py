"""``aexecute`` cost per call next to ``execute`` and a strict floor, and the wall time
of a turn of concurrent I/O-bound calls next to the same calls one after the other.

The floor is the least a runtime can do: a strict pydantic ``validate_json`` of the
arguments (``strict=True, extra="forbid"``), a direct handler call and ``json.dumps``
of the result's fields.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass

from pydantic import ConfigDict, TypeAdapter

from benchmarks.timing import per_call_us
from wink import MarkdownSection, Prompt, PromptTemplate, Tool, ToolContext, ToolResult
from wink.runtime import Session, ToolCall, ToolExecutor

ARGUMENTS = '{"entity_id": "entity-42", "include_related": true}'
CONCURRENT = 8
IO_SECONDS = 0.02
NUMBER = 2000
REPEAT = 5


@dataclass
class LookupParams:
    __pydantic_config__ = ConfigDict(strict=True, extra="forbid")

    entity_id: str
    include_related: bool = False


@dataclass
class LookupResult:
    entity_id: str
    document_url: str


def lookup(params: LookupParams, *, context: ToolContext) -> ToolResult[LookupResult]:
    return ToolResult.ok(LookupResult(params.entity_id, "https://example.com"))


async def alookup(params: LookupParams, *, context: ToolContext) -> ToolResult[LookupResult]:
    return ToolResult.ok(LookupResult(params.entity_id, "https://example.com"))


async def fetch(params: LookupParams, *, context: ToolContext) -> ToolResult[LookupResult]:
    await asyncio.sleep(IO_SECONDS)  # an HTTP request, say
    return ToolResult.ok(LookupResult(params.entity_id, "https://example.com"))


TOOLS = [
    Tool[LookupParams, LookupResult](name="lookup", description="Look up.", handler=lookup),
    Tool[LookupParams, LookupResult](name="alookup", description="Look up.", handler=alookup),
    Tool[LookupParams, LookupResult](name="fetch", description="Fetch.", handler=fetch),
]
PROMPT = Prompt(
    PromptTemplate(ns="benchmarks", key="async", sections=[MarkdownSection(title="T", tools=TOOLS)])
)


def _floor_us() -> float:
    adapter = TypeAdapter(LookupParams)
    context = ToolContext(session=Session())

    def floor() -> str:
        params = adapter.validate_json(ARGUMENTS)
        value = lookup(params, context=context).value
        assert value is not None
        return json.dumps({"entity_id": value.entity_id, "document_url": value.document_url})

    return per_call_us(floor, number=NUMBER)


def _per_call_us() -> dict[str, float]:
    """Best per-call cost of ``execute`` and of ``aexecute`` (sync and async handlers),
    measured in turns within one event loop so that load affects them alike."""

    async def timed() -> dict[str, float]:
        executor = ToolExecutor(prompt=PROMPT, session=Session())
        lookup_call = ToolCall("lookup", ARGUMENTS, "call-1")
        alookup_call = ToolCall("alookup", ARGUMENTS, "call-1")
        best = {"execute": float("inf"), "aexecute sync": float("inf"), "aexecute": float("inf")}
        for _ in range(REPEAT):
            start = time.perf_counter()
            for _ in range(NUMBER):
                executor.execute(lookup_call)
            best["execute"] = min(best["execute"], time.perf_counter() - start)
            start = time.perf_counter()
            for _ in range(NUMBER):
                await executor.aexecute(lookup_call)
            best["aexecute sync"] = min(best["aexecute sync"], time.perf_counter() - start)
            start = time.perf_counter()
            for _ in range(NUMBER):
                await executor.aexecute(alookup_call)
            best["aexecute"] = min(best["aexecute"], time.perf_counter() - start)
        return {name: seconds / NUMBER * 1e6 for name, seconds in best.items()}

    return asyncio.run(timed())


def _turn_ms() -> tuple[float, float]:
    """Wall time of one I/O-bound call, and of a turn of ``CONCURRENT`` of them."""

    async def timed() -> tuple[float, float]:
        executor = ToolExecutor(prompt=PROMPT, session=Session())
        calls = [ToolCall("fetch", ARGUMENTS, f"call-{i}") for i in range(CONCURRENT)]
        start = time.perf_counter()
        await executor.aexecute(calls[0])
        one = time.perf_counter() - start
        start = time.perf_counter()
        await executor.aexecute_all(calls)
        return one * 1e3, (time.perf_counter() - start) * 1e3

    return asyncio.run(timed())


def main() -> None:
    """Print aexecute next to execute and the floor, and a concurrent turn's wall time."""
    floor = _floor_us()
    costs = _per_call_us()
    execute, aexecute_sync, aexecute_async = (
        costs["execute"],
        costs["aexecute sync"],
        costs["aexecute"],
    )
    one, turn = _turn_ms()
    rows = [
        ("floor: strict validate_json + handler + json.dumps", f"{floor:8.2f} us/call"),
        ("execute, sync handler", f"{execute:8.2f} us/call"),
        ("aexecute, sync handler (inline)", f"{aexecute_sync:8.2f} us/call"),
        ("aexecute, async handler", f"{aexecute_async:8.2f} us/call"),
        ("  aexecute (async) / execute (aim <= 1.3x)", f"{aexecute_async / execute:8.2f}x"),
        ("  aexecute (async) / floor", f"{aexecute_async / floor:8.2f}x"),
        (f"one call sleeping {IO_SECONDS * 1e3:.0f} ms", f"{one:8.2f} ms"),
        (f"  x {CONCURRENT}, one after the other (N x one call)", f"{one * CONCURRENT:8.2f} ms"),
        (f"aexecute_all of {CONCURRENT} such calls (wall)", f"{turn:8.2f} ms"),
    ]
    for label, figure in rows:
        print(f"{label:<58}{figure}")


if __name__ == "__main__":
    main()
