"""Connections to other MCP servers, with the ``mcp`` package's own client.

The ``mcp`` client is async (anyio) and its transports are task groups that must be
entered and left by one task. A ``McpConnection`` therefore owns an event loop on a
thread of its own: one task there holds the client open until the connection is
closed, and calls, from any thread or event loop, are coroutines submitted to that
loop (``asyncio.run_coroutine_threadsafe``) and waited for. The executor's
synchronous path can then call a tool without an event loop of its own, and its
async path waits off its loop.

A connection is opened on first use; one that was lost (the server exited, the
transport broke) is opened again on the next call, trying ``connect_attempts``
times with a doubling delay. A call is never sent twice: the call that found the
connection lost fails, since the server may have run it.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Coroutine, Mapping, Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from wink._error_text import bounded, describe_error
from wink.errors import WinkError

if TYPE_CHECKING:
    import mcp
    import mcp_types as types
    from mcp.client.session import ClientRequestContext, ElicitationFnT, SamplingFnT

__all__ = ["McpClients", "McpConnection", "McpConnectionError", "McpServer"]

T = TypeVar("T")

_MAX_PAGES = 100
"""The most ``tools/list`` pages read for one listing (a server paging forever is refused)."""


class McpConnectionError(WinkError):
    """A server could not be reached, or a call could not be completed; the message says which."""


@dataclass(frozen=True, slots=True, eq=False)
class McpServer:
    """Where another MCP server is, and how wink talks to it.

    Build one with ``McpServer.stdio([...])`` (a command run as a subprocess),
    ``McpServer.http(url)`` (Streamable HTTP) or ``McpServer.in_process(server)`` (an
    ``mcp`` ``Server`` or ``MCPServer`` object, for tests). Compared by identity: each
    session keeps one connection per ``McpServer``.
    """

    name: str
    """Names the server in messages and records."""
    target: Any = field(repr=False)
    """What ``mcp.Client`` connects to: a URL, ``StdioServerParameters`` or a server object."""
    call_timeout: float = 60.0
    """Seconds a ``tools/call`` may take; then the call fails (the connection is kept)."""
    connect_timeout: float = 30.0
    """Seconds one attempt to connect (start, handshake) may take."""
    connect_attempts: int = 3
    """Attempts to open a connection before a call fails."""
    retry_delay: float = 0.25
    """Seconds before the second attempt; each later one waits twice as long."""
    sampling: SamplingFnT | None = field(default=None, repr=False)
    """Answers the server's ``sampling/createMessage`` requests; without it they are refused."""
    elicitation: ElicitationFnT | None = field(default=None, repr=False)
    """Answers the server's ``elicitation/create`` requests; without it they are refused."""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError(f"McpServer needs a non-empty name, got {self.name!r}")
        for option in ("call_timeout", "connect_timeout", "retry_delay"):
            value = getattr(self, option)
            if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
                raise ValueError(f"McpServer {self.name!r}: {option} must be >= 0, got {value!r}")
        attempts = self.connect_attempts
        if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 1:
            raise ValueError(
                f"McpServer {self.name!r}: connect_attempts must be a positive integer, "
                f"got {attempts!r}"
            )

    @classmethod
    def stdio(
        cls,
        command: Sequence[str],
        *,
        name: str | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        **options: Any,
    ) -> McpServer:
        """A server run as ``command`` (program and arguments), spoken to over its stdin/stdout.

        ``env`` is the whole environment of the subprocess (by default, the ``mcp``
        package's short list of safe variables); its stderr goes to this process's.
        """
        from mcp.client.stdio import StdioServerParameters

        argv = list(command)
        if not argv or not all(isinstance(part, str) for part in argv):
            raise ValueError(
                f"McpServer.stdio needs a command as a list of strings, got {command!r}"
            )
        parameters = StdioServerParameters(
            command=argv[0], args=argv[1:], env=None if env is None else dict(env), cwd=cwd
        )
        return cls(name or argv[0].rsplit("/", 1)[-1], parameters, **options)

    @classmethod
    def http(cls, url: str, *, name: str | None = None, **options: Any) -> McpServer:
        """A server at ``url``, spoken to over Streamable HTTP."""
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ValueError(f"McpServer.http needs an http(s) URL, got {url!r}")
        return cls(name or url, url, **options)

    @classmethod
    def in_process(cls, server: Any, *, name: str | None = None, **options: Any) -> McpServer:
        """An ``mcp`` ``Server`` or ``MCPServer`` object of this process (for tests)."""
        return cls(name or str(getattr(server, "name", "in-process")), server, **options)


