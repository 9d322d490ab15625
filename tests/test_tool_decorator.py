"""Specification of ``@tool``: a ``Tool`` built from a handler's annotations and docstring."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from tests.mypy_check import check
from wink import (
    Prompt,
    PromptTemplate,
    PromptValidationError,
    Session,
    Tool,
    ToolCall,
    ToolContext,
    ToolExample,
    ToolExecutor,
    ToolResult,
    tool,
)
from wink.prompt import MarkdownSection


class SearchParams(BaseModel):
    query: str


@dataclass(frozen=True)
class SearchResult:
    url: str


def search(params: SearchParams, *, context: ToolContext) -> ToolResult[SearchResult]:
    """Search the knowledge base
    for pages.

    Everything after the first paragraph stays out of the description.
    """
    return ToolResult.ok(SearchResult(f"https://example.com/{params.query}"))


def test_types_name_and_description_come_from_the_handler() -> None:
    built = tool(search)
    assert type(built) is Tool[SearchParams, SearchResult]
    assert (built.name, built.description) == ("search", "Search the knowledge base for pages.")
    assert (built.params_type, built.result_type) == (SearchParams, SearchResult)
    assert built.handler is search
    assert (built.examples, built.accepts_overrides) == ((), True)


def test_decorated_tool_runs_in_an_executor() -> None:
    @tool
    def lookup(params: SearchParams, *, context: ToolContext) -> ToolResult[SearchResult]:
        """Look a page up."""
        return ToolResult.ok(SearchResult(params.query), message="Found.")

    template = PromptTemplate(
        ns="tests", key="decorated", sections=[MarkdownSection(title="T", tools=[lookup])]
    )
    executor = ToolExecutor(prompt=Prompt(template), session=Session())
    result = executor.execute(ToolCall("lookup", '{"query": "wink"}'))
    assert (result.success, result.value, result.render()) == (
        True,
        SearchResult("wink"),
        '{"url":"wink"}',
    )


def test_options_override_name_and_description_and_carry_examples() -> None:
    example = ToolExample(
        description="Find wink.", input=SearchParams(query="wink"), output=SearchResult("u")
    )
    built = tool(
        name="find_pages", description="Find pages.", examples=[example], accepts_overrides=False
    )(search)
    assert (built.name, built.description) == ("find_pages", "Find pages.")
    assert (built.examples, built.accepts_overrides) == ((example,), False)


def test_params_and_result_of_none_give_a_tool_of_none() -> None:
    @tool
    def ping(params: None, *, context: ToolContext) -> ToolResult[None]:
        """Check the service is up."""
        return ToolResult(message="pong")

    assert type(ping) is Tool[None, None]


def test_generic_result_types_are_kept() -> None:
    @tool
    def many(params: SearchParams, *, context: ToolContext) -> ToolResult[list[SearchResult]]:
        """Search for several pages."""
        return ToolResult.ok([])

    assert type(many) is Tool[SearchParams, list[SearchResult]]


def test_a_callable_object_is_read_through_its_call_method() -> None:
    class Searcher:
        """Search with a configured index."""

        def __call__(
            self, params: SearchParams, *, context: ToolContext
        ) -> ToolResult[SearchResult]:
            return ToolResult.ok(SearchResult(params.query))

    built = tool(name="indexed_search")(Searcher())
    assert (built.name, built.description) == ("indexed_search", "Search with a configured index.")
    assert type(built) is Tool[SearchParams, SearchResult]


class Index:
    def __init__(self, base: str) -> None:
        self.base = base

    def search(self, params: SearchParams, *, context: ToolContext) -> ToolResult[SearchResult]:
        """Search this index."""
        return ToolResult.ok(SearchResult(f"{self.base}/{params.query}"))


def test_a_bound_method_is_read_like_a_function() -> None:
    built = tool(Index("https://docs").search)
    assert type(built) is Tool[SearchParams, SearchResult]
    assert (built.name, built.description) == ("search", "Search this index.")


def undocumented(params: SearchParams, *, context: ToolContext) -> ToolResult[SearchResult]:
    return ToolResult.ok(SearchResult(""))


def unannotated_params(params, *, context: ToolContext) -> ToolResult[SearchResult]:  # type: ignore[no-untyped-def]  # the mistake under test
    """Search."""
    return ToolResult.ok(SearchResult(""))


def no_return_annotation(params: SearchParams, *, context: ToolContext):  # type: ignore[no-untyped-def]  # the mistake under test
    """Search."""
    return ToolResult.ok(SearchResult(""))


def bare_result(params: SearchParams, *, context: ToolContext) -> ToolResult:  # type: ignore[type-arg]  # the mistake under test
    """Search."""
    return ToolResult.ok(SearchResult(""))


def plain_return(params: SearchParams, *, context: ToolContext) -> SearchResult:
    """Search."""
    return SearchResult("")


def unresolvable(params: NotDefinedAnywhere, *, context: ToolContext) -> ToolResult[None]:  # type: ignore[name-defined]  # noqa: F821  # the mistake under test
    """Search."""
    return ToolResult(message="")


HINT = "annotate it -> ToolResult[ResultType]"


@pytest.mark.parametrize(
    ("handler", "message"),
    [
        (
            undocumented,
            "@tool: handler 'undocumented' has no docstring; write one (its first paragraph "
            "describes the tool to the model) or pass description='...'",
        ),
        (
            unannotated_params,
            "@tool: handler 'unannotated_params': parameter 'params' has no type annotation; "
            "write params: ParamsType (a pydantic model or a dataclass holding the arguments) "
            "or params: FieldType (str, int, ...) for a tool whose one field is 'params'",
        ),
        (
            no_return_annotation,
            f"@tool: handler 'no_return_annotation' has no return annotation; {HINT}",
        ),
        (
            bare_result,
            "@tool: handler 'bare_result' is annotated to return ToolResult, not "
            f"ToolResult[ResultType]; {HINT}",
        ),
        (
            plain_return,
            "@tool: handler 'plain_return' is annotated to return SearchResult, not "
            f"ToolResult[ResultType]; {HINT}",
        ),
        (
            unresolvable,
            "@tool: handler 'unresolvable': cannot resolve an annotation (name "
            "'NotDefinedAnywhere' is not defined); define the type at module level, before "
            "the handler",
        ),
    ],
)
def test_missing_or_unresolvable_annotations_say_what_to_write(handler: Any, message: str) -> None:
    with pytest.raises(PromptValidationError) as raised:
        tool(handler)
    assert str(raised.value) == message


def test_the_tool_checks_still_apply_to_what_the_handler_gives() -> None:
    def Search_Docs(params: SearchParams, *, context: ToolContext) -> ToolResult[SearchResult]:
        """Search."""
        return ToolResult.ok(SearchResult(""))

    with pytest.raises(PromptValidationError) as raised:
        tool(Search_Docs)
    assert str(raised.value).startswith("tool name 'Search_Docs' must match")


SNIPPET = '''
from dataclasses import dataclass

from pydantic import BaseModel

from wink import Tool, ToolContext, ToolResult, tool


class SearchParams(BaseModel):
    query: str


@dataclass
class SearchResult:
    url: str


@tool
def search(params: SearchParams, *, context: ToolContext) -> ToolResult[SearchResult]:
    """Search."""
    return ToolResult.ok(SearchResult(params.query))


@tool(name="search_all", accepts_overrides=False)
def search_all(params: SearchParams, *, context: ToolContext) -> ToolResult[list[SearchResult]]:
    """Search everything."""
    return ToolResult.ok([])


@tool
def ping(params: None, *, context: ToolContext) -> ToolResult[None]:
    """Ping."""
    return ToolResult(message="pong")


reveal_type(search)
reveal_type(search_all)
reveal_type(ping)
typed: Tool[SearchParams, SearchResult] = search
wrong: Tool[SearchParams, int] = search
'''


def test_mypy_infers_the_tool_type_from_the_handler(tmp_path: Path) -> None:
    assert check(tmp_path, {"decorated": SNIPPET}) == [
        'decorated.py:36: note: Revealed type is "wink.tools.tool.Tool[decorated.SearchParams, '
        'decorated.SearchResult]"',
        'decorated.py:37: note: Revealed type is "wink.tools.tool.Tool[decorated.SearchParams, '
        'list[decorated.SearchResult]]"',
        'decorated.py:38: note: Revealed type is "wink.tools.tool.Tool[None, None]"',
        "decorated.py:40: error: Incompatible types in assignment (expression has type "
        '"Tool[SearchParams, SearchResult]", variable has type "Tool[SearchParams, int]")  '
        "[assignment]",
    ]


ASYNC_SNIPPET = '''
from dataclasses import dataclass

from wink import Tool, ToolContext, ToolResult, tool


@dataclass
class Page:
    url: str


@tool
async def fetch(params: Page, *, context: ToolContext) -> ToolResult[str]:
    """Fetch."""
    return ToolResult.ok(params.url)


@tool(in_thread=True, sequential=True)
def read(params: Page, *, context: ToolContext) -> ToolResult[bytes]:
    """Read."""
    return ToolResult.ok(b"")


async def by_number(params: int, *, context: ToolContext) -> ToolResult[str]:
    return ToolResult.ok(str(params))


reveal_type(fetch)
reveal_type(read)
typed: Tool[Page, str] = fetch
wrong: Tool[Page, int] = fetch
Tool[Page, str](name="p", description="P.", handler=by_number)
'''


def test_mypy_infers_an_async_tools_type_and_checks_its_handler(tmp_path: Path) -> None:
    assert check(tmp_path, {"async_decorated": ASYNC_SNIPPET}) == [
        'async_decorated.py:28: note: Revealed type is "wink.tools.tool.Tool[async_decorated.Page, '
        'str]"',
        'async_decorated.py:29: note: Revealed type is "wink.tools.tool.Tool[async_decorated.Page, '
        'bytes]"',
        "async_decorated.py:31: error: Incompatible types in assignment (expression has type "
        '"Tool[Page, str]", variable has type "Tool[Page, int]")  [assignment]',
        'async_decorated.py:32: error: Argument "handler" to "Tool" has incompatible type "def '
        'by_number(params: int, *, context: ToolContext) -> Coroutine[Any, Any, ToolResult[str]]"; '
        'expected "ToolHandler[Page, str] | AsyncToolHandler[Page, str] | None"  [arg-type]',
    ]
