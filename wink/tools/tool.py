"""``Tool``: a named, typed, documented affordance, validated at construction."""

from __future__ import annotations

import inspect
import re
import types
import typing
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from wink.contract import (
    DEFAULT_MAX_BYTES,
    Contract,
    ContractViolation,
    compile_contract,
    schema_checker,
    type_name,
)
from wink.contract.frozen import freeze
from wink.contract.instances import conforms
from wink.contract.walk import JsonSchema
from wink.errors import PromptValidationError
from wink.tools.context import ToolContext
from wink.tools.controls import Retries
from wink.tools.param_hints import ParamHint, param_hints
from wink.tools.result import ToolResult

__all__ = ["AsyncToolHandler", "Tool", "ToolExample", "ToolHandler", "check_handler_annotations"]

ParamsT = TypeVar("ParamsT")
ResultT = TypeVar("ResultT")
ParamsT_contra = TypeVar("ParamsT_contra", contravariant=True)

_NAME = re.compile(r"^[a-z0-9_-]{1,64}$")
_MAX_DESCRIPTION = 200


class ToolHandler(Protocol[ParamsT_contra, ResultT]):
    """A handler: one positional params argument and a keyword-only ``context``."""

    def __call__(
        self, params: ParamsT_contra, /, *, context: ToolContext
    ) -> ToolResult[ResultT]: ...


class AsyncToolHandler(Protocol[ParamsT_contra, ResultT]):
    """An ``async def`` handler: awaited by ``aexecute`` on the running event loop."""

    def __call__(
        self, params: ParamsT_contra, /, *, context: ToolContext
    ) -> Awaitable[ToolResult[ResultT]]: ...


@dataclass(frozen=True, slots=True)
class ToolExample(Generic[ParamsT, ResultT]):
    """A worked call shown to models and checked against the tool's contracts."""

    description: str
    """What the example shows (ASCII, at most 200 characters)."""
    input: ParamsT
    """An instance of the tool's params type."""
    output: ResultT
    """An instance of the tool's result type."""