class McpConnection:
    """One open client of an ``McpServer``, usable from any thread; see the module."""

    def __init__(self, server: McpServer) -> None:
        self.server = server
        self.tools_version = 0
        """How many times the server said its tool list changed (``tools/list_changed``)."""
        self._listing: dict[str, types.Tool] | None = None
        self._listing_stale = True
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._client: mcp.Client | None = None
        self._stop: asyncio.Event | None = None
        self._holder: asyncio.Task[None] | None = None
        self._opening: asyncio.Lock | None = None
        self._closed = False

    def __enter__(self) -> McpConnection:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def tools_changed(self) -> bool:
        """Whether the server said its tool list changed since the connection opened;
        calls then check ``current_tools``."""
        return self.tools_version > 0

    def list_tools(self) -> list[types.Tool]:
        """Every tool the server lists, all pages read."""
        return self._run(self._list_tools(), None)

    def current_tools(self) -> Mapping[str, types.Tool]:
        """The server's tools by name, listed again only when it said they changed since."""
        listing = self._listing
        if listing is None or self._listing_stale:
            listing = {tool.name: tool for tool in self.list_tools()}
        return listing

    def call_tool(self, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        """The server's answer to ``tools/call``; ``McpConnectionError`` when there is none."""
        return self._run(self._call_tool(name, arguments), self.server.call_timeout)

    async def acall_tool(self, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        """``call_tool`` awaited from any event loop, which goes on meanwhile."""
        work = self._call_tool(name, arguments)
        future: Future[types.CallToolResult] = asyncio.run_coroutine_threadsafe(
            work, self._started_loop(work)
        )
        try:
            # The work bounds itself; this wait is a backstop against a loop that hangs.
            async with asyncio.timeout(self._backstop(self.server.call_timeout)):
                return await asyncio.wrap_future(future)
        except TimeoutError:
            future.cancel()
            raise McpConnectionError(self._no_answer(self.server.call_timeout)) from None

    @property
    def instructions(self) -> str | None:
        """The server's instructions from its handshake, once connected."""
        client = self._client
        return None if client is None else client.instructions

    def close(self) -> None:
        """Leave the client (ending a stdio server's process) and stop the loop's thread."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        # The server is being left: a failure to say goodbye changes nothing.
        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(self._disconnect(), loop).result(
                self.server.connect_timeout + 5
            )
        loop.call_soon_threadsafe(loop.stop)
        if thread is not threading.current_thread():
            thread.join(5)

    # --- on the caller's thread

    def _run(self, work: Coroutine[Any, Any, T], timeout: float | None) -> T:
        loop = self._started_loop(work)
        future: Future[T] = asyncio.run_coroutine_threadsafe(work, loop)
        # The work bounds itself; this wait is a backstop against a loop that hangs.
        try:
            return future.result(self._backstop(timeout))
        except FutureTimeout:
            future.cancel()
            raise McpConnectionError(self._no_answer(timeout)) from None

    def _backstop(self, timeout: float | None) -> float | None:
        """How long a caller waits for work bounded by ``timeout`` (plus opening) at most."""
        return None if timeout is None else timeout + self._open_time() + 5

    def _no_answer(self, timeout: float | None) -> str:
        return (
            f"MCP server {self.server.name!r} did not answer within {self._backstop(timeout):.0f} s"
        )

    def _open_time(self) -> float:
        server = self.server
        delays = sum(server.retry_delay * 2**n for n in range(server.connect_attempts - 1))
        return float(server.connect_timeout * server.connect_attempts + delays)

    def _started_loop(self, work: Coroutine[Any, Any, Any]) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._closed:
                work.close()
                raise McpConnectionError(
                    f"the connection to MCP server {self.server.name!r} is closed"
                )
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(
                    target=_serve_loop, args=(loop,), name=f"mcp-{self.server.name}", daemon=True
                )
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    # --- on the connection's loop

    async def _list_tools(self) -> list[types.Tool]:
        client = await self._connected()
        # Marked fresh before asking: a change said during the listing marks it stale again.
        self._listing_stale = False
        tools: list[types.Tool] = []
        cursor: str | None = None
        for _ in range(_MAX_PAGES):
            page = await _bounded(
                client.list_tools(cursor=cursor, cache_mode="refresh"),
                self.server.call_timeout,
                f"MCP server {self.server.name!r} did not list its tools",
            )
            tools.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                self._listing = {tool.name: tool for tool in tools}
                return tools
        raise McpConnectionError(
            f"MCP server {self.server.name!r} listed more than {_MAX_PAGES} pages of tools"
        )

    async def _call_tool(self, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        from mcp.shared.exceptions import MCPError
        from mcp_types import CONNECTION_CLOSED

        client = await self._connected()
        try:
            return await _bounded(
                client.call_tool(name, arguments),
                self.server.call_timeout,
                f"MCP server {self.server.name!r} did not answer tools/call {name!r} within "
                f"{self.server.call_timeout:g} s",
            )
        except McpConnectionError:
            raise
        except MCPError as error:
            if error.code == CONNECTION_CLOSED:
                await self._disconnect()
                raise McpConnectionError(_lost(self.server, name, error)) from None
            # A JSON-RPC error answer: the connection itself is sound.
            raise McpConnectionError(
                f"MCP server {self.server.name!r} refused tools/call {name!r}: "
                f"{bounded(error.message)}"
            ) from None
        except Exception as error:
            # The transport broke or the server went away: the next call connects anew.
            await self._disconnect()
            raise McpConnectionError(_lost(self.server, name, error)) from None

    async def _connected(self) -> mcp.Client:
        if self._opening is None:
            self._opening = asyncio.Lock()
        async with self._opening:
            holder = self._holder
            if self._client is not None and holder is not None and not holder.done():
                return self._client
            await self._disconnect()
            server = self.server
            failure: BaseException | None = None
            for attempt in range(server.connect_attempts):
                if attempt:
                    await asyncio.sleep(server.retry_delay * 2 ** (attempt - 1))
                try:
                    return await self._connect()
                except Exception as error:
                    failure = error
            assert failure is not None
            raise McpConnectionError(
                f"could not connect to MCP server {server.name!r} after "
                f"{server.connect_attempts} attempt(s): {_cause(failure)}"
            )

    async def _connect(self) -> mcp.Client:
        import mcp

        server = self.server
        client = mcp.Client(
            server.target,
            mode="legacy",  # the handshake that carries tools/list_changed notifications
            message_handler=self._on_message,
            sampling_callback=server.sampling or _refuse_sampling(server.name),
            elicitation_callback=server.elicitation or _refuse_elicitation(server.name),
            cache=None,
        )
        stop = asyncio.Event()
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        holder = asyncio.create_task(_hold(client, ready, stop))
        try:
            await asyncio.wait_for(asyncio.shield(ready), server.connect_timeout)
        except BaseException:
            stop.set()
            holder.cancel()
            await asyncio.gather(holder, return_exceptions=True)
            raise
        self._client, self._stop, self._holder = client, stop, holder
        return client

    async def _disconnect(self) -> None:
        stop, holder = self._stop, self._holder
        self._client = self._stop = self._holder = None
        if stop is None or holder is None:
            return
        stop.set()
        try:
            await asyncio.wait_for(holder, self.server.connect_timeout)
        except BaseException:  # a server that will not go quietly is left all the same
            holder.cancel()
            await asyncio.gather(holder, return_exceptions=True)

    async def _on_message(self, message: Any) -> None:
        import mcp_types as types

        if isinstance(message, types.ToolListChangedNotification):
            self._listing_stale = True
            self.tools_version += 1


async def _hold(client: mcp.Client, ready: asyncio.Future[None], stop: asyncio.Event) -> None:
    """Hold ``client`` open, in one task from entry to exit, until ``stop`` is set."""
    try:
        async with client:
            ready.set_result(None)
            await stop.wait()
    except BaseException as error:
        if not ready.done():
            ready.set_exception(error if isinstance(error, Exception) else RuntimeError(str(error)))
        if not isinstance(error, Exception):
            raise


async def _bounded(work: Coroutine[Any, Any, T], seconds: float, message: str) -> T:
    try:
        # A deadline on this task, not a task of its own as ``wait_for`` would make.
        async with asyncio.timeout(seconds):
            return await work
    except TimeoutError:
        raise McpConnectionError(message) from None


def _lost(server: McpServer, name: str, error: BaseException) -> str:
    return (
        f"the connection to MCP server {server.name!r} was lost during tools/call {name!r} "
        f"({_cause(error)}); the call may or may not have run, and the next call connects again"
    )


def _cause(error: BaseException) -> str:
    """The innermost cause of a failed connection, for the message."""
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    if isinstance(error, TimeoutError):
        return "the handshake timed out"
    return describe_error(error)


def _serve_loop(loop: asyncio.AbstractEventLoop) -> None:
    asyncio.set_event_loop(loop)
    try:
        loop.run_forever()
    finally:
        loop.close()


def _refuse_sampling(server_name: str) -> SamplingFnT:
    async def refuse(
        context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.ErrorData:
        import mcp_types as types

        return types.ErrorData(
            code=types.INVALID_REQUEST,
            message=f"this client does not answer sampling requests (pass sampling=... to "
            f"McpServer {server_name!r} to answer them)",
        )

    return refuse


def _refuse_elicitation(server_name: str) -> ElicitationFnT:
    async def refuse(
        context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ErrorData:
        import mcp_types as types

        return types.ErrorData(
            code=types.INVALID_REQUEST,
            message=f"this client does not answer elicitation requests (pass elicitation=... "
            f"to McpServer {server_name!r} to answer them)",
        )

    return refuse


class McpClients:
    """A session's connections to MCP servers, one per ``McpServer``; a resource.

    Every ``McpToolsSection`` binds it by default, as a singleton: each session gets
    its own, built on its first call, and closed with the prompt's resources
    (``with prompt.resources:``) or when the session is collected.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._connections: dict[McpServer, McpConnection] = {}

    def connection(self, server: McpServer) -> McpConnection:
        """The connection to ``server``, made on first use (it connects on its first call)."""
        with self._lock:
            connection = self._connections.get(server)
            if connection is None:
                connection = self._connections[server] = McpConnection(server)
            return connection

    def made(self, server: McpServer) -> McpConnection | None:
        """The connection to ``server`` if one was made, else ``None`` (none is made)."""
        return self._connections.get(server)

    def close(self) -> None:
        """Close every connection (ending the servers run as subprocesses)."""
        with self._lock:
            connections, self._connections = list(self._connections.values()), {}
        for connection in connections:
            connection.close()
