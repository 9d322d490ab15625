"""Params types built from a handler's own parameters, for ``@tool``.

``def create_ticket(title: str, body: str, *, context: ToolContext) -> ToolResult[Issue]``
declares the tool's fields as its parameters. ``fields_params`` builds the frozen
dataclass that a params class with those fields would be (``CreateTicketParams``),
and a handler that calls the function with each field as a keyword argument, so
the tool is compiled, parsed, recorded and saved like any other.
"""

from __future__ import annotations

import dataclasses
import inspect
import sys
import typing
from collections.abc import Callable, Mapping
from typing import Annotated, Any

from pydantic import BaseModel, Field
from pydantic.fields import FieldInfo

from wink.errors import PromptValidationError
from wink.tools.context import ToolContext
from wink.tools.tool import _is_coroutine_function

__all__ = ["FieldsParams", "fields_params", "names_params_type", "params_class_name"]

_Handler = Callable[..., Any]


@dataclasses.dataclass(frozen=True, slots=True)
class FieldsParams:
    """What ``fields_params`` built: the params type and the handler the tool runs."""

    params_type: Any
    """The generated dataclass, or ``None`` for a handler with no fields."""
    handler: _Handler
    """Takes ``(params, *, context)`` and calls the function with keyword arguments."""
    register: Callable[[], None]
    """Defines ``params_type`` in the function's module under its name; called once the
    tool is built, so that a refused tool leaves the module as it was."""


def names_params_type(annotation: Any) -> bool:
    """Whether a lone parameter annotated ``annotation`` is the params type itself
    (a pydantic model, a dataclass, a ``TypedDict`` or ``None``) rather than a field."""
    if annotation is None or annotation is type(None):
        return True
    if typing.get_origin(annotation) is Annotated:
        annotation = typing.get_args(annotation)[0]
    cls = typing.get_origin(annotation) or annotation
    return isinstance(cls, type) and (
        issubclass(cls, BaseModel) or dataclasses.is_dataclass(cls) or typing.is_typeddict(cls)
    )


def params_class_name(tool_name: str) -> str:
    """``create_ticket`` (or ``create-ticket``) gives ``CreateTicketParams``."""
    words = tool_name.replace("-", "_").split("_")
    name = "".join(word[:1].upper() + word[1:] for word in words) + "Params"
    return name if name.isidentifier() else f"Tool{name}"


def fields_params(
    subject: str,
    tool_name: str,
    function: _Handler,
    fields: list[inspect.Parameter],
    hints: Mapping[str, Any],
    descriptions: Mapping[str, str],
) -> FieldsParams:
    """The params type whose fields are ``fields`` (annotated per ``hints``, described
    per ``descriptions``) and the handler that passes them to ``function`` by keyword.

    Raises ``PromptValidationError`` (prefixed with ``subject``) saying what to write
    for a parameter that cannot be a field.
    """
    names = tuple(parameter.name for parameter in fields)
    handler = _keyword_handler(function, names)
    if not fields:
        return FieldsParams(None, handler, _nothing_to_register)
    specs: list[tuple[str, Any] | tuple[str, Any, Any]] = []
    for parameter in fields:
        annotation = _described(hints[parameter.name], descriptions.get(parameter.name))
        if parameter.default is parameter.empty:
            specs.append((parameter.name, annotation))
            continue
        _check_default(subject, parameter)
        specs.append((parameter.name, annotation, dataclasses.field(default=parameter.default)))
    class_name = params_class_name(tool_name)
    qualified_name = _qualified_name(function, class_name)
    made_for = getattr(function, "__qualname__", None) or type(function).__qualname__
    params_type = dataclasses.make_dataclass(
        class_name, specs, namespace={"_made_for": made_for}, frozen=True, slots=True
    )
    module = getattr(function, "__module__", None) or __name__
    params_type.__module__ = module
    params_type.__qualname__ = qualified_name
    register = _nothing_to_register
    if qualified_name == class_name and module in sys.modules:  # a module-level function
        register = _registration(subject, sys.modules[module], params_type, function)
    return FieldsParams(params_type, handler, register)


def _nothing_to_register() -> None:
    """A params type defined inside a function or a class is not found by name: like a
    class statement there, it is not defined in the module."""


def _described(annotation: Any, description: str | None) -> Any:
    """``annotation`` with the docstring's ``description``, which an explicit one
    (``Annotated[..., Field(description=...)]``, written after it) overrides."""
    if description is None:
        return annotation
    documented = Field(description=description)
    if typing.get_origin(annotation) is Annotated:
        base, *metadata = typing.get_args(annotation)
        return Annotated[(base, documented, *metadata)]
    return Annotated[annotation, documented]


def _check_default(subject: str, parameter: inspect.Parameter) -> None:
    default = parameter.default
    # The dataclass rule: a default shared by every call must not be changeable.
    if type(default).__hash__ is None and not isinstance(default, FieldInfo):
        raise PromptValidationError(
            f"{subject}: parameter {parameter.name!r} has a mutable default "
            f"({type(default).__name__}); write an immutable one, such as "
            f"{parameter.name}: tuple[str, ...] = () or {parameter.name}: str | None = None"
        )


def _qualified_name(function: _Handler, class_name: str) -> str:
    """The name a class defined beside ``function`` would have."""
    qualname = getattr(function, "__qualname__", None)
    if not isinstance(qualname, str):  # a callable object: beside its class's method
        return f"{type(function).__qualname__}.{class_name}"
    scope = qualname.rpartition(".")[0]
    return f"{scope}.{class_name}" if scope else class_name


def _registration(
    subject: str, module: Any, params_type: type[Any], function: _Handler
) -> Callable[[], None]:
    """Check that ``module`` may define ``params_type``'s name, and a callable that does.

    Defined there, the type is found by its ``module:QualifiedName`` as a class
    statement's would be (pickling, importing a name from a saved record). A name
    the module already uses for anything else is refused; one that an earlier run of
    the same definition made (a reloaded module) is replaced.
    """
    name = params_type.__qualname__
    existing = getattr(module, name, None)
    made_for = _made_for(existing)
    if existing is not None and made_for != function.__qualname__:
        what = (
            f"the params of handler {made_for!r}"
            if made_for is not None
            else f"a {type(existing).__name__}"
        )
        raise PromptValidationError(
            f"{subject}: its params type would be {module.__name__}.{name}, but the module "
            f"already defines {name} ({what}); name the tool differently with "
            f"@tool(name=...), or write the params class yourself and take it as "
            f"the one parameter: def {function.__name__}(params: {name}, *, context: "
            "ToolContext)"
        )

    def register() -> None:
        setattr(module, name, params_type)

    return register


def _made_for(existing: object) -> str | None:
    """The qualified name of the handler a generated params type was made for, if it is one."""
    made_for = getattr(existing, "_made_for", None) if isinstance(existing, type) else None
    return made_for if isinstance(made_for, str) else None


def _keyword_handler(function: _Handler, names: tuple[str, ...]) -> _Handler:
    """A ``(params, *, context)`` handler calling ``function`` with ``names`` by keyword."""
    if _is_coroutine_function(function):

        async def call_async(params: Any, /, *, context: ToolContext) -> Any:
            arguments = {name: getattr(params, name) for name in names}
            return await function(**arguments, context=context)

        return call_async

    def call(params: Any, /, *, context: ToolContext) -> Any:
        arguments = {name: getattr(params, name) for name in names}
        return function(**arguments, context=context)

    return call
