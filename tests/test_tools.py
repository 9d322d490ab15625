"""Specification of ``wink.tools``: ``Tool`` validation, examples, handlers and results."""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field
from typing import Annotated, Any, TypeVar

import pytest
from pydantic import BaseModel, Field, computed_field, model_validator

from wink.contract import compile_contract
from wink.errors import PromptValidationError, WinkError
from wink.resources import InMemoryFilesystem, ResourceRegistry
from wink.runtime.session import Session
from wink.tools import Tool, ToolContext, ToolExample, ToolResult


@dataclass
class LookupParams:
    entity_id: str = field(metadata={"description": "Global identifier to fetch"})
    include_related: bool = False


@dataclass
class LookupResult:
    entity_id: str
    document_url: str | None = None


def lookup(params: LookupParams, *, context: ToolContext) -> ToolResult[LookupResult]:
    return ToolResult.ok(LookupResult(params.entity_id))


def make_tool(**overrides: Any) -> Tool[LookupParams, LookupResult]:
    arguments: dict[str, Any] = {
        "name": "lookup_entity",
        "description": "Fetch an entity.",
        "handler": lookup,
    }
    return Tool[LookupParams, LookupResult](**{**arguments, **overrides})


def rejection(**overrides: Any) -> str:
    with pytest.raises(PromptValidationError) as raised:
        make_tool(**overrides)
    return str(raised.value)


# --- name and description ---------------------------------------------------------------


@pytest.mark.parametrize("name", ["a", "lookup_entity", "get-2", "x" * 64, "0_-"])
def test_a_name_matching_the_pattern_is_accepted(name: str) -> None:
    assert make_tool(name=name).name == name


@pytest.mark.parametrize(
    "name",
    ["", "Lookup", "look up", " lookup", "lookup ", "lookup\n", "tab\tname", "a.b", "x" * 65, "é"],
)
def test_a_name_outside_the_pattern_is_rejected_naming_it(name: str) -> None:
    assert rejection(name=name) == (
        f"tool name {name!r} must match ^[a-z0-9_-]{{1,64}}$ (lowercase letters, digits, "
        "'_' or '-', no spaces)"
    )


def test_the_description_is_stripped() -> None:
    assert make_tool(description="  Fetch an entity.\n").description == "Fetch an entity."


def test_a_description_of_200_characters_is_accepted() -> None:
    assert len(make_tool(description="d" * 200).description) == 200


def test_a_description_longer_than_200_characters_is_rejected() -> None:
    assert rejection(description="d" * 201) == (
        "tool 'lookup_entity': description must be 1-200 characters after stripping, "
        f"got 201: {'d' * 40!r}"
    )


def test_a_blank_description_is_rejected() -> None:
    assert rejection(description="  \n ") == (
        "tool 'lookup_entity': description must be 1-200 characters after stripping, got 0: ''"
    )


def test_a_non_ascii_description_is_rejected() -> None:
    assert rejection(description="Fetch an entité.") == (
        "tool 'lookup_entity': description must be ASCII: 'Fetch an entité.'"
    )


# --- type arguments and contracts -------------------------------------------------------


def test_a_tool_without_type_arguments_is_rejected() -> None:
    with pytest.raises(PromptValidationError) as raised:
        Tool(name="lookup_entity", description="Fetch an entity.")
    assert str(raised.value) == (
        "tool 'lookup_entity': write Tool[ParamsType, ResultType](...) with concrete type arguments"
    )


ParamsVar = TypeVar("ParamsVar")


@pytest.mark.parametrize(
    "arguments", [(ParamsVar, LookupResult), (Any, Any)], ids=["typevar", "any"]
)
def test_a_tool_with_non_concrete_type_arguments_is_rejected(arguments: tuple[Any, Any]) -> None:
    with pytest.raises(PromptValidationError) as raised:
        Tool[arguments](name="lookup_entity", description="Fetch an entity.")  # type: ignore[misc,valid-type]  # a runtime subscript under test
    assert "with concrete type arguments" in str(raised.value)


def test_a_params_type_that_is_not_an_object_is_rejected() -> None:
    with pytest.raises(PromptValidationError) as raised:
        Tool[list[LookupParams], LookupResult](name="lookup_entity", description="Fetch.")
    assert str(raised.value) == (
        "tool 'lookup_entity': params type list[test_tools.LookupParams] does not describe "
        "a JSON object; use a dataclass, a pydantic model or None"
    )


