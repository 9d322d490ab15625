"""Specification of ``@tool`` over a handler whose parameters are the tool's fields."""

from __future__ import annotations

import asyncio
import dataclasses
import importlib
import pickle
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field

from wink import (
    MarkdownSection,
    Prompt,
    PromptTemplate,
    PromptValidationError,
    Session,
    Snapshot,
    Tool,
    ToolCall,
    ToolContext,
    ToolExample,
    ToolExecutor,
    ToolInvoked,
    ToolResult,
    tool,
)
from wink.cli.validate import CallChecker
from wink.contract._docstrings import argument_descriptions, summary
from wink.runtime.events import recorded_call


@dataclass(frozen=True)
class Issue:
    title: str
    priority: str


calls: list[dict[str, Any]] = []


@tool
def create_ticket(
    title: str, body: str, priority: Literal["p0", "p1", "p2"] = "p2", *, context: ToolContext
) -> ToolResult[Issue]:
    """Open a ticket in the tracker.

    Args:
        title: One line saying what is wrong.
        body: What happened, and how to see it
            again.
        context: Not a field: left out of the schema.
    """
    calls.append({"title": title, "body": body, "priority": priority})
    return ToolResult.ok(Issue(title, priority), message="Opened.")


def executor_for(*tools: Tool[Any, Any], session: Session | None = None) -> ToolExecutor:
    template = PromptTemplate(
        ns="tests", key="signature", sections=[MarkdownSection(title="T", tools=list(tools))]
    )
    return ToolExecutor(prompt=Prompt(template), session=session or Session())


# --- the generated params type ----------------------------------------------------------


def test_the_params_type_is_a_frozen_dataclass_named_after_the_tool() -> None:
    params_type = create_ticket.params_type
    assert (params_type.__name__, params_type.__qualname__, params_type.__module__) == (
        "CreateTicketParams",
        "CreateTicketParams",
        __name__,
    )
    assert type(create_ticket) is Tool[params_type, Issue]
    assert [f.name for f in dataclasses.fields(params_type)] == ["title", "body", "priority"]
    assert params_type.__dataclass_params__.frozen is True
    assert (create_ticket.name, create_ticket.description) == (
        "create_ticket",
        "Open a ticket in the tracker.",
    )


def test_the_schema_has_the_docstrings_descriptions_and_the_defaults() -> None:
    assert create_ticket.params_schema == {
        "type": "object",
        "properties": {
            "title": {"type": "string", "description": "One line saying what is wrong."},
            "body": {
                "type": "string",
                "description": "What happened, and how to see it\nagain.",
            },
            "priority": {"type": "string", "enum": ["p0", "p1", "p2"], "default": "p2"},
        },
        "required": ["title", "body"],
        "additionalProperties": False,
    }


def test_the_tool_name_gives_the_params_type_its_name() -> None:
    def lookup(query: str, *, context: ToolContext) -> ToolResult[None]:
        """Look up."""
        return ToolResult(message="")

    assert tool(name="find-open-issues")(lookup).params_type.__name__ == "FindOpenIssuesParams"
    assert tool(name="2fa_check")(lookup).params_type.__name__ == "Tool2faCheckParams"


def test_a_module_level_handlers_params_type_is_found_by_its_module_and_name() -> None:
    module = importlib.import_module(create_ticket.params_type.__module__)
    assert module.CreateTicketParams is create_ticket.params_type
    value = create_ticket.params_type(title="t", body="b")
    assert pickle.loads(pickle.dumps(value)) == value


def test_a_handler_defined_in_a_function_gets_a_local_name_and_is_not_defined_in_the_module() -> (
    None
):
    @tool
    def close_ticket(number: int, *, context: ToolContext) -> ToolResult[None]:
        """Close a ticket."""
        return ToolResult(message="Closed.")

    assert close_ticket.params_type.__qualname__ == (
        "test_a_handler_defined_in_a_function_gets_a_local_name_and_is_not_defined_in_the_"
        "module.<locals>.CloseTicketParams"
    )
    assert "CloseTicketParams" not in globals()


class Searcher:
    """Search with a configured index."""

    def __call__(self, query: str, *, context: ToolContext) -> ToolResult[list[str]]:
        return ToolResult.ok([query])

    def search(self, query: str, *, context: ToolContext) -> ToolResult[list[str]]:
        """Search the index."""
        return ToolResult.ok([query])


