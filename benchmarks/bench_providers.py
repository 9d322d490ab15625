"""Provider spec emission for 500 tools: cold (caches cleared) and cached, every dialect.

Each tool has its own params type, as in a real prompt, so no work is shared.

Floors measured in the same run:
- cold: the least any emitter does, copying each tool's params schema into a
  ``{"name", "description", "parameters"}`` dict;
- cached: a perfect cache, one dictionary lookup per tool.

One more row emits strict OpenAI specs for 500 new tools over params types whose
specs were emitted before (a prompt rebuilt with fresh ``Tool`` objects): nothing
is cached for these tools, but each params schema's strict rewrite is.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from benchmarks.timing import per_call_us
from wink import Tool
from wink.providers import anthropic, clear_caches, gemini, mcp, openai

TOOLS = 500


class Address(BaseModel):
    """A postal address."""

    street: str
    city: str = Field(description="City name")


class Search(BaseModel):
    query: str = Field(description="What to look for")
    limit: int = 10
    since: datetime.datetime | None = None


class Ship(BaseModel):
    to: Address = Field(description="Destination")
    priority: Literal["low", "high"] = "low"
    weight: Annotated[float, Field(gt=0)]


class Cat(BaseModel):
    kind: Literal["cat"] = "cat"
    lives: int = 9


class Dog(BaseModel):
    kind: Literal["dog"]
    good: bool


class Adopt(BaseModel):
    pet: Annotated[Cat | Dog, Field(discriminator="kind")]
    notes: list[str] = []


class Found(BaseModel):
    ids: list[int]


SHAPES: tuple[type[BaseModel], ...] = (Search, Ship, Adopt)


def make_tools() -> list[Tool[Any, Any]]:
    """500 tools, each with its own params type (a subclass of one of a few shapes)."""
    params_types: list[type[BaseModel]] = []
    for index in range(TOOLS):
        shape = SHAPES[index % len(SHAPES)]
        params_types.append(type(f"{shape.__name__}{index}", (shape,), {"__module__": __name__}))
    return tools_over(params_types)


def tools_over(params_types: list[type[BaseModel]]) -> list[Tool[Any, Any]]:
    """A new tool for each params type, in order."""
    return [
        Tool[params, Found](name=f"tool_{index}", description=f"Benchmark tool {index}.")
        for index, params in enumerate(params_types)
    ]


def copy_json(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: copy_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [copy_json(item) for item in value]
    return value


def main() -> None:
    """Print cold and cached emission cost of each dialect for 500 tools."""
    tools = make_tools()
    dialects: dict[str, Callable[[], object]] = {
        "openai chat (strict auto)": lambda: openai.tool_specs(tools),
        "openai chat (strict off)": lambda: openai.tool_specs(tools, strict=False),
        "openai responses (strict on)": lambda: openai.tool_specs(
            tools, api="responses", strict=True
        ),
        "anthropic": lambda: anthropic.tool_specs(tools),
        "gemini json_schema": lambda: gemini.tool_specs(tools),
        "gemini openapi": lambda: gemini.tool_specs(tools, form="openapi"),
        "mcp": lambda: mcp.tool_specs(tools),
    }

    def naive() -> object:
        return [
            {"name": t.name, "description": t.description, "parameters": copy_json(t.params_schema)}
            for t in tools
        ]

    perfect = {tool: {"name": tool.name} for tool in tools}
    cold_floor = per_call_us(naive, number=20, repeat=5)
    cached_floor = per_call_us(lambda: [perfect[tool] for tool in tools], number=500, repeat=5)
    print(f"{TOOLS} tools; cold floor (copy each schema) {cold_floor / 1e3:8.2f} ms")
    print(f"{TOOLS} tools; cached floor (one lookup per tool) {cached_floor:8.1f} us")
    print(f"{'dialect':30} {'cold ms':>9} {'x floor':>8} {'cached us':>10} {'x floor':>8}")
    for name, emit in dialects.items():

        def cold(emit: Callable[[], object] = emit) -> object:
            clear_caches()
            return emit()

        cold_us = per_call_us(cold, number=3, repeat=3)
        emit()
        cached_us = per_call_us(emit, number=500, repeat=5)
        print(
            f"{name:30} {cold_us / 1e3:9.2f} {cold_us / cold_floor:8.1f} "
            f"{cached_us:10.1f} {cached_us / cached_floor:8.2f}"
        )

    # Fresh tools over the same params types: each set is emitted once, cold for its tools.
    clear_caches()
    openai.tool_specs(tools)
    params_types = [tool.params_type for tool in tools]
    fresh = iter([tools_over(params_types) for _ in range(3)])
    rebuilt_us = per_call_us(lambda: openai.tool_specs(next(fresh)), number=1, repeat=3)
    print(
        f"{'openai chat (known params)':30} {rebuilt_us / 1e3:9.2f} {rebuilt_us / cold_floor:8.1f}"
    )


if __name__ == "__main__":
    main()