def test_the_tool_exposes_its_compiled_contracts_and_schemas() -> None:
    tool = make_tool()
    assert tool.params_type is LookupParams
    assert tool.result_type is LookupResult
    # The compiled contract, with the tool's size limit on arguments.
    assert tool.params_contract.input_schema is compile_contract(LookupParams).input_schema
    assert tool.params_contract.max_bytes == tool.max_argument_bytes == 1024 * 1024
    assert tool.params_schema == {
        "properties": {
            "entity_id": {"description": "Global identifier to fetch", "type": "string"},
            "include_related": {"default": False, "type": "boolean"},
        },
        "required": ["entity_id"],
        "type": "object",
        "additionalProperties": False,
    }
    assert tool.result_schema == compile_contract(LookupResult).output_schema
    assert tool.param_descriptions() == {"entity_id": "Global identifier to fetch"}


def test_a_tool_is_frozen() -> None:
    tool = make_tool()
    with pytest.raises(dataclasses.FrozenInstanceError):
        tool.name = "other"  # type: ignore[misc]  # assignment under test


def test_a_tool_without_params_has_the_empty_object_schema() -> None:
    tool = Tool[None, LookupResult](name="ping", description="Check the service.")
    assert tool.params_schema == {"type": "object", "properties": {}, "additionalProperties": False}


def test_the_same_type_arguments_give_the_same_tool_class() -> None:
    assert type(make_tool()) is Tool[LookupParams, LookupResult]
    assert type(make_tool()).__name__ == "Tool[LookupParams, LookupResult]"


# --- examples -----------------------------------------------------------------------------


def example(description: str = "Fetch one", **parts: Any) -> ToolExample[Any, Any]:
    return ToolExample(
        description=description,
        input=parts.get("input", LookupParams("e-1")),
        output=parts.get("output", LookupResult("e-1", "https://example.com/e-1")),
    )


def test_valid_examples_are_kept_as_a_tuple() -> None:
    examples = [example(), example("Fetch two", input=LookupParams("e-2", True))]
    assert make_tool(examples=examples).examples == tuple(examples)


def test_an_example_input_of_the_wrong_type_is_rejected() -> None:
    assert rejection(examples=(example(input={"entity_id": "e-1"}),)) == (
        "tool 'lookup_entity' example 0 input: {'entity_id': 'e-1'} is not an instance of "
        "LookupParams"
    )


def test_an_example_output_of_the_wrong_type_is_rejected() -> None:
    assert rejection(examples=(example(), example(output=LookupParams("e-1")))) == (
        "tool 'lookup_entity' example 1 output: LookupParams(entity_id='e-1', "
        "include_related=False) is not an instance of LookupResult"
    )


@pytest.mark.filterwarnings("ignore::UserWarning")  # pydantic warns while dumping the bad value
def test_an_example_with_a_wrongly_typed_field_is_rejected_naming_the_field() -> None:
    assert rejection(examples=(example(input=LookupParams(entity_id=7)),)) == (  # type: ignore[arg-type]  # the wrong value under test
        "tool 'lookup_entity' example 0 ('Fetch one') input: entity_id: expected str (got 7)"
    )


class Range(BaseModel):
    low: int
    high: int

    @model_validator(mode="after")
    def ordered(self) -> Range:
        if self.low > self.high:
            raise ValueError("low must not exceed high")
        return self


class Code(BaseModel):
    code: Annotated[str, Field(json_schema_extra={"minLength": 3})]


def test_an_example_only_pydantic_rejects_is_a_disagreement_naming_the_example() -> None:
    bad = ToolExample("Reversed", Range.model_construct(low=2, high=1), LookupResult("x"))
    with pytest.raises(PromptValidationError) as raised:
        Tool[Range, LookupResult](name="pick", description="Pick.", examples=(bad,))
    assert str(raised.value) == (
        "tool 'pick' example 0 ('Reversed') input: pydantic rejects it but the JSON Schema "
        'accepts it (<root>: value error, low must not exceed high (got {"low":2,"high":1}))'
    )


def test_an_example_only_jsonschema_rejects_is_a_disagreement_naming_the_example() -> None:
    bad = ToolExample("Short code", Code(code="ab"), LookupResult("x"))
    with pytest.raises(PromptValidationError) as raised:
        Tool[Code, LookupResult](name="check", description="Check.", examples=(bad,))
    assert str(raised.value) == (
        "tool 'check' example 0 ('Short code') input: the JSON Schema rejects it but pydantic "
        "accepts it ('ab' is too short)"
    )


