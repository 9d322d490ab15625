"""Per-call tool execution cost of wink next to the OpenAI Agents SDK, pydantic-ai,
the MCP SDK's server and LangChain.

Every runtime does the same work: one call of the spec's ``lookup_entity`` tool,
from the model's JSON arguments string to the text that goes back to the model,
including argument validation. The model's tool call object is built once (the
provider adapter makes it); whatever each runtime builds per call (contexts,
events) is measured.

- wink: ``ToolExecutor.execute`` then ``ToolResult.render()``, synchronous.
- OpenAI Agents SDK: ``FunctionTool.on_invoke_tool`` with a fresh ``ToolContext``
  (as its runner builds one per call), then ``ItemHelpers.tool_call_output_item``.
- pydantic-ai: ``ToolManager.handle_call`` (validation, hooks, execution), then
  ``ToolReturnPart.model_response_str()``.
- MCP SDK: ``MCPServer.call_tool`` with the decoded arguments (``json.loads``, as its
  JSON-RPC layer decodes them), then the text of the result's first content block
  (indented JSON).
- LangChain: ``StructuredTool.invoke`` / ``ainvoke`` of a tool call with the decoded
  arguments; its message text is ``str(result)``, the dataclass repr, not JSON.

The floor is the least a runtime that checks what wink checks can do: a strict,
closed ``TypeAdapter`` (``strict=True, extra="forbid"``) ``validate_json`` of the
arguments, a direct handler call and ``json.dumps`` of the result's fields. Every
row is printed as a multiple of it and of wink.

The peers are async, so they are timed inside one event loop, many calls per
loop; wink is timed both directly and awaited from a coroutine in that loop, and
the ratios to wink use the awaited figure. The peers run a plain ``def`` tool in a worker
thread, so each is measured with an ``async def`` tool (its fastest path) and with
a plain ``def`` tool (the shape of wink's handler); thread-hop figures are noisy.
A peer whose package is missing is skipped.

The work is not quite equal: both peers validate laxly by default (``"yes"``
passes as a boolean; the Agents SDK also ignores unknown keys) while wink is
strict, and wink also records a ``ToolInvoked`` event and snapshots the session
per call. pydantic-ai's tool manager here carries no capabilities, as the
cheapest agent run step would.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from typing import Annotated, Any

from pydantic import ConfigDict, Field, TypeAdapter

from benchmarks.timing import per_call_us
from wink import MarkdownSection, Prompt, PromptTemplate, Tool, ToolContext, ToolResult
from wink.runtime import Session, ToolCall, ToolExecutor

ARGUMENTS = '{"entity_id": "entity-42", "include_related": true}'
EXPECTED_TEXT = '{"entity_id":"entity-42","document_url":"https://example.com"}'
DESCRIPTION = "Fetch structured information for a given entity id."
ENTITY_ID_DESCRIPTION = "Global identifier to fetch"
NUMBER = 5000
ROUNDS = 7
"""Rounds in which the floor and wink's call are timed in turns."""
THREAD_NUMBER = 1000  # a worker-thread hop costs tens of microseconds; fewer calls suffice

Row = tuple[str, float | None]
AsyncCall = Callable[[], Awaitable[object]]


@dataclass
class LookupParams:
    """The spec's ``lookup_entity`` parameters."""

    entity_id: str = field(metadata={"description": ENTITY_ID_DESCRIPTION})
    include_related: bool = field(default=False)


@dataclass
class StrictLookupParams:
    """The floor's params: the same fields, validated strictly and closed."""

    __pydantic_config__ = ConfigDict(strict=True, extra="forbid")
    entity_id: str = field(metadata={"description": ENTITY_ID_DESCRIPTION})
    include_related: bool = field(default=False)


@dataclass
class LookupResult:
    """The spec's ``lookup_entity`` result."""

    entity_id: str
    document_url: str


def lookup_handler(params: LookupParams, *, context: ToolContext) -> ToolResult[LookupResult]:
    """wink's handler for ``lookup_entity``."""
    result = LookupResult(entity_id=params.entity_id, document_url="https://example.com")
    return ToolResult(message=f"Fetched entity {result.entity_id}.", value=result)


async def lookup_entity(
    entity_id: Annotated[str, Field(description=ENTITY_ID_DESCRIPTION)],
    include_related: bool = False,
) -> LookupResult:
    """Fetch structured information for a given entity id."""
    return LookupResult(entity_id=entity_id, document_url="https://example.com")


def lookup_entity_sync(
    entity_id: Annotated[str, Field(description=ENTITY_ID_DESCRIPTION)],
    include_related: bool = False,
) -> LookupResult:
    """Fetch structured information for a given entity id."""
    return LookupResult(entity_id=entity_id, document_url="https://example.com")


def _package_version(name: str) -> str | None:
    try:
        return version(name)
    except PackageNotFoundError:
        return None


