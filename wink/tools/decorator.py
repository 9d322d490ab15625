"""``@tool``: build a ``Tool`` from a handler, reading its types from its annotations.

The handler says everything a ``Tool`` needs: its params type (the first
parameter's annotation), its result type (``ToolResult[R]`` in the return
annotation), its name (the function's name) and its description (the first
paragraph of its docstring). The contract stays schema-first: the params type is
still a model, a dataclass or ``None``.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Iterable
from typing import Any, Protocol, TypeVar, overload

from wink.errors import PromptValidationError
from wink.tools.result import ToolResult
from wink.tools.tool import AsyncToolHandler, Tool, ToolExample, ToolHandler

__all__ = ["ToolDecorator", "tool"]

ParamsT = TypeVar("ParamsT")
ResultT = TypeVar("ResultT")

_SIGNATURE_HINT = (
    "def {name}(params: ParamsType, *, context: ToolContext) -> ToolResult[ResultType]: ..."
)


class ToolDecorator(Protocol):
    """What ``@tool(...)`` with options returns: it turns a handler into a ``Tool``."""

    @overload
    def __call__(self, handler: ToolHandler[ParamsT, ResultT], /) -> Tool[ParamsT, ResultT]: ...
    @overload
    def __call__(
        self, handler: AsyncToolHandler[ParamsT, ResultT], /
    ) -> Tool[ParamsT, ResultT]: ...


@overload
def tool(handler: ToolHandler[ParamsT, ResultT], /) -> Tool[ParamsT, ResultT]: ...


@overload
def tool(handler: AsyncToolHandler[ParamsT, ResultT], /) -> Tool[ParamsT, ResultT]: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    examples: Iterable[ToolExample[Any, Any]] = (),
    accepts_overrides: bool = True,
    in_thread: bool = False,
    sequential: bool = False,
) -> ToolDecorator: ...


def tool(
    handler: ToolHandler[Any, Any] | AsyncToolHandler[Any, Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    examples: Iterable[ToolExample[Any, Any]] = (),
    accepts_overrides: bool = True,
    in_thread: bool = False,
    sequential: bool = False,
) -> Tool[Any, Any] | ToolDecorator:
    """A ``Tool`` whose types, name and description come from ``handler``.

    Write ``@tool`` above ``def search(params: SearchParams, *, context: ToolContext)
    -> ToolResult[SearchResult]`` to get a ``Tool[SearchParams, SearchResult]`` named
    ``search``, described by the docstring's first paragraph; or ``@tool(name=...,
    description=..., examples=..., accepts_overrides=..., in_thread=..., sequential=...)``
    to set any of them. An ``async def`` handler gives an async tool the same way.
    Raises ``PromptValidationError`` saying what to write when an annotation is
    missing or cannot be resolved, or when there is neither a docstring nor a
    ``description``.
    """
    options = _Options(name, description, tuple(examples), accepts_overrides, in_thread, sequential)
    if handler is None:
        return options
    return options.build(handler)


class _Options:
    __slots__ = (
        "accepts_overrides",
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

    def __call__(self, handler: Any, /) -> Tool[Any, Any]:
        return self.build(handler)

    def build(
        self, handler: ToolHandler[Any, Any] | AsyncToolHandler[Any, Any], /
    ) -> Tool[Any, Any]:
        function_name = getattr(handler, "__name__", None)
        if not callable(handler):
            raise PromptValidationError(f"@tool: {handler!r} is not callable")
        name = self.name if self.name is not None else function_name
        if name is None:
            raise PromptValidationError(
                f"@tool: {handler!r} has no __name__; pass name='...' to @tool(...)"
            )
        params_type, result_type = _types_of(name, handler)
        description = self.description
        if description is None:
            description = _first_paragraph(handler)
            if description is None:
                raise PromptValidationError(
                    f"@tool: handler {name!r} has no docstring; write one (its first "
                    "paragraph describes the tool to the model) or pass description='...'"
                )
        built: Tool[Any, Any] = Tool[params_type, result_type](  # type: ignore[valid-type]  # runtime types
            name=name,
            description=description,
            handler=handler,
            examples=self.examples,
            accepts_overrides=self.accepts_overrides,
            in_thread=self.in_thread,
            sequential=self.sequential,
        )
        return built


def _types_of(name: str, handler: Callable[..., Any]) -> tuple[Any, Any]:
    """The params and result types that ``handler``'s annotations declare."""
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
    hint = _SIGNATURE_HINT.format(name=name)
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if not positional:
        raise PromptValidationError(f"{subject} takes no params argument; write {hint}")
    params_name = positional[0].name
    if params_name not in hints:
        raise PromptValidationError(
            f"{subject}: parameter {params_name!r} has no type annotation; write {hint} "
            "(ParamsType: a pydantic model, a dataclass or None)"
        )
    if "return" not in hints:
        raise PromptValidationError(f"{subject} has no return annotation; write {hint}")
    returned = hints["return"]
    arguments = typing.get_args(returned)
    if typing.get_origin(returned) is not ToolResult or len(arguments) != 1:
        shown = getattr(returned, "__name__", None) or repr(returned)
        raise PromptValidationError(
            f"{subject} is annotated to return {shown}, not ToolResult[ResultType]; write {hint}"
        )
    return _none_for_nonetype(hints[params_name]), _none_for_nonetype(arguments[0])


def _none_for_nonetype(tp: Any) -> Any:
    # An annotation of ``None`` resolves to ``NoneType``; ``Tool[None, None]`` is spelt with None.
    return None if tp is type(None) else tp


def _first_paragraph(handler: Callable[..., Any]) -> str | None:
    docstring = inspect.getdoc(handler)
    if not docstring or not docstring.strip():
        return None
    paragraph = docstring.strip().split("\n\n", 1)[0]
    return " ".join(line.strip() for line in paragraph.splitlines())
