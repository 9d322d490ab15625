"""``@tool``: build a ``Tool`` from a handler, reading its types from its annotations.

The handler says everything a ``Tool`` needs: its params type, its result type
(``ToolResult[R]`` in the return annotation), its name (the function's name) and
its description (the first paragraph of its docstring). The params come in one of
two forms, told apart by the parameters before the keyword-only ``context``:

- one parameter annotated with a pydantic model, a dataclass, a ``TypedDict`` or
  ``None``: that type is the params type, and the handler receives an instance;
- any other parameters: each is a field. A frozen dataclass with those fields
  (``CreateTicketParams`` for a tool named ``create_ticket``), described by the
  docstring's ``Args:`` section or ``:param name:`` lines, is the params type, and
  the handler receives the fields as keyword arguments. With no parameters at
  all, the tool takes no params (``None``).

Either way the contract stays schema-first: the params type is compiled, parsed,
recorded in ``ToolInvoked.params`` and saved like a hand-written one.
"""

from __future__ import annotations

import dataclasses
import inspect
import typing
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, overload

from wink.contract._docstrings import argument_descriptions, summary
from wink.errors import PromptValidationError
from wink.tools._signature_params import fields_params, names_params_type
from wink.tools.controls import Retries
from wink.tools.result import ToolResult
from wink.tools.tool import AsyncToolHandler, Tool, ToolExample, ToolHandler

if TYPE_CHECKING:
    from _typeshed import DataclassInstance
    from pydantic import BaseModel

__all__ = ["ToolDecorator", "tool"]

# What mypy can recognise as a params type: a handler taking one of these is the
# params form (``Tool[P, R]``); any other handler is the fields form (``Tool[Any, R]``).
ParamsT = TypeVar("ParamsT", bound="BaseModel | DataclassInstance | Mapping[str, Any] | None")
ResultT = TypeVar("ResultT")

_PARAMS_FORM = "def {name}(params: ParamsType, *, context: ToolContext)"
_FIELDS_FORM = "def {name}(title: str, limit: int = 10, *, context: ToolContext)"


class ToolDecorator(Protocol):
    """What ``@tool(...)`` with options returns: it turns a handler into a ``Tool``."""

    @overload
    def __call__(self, handler: ToolHandler[ParamsT, ResultT], /) -> Tool[ParamsT, ResultT]: ...
    @overload
    def __call__(
        self, handler: AsyncToolHandler[ParamsT, ResultT], /
    ) -> Tool[ParamsT, ResultT]: ...
    @overload
    def __call__(
        self, handler: Callable[..., Awaitable[ToolResult[ResultT]]], /
    ) -> Tool[Any, ResultT]: ...
    @overload
    def __call__(self, handler: Callable[..., ToolResult[ResultT]], /) -> Tool[Any, ResultT]: ...


@overload
def tool(handler: ToolHandler[ParamsT, ResultT], /) -> Tool[ParamsT, ResultT]: ...


@overload
def tool(handler: AsyncToolHandler[ParamsT, ResultT], /) -> Tool[ParamsT, ResultT]: ...


@overload
def tool(handler: Callable[..., Awaitable[ToolResult[ResultT]]], /) -> Tool[Any, ResultT]: ...


@overload
def tool(handler: Callable[..., ToolResult[ResultT]], /) -> Tool[Any, ResultT]: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    examples: Iterable[ToolExample[Any, Any]] = (),
    accepts_overrides: bool = True,
    in_thread: bool = False,
    sequential: bool = False,
    timeout: float | None = None,
    retries: Retries | int | None = None,
    max_output_chars: int | None = None,
    more_output: str | None = None,
) -> ToolDecorator: ...


def tool(
    handler: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    examples: Iterable[ToolExample[Any, Any]] = (),
    accepts_overrides: bool = True,
    in_thread: bool = False,
    sequential: bool = False,
    timeout: float | None = None,
    retries: Retries | int | None = None,
    max_output_chars: int | None = None,
    more_output: str | None = None,
) -> Tool[Any, Any] | ToolDecorator:
    """A ``Tool`` whose types, name and description come from ``handler``.

    Write ``@tool`` above ``def search(params: SearchParams, *, context: ToolContext)
    -> ToolResult[SearchResult]`` to get a ``Tool[SearchParams, SearchResult]`` named
    ``search``, described by the docstring's first paragraph, or above ``def
    search(query: str, limit: int = 10, *, context: ToolContext) ->
    ToolResult[SearchResult]`` to get the same tool over a generated ``SearchParams``
    whose fields the docstring's ``Args:`` describe (see the module's docstring for
    how the two forms are told apart). ``@tool(name=..., description=...,
    examples=..., accepts_overrides=..., in_thread=..., sequential=..., timeout=...,
    retries=..., max_output_chars=..., more_output=...)`` sets any of them; an
    example's ``input`` may be a dict of the fields. An ``async def`` handler gives an
    async tool the same way. Raises ``PromptValidationError`` saying what
    to write when an annotation is missing or cannot be resolved, a parameter cannot
    be a field, or there is neither a docstring nor a ``description``.
    """
    options = _Options(name, description, tuple(examples), accepts_overrides, in_thread, sequential)
    options.controls = {
        "timeout": timeout,
        "retries": retries,
        "max_output_chars": max_output_chars,
        "more_output": more_output,
    }
    if handler is None:
        return options
    return options.build(handler)


