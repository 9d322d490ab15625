"""A tool whose parameters are its fields shows every reader what the equivalent
hand-written frozen dataclass would: the same schema, byte for byte, and the same
provider specs; it is served over MCP and typed by mypy like one."""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field

from tests.mypy_check import check
from wink import MarkdownSection, Prompt, PromptTemplate, Tool, ToolContext, ToolResult, tool
from wink.providers import anthropic, gemini, mcp, openai


class Filter(BaseModel):
    field: str
    value: int = 0


@dataclass(frozen=True)
class Window:
    start: date
    days: int = 7


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclass(frozen=True)
class Hit:
    url: str


Limit = Annotated[int, Field(ge=1, le=50)]


# Each handler next to the params class a user would write for the same tool.


def plain(query: str, *, context: ToolContext) -> ToolResult[list[Hit]]:
    """Search."""
    return ToolResult.ok([])


@dataclass(frozen=True)
class PlainHand:
    query: str


def defaults(
    query: str, limit: int = 10, exact: bool = False, *, context: ToolContext
) -> ToolResult[list[Hit]]:
    """Search."""
    return ToolResult.ok([])


@dataclass(frozen=True)
class DefaultsHand:
    query: str
    limit: int = 10
    exact: bool = False


def literal(
    priority: Literal["p0", "p1", "p2"] = "p2", *, context: ToolContext
) -> ToolResult[list[Hit]]:
    """Search."""
    return ToolResult.ok([])


@dataclass(frozen=True)
class LiteralHand:
    priority: Literal["p0", "p1", "p2"] = "p2"


def optional(
    query: str | None = None, page: int | None = None, *, context: ToolContext
) -> ToolResult[list[Hit]]:
    """Search."""
    return ToolResult.ok([])


@dataclass(frozen=True)
class OptionalHand:
    query: str | None = None
    page: int | None = None


def sequences(
    tags: list[str], ids: tuple[int, ...] = (), *, context: ToolContext
) -> ToolResult[list[Hit]]:
    """Search."""
    return ToolResult.ok([])


@dataclass(frozen=True)
class SequencesHand:
    tags: list[str]
    ids: tuple[int, ...] = ()


def constrained(
    limit: Limit = 10,
    ratio: Annotated[float, Field(gt=0, lt=1)] = 0.5,
    code: Annotated[str, Field(pattern=r"^[A-Z]{3}$")] = "ABC",
    *,
    context: ToolContext,
) -> ToolResult[list[Hit]]:
    """Search."""
    return ToolResult.ok([])


@dataclass(frozen=True)
class ConstrainedHand:
    limit: Limit = 10
    ratio: Annotated[float, Field(gt=0, lt=1)] = 0.5
    code: Annotated[str, Field(pattern=r"^[A-Z]{3}$")] = "ABC"


def nested(
    filter: Filter, window: Window | None = None, *, context: ToolContext
) -> ToolResult[list[Hit]]:
    """Search."""
    return ToolResult.ok([])


@dataclass(frozen=True)
class NestedHand:
    filter: Filter
    window: Window | None = None


def nested_list(filters: list[Filter], *, context: ToolContext) -> ToolResult[list[Hit]]:
    """Search."""
    return ToolResult.ok([])


@dataclass(frozen=True)
class NestedListHand:
    filters: list[Filter]


def google_described(query: str, limit: int = 5, *, context: ToolContext) -> ToolResult[list[Hit]]:
    """Search.

    Args:
        query: What to look for,
            in plain words.
        limit (int): Most hits to return.
    """
    return ToolResult.ok([])


@dataclass(frozen=True)
class GoogleDescribedHand:
    query: str
    """What to look for,
    in plain words."""
    limit: int = 5
    """Most hits to return."""


def sphinx_described(
    query: str, lang: str = "en", *, context: ToolContext
) -> ToolResult[list[Hit]]:
    """Search.

    :param query: What to look for.
    """
    return ToolResult.ok([])