def test_an_example_description_must_be_short_ascii() -> None:
    assert rejection(examples=(example("Fetch é"),)) == (
        "tool 'lookup_entity' example 0: description must be ASCII: 'Fetch é'"
    )
    assert "got 201" in rejection(examples=(example("d" * 201),))


def test_an_example_that_is_not_a_tool_example_is_rejected() -> None:
    assert rejection(examples=("call it",)) == (
        "tool 'lookup_entity' example 0: 'call it' is not a ToolExample"
    )


class Total(BaseModel):
    amount: int

    @computed_field  # type: ignore[prop-decorator]  # pydantic's documented stacking
    @property
    def doubled(self) -> int:
        return self.amount * 2


def test_a_result_with_a_computed_field_is_a_valid_example_output() -> None:
    tool = Tool[LookupParams, Total](
        name="total",
        description="Sum up.",
        examples=(ToolExample("Sum", LookupParams("e"), Total(amount=2)),),
    )
    assert tool.result_schema["required"] == ["amount", "doubled"]


def test_examples_of_a_tool_without_params_or_result_use_none() -> None:
    tool = Tool[None, None](
        name="ping", description="Ping.", examples=(ToolExample("Ping", None, None),)
    )
    assert tool.examples[0].input is None


def test_a_list_result_example_is_checked_item_by_item() -> None:
    good = ToolExample("Two", LookupParams("e"), [LookupResult("a"), LookupResult("b")])
    Tool[LookupParams, list[LookupResult]](name="many", description="Many.", examples=(good,))
    bad: Any = ToolExample("Mixed", LookupParams("e"), [LookupResult("a"), LookupParams("b")])
    with pytest.raises(PromptValidationError) as raised:
        Tool[LookupParams, list[LookupResult]](name="many", description="Many.", examples=(bad,))
    assert str(raised.value).startswith("tool 'many' example 0 output: [LookupResult(")


# --- handler signature ---------------------------------------------------------------


def positional_only(params: LookupParams, /, *, context: ToolContext) -> ToolResult[LookupResult]:
    return ToolResult.error("unused")


def with_optional_keyword(
    params: LookupParams, *, context: ToolContext, verbose: bool = False
) -> ToolResult[LookupResult]:
    return ToolResult.error("unused")


class CallableHandler:
    def __call__(self, params: LookupParams, *, context: ToolContext) -> ToolResult[LookupResult]:
        return ToolResult.error("unused")

    def method(self, params: LookupParams, *, context: ToolContext) -> ToolResult[LookupResult]:
        return ToolResult.error("unused")


@pytest.mark.parametrize(
    "handler",
    [lookup, positional_only, with_optional_keyword, CallableHandler(), CallableHandler().method],
    ids=["function", "positional-only", "optional-keyword", "callable", "method"],
)
def test_a_handler_with_params_and_keyword_only_context_is_accepted(handler: Any) -> None:
    assert make_tool(handler=handler).handler is handler


def context_positional(params: Any, context: Any) -> Any: ...
def no_context(params: Any) -> Any: ...
def two_params(params: Any, other: Any, *, context: Any) -> Any: ...
def no_params(*, context: Any) -> Any: ...
def variadic(params: Any, *args: Any, context: Any, **kwargs: Any) -> Any: ...
def extra_required(params: Any, *, context: Any, mode: str) -> Any: ...


@pytest.mark.parametrize(
    ("handler", "problem"),
    [
        (
            context_positional,
            "takes 2 positional parameters, expected 1 (params); "
            "has no keyword-only 'context' parameter",
        ),
        (no_context, "has no keyword-only 'context' parameter"),
        (two_params, "takes 2 positional parameters, expected 1 (params)"),
        (no_params, "takes 0 positional parameters, expected 1 (params)"),
        (variadic, "has variadic parameters ['args', 'kwargs']"),
        (extra_required, "has other required keyword-only parameters ['mode']"),
    ],
    ids=lambda value: getattr(value, "__name__", ""),
)
def test_a_handler_with_another_signature_is_rejected_naming_the_problem(
    handler: Any, problem: str
) -> None:
    assert rejection(handler=handler) == (
        f"tool 'lookup_entity': handler {handler.__qualname__!r} {problem}; "
        "write def handler(params, *, context): ..."
    )


async def async_lookup(params: LookupParams, *, context: ToolContext) -> ToolResult[LookupResult]:
    return ToolResult.error("unused")