class _Options:
    __slots__ = (
        "accepts_overrides",
        "controls",
        "description",
        "examples",
        "in_thread",
        "name",
        "sequential",
    )

    def __init__(
        self,
        name: str | None,
        description: str | None,
        examples: tuple[ToolExample[Any, Any], ...],
        accepts_overrides: bool,
        in_thread: bool,
        sequential: bool,
    ) -> None:
        self.name = name
        self.description = description
        self.examples = examples
        self.accepts_overrides = accepts_overrides
        self.in_thread = in_thread
        self.sequential = sequential
        self.controls: dict[str, Any] = {}
        """The tool's controls (timeout, retries, output limit), passed on as given."""

    def __call__(self, handler: Any, /) -> Tool[Any, Any]:
        return self.build(handler)

    def build(self, handler: Callable[..., Any], /) -> Tool[Any, Any]:
        function_name = getattr(handler, "__name__", None)
        if not callable(handler):
            raise PromptValidationError(f"@tool: {handler!r} is not callable")
        name = self.name if self.name is not None else function_name
        if name is None:
            raise PromptValidationError(
                f"@tool: {handler!r} has no __name__; pass name='...' to @tool(...)"
            )
        params_type, result_type, runs, examples, register = _handler_types(
            name, handler, self.examples
        )
        description = self.description
        if description is None:
            description = summary(inspect.getdoc(handler) or "")
            if description is None:
                raise PromptValidationError(
                    f"@tool: handler {name!r} has no docstring; write one (its first "
                    "paragraph describes the tool to the model) or pass description='...'"
                )
        built: Tool[Any, Any] = Tool[params_type, result_type](  # type: ignore[valid-type]  # runtime types
            name=name,
            description=description,
            handler=runs,
            examples=examples,
            accepts_overrides=self.accepts_overrides,
            in_thread=self.in_thread,
            sequential=self.sequential,
            **self.controls,
        )
        register()
        return built


def _handler_types(
    name: str, handler: Callable[..., Any], examples: tuple[ToolExample[Any, Any], ...]
) -> tuple[Any, Any, Callable[..., Any], tuple[ToolExample[Any, Any], ...], Callable[[], None]]:
    """The params type, the result type, the handler the tool runs, the examples and
    what to do once the tool is built, as ``handler``'s annotations declare them."""
    function = handler if inspect.isroutine(handler) else type(handler).__call__
    subject = f"@tool: handler {name!r}"
    try:
        hints = typing.get_type_hints(function, include_extras=True)
    except NameError as error:
        raise PromptValidationError(
            f"{subject}: cannot resolve an annotation ({error}); define the type at module "
            "level, before the handler"
        ) from None
    except Exception as error:
        raise PromptValidationError(
            f"{subject}: cannot read its annotations: {type(error).__name__}: {error}"
        ) from None
    try:
        parameters = list(inspect.signature(handler).parameters.values())
    except (TypeError, ValueError) as error:
        raise PromptValidationError(f"{subject}: cannot read its signature: {error}") from None
    result_type = _result_type(subject, hints)
    if inspect.isasyncgenfunction(handler):
        raise PromptValidationError(
            f"{subject} is an async generator; write async def {name}(...) -> "
            "ToolResult[ResultType] returning one result"
        )
    fields = _fields(subject, name, parameters, hints)
    if fields is None:
        params_annotation = hints[_positional(parameters)[0].name]
        return _none_for_nonetype(params_annotation), result_type, handler, examples, _nothing
    documented = argument_descriptions(inspect.getdoc(handler) or "")
    unknown = sorted(set(documented) - {p.name for p in fields} - {"context"})
    if unknown:
        raise PromptValidationError(
            f"{subject}: its docstring describes {unknown[0]!r}, which is not one of its "
            f"parameters ({', '.join(p.name for p in fields) or 'none'}); correct the name "
            "or remove the entry"
        )
    built = fields_params(subject, name, handler, fields, hints, documented)
    examples = tuple(
        _example_of(name, index, example, built.params_type)
        for index, example in enumerate(examples)
    )
    return built.params_type, result_type, built.handler, examples, built.register


def _result_type(subject: str, hints: dict[str, Any]) -> Any:
    hint = "annotate it -> ToolResult[ResultType]"
    if "return" not in hints:
        raise PromptValidationError(f"{subject} has no return annotation; {hint}")
    returned = hints["return"]
    arguments = typing.get_args(returned)
    if typing.get_origin(returned) is not ToolResult or len(arguments) != 1:
        shown = getattr(returned, "__name__", None) or repr(returned)
        raise PromptValidationError(
            f"{subject} is annotated to return {shown}, not ToolResult[ResultType]; {hint}"
        )
    return _none_for_nonetype(arguments[0])


