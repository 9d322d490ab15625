"""``ToolResult``: what a handler returns, and what the model is shown."""

from __future__ import annotations

import threading
from dataclasses import dataclass, is_dataclass, replace
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel
from pydantic_core import to_json

from wink._error_text import safe_repr, type_label
from wink._lazy_logging import LazyLogger
from wink.contract import Contract, compile_contract

__all__ = ["ToolRenderableResult", "ToolResult"]

ResultT = TypeVar("ResultT")

logger = LazyLogger(__name__)


@runtime_checkable
class ToolRenderableResult(Protocol):
    """A result value that chooses its own text for the model."""

    def render(self) -> str:
        """The text the model sees in the tool message."""
        ...


class _RenderedText:
    """Room for the executor's rendering of a result, outside the dataclass fields.

    Not a field: it is no part of a result's identity (equality) or of its JSON.
    """

    __slots__ = ("_rendered",)


@dataclass(frozen=True, slots=True)
class ToolResult(_RenderedText, Generic[ResultT]):
    """The outcome of a tool call: a message, an optional typed value, success or not."""

    message: str
    """Short text forwarded to the model."""
    value: ResultT | None = None
    """Typed payload; ``None`` on failure unless the tool returns an error payload."""
    success: bool = True
    """``False`` marks a tool failure the model should act on."""
    exclude_value_from_context: bool = False
    """Keep ``value`` out of the provider's tool message (it is still recorded)."""

    def __post_init__(self) -> None:
        # What the fields hold reaches providers as is: refuse a wrong type here, where
        # the handler that built it is on the traceback.
        if not isinstance(self.message, str):
            raise TypeError(f"ToolResult.message must be a str, got {_kind(self.message)}")
        if type(self.success) is not bool:
            raise TypeError(f"ToolResult.success must be a bool, got {_kind(self.success)}")
        if type(self.exclude_value_from_context) is not bool:
            raise TypeError(
                "ToolResult.exclude_value_from_context must be a bool, got "
                f"{_kind(self.exclude_value_from_context)}"
            )

    @classmethod
    def ok(cls, value: ResultT, message: str = "ok") -> ToolResult[ResultT]:
        """A successful result carrying ``value``."""
        return cls(message=message, value=value, success=True)

    @classmethod
    def error(cls, message: str) -> ToolResult[ResultT]:
        """A failed result with no value."""
        return cls(message=message, value=None, success=False)

    def render(self) -> str:
        """The value as text: its own ``render()``, else compact JSON.

        This is the value alone, whatever ``exclude_value_from_context`` says: the
        provider messages omit an excluded value, so code building its own messages
        should use ``model_text()`` (or check that flag) rather than this.
        A result returned by the executor gives the text the executor rendered through
        the tool's result contract (see ``rendered_as``) without rendering it again.
        Asking for the text here logs nothing; the warning about a value type without
        ``render()`` comes where a model is shown it (the executor, ``model_text()``).
        """
        rendered: str | None = getattr(self, "_rendered", None)
        if rendered is not None:
            return rendered
        return _value_text(self.value, None)

    def model_text(self) -> str:
        """What a provider shows the model: the message, then the rendered value.

        A blank line separates the two. The value is left out when
        ``exclude_value_from_context`` is set, when there is none, or when it renders
        to nothing; the model then reads the message alone.
        """
        if self.exclude_value_from_context or self.value is None:
            return self.message
        if type(self.value) not in _CHECKED and getattr(self, "_rendered", None) is None:
            _check_render(type(self.value))  # built by hand: the executor has not checked it
        rendered = self.render()
        if not rendered:
            return self.message
        if not self.message:
            return rendered
        return f"{self.message}\n\n{rendered}"

    def render_with(self, contract: Contract[Any]) -> str:
        """The value as text, serialized through ``contract`` (the declared result type).

        A value of a subclass of the declared type shows only the declared fields.
        """
        return render_value(self.value, contract)

    def rendered_as(self, text: str) -> ToolResult[ResultT]:
        """A new result, equal to this one, whose ``render()`` returns ``text`` (the
        executor's rendering); this one is left as it is."""
        if type(self) is ToolResult:
            # Every successful call makes one. This result passed the constructor's
            # checks, so its fields are copied through their slots' descriptors, at a
            # third of the constructor's cost.
            copy: ToolResult[ResultT] = _new(ToolResult)
            _set_message(copy, self.message)
            _set_value(copy, self.value)
            _set_success(copy, self.success)
            _set_exclude_value_from_context(copy, self.exclude_value_from_context)
        else:
            copy = replace(self)  # a subclass may have fields of its own
        # Not a field, so not an argument; the copy is new, so nothing else sees it change.
        _set_rendered(copy, text)
        return copy


