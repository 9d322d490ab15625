"""What contracts, tool schemas and prompt rendering cost, cold and cached.

Floors measured in the same run: pydantic's own ``TypeAdapter`` plus JSON Schema for
compiling (taking turns with wink, best of ``ROUNDS``), pydantic's strict
``validate_json`` of the same type for parsing (for the executor's two-field call, of a
strict dataclass that forbids other keys), and joining the already rendered blocks for
rendering.
"""

from __future__ import annotations

import gc
import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, field, make_dataclass
from typing import Any

from pydantic import ConfigDict, TypeAdapter
from pydantic.dataclasses import dataclass as pydantic_dataclass

from benchmarks.timing import once_ms, per_call_us
from wink.contract import compile_contract
from wink.prompt import MarkdownSection, Prompt, PromptTemplate
from wink.tools import Tool, ToolContext, ToolResult
from wink.tools.decorator import tool

TOOLS = 500
COMPILES = 50
ROUNDS = 10
TOOLS_PER_SECTION = 10


def fresh_params_type(index: int) -> type[Any]:
    """A new params dataclass (with a nested one) that no cache has seen."""
    inner = make_dataclass(f"Filter{index}", [("field", str), ("value", int, field(default=0))])
    return make_dataclass(
        f"Params{index}",
        [
            ("query", str, field(metadata={"description": "Text to search for"})),
            ("limit", int, field(default=10)),
            ("tags", list[str], field(default_factory=list)),
            ("filter", inner | None, field(default=None)),
        ],
    )


RESULT = make_dataclass("Result", [("hits", list[str])])


def make_tool(index: int, params_type: type[Any]) -> Tool[Any, Any]:
    """Tool number ``index`` over ``params_type``."""
    return Tool[params_type, RESULT](  # type: ignore[valid-type]  # types built at run time
        name=f"tool_{index}", description=f"Tool number {index}."
    )


_fresh = itertools.count(100_000)
"""Numbers for the names of fresh types, apart from those the other figures use."""


def best_ms_per_type(
    runs: dict[str, Callable[[list[type[Any]]], object]], size: int, rounds: int
) -> dict[str, float]:
    """Each of ``runs`` over ``size`` fresh types, ``rounds`` times in turn: best ms per type.

    Taking turns, each on types no cache has seen and after a full collection, keeps
    a burst of load on the shared machine, or garbage left by the previous run, from
    landing on one side of a ratio only.
    """
    best = dict.fromkeys(runs, float("inf"))
    for _ in range(rounds):
        for name, run in runs.items():
            types = [fresh_params_type(next(_fresh)) for _ in range(size)]
            gc.collect()
            start = time.perf_counter()
            run(types)
            best[name] = min(best[name], (time.perf_counter() - start) * 1e3 / size)
    return best


def bench_compile() -> None:
    """Compiling a fresh type, and building a tool over one, against pydantic's own cost."""
    # One of each first, so nothing is measured that happens once per process.
    make_tool(0, fresh_params_type(-1))
    TypeAdapter(fresh_params_type(-2)).json_schema()
    best = best_ms_per_type(
        {
            "floor": lambda types: [TypeAdapter(tp).json_schema() for tp in types],
            "compile": lambda types: [compile_contract(tp) for tp in types],
            "tool": lambda types: [make_tool(i, tp) for i, tp in enumerate(types)],
        },
        COMPILES,
        ROUNDS,
    )
    floor_ms, wink_ms, tool_ms = best["floor"], best["compile"], best["tool"]
    cached_type = fresh_params_type(-3)
    compile_contract(cached_type)
    cached_us = per_call_us(lambda: compile_contract(cached_type), number=20000)
    print(f"best of {ROUNDS} rounds of {COMPILES} fresh types each:")
    print(f"floor TypeAdapter(T) + json_schema():  {floor_ms * 1000:9.1f} us/type")
    print(f"compile_contract, fresh type:          {wink_ms * 1000:9.1f} us/type")
    print(f"  ratio:                               {wink_ms / floor_ms:9.2f} x")
    print(f"Tool[P, R], fresh params dataclass:    {tool_ms * 1000:9.1f} us/type")
    print(f"  ratio:                               {tool_ms / floor_ms:9.2f} x")
    print(f"compile_contract, cache hit:           {cached_us:9.3f} us")


SIGNATURE_DOC = """Search the index.

Args:
    query: Text to search for
"""