def _positional(parameters: list[inspect.Parameter]) -> list[inspect.Parameter]:
    return [
        p
        for p in parameters
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.name != "context"
    ]


def _fields(
    subject: str, name: str, parameters: list[inspect.Parameter], hints: dict[str, Any]
) -> list[inspect.Parameter] | None:
    """The parameters that are the tool's fields, or ``None`` for the params form."""
    params_form, fields_form = _PARAMS_FORM.format(name=name), _FIELDS_FORM.format(name=name)
    variadic = [p for p in parameters if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    if variadic:
        stars = "*" if variadic[0].kind is variadic[0].VAR_POSITIONAL else "**"
        raise PromptValidationError(
            f"{subject} takes {stars}{variadic[0].name}: a tool's fields are named; write "
            f"each as a parameter ({fields_form}) or take a params type ({params_form})"
        )
    context = next((p for p in parameters if p.name == "context"), None)
    if context is None or context.kind is not context.KEYWORD_ONLY:
        problem = "has no 'context' parameter" if context is None else "takes 'context' "
        if context is not None:
            problem += "by position"
        raise PromptValidationError(
            f"{subject} {problem}; write it keyword-only, after a '*': {fields_form} or "
            f"{params_form}"
        )
    positional = _positional(parameters)
    if len(positional) == 1:
        lone = positional[0]
        annotation = hints.get(lone.name, inspect.Parameter.empty)
        if annotation is inspect.Parameter.empty:
            raise PromptValidationError(
                f"{subject}: parameter {lone.name!r} has no type annotation; write "
                f"{lone.name}: ParamsType (a pydantic model or a dataclass holding the "
                f"arguments) or {lone.name}: FieldType (str, int, ...) for a tool whose one "
                f"field is {lone.name!r}"
            )
        if names_params_type(annotation):
            return None
        if annotation is Any or annotation is object or isinstance(annotation, TypeVar):
            raise PromptValidationError(
                f"{subject}: parameter {lone.name!r} is annotated {_shown(annotation)}, which "
                f"names neither a params type nor a field type; write {lone.name}: "
                f"ParamsType (a pydantic model or a dataclass) or a JSON type such as "
                f"{lone.name}: str"
            )
    fields = [p for p in parameters if p is not context]
    for parameter in fields:
        _check_field(subject, parameter, hints, fields_form)
    return fields


def _check_field(
    subject: str, parameter: inspect.Parameter, hints: dict[str, Any], fields_form: str
) -> None:
    where = f"{subject}: parameter {parameter.name!r}"
    if parameter.kind is parameter.KEYWORD_ONLY:
        raise PromptValidationError(
            f"{where} is keyword-only, and only 'context' may be; move it before the '*': "
            f"{fields_form}"
        )
    if parameter.kind is parameter.POSITIONAL_ONLY:
        raise PromptValidationError(
            f"{where} is positional-only; remove the '/' (fields are passed by keyword)"
        )
    if parameter.name not in hints:
        raise PromptValidationError(
            f"{where} has no type annotation; annotate it with the field's type, such as "
            f"{parameter.name}: str"
        )
    if parameter.name.startswith("__"):
        raise PromptValidationError(
            f"{where}: Python mangles a name starting with '__' in a class, so it cannot be "
            f"a field; rename it ({parameter.name.lstrip('_') or 'value'})"
        )


def _example_of(
    name: str, index: int, example: ToolExample[Any, Any], params_type: Any
) -> ToolExample[Any, Any]:
    """``example`` with an ``input`` given as a mapping of the fields made a params value."""
    if not isinstance(example, ToolExample) or not isinstance(example.input, Mapping):
        return example  # ``Tool`` says what is wrong with anything else
    if params_type is None:
        if example.input:
            raise PromptValidationError(
                f"tool {name!r} example {index} input: the tool has no fields; write input=None"
            )
        return replace(example, input=None)
    fields = dataclasses.fields(params_type)
    names = [field.name for field in fields]
    unknown = sorted(set(example.input) - set(names))
    missing = [
        field.name
        for field in fields
        if field.name not in example.input and field.default is dataclasses.MISSING
    ]
    if unknown or missing:
        problem = f"unknown field {unknown[0]!r}" if unknown else f"missing field {missing[0]!r}"
        raise PromptValidationError(
            f"tool {name!r} example {index} input: {problem} (fields: {', '.join(names)})"
        )
    return replace(example, input=params_type(**example.input))


def _shown(annotation: Any) -> str:
    return getattr(annotation, "__name__", None) or repr(annotation).replace("typing.", "")


def _nothing() -> None:
    """Nothing to do once a tool of the params form is built."""


def _none_for_nonetype(tp: Any) -> Any:
    # An annotation of ``None`` resolves to ``NoneType``; ``Tool[None, None]`` is spelt with None.
    return None if tp is type(None) else tp