def test_methods_and_callable_objects_take_fields_too() -> None:
    bound = tool(Searcher().search)
    called = tool(name="indexed")(Searcher())
    assert bound.params_type.__qualname__ == "Searcher.SearchParams"
    assert called.params_type.__qualname__ == "Searcher.IndexedParams"
    executor = executor_for(bound, called)
    for name in ("search", "indexed"):
        result = executor.execute(ToolCall(name, '{"query": "wink"}'))
        assert (result.success, result.value) == (True, ["wink"])


def test_a_handler_with_no_fields_is_a_tool_without_params() -> None:
    received: list[dict[str, Any]] = []

    @tool
    def ping(*, context: ToolContext) -> ToolResult[str]:
        """Check the service is up."""
        received.append({"context": type(context).__name__})
        return ToolResult.ok("pong")

    assert type(ping) is Tool[None, str]
    session = Session()
    result = executor_for(ping, session=session).execute(ToolCall("ping", "{}"))
    assert (result.success, result.value, received) == (True, "pong", [{"context": "ToolContext"}])
    assert session[ToolInvoked].latest().params is None  # type: ignore[union-attr]  # recorded


# --- calling ----------------------------------------------------------------------------


def test_the_handler_gets_keyword_arguments_and_the_record_keeps_the_typed_params() -> None:
    calls.clear()
    session = Session()
    executor = executor_for(create_ticket, session=session)
    result = executor.execute(ToolCall("create_ticket", '{"title": "Crash", "body": "On start"}'))
    assert (result.success, result.value) == (True, Issue("Crash", "p2"))
    assert calls == [{"title": "Crash", "body": "On start", "priority": "p2"}]
    recorded = session[ToolInvoked].latest()
    assert recorded is not None
    assert recorded.params == create_ticket.params_type(title="Crash", body="On start")
    assert type(recorded.params) is create_ticket.params_type


def test_arguments_are_parsed_strictly_and_unknown_keys_are_refused() -> None:
    calls.clear()
    executor = executor_for(create_ticket)
    unknown = executor.execute(ToolCall("create_ticket", '{"title": "a", "body": "b", "x": 1}'))
    wrong = executor.execute(ToolCall("create_ticket", '{"title": 1, "body": "b"}'))
    out_of_range = executor.execute(
        ToolCall("create_ticket", '{"title": "a", "body": "b", "priority": "p9"}')
    )
    assert [r.success for r in (unknown, wrong, out_of_range)] == [False, False, False]
    assert "x: unknown field (allowed: title, body, priority)" in unknown.message
    assert "title: input should be a valid string (got 1)" in wrong.message
    assert calls == []


def test_an_async_handler_gives_an_async_tool_that_is_awaited_with_keywords() -> None:
    @tool(sequential=True)
    async def fetch(url: str, retries: int = 1, *, context: ToolContext) -> ToolResult[str]:
        """Fetch a page."""
        await asyncio.sleep(0)
        return ToolResult.ok(f"{url} x{retries}")

    assert (fetch.is_async, fetch.sequential) == (True, True)
    executor = executor_for(fetch)
    result = asyncio.run(executor.aexecute(ToolCall("fetch", '{"url": "u", "retries": 3}')))
    assert (result.success, result.value) == (True, "u x3")


def test_an_async_handler_of_the_fields_form_takes_a_timeout() -> None:
    @tool(timeout=0.05)
    async def crawl(url: str, *, context: ToolContext) -> ToolResult[str]:
        """Crawl a site."""
        await asyncio.sleep(5)
        return ToolResult.ok(url)

    assert crawl.timeout == 0.05
    result = asyncio.run(executor_for(crawl).aexecute(ToolCall("crawl", '{"url": "u"}')))
    assert (result.success, result.message) == (
        False,
        "Tool 'crawl' did not finish within its timeout of 0.05s, so nothing it did was "
        "kept; try a smaller request, or another way",
    )


def test_options_apply_to_the_fields_form_and_an_examples_input_may_be_a_dict() -> None:
    def read_note(path: str, *, context: ToolContext) -> ToolResult[str]:
        """Read a note."""
        return ToolResult.ok("")

    example = ToolExample(description="Read the list.", input={"path": "todo.md"}, output="milk")
    built = tool(
        name="read_file",
        description="Read one note.",
        examples=[example],
        accepts_overrides=False,
        in_thread=True,
    )(read_note)
    assert (built.name, built.description, built.accepts_overrides, built.in_thread) == (
        "read_file",
        "Read one note.",
        False,
        True,
    )
    assert built.examples == (
        ToolExample(
            description="Read the list.", input=built.params_type(path="todo.md"), output="milk"
        ),
    )