def fresh_signature_handler(index: int, inner: type[Any]) -> Callable[..., Any]:
    """A new handler whose parameters are the fields of ``fresh_field_params(index, inner)``."""

    def handler(query, limit=10, tags=(), filter=None, *, context):  # type: ignore[no-untyped-def]  # annotated below, with fresh types
        raise NotImplementedError

    handler.__name__ = handler.__qualname__ = f"tool_{index}"
    handler.__doc__ = SIGNATURE_DOC
    handler.__annotations__ = {
        "query": str,
        "limit": int,
        "tags": tuple[str, ...],
        "filter": inner | None,
        "context": ToolContext,
        "return": ToolResult[RESULT],  # type: ignore[valid-type]  # a type built at run time
    }
    return handler


def fresh_field_params(index: int, inner: type[Any]) -> type[Any]:
    """The frozen dataclass a user would write for ``fresh_signature_handler(index, inner)``."""
    return make_dataclass(
        f"Tool{index}Params",
        [
            ("query", str, field(metadata={"description": "Text to search for"})),
            ("limit", int, field(default=10)),
            ("tags", tuple[str, ...], field(default=())),
            ("filter", inner | None, field(default=None)),
        ],
        frozen=True,
    )


def fresh_filter(index: int) -> type[Any]:
    """A new nested dataclass, for the params of tool ``index``."""
    return make_dataclass(f"Filter{index}", [("field", str), ("value", int, field(default=0))])


def _params_handler(params: Any, *, context: ToolContext) -> ToolResult[Any]:
    raise NotImplementedError


def bench_signature_tool() -> None:
    """Cold cost of ``@tool`` over a handler whose parameters are the fields, next to
    ``Tool[P, R]`` over the equivalent frozen dataclass, made in the timing as ``@tool``
    makes its own (taking turns, best of ``ROUNDS``)."""
    tool(fresh_signature_handler(-1, fresh_filter(-1)))
    make_tool(-2, fresh_field_params(-2, fresh_filter(-2)))
    best = dict.fromkeys(("explicit", "signature"), float("inf"))
    for _ in range(ROUNDS):
        for name in best:
            numbers = [next(_fresh) for _ in range(COMPILES)]
            inners = [fresh_filter(n) for n in numbers]
            handlers = [fresh_signature_handler(n, i) for n, i in zip(numbers, inners, strict=True)]
            gc.collect()
            start = time.perf_counter()
            if name == "explicit":
                for n, inner in zip(numbers, inners, strict=True):
                    params_type = fresh_field_params(n, inner)
                    Tool[params_type, RESULT](  # type: ignore[valid-type]  # built at run time
                        name=f"tool_{n}", description="Search the index.", handler=_params_handler
                    )
            else:
                for handler in handlers:
                    tool(handler)
            best[name] = min(best[name], (time.perf_counter() - start) * 1e3 / COMPILES)
    print(f"Tool[P, R], P a fresh frozen dataclass: {best['explicit'] * 1000:9.1f} us/tool")
    print(f"@tool, the same fields as parameters:   {best['signature'] * 1000:9.1f} us/tool")
    print(f"  ratio:                               {best['signature'] / best['explicit']:9.2f} x")


@dataclass
class LookupParams:
    entity_id: str
    include_related: bool = False


@pydantic_dataclass(config=ConfigDict(strict=True, extra="forbid"))
class StrictLookupParams:
    entity_id: str
    include_related: bool = False


LOOKUP_CALL = '{"entity_id": "entity-42", "include_related": true}'
TYPICAL_CALL = '{"query": "wink contracts", "limit": 5, "tags": ["a", "b"]}'
REPEATED_KEYS_CALL = '{"query": "a", "filter": {"field": "query", "value": 1}, "tags": ["query"]}'