_new = object.__new__
# The slots' own setters, for ``rendered_as``: a frozen result refuses assignment.
_SLOTS = vars(ToolResult)
_set_message = _SLOTS["message"].__set__
_set_value = _SLOTS["value"].__set__
_set_success = _SLOTS["success"].__set__
_set_exclude_value_from_context = _SLOTS["exclude_value_from_context"].__set__
_set_rendered = vars(_RenderedText)["_rendered"].__set__


def _kind(value: object) -> str:
    """``int 123``: the type and a short repr, for the messages above."""
    return f"{type_label(value)} {safe_repr(value)[:80]}"


def render_value(value: Any, contract: Contract[Any] | None = None) -> str:
    """Render a result value for a model: ``""`` for ``None``, ``render()`` when defined,
    else JSON.

    The JSON comes from ``contract`` when given, else from the value's own type. A
    dataclass or model value without ``render()`` is reported once per type, as a
    warning that the model is shown its JSON.
    """
    if value is not None and type(value) not in _CHECKED:  # the common case without a frame
        _check_render(type(value))
    return _value_text(value, contract)


def _value_text(value: Any, contract: Contract[Any] | None) -> str:
    """``render_value``'s text, without the check for a missing ``render()``."""
    if value is None:
        return ""
    # getattr, not isinstance on the runtime-checkable protocol: this is on the
    # tool-call hot path and the protocol check costs several microseconds.
    render = getattr(value, "render", None)
    if callable(render):
        text = render()
        if not isinstance(text, str):
            raise TypeError(f"{type(value).__qualname__}.render() returned {type(text).__name__}")
        return text
    if contract is not None:
        return contract.dump_json(value, exclude_none=True)
    if isinstance(value, list | tuple):
        return to_json(_dump(value)).decode()
    return compile_contract(type(value)).dump_json(value, exclude_none=True)


_CHECKED: set[type[Any]] = set()
"""Value types already checked for a ``render()`` method (and warned about)."""
_CHECKED_LOCK = threading.Lock()


def _check_render(value_type: type[Any]) -> None:
    """Warn, once per type, that a dataclass or model value is shown to the model as JSON.

    Called only for a type not in ``_CHECKED`` yet: the caller tests that, without a lock.
    """
    with _CHECKED_LOCK:
        if value_type in _CHECKED:
            return
        _CHECKED.add(value_type)
    if not (is_dataclass(value_type) or issubclass(value_type, BaseModel)):
        return  # lists, strings, mappings: JSON is their only form
    if callable(getattr(value_type, "render", None)):
        return
    logger.warning(
        "result value type %s has no render() method, so the model sees it as JSON; "
        "define render(self) -> str on it to choose the text",
        value_type.__qualname__,
    )


def _dump(value: Any) -> Any:
    # Items are dumped through their own contracts: a bare ``list`` contract would
    # serialize them as ``Any`` and ignore ``exclude_none`` inside them.
    if isinstance(value, list | tuple):
        return [_dump(item) for item in value]
    return compile_contract(type(value)).dump(value, exclude_none=True)
