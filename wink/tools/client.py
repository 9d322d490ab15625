"""The client a call was made by, when it can be talked back to (an MCP client).

A server that runs calls for a client which accepts notifications and requests
(``wink.providers.mcp``) sets a ``ClientChannel`` around each call; the
``ToolContext`` methods ``log``, ``report_progress``, ``sample`` and ``elicit``
(and their ``a``-prefixed async twins) use it. Outside such a server, logging
and progress go to Python's ``logging`` and never fail; sampling and
elicitation, which need someone to answer, raise ``ClientUnavailableError``
naming what to configure.

An elicitation form is built from a flat dataclass or model: each field's type,
default and choices (a ``Literal``, or a list of one for a multi-select) are
shown; ``Annotated[Literal[...], ChoiceTitles({...})]`` gives the choices titles
the user sees instead of the values (MCP's titled enums).
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar, Token
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, Protocol, TypeVar, get_args, get_origin, get_type_hints

from wink.errors import WinkError

__all__ = [
    "ChoiceTitles",
    "ClientChannel",
    "ClientUnavailableError",
    "Elicitation",
    "LogLevel",
    "client_channel",
    "client_channel_set",
    "client_channel_unset",
    "elicitation_schema",
]

T = TypeVar("T")

LogLevel = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
"""The levels of MCP's ``notifications/message`` (syslog's)."""


class ClientUnavailableError(WinkError):
    """A handler asked the client for something (sampling, elicitation) no client can answer."""


@dataclass(frozen=True, slots=True)
class Elicitation(Generic[T]):
    """What the user answered to ``context.elicit``."""

    action: Literal["accept", "decline", "cancel"]
    """``accept``: ``value`` holds the answer; ``decline`` or ``cancel``: it is ``None``."""
    value: T | None = None
    """The answer, parsed with the requested type's contract."""


class ClientChannel(Protocol):
    """What a server offers a handler to reach the client of the current call."""

    def log(self, level: LogLevel, data: Any, logger: str | None) -> None:
        """Send a log message to the client (dropped below the client's chosen level)."""
        ...

    async def alog(self, level: LogLevel, data: Any, logger: str | None) -> None:
        """``log`` for an async handler."""
        ...

    def progress(self, progress: float, total: float | None, message: str | None) -> None:
        """Report progress, when the client asked for it with a progress token."""
        ...

    async def aprogress(self, progress: float, total: float | None, message: str | None) -> None:
        """``progress`` for an async handler."""
        ...

    def sample(self, text: str, max_tokens: int, system_prompt: str | None) -> str:
        """Ask the client's model to answer ``text``; returns the answer's text."""
        ...

    async def asample(self, text: str, max_tokens: int, system_prompt: str | None) -> str:
        """``sample`` for an async handler."""
        ...

    def elicit(self, message: str, schema: dict[str, Any]) -> tuple[str, dict[str, Any] | None]:
        """Ask the user for values fitting ``schema``: the action and the content."""
        ...

    async def aelicit(
        self, message: str, schema: dict[str, Any]
    ) -> tuple[str, dict[str, Any] | None]:
        """``elicit`` for an async handler."""
        ...


_CHANNEL: ContextVar[ClientChannel | None] = ContextVar("wink_client_channel", default=None)


def client_channel() -> ClientChannel | None:
    """The channel to the client of the call running in this context, if any."""
    return _CHANNEL.get()


def client_channel_set(channel: ClientChannel) -> Token[ClientChannel | None]:
    """Make ``channel`` the client of the calls run in this context until reset."""
    return _CHANNEL.set(channel)


def client_channel_unset(token: Token[ClientChannel | None]) -> None:
    """Put back the channel ``client_channel_set`` replaced."""
    _CHANNEL.reset(token)


def no_client(what: str) -> ClientUnavailableError:
    """The error for ``what`` asked outside a server whose client can answer it."""
    return ClientUnavailableError(
        f"context.{what}() needs a client that can answer it: serve the tool over MCP "
        "(wink serve, or wink.providers.mcp.server) to a client that declares the "
        f"{'sampling' if what.endswith('sample') else 'elicitation'} capability"
    )


@dataclass(frozen=True, slots=True)
class ChoiceTitles:
    """Titles of a ``Literal`` field's choices, shown by an elicitation form.

    ``status: Annotated[Literal["a", "b"], ChoiceTitles({"a": "Active"})]`` asks with
    ``{"type": "string", "oneOf": [{"const": "a", "title": "Active"}, ...]}``; a list
    of such a type, with ``items.anyOf``. A choice without a title shows its value.
    ``enum_names=True`` sends the older form instead, ``enum`` with ``enumNames``,
    for clients that know no other.
    """

    titles: Mapping[str, str] = field(hash=False)
    """The title of each choice, by value."""
    enum_names: bool = False
    """Send ``enum`` and ``enumNames`` rather than ``oneOf`` (single choice only)."""


def elicitation_schema(response_type: type[Any], schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` (the contract's, of a flat ``response_type``) with each field's
    ``ChoiceTitles`` applied; other fields are left as they are."""
    properties = dict(schema.get("properties", {}))
    hints = get_type_hints(response_type, include_extras=True)
    for name, prop in properties.items():
        hint = hints.get(name)
        if hint is None:
            continue
        titles = _titles_of(hint)
        if titles is not None:
            properties[name] = _titled(prop, titles, multiple=False)
            continue
        items = _item_type(hint)
        titles = None if items is None else _titles_of(items)
        if titles is not None and isinstance(prop.get("items"), Mapping):
            properties[name] = {**prop, "items": _titled(prop["items"], titles, multiple=True)}
    return {**schema, "properties": properties}


def _titles_of(hint: Any) -> ChoiceTitles | None:
    for metadata in getattr(hint, "__metadata__", ()):
        if isinstance(metadata, ChoiceTitles):
            return metadata
    return None


def _item_type(hint: Any) -> Any:
    """The element type of ``list[X]``, ``tuple[X, ...]``, ``set[X]`` or ``frozenset[X]``."""
    origin = get_origin(hint)
    arguments = get_args(hint)
    if origin in (list, set, frozenset) and len(arguments) == 1:
        return arguments[0]
    if origin is tuple and len(arguments) == 2 and arguments[1] is Ellipsis:
        return arguments[0]
    return None


def _titled(node: Mapping[str, Any], titles: ChoiceTitles, *, multiple: bool) -> dict[str, Any]:
    values = node.get("enum")
    if not isinstance(values, list):
        return dict(node)
    names = [titles.titles.get(value, str(value)) for value in values]
    if titles.enum_names and not multiple:
        return {**node, "enumNames": names}
    rest = {key: value for key, value in node.items() if key != "enum"}
    choices = [{"const": value, "title": name} for value, name in zip(values, names, strict=True)]
    # MCP's forms: one choice among titled ones is a oneOf, several are an anyOf.
    return {**rest, "anyOf" if multiple else "oneOf": choices}
