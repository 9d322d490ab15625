"""The client a call was made by, when it can be talked back to (an MCP client).

A server that runs calls for a client which accepts notifications and requests
(``wink.providers.mcp``) sets a ``ClientChannel`` around each call; the
``ToolContext`` methods ``log``, ``report_progress``, ``sample`` and ``elicit``
(and their ``a``-prefixed async twins) use it. Outside such a server, logging
and progress go to Python's ``logging`` and never fail; sampling and
elicitation, which need someone to answer, raise ``ClientUnavailableError``
naming what to configure.
"""

from __future__ import annotations

from contextvars import ContextVar, Token
from dataclasses import dataclass
from typing import Any, Generic, Literal, Protocol, TypeVar

from wink.errors import WinkError

__all__ = [
    "ClientChannel",
    "ClientUnavailableError",
    "Elicitation",
    "LogLevel",
    "client_channel",
    "client_channel_set",
    "client_channel_unset",
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