def bench_parse() -> None:
    """Parsing a typical call's arguments, against pydantic's strict ``validate_json``."""
    params_type = fresh_params_type(20_000)
    contract = compile_contract(params_type)
    floor = TypeAdapter(params_type)
    assert contract.parse(TYPICAL_CALL) == floor.validate_json(TYPICAL_CALL, strict=True)
    wink_us = per_call_us(lambda: contract.parse(TYPICAL_CALL), number=20000)
    floor_us = per_call_us(lambda: floor.validate_json(TYPICAL_CALL, strict=True), number=20000)
    # Keys shared by several objects make the repeated-key check read the text twice.
    shared_us = per_call_us(lambda: contract.parse(REPEATED_KEYS_CALL), number=20000)
    shared_floor_us = per_call_us(
        lambda: floor.validate_json(REPEATED_KEYS_CALL, strict=True), number=20000
    )
    # The executor benchmark's call: two fields, no number, so no check reads the text.
    call_contract = compile_contract(LookupParams)
    call_floor = TypeAdapter(StrictLookupParams)
    assert call_floor.validate_json(LOOKUP_CALL, strict=True).entity_id == "entity-42"
    call_us = per_call_us(lambda: call_contract.parse(LOOKUP_CALL), number=20000)
    call_floor_us = per_call_us(
        lambda: call_floor.validate_json(LOOKUP_CALL, strict=True), number=20000
    )
    print(f"parse a typical call:              {wink_us:9.2f} us")
    print(f"  floor validate_json(strict):     {floor_us:9.2f} us")
    print(f"  ratio:                           {wink_us / floor_us:9.2f} x")
    print(f"parse, a key shared by objects:    {shared_us:9.2f} us")
    print(f"  floor validate_json(strict):     {shared_floor_us:9.2f} us")
    print(f"  ratio:                           {shared_us / shared_floor_us:9.2f} x")
    print(f"parse lookup_entity's arguments:   {call_us:9.2f} us")
    print(f"  floor validate_json(strict):     {call_floor_us:9.2f} us")
    print(f"  ratio:                           {call_us / call_floor_us:9.2f} x")


def bench_tool_schemas() -> list[Tool[Any, Any]]:
    """Schemas of distinct tools: built cold, then read warm."""
    tools: list[Tool[Any, Any]] = []

    def build(types: list[type[Any]]) -> None:
        tools[:] = [make_tool(i, tp) for i, tp in enumerate(types)]

    rounds = max(1, ROUNDS // 3)  # each round builds a thousand types
    best = best_ms_per_type(
        {"floor": lambda types: [TypeAdapter(tp).json_schema() for tp in types], "tools": build},
        TOOLS,
        rounds,
    )
    cold_ms, floor_ms = best["tools"] * TOOLS, best["floor"] * TOOLS
    warm_all_us = per_call_us(lambda: [tool.params_schema for tool in tools], number=200)
    warm_one_us = per_call_us(lambda: tools[0].params_schema, number=20000)
    print(f"{TOOLS} distinct tools, cold (compile + schema + checks), best of {rounds}:")
    print(f"  total:                           {cold_ms:9.1f} ms")
    print(f"  per tool:                        {cold_ms * 1000 / TOOLS:9.1f} us")
    print(f"  floor TypeAdapter + json_schema: {floor_ms:9.1f} ms")
    print(f"  ratio:                           {cold_ms / floor_ms:9.2f} x")
    print(f"{TOOLS} tool.params_schema, warm:      {warm_all_us:9.1f} us")
    print(f"  per tool:                        {warm_one_us:9.3f} us")
    return tools


def bench_render(tools: list[Tool[Any, Any]]) -> None:
    """Rendering a prompt of all ``tools``: first render and cached repeats."""
    sections: list[MarkdownSection[Any]] = [
        MarkdownSection(
            title=f"Group {start // TOOLS_PER_SECTION}",
            template="Use these tools when the task calls for them.",
            tools=tools[start : start + TOOLS_PER_SECTION],
        )
        for start in range(0, len(tools), TOOLS_PER_SECTION)
    ]
    template_ms = once_ms(lambda: PromptTemplate(ns="bench", key="all", sections=sections))
    template = PromptTemplate(ns="bench", key="all", sections=sections)
    prompt_ms = once_ms(lambda: Prompt(template))
    prompt = Prompt(template)
    bind_us = per_call_us(prompt.bind, number=2000)
    first_ms = once_ms(prompt.render)
    repeat_us = per_call_us(prompt.render, number=200)
    blocks = [f"## {section.title}\n\n{section.template.template}" for section in sections]
    floor_us = per_call_us(lambda: "\n\n".join(blocks), number=20000)
    rendered = prompt.render()
    assert len(rendered.tools) == len(tools)
    print(f"prompt of {len(tools)} tools in {len(sections)} sections:")
    print(f"  PromptTemplate(...):             {template_ms:9.2f} ms")
    print(f"  Prompt(template):                {prompt_ms:9.2f} ms")
    print(f"  prompt.bind():                   {bind_us:9.2f} us")
    print(f"  first render:                    {first_ms:9.2f} ms")
    print(f"  repeated render:                 {repeat_us:9.1f} us")
    print(f"  floor (join rendered blocks):    {floor_us:9.2f} us")
    print(f"  ratio:                           {repeat_us / floor_us:9.1f} x")


def main() -> None:
    """Print the figures."""
    bench_compile()
    bench_signature_tool()
    bench_parse()
    tools = bench_tool_schemas()
    bench_render(tools)


if __name__ == "__main__":
    main()