async def async_generator(params: LookupParams, *, context: ToolContext) -> Any:
    yield ToolResult.error("unused")


class AsyncCallableHandler:
    async def __call__(
        self, params: LookupParams, *, context: ToolContext
    ) -> ToolResult[LookupResult]:
        return ToolResult.error("unused")


class AsyncGeneratorCallable:
    async def __call__(self, params: LookupParams, *, context: ToolContext) -> Any:
        yield ToolResult.error("unused")


@pytest.mark.parametrize(
    ("handler", "shown"),
    [(async_generator, "async_generator"), (AsyncGeneratorCallable(), None)],
    ids=["async-generator", "async-generator-callable"],
)
def test_an_async_generator_handler_is_rejected_at_construction_naming_the_tool(
    handler: Any, shown: str | None
) -> None:
    assert rejection(handler=handler) == (
        f"tool 'lookup_entity': handler {shown or handler!r} is an async generator; write "
        "def handler(params, *, context): ... or async def handler(params, *, context): ..."
    )


@pytest.mark.parametrize(
    "handler",
    [async_lookup, functools.partial(async_lookup), AsyncCallableHandler()],
    ids=["async-def", "partial", "async-callable"],
)
def test_an_async_handler_makes_an_async_tool(handler: Any) -> None:
    built = make_tool(handler=handler)
    assert (built.is_async, built.in_thread, built.sequential) == (True, False, False)


def test_a_sync_handler_makes_a_sync_tool() -> None:
    assert make_tool().is_async is False


def test_an_async_handler_with_positional_context_is_rejected() -> None:
    async def positional(params: LookupParams, context: ToolContext) -> ToolResult[LookupResult]:
        return ToolResult.error("unused")

    assert rejection(handler=positional) == (
        "tool 'lookup_entity': handler 'test_an_async_handler_with_positional_context_is_rejected."
        "<locals>.positional' takes 2 positional parameters, expected 1 (params); has no "
        "keyword-only 'context' parameter; write def handler(params, *, context): ..."
    )


def test_in_thread_is_refused_for_an_async_handler() -> None:
    assert rejection(handler=async_lookup, in_thread=True) == (
        "tool 'lookup_entity': in_thread=True is for synchronous handlers; an async handler "
        "runs on the event loop"
    )


def test_async_handler_is_the_awaited_form_of_a_sync_handler() -> None:
    made = make_tool(async_handler=async_lookup)
    assert (made.is_async, made.awaited_handler, make_tool().awaited_handler) == (
        False,
        async_lookup,
        None,
    )
    assert make_tool(handler=async_lookup).awaited_handler is async_lookup


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (
            {"handler": async_lookup, "async_handler": async_lookup},
            "tool 'lookup_entity': async_handler is the async form of a synchronous handler; "
            "give an async def handler as handler=... alone",
        ),
        (
            {"handler": None, "async_handler": async_lookup},
            "tool 'lookup_entity': async_handler is the async form of a synchronous handler; "
            "give an async def handler as handler=... alone",
        ),
        (
            {"async_handler": lookup},
            "tool 'lookup_entity': async_handler 'lookup' is not an async def function",
        ),
        (
            {"async_handler": async_lookup, "in_thread": True},
            "tool 'lookup_entity': in_thread=True runs the handler in a worker thread under "
            "aexecute, which awaits async_handler instead; give one or the other",
        ),
    ],
)
def test_async_handler_misuse_is_refused(overrides: dict[str, Any], message: str) -> None:
    assert rejection(**overrides) == message


def test_a_handler_that_is_not_callable_is_rejected() -> None:
    assert rejection(handler="lookup") == "tool 'lookup_entity': handler 'lookup' is not callable"


def test_a_tool_may_have_no_handler() -> None:
    assert make_tool(handler=None).handler is None


# --- results -----------------------------------------------------------------------------


def test_ok_builds_a_successful_result_with_a_value() -> None:
    result = ToolResult.ok(LookupResult("e"), message="Fetched.")
    assert result == ToolResult("Fetched.", LookupResult("e"), True, False)


def test_error_builds_a_failed_result_without_a_value() -> None:
    assert ToolResult.error("Not found.") == ToolResult("Not found.", None, False, False)


def test_render_is_empty_for_no_value() -> None:
    assert ToolResult.error("Not found.").render() == ""


def test_render_is_compact_json_without_none_fields() -> None:
    assert ToolResult.ok(LookupResult("e")).render() == '{"entity_id":"e"}'