def test_an_examples_input_with_a_wrong_key_says_which() -> None:
    def read_note(path: str, *, context: ToolContext) -> ToolResult[str]:
        """Read a note."""
        return ToolResult.ok("")

    example = ToolExample(description="Read.", input={"file": "todo.md"}, output="")
    with pytest.raises(PromptValidationError) as raised:
        tool(examples=[example])(read_note)
    assert str(raised.value) == (
        "tool 'read_note' example 0 input: unknown field 'file' (fields: path)"
    )


def test_an_examples_input_without_a_required_field_says_which() -> None:
    def search(query: str, limit: int = 5, *, context: ToolContext) -> ToolResult[str]:
        """Search."""
        return ToolResult.ok("")

    example = ToolExample(description="Search.", input={"limit": 2}, output="")
    with pytest.raises(PromptValidationError) as raised:
        tool(examples=[example])(search)
    assert str(raised.value) == (
        "tool 'search' example 0 input: missing field 'query' (fields: query, limit)"
    )


def test_an_async_handler_cannot_run_in_a_thread() -> None:
    async def fetch(url: str, *, context: ToolContext) -> ToolResult[str]:
        """Fetch."""
        return ToolResult.ok(url)

    with pytest.raises(PromptValidationError) as raised:
        tool(in_thread=True)(fetch)
    assert str(raised.value) == (
        "tool 'fetch': in_thread=True is for synchronous handlers; an async handler runs on "
        "the event loop"
    )


# --- saving, loading and validating -----------------------------------------------------


def test_a_session_with_such_a_call_saves_loads_and_its_calls_validate() -> None:
    session = Session()
    executor = executor_for(create_ticket, session=session)
    executor.execute(ToolCall("create_ticket", '{"title": "Crash", "body": "b"}', "c1"))
    executor.execute(ToolCall("create_ticket", '{"title": "Crash"}', "c2"))
    text = session.snapshot().to_json()
    loaded = Snapshot.from_json(text).log[ToolInvoked]
    assert [(event.call_id, event.params) for event in loaded] == [
        ("c1", {"title": "Crash", "body": "b", "priority": "p2"}),
        ("c2", None),
    ]
    checker = CallChecker([create_ticket])
    problems = [
        checker.problems(recorded_call({"name": e.name, "arguments": e.arguments})) for e in loaded
    ]
    assert [[str(p) for p in found or ()] for found in problems] == [
        [],
        ["body: required field is missing"],
    ]


# --- the params form keeps its meaning ----------------------------------------------------


class Query(BaseModel):
    text: str


@dataclass(frozen=True)
class Page:
    url: str


def by_model(query: Query, *, context: ToolContext) -> ToolResult[str]:
    """Search."""
    return ToolResult.ok(query.text)


def by_dataclass(page: Page, *, context: ToolContext) -> ToolResult[str]:
    """Open."""
    return ToolResult.ok(page.url)


def by_none(params: None, *, context: ToolContext) -> ToolResult[str]:
    """Ping."""
    return ToolResult.ok("pong")


def model_then_field(query: Query, limit: int = 5, *, context: ToolContext) -> ToolResult[str]:
    """Search a few."""
    return ToolResult.ok(f"{query.text}:{limit}")


@pytest.mark.parametrize(
    ("handler", "params_type"), [(by_model, Query), (by_dataclass, Page), (by_none, None)]
)
def test_one_parameter_typed_with_a_model_dataclass_or_none_is_the_params_type(
    handler: Any, params_type: Any
) -> None:
    built = tool(handler)
    assert (built.params_type, built.handler) == (params_type, handler)


def test_a_model_beside_other_parameters_is_a_field() -> None:
    built = tool(model_then_field)
    assert [f.name for f in dataclasses.fields(built.params_type)] == ["query", "limit"]
    result = executor_for(built).execute(
        ToolCall("model_then_field", '{"query": {"text": "a"}, "limit": 2}')
    )
    assert (result.success, result.value) == (True, "a:2")


# --- descriptions -----------------------------------------------------------------------