async def async_per_call_us(call: AsyncCall, *, number: int = NUMBER, repeat: int = 5) -> float:
    """Best of ``repeat`` runs of ``number`` awaited calls in the running loop, in us per call."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            await call()
        best = min(best, time.perf_counter() - start)
    return best / number * 1e6


def _checked(text: object, runtime: str) -> None:
    # A runtime that silently produced other text would be timed doing other work.
    if text != EXPECTED_TEXT:
        raise AssertionError(f"{runtime} produced {text!r}, expected {EXPECTED_TEXT!r}")


def wink_call() -> Callable[[], str]:
    """One wink tool call, arguments to rendered text."""
    tool = Tool[LookupParams, LookupResult](
        name="lookup_entity", description=DESCRIPTION, handler=lookup_handler
    )
    section: MarkdownSection[None] = MarkdownSection(
        title="Guidance", template="Use tools.", tools=[tool]
    )
    template = PromptTemplate(ns="benchmarks", key="peers", sections=[section])
    executor = ToolExecutor(prompt=Prompt(template), session=Session())
    call = ToolCall("lookup_entity", ARGUMENTS, "call-1")

    def run() -> str:
        return executor.execute(call).render()

    _checked(run(), "wink")
    return run


def floor_call() -> Callable[[], str]:
    """The floor: strict ``validate_json``, the handler, ``json.dumps`` of the fields."""
    adapter = TypeAdapter(StrictLookupParams)
    context = ToolContext(session=Session())

    def run() -> str:
        params: Any = adapter.validate_json(ARGUMENTS)
        value = lookup_handler(params, context=context).value
        assert value is not None
        return json.dumps(
            {"entity_id": value.entity_id, "document_url": value.document_url},
            separators=(",", ":"),
        )

    _checked(run(), "floor")
    return run


def lax_floor_call() -> Callable[[], str]:
    """The lax floor: default ``validate_json``, the handler, ``asdict`` + ``json.dumps``."""
    adapter = TypeAdapter(LookupParams)
    context = ToolContext(session=Session())

    def run() -> str:
        value = lookup_handler(adapter.validate_json(ARGUMENTS), context=context).value
        assert value is not None
        return json.dumps(dataclasses.asdict(value), separators=(",", ":"))

    _checked(run(), "lax floor")
    return run


async def agents_call(function: Callable[..., Any], *, typed_output: bool) -> AsyncCall:
    """One OpenAI Agents SDK call; ``typed_output`` declares the result type for JSON text."""
    from agents import ItemHelpers, RunContextWrapper, function_tool
    from agents.tool_context import ToolContext as AgentsToolContext
    from openai.types.responses import ResponseFunctionToolCall

    output_type = LookupResult if typed_output else None
    tool = function_tool(function, name_override="lookup_entity", output_type=output_type)
    wrapper = RunContextWrapper(context=None)
    call = ResponseFunctionToolCall(
        arguments=ARGUMENTS, call_id="call-1", name="lookup_entity", type="function_call"
    )

    async def run() -> object:
        context = AgentsToolContext.from_agent_context(wrapper, call.call_id, tool_call=call)
        output = await tool.on_invoke_tool(context, ARGUMENTS)
        # As the SDK's runner does (it too reads the private adapter): without them the
        # text is ``str(output)``, the dataclass repr rather than JSON.
        item = ItemHelpers.tool_call_output_item(
            call,
            output,
            output_json_schema=tool.output_json_schema,
            output_type_adapter=tool._output_type_adapter,
        )
        return item["output"]

    if typed_output:
        _checked(await run(), "openai-agents")
    return run


async def pydantic_ai_call(function: Callable[..., Any]) -> AsyncCall:
    """One pydantic-ai call through its tool manager, as an agent run step makes it."""
    from pydantic_ai import RunContext
    from pydantic_ai import Tool as PydanticAITool
    from pydantic_ai.messages import ToolCallPart, ToolReturnPart
    from pydantic_ai.models.test import TestModel
    from pydantic_ai.tool_manager import ToolManager
    from pydantic_ai.toolsets import FunctionToolset
    from pydantic_ai.usage import RunUsage

    toolset = FunctionToolset([PydanticAITool(function, name="lookup_entity")])
    run_context = RunContext(deps=None, model=TestModel(), usage=RunUsage())
    manager = await ToolManager(toolset).for_run_step(run_context)
    call = ToolCallPart("lookup_entity", ARGUMENTS, "call-1")

    async def run() -> str:
        output = await manager.handle_call(call)
        return ToolReturnPart("lookup_entity", output, tool_call_id="call-1").model_response_str()

    _checked(await run(), "pydantic-ai")
    return run


async def mcp_call(function: Callable[..., Any]) -> AsyncCall:
    """One MCP SDK server call, arguments decoded as its JSON-RPC layer does."""
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("bench")
    server.tool(name="lookup_entity", description=DESCRIPTION)(function)

    async def run() -> str:
        result: Any = await server.call_tool("lookup_entity", json.loads(ARGUMENTS))
        text: str = result.content[0].text
        return text

    _checked(json.dumps(json.loads(await run()), separators=(",", ":")), "mcp")
    return run


def langchain_tool() -> Any:
    """A LangChain tool with both forms of the function."""
    from langchain_core.tools import StructuredTool

    return StructuredTool.from_function(
        func=lookup_entity_sync,
        coroutine=lookup_entity,
        name="lookup_entity",
        description=DESCRIPTION,
    )


def _langchain_tool_call() -> dict[str, Any]:
    return {
        "name": "lookup_entity",
        "args": json.loads(ARGUMENTS),
        "id": "call-1",
        "type": "tool_call",
    }


async def _agents_rows() -> list[Row]:
    package = _package_version("openai-agents")
    if package is None:
        return [("openai-agents: not installed", None)]
    label = f"openai-agents {package}"
    typed = await agents_call(lookup_entity, typed_output=True)
    untyped = await agents_call(lookup_entity, typed_output=False)
    threaded = await agents_call(lookup_entity_sync, typed_output=True)
    return [
        (f"{label}, async def, output_type (JSON)", await async_per_call_us(typed)),
        ("  same, no output_type (text is str(result))", await async_per_call_us(untyped)),
        (
            "  same as first, plain def (worker thread)",
            await async_per_call_us(threaded, number=THREAD_NUMBER),
        ),
    ]


async def _pydantic_ai_rows() -> list[Row]:
    package = _package_version("pydantic-ai-slim")
    if package is None:
        return [("pydantic-ai: not installed", None)]
    label = f"pydantic-ai-slim {package}"
    direct = await pydantic_ai_call(lookup_entity)
    threaded = await pydantic_ai_call(lookup_entity_sync)
    return [
        (f"{label}, async def", await async_per_call_us(direct)),
        (
            "  same, plain def (worker thread)",
            await async_per_call_us(threaded, number=THREAD_NUMBER),
        ),
    ]


async def _mcp_rows() -> list[Row]:
    package = _package_version("mcp")
    if package is None:
        return [("mcp: not installed", None)]
    direct = await mcp_call(lookup_entity)
    threaded = await mcp_call(lookup_entity_sync)
    return [
        (f"mcp {package} MCPServer.call_tool, async def", await async_per_call_us(direct)),
        ("  same, plain def", await async_per_call_us(threaded, number=THREAD_NUMBER)),
    ]


async def _langchain_async_rows() -> list[Row]:
    package = _package_version("langchain-core")
    if package is None:
        return [("langchain-core: not installed", None)]
    tool = langchain_tool()

    async def run() -> object:
        message = await tool.ainvoke(_langchain_tool_call())
        return message.content

    await run()
    return [
        (
            f"langchain-core {package} StructuredTool.ainvoke, async def",
            await async_per_call_us(run),
        )
    ]


def _langchain_sync_rows() -> list[Row]:
    package = _package_version("langchain-core")
    if package is None:
        return []
    tool = langchain_tool()

    def run() -> object:
        return tool.invoke(_langchain_tool_call()).content

    run()
    return [("  same, invoke, plain def (called directly)", per_call_us(run, number=NUMBER))]


async def _async_rows(wink: Callable[[], str]) -> tuple[float, list[Row]]:
    async def awaited_wink() -> str:
        return wink()

    wink_awaited = await async_per_call_us(awaited_wink)
    rows = [
        *await _agents_rows(),
        *await _pydantic_ai_rows(),
        *await _mcp_rows(),
        *await _langchain_async_rows(),
    ]
    return wink_awaited, rows


def _print_row(label: str, figure: str) -> None:
    print(f"{label:<62}{figure}")


def main() -> None:
    """Print each runtime's per-call cost and its ratios to the floor and to wink."""
    wink = wink_call()
    floor_function = floor_call()
    # The floor and wink's call timed in turns, best of each: the machine's load
    # changes between rows; the floor is timed once more after the peers.
    floor = wink_sync = float("inf")
    for _ in range(ROUNDS):
        floor = min(floor, per_call_us(floor_function, number=NUMBER, repeat=1))
        wink_sync = min(wink_sync, per_call_us(wink, number=NUMBER, repeat=1))
    lax_floor = per_call_us(lax_floor_call(), number=NUMBER)
    wink_awaited, peer_rows = asyncio.run(_async_rows(wink))
    peer_rows += _langchain_sync_rows()
    floor = min(floor, per_call_us(floor_function, number=NUMBER))
    _print_row("floor: strict validate_json + handler + json.dumps", f"{floor:8.2f} us/call")
    _print_row("  (lax floor: validate_json + asdict + json.dumps)", f"{lax_floor:8.2f} us/call")
    _print_row(
        "wink: execute + render, sync", f"{wink_sync:8.2f} us/call {wink_sync / floor:6.2f}x floor"
    )
    _print_row(
        "wink: same, awaited in the event loop (ratio base)",
        f"{wink_awaited:8.2f} us/call {wink_awaited / floor:6.2f}x floor",
    )
    for label, cost in peer_rows:
        if cost is None:
            print(label)
        else:
            _print_row(
                label,
                f"{cost:8.2f} us/call {cost / floor:6.2f}x floor {cost / wink_awaited:6.2f}x wink",
            )