@dataclass(frozen=True)
class SphinxDescribedHand:
    query: str
    """What to look for."""
    lang: str = "en"


def explicit(
    query: Annotated[str, Field(description="Explicit words", min_length=2)],
    *,
    context: ToolContext,
) -> ToolResult[list[Hit]]:
    """Search.

    Args:
        query: Loses to the explicit description.
    """
    return ToolResult.ok([])


@dataclass(frozen=True)
class ExplicitHand:
    query: Annotated[str, Field(description="Explicit words", min_length=2)]


def described_nested(
    filter: Filter | None = None, *, context: ToolContext
) -> ToolResult[list[Hit]]:
    """Search.

    Args:
        filter: Narrows the hits.
    """
    return ToolResult.ok([])


@dataclass(frozen=True)
class DescribedNestedHand:
    filter: Filter | None = None
    """Narrows the hits."""


def kinds(
    color: Color,
    on: date,
    weights: dict[str, float],
    default_color: Color = Color.RED,
    *,
    context: ToolContext,
) -> ToolResult[list[Hit]]:
    """Search."""
    return ToolResult.ok([])


@dataclass(frozen=True)
class KindsHand:
    color: Color
    on: date
    weights: dict[str, float]
    default_color: Color = Color.RED


def field_default(
    limit: int = Field(default=3, ge=1), *, context: ToolContext
) -> ToolResult[list[Hit]]:
    """Search."""
    return ToolResult.ok([])


@dataclass(frozen=True)
class FieldDefaultHand:
    limit: int = Field(default=3, ge=1)


SHAPES = [
    (plain, PlainHand),
    (defaults, DefaultsHand),
    (literal, LiteralHand),
    (optional, OptionalHand),
    (sequences, SequencesHand),
    (constrained, ConstrainedHand),
    (nested, NestedHand),
    (nested_list, NestedListHand),
    (google_described, GoogleDescribedHand),
    (sphinx_described, SphinxDescribedHand),
    (explicit, ExplicitHand),
    (described_nested, DescribedNestedHand),
    (kinds, KindsHand),
    (field_default, FieldDefaultHand),
]
IDS = [handler.__name__ for handler, _ in SHAPES]


def hand_written(handler: Any, params: type[Any]) -> Tool[Any, Any]:
    def run(params: Any, *, context: ToolContext) -> ToolResult[list[Hit]]:
        return ToolResult.ok([])

    return Tool[params, list[Hit]](name=handler.__name__, description="Search.", handler=run)  # type: ignore[valid-type]  # a type chosen at run time


@pytest.mark.parametrize(("handler", "params"), SHAPES, ids=IDS)
def test_the_schema_is_the_hand_written_dataclasss_byte_for_byte(
    handler: Any, params: type[Any]
) -> None:
    generated, written = tool(handler), hand_written(handler, params)
    assert json.dumps(generated.params_schema) == json.dumps(written.params_schema)
    assert json.dumps(generated.result_schema) == json.dumps(written.result_schema)


def test_the_compared_schemas_are_the_ones_expected() -> None:
    # The comparison above holds because both sides carry what they should.
    assert tool(google_described).params_schema["properties"] == {
        "query": {"type": "string", "description": "What to look for,\nin plain words."},
        "limit": {"type": "integer", "description": "Most hits to return.", "default": 5},
    }
    assert tool(constrained).params_schema["properties"]["limit"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": 50,
        "default": 10,
    }
    assert tool(described_nested).params_schema["properties"]["filter"] == {
        "anyOf": [{"$ref": "#/$defs/Filter"}, {"type": "null"}],
        "default": None,
        "description": "Narrows the hits.",
    }


def prompt_of(*tools: Tool[Any, Any]) -> Prompt:
    template = PromptTemplate(
        ns="tests", key="dialects", sections=[MarkdownSection(title="T", tools=list(tools))]
    )
    return Prompt(template)