def test_sphinx_param_lines_describe_fields_and_an_undescribed_field_is_allowed() -> None:
    def search(
        query: str, limit: int = 5, lang: str = "en", *, context: ToolContext
    ) -> ToolResult[None]:
        """Search the docs.
        :param query: What to look for.
        :param int limit: Most hits,
            at most 50.
        :returns: nothing.
        """
        return ToolResult(message="")

    built = tool(search)
    assert built.description == "Search the docs."
    assert built.param_descriptions() == {
        "query": "What to look for.",
        "limit": "Most hits,\nat most 50.",
    }


def test_an_explicit_field_description_wins_over_the_docstring() -> None:
    def search(
        query: Annotated[str, Field(description="Explicit.", min_length=1)],
        *,
        context: ToolContext,
    ) -> ToolResult[None]:
        """Search.

        Args:
            query: From the docstring.
        """
        return ToolResult(message="")

    assert tool(search).params_schema["properties"]["query"] == {
        "type": "string",
        "description": "Explicit.",
        "minLength": 1,
    }


# --- what cannot be told apart is refused ------------------------------------------------


def star_args(*queries: str, context: ToolContext) -> ToolResult[None]:
    """Search."""
    return ToolResult(message="")


def star_kwargs(query: str, *, context: ToolContext, **options: str) -> ToolResult[None]:
    """Search."""
    return ToolResult(message="")


def context_by_position(query: str, context: ToolContext) -> ToolResult[None]:
    """Search."""
    return ToolResult(message="")


def no_context(query: str) -> ToolResult[None]:
    """Search."""
    return ToolResult(message="")


def unannotated_field(query: str, limit, *, context: ToolContext) -> ToolResult[None]:  # type: ignore[no-untyped-def]  # the mistake under test
    """Search."""
    return ToolResult(message="")


def keyword_only_field(query: str, *, context: ToolContext, limit: int = 5) -> ToolResult[None]:
    """Search."""
    return ToolResult(message="")


def positional_only_field(query: str, /, *, context: ToolContext) -> ToolResult[None]:
    """Search."""
    return ToolResult(message="")


def mangled(__query: str, *, context: ToolContext) -> ToolResult[None]:
    """Search."""
    return ToolResult(message="")


def mutable_default(tags: list[str] = [], *, context: ToolContext) -> ToolResult[None]:  # noqa: B006  # the mistake under test
    """Search."""
    return ToolResult(message="")


def lone_any(params: Any, *, context: ToolContext) -> ToolResult[None]:
    """Search."""
    return ToolResult(message="")


def misdocumented(query: str, *, context: ToolContext) -> ToolResult[None]:
    """Search.

    Args:
        qeury: What to look for.
    """
    return ToolResult(message="")


async def streaming(query: str, *, context: ToolContext):  # type: ignore[no-untyped-def]  # the mistake under test
    """Search."""
    yield ToolResult(message="")


streaming.__annotations__["return"] = ToolResult[None]

FIELDS = "(title: str, limit: int = 10, *, context: ToolContext)"