@dataclass(frozen=True, slots=True, eq=False)
class Tool(Generic[ParamsT, ResultT]):
    """A tool contract; write ``Tool[Params, Result](name=..., ...)``."""

    name: str
    """``^[a-z0-9_-]{1,64}$``; unique within a prompt."""
    description: str
    """1-200 ASCII characters shown to the model."""
    handler: ToolHandler[ParamsT, ResultT] | AsyncToolHandler[ParamsT, ResultT] | None = None
    """Runs the call: a function or an ``async def`` one; ``None`` for a tool that is
    only advertised."""
    accepts_overrides: bool = True
    """Whether prompt overrides may change the descriptions."""
    examples: tuple[ToolExample[ParamsT, ResultT], ...] = ()
    """Worked calls, validated against both contracts."""
    max_argument_bytes: int = DEFAULT_MAX_BYTES
    """Arguments longer than this many bytes of JSON are refused before they are parsed."""
    in_thread: bool = False
    """Run a synchronous handler in a worker thread under ``aexecute`` (for blocking
    I/O), so that the event loop and the turn's other calls go on meanwhile."""
    sequential: bool = False
    """Never overlap this tool's calls with the other calls of a model turn (for a
    handler that changes state outside the session); see ``aexecute_all``."""
    timeout: float | None = None
    """Seconds a call's handler may run; then the call fails, rolled back and recorded.
    An async handler is cancelled; a sync one runs in a worker thread, and if it returns
    late its changes are undone then (see the guide's "Tool controls")."""
    retries: Retries | int | None = None
    """Try a failed call again (for an idempotent tool): a ``Retries``, or a number of
    attempts in all with the default backoff; ``None`` never retries."""
    max_output_chars: int | None = None
    """The most characters of the rendered value the model is shown (the prompt's
    ``max_output_chars`` when ``None``); the rest is cut with a marker saying so."""
    more_output: str | None = None
    """How to get the rest of a cut value, told in the marker (``{shown}`` becomes the
    number of characters shown), for a tool that pages; else "ask for less"."""
    async_handler: AsyncToolHandler[ParamsT, ResultT] | None = None
    """The same call as an ``async def``, for a synchronous ``handler`` whose work waits on
    an event loop anyway: ``aexecute`` awaits it instead of running ``handler``, so no
    worker thread is taken; ``execute`` runs ``handler``."""
    is_async: bool = field(init=False, repr=False)
    """Whether the handler is ``async def`` (its calls are awaited)."""
    awaited_handler: AsyncToolHandler[ParamsT, ResultT] | None = field(init=False, repr=False)
    """What ``aexecute`` awaits: ``async_handler``, or ``handler`` when it is ``async def``;
    ``None`` when it runs ``handler`` (inline, or in a worker thread with ``in_thread``)."""
    params_type: Any = field(init=False, repr=False)
    """The params type given as the first type argument."""
    result_type: Any = field(init=False, repr=False)
    """The result type given as the second type argument."""
    params_contract: Contract[ParamsT] = field(init=False, repr=False)
    """Compiled params contract (parsing + schema)."""
    result_contract: Contract[ResultT] = field(init=False, repr=False)
    """Compiled result contract (serialization + schema)."""
    params_schema: JsonSchema = field(init=False, repr=False)
    """JSON Schema of the arguments, as the model sees it (after overrides)."""
    result_schema: JsonSchema = field(init=False, repr=False)
    """JSON Schema of the result value."""

    _specialised: ClassVar[dict[tuple[Any, Any], type[Tool[Any, Any]]]] = {}
    _type_arguments: ClassVar[tuple[Any, Any] | None] = None

    def __class_getitem__(cls, item: Any) -> Any:
        arguments = item if isinstance(item, tuple) else (item,)
        if len(arguments) != 2 or any(isinstance(arg, TypeVar) or arg is Any for arg in arguments):
            # Not concrete: a plain generic alias, fit for annotations; instantiating it
            # fails in __post_init__. ``super()`` needs its arguments: slots=True
            # replaces the class that the zero-argument form would refer to.
            return super(Tool, cls).__class_getitem__(item)  # type: ignore[misc]  # Generic provides it
        key = (arguments[0], arguments[1])
        specialised = cls._specialised.get(key)
        if specialised is None:
            name = f"Tool[{type_name(key[0])}, {type_name(key[1])}]"
            specialised = type(name, (cls,), {"_type_arguments": key, "__slots__": ()})
            specialised.__module__ = cls.__module__
            cls._specialised[key] = specialised
        return specialised

    def __post_init__(self) -> None:
        arguments = type(self)._type_arguments
        if arguments is None:
            raise PromptValidationError(
                f"tool {self.name!r}: write Tool[ParamsType, ResultType](...) with concrete "
                "type arguments"
            )
        _check_name(self.name)
        description = _check_description(f"tool {self.name!r}", self.description)
        object.__setattr__(self, "description", description)
        if self.handler is not None:
            _check_handler(self.name, self.handler)
        is_async = self.handler is not None and _is_coroutine_function(self.handler)
        if is_async and self.in_thread:
            raise PromptValidationError(
                f"tool {self.name!r}: in_thread=True is for synchronous handlers; an async "
                "handler runs on the event loop"
            )
        object.__setattr__(self, "is_async", is_async)
        object.__setattr__(self, "awaited_handler", self.handler if is_async else None)
        if self.async_handler is not None:
            _check_async_handler(self)
            object.__setattr__(self, "awaited_handler", self.async_handler)
        _check_controls(self)
        params_type, result_type = arguments
        try:
            params_contract = compile_contract(params_type)
            result_contract = compile_contract(result_type)
        except PromptValidationError as error:
            raise PromptValidationError(f"tool {self.name!r}: {error}") from None
        _check_params_are_object(self.name, params_contract)
        if self.handler is not None:
            check_handler_annotations(self.name, self.handler, params_type, result_type)
        limit = self.max_argument_bytes
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise PromptValidationError(
                f"tool {self.name!r}: max_argument_bytes must be a positive integer, got {limit!r}"
            )
        params_contract = params_contract.with_max_bytes(limit)
        object.__setattr__(self, "params_type", params_type)
        object.__setattr__(self, "result_type", result_type)
        object.__setattr__(self, "params_contract", params_contract)
        object.__setattr__(self, "result_contract", result_contract)
        object.__setattr__(self, "params_schema", params_contract.input_schema)
        object.__setattr__(self, "result_schema", result_contract.output_schema)
        object.__setattr__(self, "examples", tuple(self.examples))
        for index, example in enumerate(self.examples):
            _check_example(self, index, example)

    def with_descriptions(
        self, description: str | None = None, params: dict[str, str] | None = None
    ) -> Tool[ParamsT, ResultT]:
        """A copy whose tool and top-level parameter descriptions are replaced."""
        if not self.accepts_overrides:
            raise PromptValidationError(f"tool {self.name!r} does not accept overrides")
        updated = replace(self) if description is None else replace(self, description=description)
        if params:
            object.__setattr__(updated, "params_schema", _describe_params(self, params))
        return updated

    def param_hints(self) -> dict[str, ParamHint]:
        """Field name to its description, type and default, for every top-level field."""
        schema = _top_level(self.params_schema)
        return param_hints({**schema, "$defs": self.params_schema.get("$defs", {})})

    def param_descriptions(self) -> dict[str, str]:
        """Field name to description, as the model sees them."""
        properties = _top_level(self.params_schema).get("properties", {})
        return {
            name: prop["description"]
            for name, prop in properties.items()
            if isinstance(prop, dict) and isinstance(prop.get("description"), str)
        }