def test_render_of_a_list_drops_none_fields_in_every_item() -> None:
    value = [LookupResult("a"), LookupResult("b", "https://b")]
    assert ToolResult.ok(value).render() == (
        '[{"entity_id":"a"},{"entity_id":"b","document_url":"https://b"}]'
    )


def test_render_of_plain_values_is_json() -> None:
    assert ToolResult.ok("text").render() == '"text"'
    assert ToolResult.ok(3).render() == "3"
    assert ToolResult.ok([]).render() == "[]"


@dataclass
class Report:
    lines: list[str]

    def render(self) -> str:
        return "\n".join(self.lines)


def test_render_uses_the_value_own_render_method() -> None:
    assert ToolResult.ok(Report(["a", "b"])).render() == "a\nb"


def test_a_result_is_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        ToolResult.ok(1).message = "changed"  # type: ignore[misc]  # assignment under test


# --- context -------------------------------------------------------------------------


def test_a_context_is_frozen_and_slotted() -> None:
    context = ToolContext()
    assert not hasattr(context, "__dict__")
    with pytest.raises(dataclasses.FrozenInstanceError):
        context.session = object()  # type: ignore[misc]  # assignment under test


def test_beat_calls_the_heartbeat_and_is_a_no_op_without_one() -> None:
    beats: list[int] = []
    ToolContext(heartbeat=lambda: beats.append(1)).beat()
    ToolContext().beat()
    assert beats == [1]


def test_the_filesystem_shortcut_reads_the_resources() -> None:
    filesystem = InMemoryFilesystem()
    registry = ResourceRegistry.from_mapping({InMemoryFilesystem: filesystem})
    assert ToolContext(resources=registry).filesystem is filesystem
    assert ToolContext().filesystem is None


def test_require_filesystem_returns_the_bound_filesystem() -> None:
    filesystem = InMemoryFilesystem()
    registry = ResourceRegistry.from_mapping({InMemoryFilesystem: filesystem})
    assert ToolContext(resources=registry).require_filesystem() is filesystem


def test_require_filesystem_without_one_bound_raises_naming_the_fix() -> None:
    with pytest.raises(WinkError) as raised:
        ToolContext().require_filesystem()
    assert str(raised.value) == (
        "this tool needs a Filesystem, but none is bound to the prompt; bind one with "
        "prompt.bind(resources={Filesystem: InMemoryFilesystem()}) or a HostFilesystem"
    )


def test_the_context_names_the_runtime_types_it_carries() -> None:
    annotations = ToolContext.__annotations__
    assert (annotations["session"], annotations["deadline"], annotations["budget_tracker"]) == (
        "Session | None",
        "Deadline | None",
        "BudgetTracker | None",
    )


def test_the_event_bus_is_the_session() -> None:
    session = Session()
    assert ToolContext(session=session).event_bus is session


def test_params_schema_is_read_only_so_tools_sharing_a_type_cannot_corrupt_each_other() -> None:
    first = Tool[LookupParams, None](name="first", description="First.")
    second = Tool[LookupParams, None](name="second", description="Second.")
    with pytest.raises(TypeError, match="read-only"):
        first.params_schema["properties"]["entity_id"]["type"] = "integer"
    with pytest.raises(TypeError, match="read-only"):
        first.params_schema["required"].append("include_related")
    assert second.params_schema["properties"]["entity_id"]["type"] == "string"
    assert second.params_schema["required"] == ["entity_id"]


def test_overridden_params_schema_is_read_only_too() -> None:
    tool = Tool[LookupParams, None](name="lookup", description="Look up.")
    overridden = tool.with_descriptions(params={"entity_id": "The id."})
    with pytest.raises(TypeError, match="read-only"):
        overridden.params_schema["properties"]["entity_id"]["description"] = "changed"
    assert overridden.params_schema["properties"]["entity_id"]["description"] == "The id."


def test_examples_accept_ints_where_floats_are_declared_but_not_bools() -> None:
    floats = Tool[None, list[float]](
        name="floats",
        description="Numbers.",
        examples=(ToolExample(description="Ints are floats", input=None, output=[1, 2.5]),),
    )
    assert floats.examples[0].output == [1, 2.5]
    with pytest.raises(PromptValidationError, match="is not an instance of"):
        Tool[None, list[float]](
            name="bools",
            description="Not numbers.",
            examples=(ToolExample(description="A bool", input=None, output=[True]),),
        )