@pytest.mark.parametrize(
    ("handler", "message"),
    [
        (
            star_args,
            "@tool: handler 'star_args' takes *queries: a tool's fields are named; write each "
            f"as a parameter (def star_args{FIELDS}) or take a params type (def star_args("
            "params: ParamsType, *, context: ToolContext))",
        ),
        (
            star_kwargs,
            "@tool: handler 'star_kwargs' takes **options: a tool's fields are named; write "
            f"each as a parameter (def star_kwargs{FIELDS}) or take a params type (def "
            "star_kwargs(params: ParamsType, *, context: ToolContext))",
        ),
        (
            context_by_position,
            "@tool: handler 'context_by_position' takes 'context' by position; write it "
            f"keyword-only, after a '*': def context_by_position{FIELDS} or def "
            "context_by_position(params: ParamsType, *, context: ToolContext)",
        ),
        (
            no_context,
            "@tool: handler 'no_context' has no 'context' parameter; write it keyword-only, "
            f"after a '*': def no_context{FIELDS} or def no_context(params: ParamsType, *, "
            "context: ToolContext)",
        ),
        (
            unannotated_field,
            "@tool: handler 'unannotated_field': parameter 'limit' has no type annotation; "
            "annotate it with the field's type, such as limit: str",
        ),
        (
            keyword_only_field,
            "@tool: handler 'keyword_only_field': parameter 'limit' is keyword-only, and only "
            f"'context' may be; move it before the '*': def keyword_only_field{FIELDS}",
        ),
        (
            positional_only_field,
            "@tool: handler 'positional_only_field': parameter 'query' is positional-only; "
            "remove the '/' (fields are passed by keyword)",
        ),
        (
            mangled,
            "@tool: handler 'mangled': parameter '__query': Python mangles a name starting "
            "with '__' in a class, so it cannot be a field; rename it (query)",
        ),
        (
            mutable_default,
            "@tool: handler 'mutable_default': parameter 'tags' has a mutable default (list); "
            "write an immutable one, such as tags: tuple[str, ...] = () or tags: str | None "
            "= None",
        ),
        (
            lone_any,
            "@tool: handler 'lone_any': parameter 'params' is annotated Any, which names "
            "neither a params type nor a field type; write params: ParamsType (a pydantic "
            "model or a dataclass) or a JSON type such as params: str",
        ),
        (
            misdocumented,
            "@tool: handler 'misdocumented': its docstring describes 'qeury', which is not one "
            "of its parameters (query); correct the name or remove the entry",
        ),
        (
            streaming,
            "@tool: handler 'streaming' is an async generator; write async def streaming(...) "
            "-> ToolResult[ResultType] returning one result",
        ),
    ],
)
def test_a_parameter_that_cannot_be_a_field_is_refused_saying_what_to_write(
    handler: Any, message: str
) -> None:
    with pytest.raises(PromptValidationError) as raised:
        tool(handler)
    assert str(raised.value) == message


class LookupParams:  # a name the module uses already, for something else
    pass


def lookup(query: str, *, context: ToolContext) -> ToolResult[None]:
    """Look up."""
    return ToolResult(message="")


def test_a_params_type_name_the_module_already_uses_is_refused_and_left_alone() -> None:
    with pytest.raises(PromptValidationError) as raised:
        tool(lookup)
    assert str(raised.value) == (
        f"@tool: handler 'lookup': its params type would be {__name__}."
        "LookupParams, but the module already defines LookupParams (a type); name the tool "
        "differently with @tool(name=...), or write the params class yourself and take it "
        "as the one parameter: def lookup(params: LookupParams, *, context: ToolContext)"
    )
    assert globals()["LookupParams"] is LookupParams
    assert tool(name="find")(lookup).params_type.__name__ == "FindParams"


def test_building_the_same_tool_again_replaces_its_params_type() -> None:
    first = tool(name="find_again")(lookup)
    second = tool(name="find_again")(lookup)
    assert globals()["FindAgainParams"] is second.params_type is not first.params_type


def test_two_handlers_cannot_share_a_params_type_name() -> None:
    tool(name="find_twice")(lookup)
    with pytest.raises(PromptValidationError) as raised:
        tool(name="find_twice")(no_context_needed)
    assert str(raised.value).startswith(
        f"@tool: handler 'find_twice': its params type would be {__name__}."
        "FindTwiceParams, but the module already defines FindTwiceParams (the params of "
        "handler 'lookup'); name the tool differently"
    )


def no_context_needed(query: str, *, context: ToolContext) -> ToolResult[None]:
    """Look up otherwise."""
    return ToolResult(message="")


# --- reading a docstring's parameter sections ---------------------------------------------

DOCSTRING = """Create a ticket
in the tracker.
Args:
    title: The title.
    body (str): What happened,
        continued here.

        A second paragraph.
    priority:
    context: The context.

Returns:
    The issue.

:param limit: Most hits.
:param int other: Other
    words.
:returns: nothing.
"""


def test_the_summary_stops_at_the_first_section() -> None:
    assert summary(DOCSTRING) == "Create a ticket in the tracker."
    assert summary(":param x: Only a field.") is None


def test_google_and_sphinx_entries_are_read_and_empty_ones_left_out() -> None:
    assert argument_descriptions(DOCSTRING) == {
        "title": "The title.",
        "body": "What happened,\ncontinued here.\n\nA second paragraph.",
        "context": "The context.",
        "limit": "Most hits.",
        "other": "Other\nwords.",
    }


def test_other_google_headers_list_parameters_too() -> None:
    text = "Do it.\n\nKeyword Arguments:\n    a: First.\nParameters:\n    b: Second.\n"
    assert argument_descriptions(text) == {"a": "First.", "b": "Second."}