def _check_controls(tool: Tool[Any, Any]) -> None:
    """Refuse a timeout, retries or output limit that cannot mean anything; make a
    number of retries a ``Retries``."""
    subject = f"tool {tool.name!r}"
    timeout = tool.timeout
    if timeout is not None and (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not 0 < timeout < float("inf")
    ):
        raise PromptValidationError(
            f"{subject}: timeout must be a positive number of seconds or None, got {timeout!r}"
        )
    retries = tool.retries
    if isinstance(retries, int) and not isinstance(retries, bool):
        try:
            retries = Retries(attempts=retries)
        except ValueError as error:
            raise PromptValidationError(f"{subject}: retries={retries}: {error}") from None
        object.__setattr__(tool, "retries", retries)
    elif retries is not None and not isinstance(retries, Retries):
        raise PromptValidationError(
            f"{subject}: retries must be a Retries, a number of attempts or None, got {retries!r}"
        )
    limit = tool.max_output_chars
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise PromptValidationError(
            f"{subject}: max_output_chars must be a positive integer or None, got {limit!r}"
        )
    if tool.more_output is not None and not isinstance(tool.more_output, str):
        raise PromptValidationError(
            f"{subject}: more_output must be a string or None, got {tool.more_output!r}"
        )


def _check_name(name: object) -> None:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise PromptValidationError(
            f"tool name {name!r} must match ^[a-z0-9_-]{{1,64}}$ (lowercase letters, digits, "
            "'_' or '-', no spaces)"
        )


def _check_description(owner: str, description: object) -> str:
    if not isinstance(description, str):
        raise PromptValidationError(f"{owner}: description must be a string, got {description!r}")
    stripped = description.strip()
    if not 1 <= len(stripped) <= _MAX_DESCRIPTION:
        raise PromptValidationError(
            f"{owner}: description must be 1-{_MAX_DESCRIPTION} characters after stripping, "
            f"got {len(stripped)}: {stripped[:40]!r}"
        )
    if not stripped.isascii():
        raise PromptValidationError(f"{owner}: description must be ASCII: {stripped!r}")
    return stripped


def _check_async_handler(tool: Tool[Any, Any]) -> None:
    """``async_handler`` is the async twin of a synchronous ``handler``."""
    name, twin = tool.name, tool.async_handler
    if tool.handler is None or tool.is_async:
        raise PromptValidationError(
            f"tool {name!r}: async_handler is the async form of a synchronous handler; "
            "give an async def handler as handler=... alone"
        )
    assert twin is not None
    _check_handler(name, twin)
    if not _is_coroutine_function(twin):
        raise PromptValidationError(
            f"tool {name!r}: async_handler {getattr(twin, '__qualname__', twin)!r} is not an "
            "async def function"
        )
    if tool.in_thread:
        raise PromptValidationError(
            f"tool {name!r}: in_thread=True runs the handler in a worker thread under "
            "aexecute, which awaits async_handler instead; give one or the other"
        )