def test_every_provider_dialect_gives_the_hand_written_tools_specs() -> None:
    generated = prompt_of(*(tool(handler) for handler, _ in SHAPES)).render()
    written = prompt_of(*(hand_written(handler, params) for handler, params in SHAPES)).render()
    # OpenAI's strict mode cannot take a free-form mapping: that shape is left out of it.
    strict = {handler.__name__: handler is not kinds for handler, _ in SHAPES}
    for specs in (
        lambda source: openai.tool_specs(source, strict=strict),
        lambda source: openai.tool_specs(source, api="responses", strict="auto"),
        anthropic.tool_specs,
        gemini.tool_specs,
        lambda source: gemini.tool_specs(source, case="snake"),
        mcp.tool_specs,
    ):
        assert json.dumps(specs(generated)) == json.dumps(specs(written))


@tool
def open_ticket(title: str, urgent: bool = False, *, context: ToolContext) -> ToolResult[str]:
    """Open a ticket.

    Args:
        title: One line saying what is wrong.
    """
    return ToolResult.ok(f"opened {title!r}" + (" (urgent)" if urgent else ""))


def test_an_mcp_server_lists_and_runs_the_tool() -> None:
    mcp_sdk = pytest.importorskip("mcp")
    import anyio

    served = mcp.server(prompt_of(open_ticket))

    async def main() -> Any:
        async with mcp_sdk.Client(served, mode="legacy") as client:
            listed = await client.session.list_tools()
            called = await client.call_tool("open_ticket", {"title": "Crash", "urgent": True})
            refused = await client.call_tool("open_ticket", {"titel": "Crash"})
            return listed, called, refused

    listed, called, refused = anyio.run(main)
    assert [t.model_dump(by_alias=True, exclude_none=True) for t in listed.tools] == (
        mcp.tool_specs(served.rendered_prompt)
    )
    assert (called.is_error, called.structured_content) == (
        False,
        {"result": "opened 'Crash' (urgent)"},
    )
    assert refused.is_error is True


SNIPPET = '''
from typing import Any, Literal

from wink import Tool, ToolContext, ToolResult, tool


@tool
def create_ticket(
    title: str, priority: Literal["p0", "p1"] = "p1", *, context: ToolContext
) -> ToolResult[int]:
    """Open a ticket."""
    return ToolResult.ok(1)


@tool(name="fetch_page", sequential=True)
async def fetch(url: str, *, context: ToolContext) -> ToolResult[bytes]:
    """Fetch a page."""
    return ToolResult.ok(b"")


@tool
def ping(*, context: ToolContext) -> ToolResult[None]:
    """Ping."""
    return ToolResult(message="pong")


@tool
def wrong(title: str, *, context: ToolContext) -> int:
    """Not a tool result."""
    return 1


reveal_type(create_ticket)
reveal_type(fetch)
reveal_type(ping)
typed: Tool[Any, int] = create_ticket
mistyped: Tool[Any, str] = create_ticket
'''


def test_mypy_sees_the_result_type_and_any_for_the_generated_params(tmp_path: Path) -> None:
    assert check(tmp_path, {"fields_form": SNIPPET}) == [
        'fields_form.py:27: error: Argument 1 to "tool" has incompatible type "def wrong(title: '
        'str, *, context: ToolContext) -> int"; expected "ToolHandler[Never, Never]"  [arg-type]',
        'fields_form.py:27: note: "ToolHandler[Never, Never].__call__" has type "def __call__('
        'self, Never, /, *, context: ToolContext) -> ToolResult[Never]"',
        'fields_form.py:33: note: Revealed type is "wink.tools.tool.Tool[Any, int]"',
        'fields_form.py:34: note: Revealed type is "wink.tools.tool.Tool[Any, bytes]"',
        'fields_form.py:35: note: Revealed type is "wink.tools.tool.Tool[Any, None]"',
        "fields_form.py:37: error: Incompatible types in assignment (expression has type "
        '"Tool[Any, int]", variable has type "Tool[Any, str]")  [assignment]',
    ]