def _check_handler(name: str, handler: Callable[..., Any]) -> None:
    if not callable(handler):
        raise PromptValidationError(f"tool {name!r}: handler {handler!r} is not callable")
    if _is_async_generator(handler):
        # Iterating one would be the caller's job: the failure would come at call time.
        raise PromptValidationError(
            f"tool {name!r}: handler {getattr(handler, '__qualname__', handler)!r} is an "
            "async generator; write def handler(params, *, context): ... or async def "
            "handler(params, *, context): ..."
        )
    try:
        signature = inspect.signature(handler)
    except (TypeError, ValueError) as error:
        raise PromptValidationError(
            f"tool {name!r}: cannot read handler signature: {error}"
        ) from None
    positional = [
        p
        for p in signature.parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    keyword_only = [p for p in signature.parameters.values() if p.kind is p.KEYWORD_ONLY]
    variadic = [
        p for p in signature.parameters.values() if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]
    problems = []
    if len(positional) != 1:
        problems.append(f"takes {len(positional)} positional parameters, expected 1 (params)")
    if not any(p.name == "context" for p in keyword_only):
        problems.append("has no keyword-only 'context' parameter")
    required_extra = [p.name for p in keyword_only if p.name != "context" and p.default is p.empty]
    if required_extra:
        problems.append(f"has other required keyword-only parameters {required_extra}")
    if variadic:
        problems.append(f"has variadic parameters {[p.name for p in variadic]}")
    if problems:
        raise PromptValidationError(
            f"tool {name!r}: handler {getattr(handler, '__qualname__', handler)!r} "
            f"{'; '.join(problems)}; write def handler(params, *, context): ..."
        )


def check_handler_annotations(
    tool_name: str, handler: Callable[..., Any], params_type: Any, result_type: Any
) -> None:
    """Refuse a handler whose annotations contradict ``Tool[params_type, result_type]``.

    Only annotations that are present and can be resolved are checked; ``Any``,
    ``object``, type variables and types this check cannot compare (unions, generics)
    are accepted. The params annotation may be a base class of the params type (the
    handler accepts more), and ``ToolResult[X]`` may name a subclass of the result
    type (the handler returns less); ``ToolResult[None]`` fits any result type.
    Raises ``PromptValidationError`` naming the tool, the handler and both types.
    """
    try:
        signature = inspect.signature(handler)
    except (TypeError, ValueError):
        return  # ``_check_handler`` reports an unreadable signature
    namespace = _annotation_namespace(handler)
    positional = [
        p
        for p in signature.parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    subject = f"tool {tool_name!r}: handler {getattr(handler, '__qualname__', handler)!r}"
    declared = f"Tool[{type_name(params_type)}, {type_name(result_type)}]"
    if positional:
        annotated = _resolved(positional[0].annotation, namespace)
        if annotated is not _UNKNOWN and not _accepts(annotated, params_type):
            raise PromptValidationError(
                f"{subject} takes {positional[0].name}: {_annotation_name(annotated)}, but the "
                f"tool is {declared}; annotate it {positional[0].name}: "
                f"{type_name(params_type)}"
            )
    returned = _resolved(signature.return_annotation, namespace)
    if returned is _UNKNOWN or returned is Any:
        return
    origin = typing.get_origin(returned) or returned
    if not (_is_class(origin) and issubclass(origin, ToolResult)):
        raise PromptValidationError(
            f"{subject} is annotated to return {_annotation_name(returned)}, but handlers "
            f"return a ToolResult; annotate it -> ToolResult[{type_name(result_type)}]"
        )
    arguments = typing.get_args(returned)
    if arguments and not _returns_within(arguments[0], result_type):
        raise PromptValidationError(
            f"{subject} is annotated to return ToolResult[{_annotation_name(arguments[0])}], "
            f"but the tool is {declared}; annotate it -> ToolResult[{type_name(result_type)}]"
        )


_UNKNOWN: Any = object()  # an annotation that is absent or cannot be resolved


def _annotation_namespace(handler: Callable[..., Any]) -> dict[str, Any]:
    """The globals string annotations of ``handler`` are resolved in."""
    target: Any = inspect.unwrap(handler)
    target = getattr(target, "__func__", target)  # a bound method
    function = getattr(target, "func", None)  # a functools.partial
    if function is not None:
        target = function
    namespace = getattr(target, "__globals__", None)
    if namespace is None:
        namespace = getattr(type(target).__call__, "__globals__", {})
    return dict(namespace)


def _resolved(annotation: Any, namespace: dict[str, Any]) -> Any:
    if annotation is inspect.Parameter.empty:
        return _UNKNOWN
    if isinstance(annotation, str):
        try:
            # The handler's own annotation, in its own module: what get_type_hints does.
            annotation = eval(annotation, namespace)
        except Exception:
            return _UNKNOWN  # e.g. a type defined in a function: left unchecked
    if typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    return annotation


def _is_none(annotation: Any) -> bool:
    return annotation is None or annotation is types.NoneType


def _accepts(annotated: Any, params_type: Any) -> bool:
    """Whether a handler annotated ``annotated`` takes ``params_type`` instances."""
    if annotated is Any or annotated is object or isinstance(annotated, TypeVar):
        return True
    if _is_none(params_type):
        return _is_none(annotated) or not _is_class(annotated)
    if _is_none(annotated):
        return not _is_class(params_type)
    if _is_class(annotated) and _is_class(params_type):
        return issubclass(params_type, annotated)
    return True


def _returns_within(annotated: Any, result_type: Any) -> bool:
    """Whether values of ``annotated`` are valid values of ``result_type``."""
    if _is_none(annotated) or annotated is Any or isinstance(annotated, TypeVar):
        return True  # a success without a value fits any result type
    if _is_none(result_type):
        return not _is_class(annotated)
    if _is_class(annotated) and _is_class(result_type):
        return issubclass(annotated, result_type)
    return True


def _is_class(annotation: Any) -> bool:
    """A plain class (``list[int]`` passes ``isinstance(..., type)`` but is not one)."""
    return isinstance(annotation, type) and typing.get_origin(annotation) is None


def _annotation_name(annotation: Any) -> str:
    return "None" if _is_none(annotation) else type_name(annotation)


def _is_coroutine_function(handler: Callable[..., Any]) -> bool:
    """Whether calling ``handler`` returns a coroutine."""
    # A callable object is async through its class's ``__call__``; partials and bound
    # methods are unwrapped by ``inspect`` itself.
    return inspect.iscoroutinefunction(handler) or inspect.iscoroutinefunction(
        type(handler).__call__
    )


def _is_async_generator(handler: Callable[..., Any]) -> bool:
    return inspect.isasyncgenfunction(handler) or inspect.isasyncgenfunction(type(handler).__call__)


def _check_example(tool: Tool[Any, Any], index: int, example: object) -> None:
    subject = f"tool {tool.name!r} example {index}"
    if not isinstance(example, ToolExample):
        raise PromptValidationError(f"{subject}: {example!r} is not a ToolExample")
    _check_description(subject, example.description)
    for part, value, tp, contract, schema in (
        ("input", example.input, tool.params_type, tool.params_contract, tool.params_schema),
        ("output", example.output, tool.result_type, tool.result_contract, tool.result_schema),
    ):
        if not conforms(value, tp):
            raise PromptValidationError(
                f"{subject} {part}: {value!r} is not an instance of {type_name(tp)}"
            )
        # Arguments of a tool without params are the empty object.
        try:
            document = {} if part == "input" and contract.type is None else contract.dump(value)
        except ContractViolation as error:
            raise PromptValidationError(
                f"{subject} ({example.description!r}) {part}: {error.problems[0]}"
            ) from None
        schema_errors = sorted(schema_checker(schema).iter_errors(document), key=str)
        pydantic_error: ContractViolation | None = None
        # Results are only ever serialized; parsing one back is meaningful only where
        # serializing and parsing agree (computed fields, for one, make them differ).
        if part == "input" or contract.input_schema == contract.output_schema:
            try:
                contract.parse(contract.dump_json(value))
            except ContractViolation as error:
                pydantic_error = error
        if pydantic_error is None and not schema_errors:
            continue
        if pydantic_error is not None and schema_errors:
            detail = f"rejected by the contract and the JSON Schema: {pydantic_error.problems[0]}"
        elif pydantic_error is not None:
            detail = (
                f"pydantic rejects it but the JSON Schema accepts it ({pydantic_error.problems[0]})"
            )
        else:
            detail = (
                f"the JSON Schema rejects it but pydantic accepts it ({schema_errors[0].message})"
            )
        raise PromptValidationError(f"{subject} ({example.description!r}) {part}: {detail}")


def _check_params_are_object(name: str, contract: Contract[Any]) -> None:
    if _top_level(contract.input_schema).get("type") != "object":
        raise PromptValidationError(
            f"tool {name!r}: params type {contract.name} does not describe a JSON object; "
            "use a dataclass, a pydantic model or None"
        )


def _top_level(schema: JsonSchema) -> JsonSchema:
    """The object schema of the arguments, following a root ``$ref`` (recursive params)."""
    reference = schema.get("$ref")
    if isinstance(reference, str) and reference.startswith("#/$defs/"):
        target = schema.get("$defs", {}).get(reference.removeprefix("#/$defs/"))
        if isinstance(target, dict):
            return target
    return schema


def _describe_params(tool: Tool[Any, Any], descriptions: dict[str, str]) -> JsonSchema:
    # A recursive root is inlined so that only the top level gets the new descriptions.
    schema = {**_top_level(tool.params_schema), "$defs": tool.params_schema.get("$defs", {})}
    if not schema["$defs"]:
        del schema["$defs"]
    properties = dict(schema.get("properties", {}))
    for field_name, text in descriptions.items():
        if field_name not in properties:
            raise PromptValidationError(
                f"tool {tool.name!r}: override names unknown parameter {field_name!r} "
                f"(parameters: {', '.join(properties) or 'none'})"
            )
        properties[field_name] = {**properties[field_name], "description": text}
    schema["properties"] = properties
    frozen: JsonSchema = freeze(schema)
    return frozen
