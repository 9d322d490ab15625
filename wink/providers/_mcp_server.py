"""``PromptServer``: a prompt's tools served over MCP by the official ``mcp`` package.

The server is the SDK's own low-level ``Server``; wink supplies its two handlers.
``tools/list`` answers the rendered prompt's ``tool_specs``; ``tools/call`` runs the
call through a ``ToolExecutor`` (contract parsing, policies, deadline, rollback, a
``ToolInvoked`` event) and answers ``call_tool_result`` of the outcome. An async
tool's call is awaited on the server's event loop (``aexecute``); a synchronous
one runs in a worker thread (``execute``), so the loop keeps serving other clients
while its handler runs. A request the client cancels still waits for its call,
which commits or rolls back whole.

Sessions: each MCP client gets its own wink ``Session`` (from ``session_factory``),
so policy state such as read-before-write belongs to that client:

- a client of the initialize handshake (stdio, one Streamable HTTP session, an
  in-memory client) keeps its session until it disconnects; the session is then
  released (forgotten);
- a 2026-07-28 client over stdio or in process (one client per ``Server.run``)
  keeps one session until that run ends;
- a 2026-07-28 request over HTTP carries no client identity (that protocol is
  stateless), so it runs in a fresh session of its own: policies that depend on
  earlier calls see none. Serve such clients with the handshake, or keep that
  state in an instance passed in as a resource.

Stored sessions: given a ``store`` (``wink.store``), a client's session is opened
from it (``Session.aopen``) before its first call instead, so it outlives the
connection, the server process, and is shared by servers on one store. Its id is
the client's ``Wink-Session-Id`` HTTP header when it sends one (a 2026-07-28 HTTP
request included: each is served on that stored session), else the MCP session id
over HTTP, else the server's ``session_id`` (stdio, in process). Only a client's
own header names the same session again after a restart: the ``mcp`` package makes
MCP session ids up per process and answers 404 to one it does not know. A call
another writer beat to the session fails with ``VersionConflict``, and the session
is opened again before the client's next call. Closing a client's session (it
disconnects, idles out or is evicted) never deletes what is stored.

The instances passed in as the prompt's resources are shared by every client; a
lazily built singleton is one per session, so each client's own. They are closed
when the last transport stops (``with prompt.resources``).

Limits: what a client can hold is bounded. Over HTTP (``http_app``), a session
with no request in flight for ``session_idle_timeout`` is closed and at most
``max_sessions`` are kept, the least recently used idle one making room for a new
client; over stdio, a line is at most ``max_message_bytes`` and at most
``max_in_flight`` requests run at once. Malformed input is answered with a
JSON-RPC error on both, never dropped.
"""

from __future__ import annotations

import importlib.metadata
import logging
import math
import socket
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any, BinaryIO

import anyio
import anyio.from_thread
import anyio.to_thread
import mcp_types as types
from mcp.server import NotificationOptions, Server, ServerRequestContext
from mcp.server.connection import Connection
from mcp.server.models import InitializationOptions
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from wink._error_text import bounded, error_message, safe_repr
from wink.errors import DeadlineExceededError, PromptEvaluationError, VisibilityExpansionRequired
from wink.prompt import Prompt, RenderedPrompt
from wink.providers._mcp_catalog import RESOURCE_NOT_FOUND, Offer
from wink.providers._stdio import protocol_stdin, protocol_stdout
from wink.providers.mcp import call_tool_result, tool_specs
from wink.runtime.budget import BudgetExceededError
from wink.runtime.call import ToolCall
from wink.runtime.deadline import Deadline
from wink.runtime.executor import ToolExecutor
from wink.runtime.session import Session
from wink.store import StoreError, VersionConflict
from wink.tools import ToolResult
from wink.tools.client import client_channel_set, client_channel_unset

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from wink.store import SessionStore

__all__ = [
    "DEFAULT_MAX_IN_FLIGHT",
    "DEFAULT_MAX_MESSAGE_BYTES",
    "DEFAULT_MAX_SESSIONS",
    "DEFAULT_SESSION_ID",
    "DEFAULT_SESSION_IDLE_TIMEOUT",
    "SESSION_HEADER",
    "PromptServer",
    "bind_http_socket",
    "http_app",
    "serve_http",
    "serve_stdio",
    "server",
]

logger = logging.getLogger(__name__)

DEFAULT_SESSION_IDLE_TIMEOUT = 600.0
"""Seconds an HTTP session may go with no request in flight before it is closed (10 minutes)."""

DEFAULT_MAX_SESSIONS = 1000
"""HTTP sessions kept at once; a new one beyond ends the least recently used idle one."""

DEFAULT_MAX_MESSAGE_BYTES = DEFAULT_MAX_REQUEST_BODY_SIZE
"""Longest message read: a stdio line or an HTTP request body (the ``mcp`` package's 4 MiB)."""

DEFAULT_MAX_IN_FLIGHT = 64
"""Requests of one stdio client served at once; further lines wait to be read."""

DEFAULT_SESSION_ID = "default"
"""The stored session of a client with no id of its own (stdio, in process)."""

SESSION_HEADER = "Wink-Session-Id"
"""The HTTP header naming the stored session a client continues."""

_STOPPED = (
    PromptEvaluationError,
    VisibilityExpansionRequired,
    DeadlineExceededError,
    BudgetExceededError,
)
"""Errors an executor raises to stop an evaluation; a served call answers them as failures."""


class _Run:
    """One ``Server.run`` (a transport's lifespan): a duplex stream serves one client."""

    __slots__ = ()


@dataclass(slots=True)
class _Client:
    """What the server keeps for one MCP client."""

    session: Session
    executor: ToolExecutor
    connection: Connection | None
    """Where notifications to the client go; ``None`` when it has no lasting connection."""
    log_level: types.LoggingLevel = "debug"
    """The least severe level of log messages the client wants (``logging/setLevel``)."""
    subscriptions: set[str] = field(default_factory=set)
    """The URIs of resources the client hears about when they change (``resources/subscribe``)."""
    stored_id: str | None = None
    """The id of the client's session in the server's store; ``None``: not stored."""
    stale: bool = False
    """The session is to be opened from the store (again) before the client's next call."""
    opening: anyio.Lock = field(default_factory=anyio.Lock)
    """Held while the session is opened, so that concurrent calls open it once."""


_SEVERITY: tuple[types.LoggingLevel, ...] = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)


class _Channel:
    """The client of one ``tools/call``, as a handler reaches it (``wink.tools.client``).

    A synchronous handler runs in a worker thread and waits for each message to be
    sent; an async one awaits the ``a``-prefixed twins on the server's loop.
    """

    __slots__ = ("_client", "_ctx")

    def __init__(self, ctx: ServerRequestContext[_Run], client: _Client) -> None:
        self._ctx = ctx
        self._client = client

    def log(self, level: types.LoggingLevel, data: Any, logger: str | None) -> None:
        _from_worker(self.alog, level, data, logger)

    async def alog(self, level: types.LoggingLevel, data: Any, logger: str | None) -> None:
        if _SEVERITY.index(level) < _SEVERITY.index(self._client.log_level):
            return
        params = types.LoggingMessageNotificationParams(level=level, data=data, logger=logger)
        await self._ctx.session.send_notification(
            types.LoggingMessageNotification(params=params), self._ctx.request_id
        )

    def progress(self, progress: float, total: float | None, message: str | None) -> None:
        _from_worker(self.aprogress, progress, total, message)

    async def aprogress(self, progress: float, total: float | None, message: str | None) -> None:
        await self._ctx.session.report_progress(progress, total, message)

    def sample(self, text: str, max_tokens: int, system_prompt: str | None) -> str:
        answer: str = _from_worker(self.asample, text, max_tokens, system_prompt)
        return answer

    async def asample(self, text: str, max_tokens: int, system_prompt: str | None) -> str:
        request = types.CreateMessageRequest(
            params=types.CreateMessageRequestParams(
                messages=[
                    types.SamplingMessage(
                        role="user", content=types.TextContent(type="text", text=text)
                    )
                ],
                max_tokens=max_tokens,
                system_prompt=system_prompt,
            )
        )
        result = await self._ctx.session.send_request(
            request,
            types.CreateMessageResult,
            metadata=ServerMessageMetadata(related_request_id=self._ctx.request_id),
        )
        blocks = result.content if isinstance(result.content, list) else [result.content]
        return "".join(block.text for block in blocks if isinstance(block, types.TextContent))

    def elicit(self, message: str, schema: dict[str, Any]) -> tuple[str, dict[str, Any] | None]:
        answer: tuple[str, dict[str, Any] | None] = _from_worker(self.aelicit, message, schema)
        return answer

    async def aelicit(
        self, message: str, schema: dict[str, Any]
    ) -> tuple[str, dict[str, Any] | None]:
        result = await self._ctx.session.elicit_form(
            message, _elicitation_schema(schema), related_request_id=self._ctx.request_id
        )
        return result.action, None if result.content is None else dict(result.content)


def _from_worker(function: Callable[..., Coroutine[Any, Any, Any]], *args: Any) -> Any:
    try:
        return anyio.from_thread.run(function, *args)
    except RuntimeError as error:
        if "worker thread" not in str(error):
            raise
        raise RuntimeError(
            "an async handler talks to the client with the awaited twins: "
            "await context.alog(), areport_progress(), asample() or aelicit()"
        ) from None


def _elicitation_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The requested schema MCP allows: a flat object, without ``additionalProperties``."""
    return {
        key: value for key, value in schema.items() if key not in ("additionalProperties", "title")
    }


@dataclass(frozen=True, slots=True)
class _Render:
    """One render of the served prompt, with what ``tools/list`` answers for it."""

    rendered: RenderedPrompt
    specs: tuple[Mapping[str, Any], ...]
    listing: types.ListToolsResult


class PromptServer(Server[_Run]):
    """The ``mcp`` package's ``Server`` serving one prompt's tools; see the module docstring.

    Run it with any of the SDK's transports (``server.run(read, write,
    server.create_initialization_options())``, ``server.streamable_http_app()``,
    ``mcp.Client(server)``), or with ``serve_stdio`` / ``serve_http``.
    """

    def __init__(
        self,
        prompt: Prompt,
        *,
        session_factory: Callable[[], Session] = Session,
        name: str | None = None,
        version: str | None = None,
        instructions: str | None = None,
        call_timeout: timedelta | float | None = None,
        store: SessionStore | None = None,
        session_id: str = DEFAULT_SESSION_ID,
    ) -> None:
        """A server for ``prompt``'s enabled tools, rendered now.

        Raises ``PromptValidationError`` when a policy refuses the prompt's tools.
        ``version`` (``serverInfo.version``) defaults to wink's own;
        ``instructions`` default to the rendered prompt's text; ``call_timeout``
        gives each call a ``Deadline`` that long after it arrives. With a ``store``
        (which the caller closes), clients' sessions are opened from it, a client
        with no id of its own continuing ``session_id`` (see the module docstring).
        """
        if not isinstance(prompt, Prompt):
            raise TypeError(f"server() needs a Prompt, got {type(prompt).__qualname__}")
        if not isinstance(session_id, str) or not session_id:
            raise ValueError(f"session_id must be a non-empty str, got {safe_repr(session_id)}")
        self._prompt = prompt
        self._render = _render(prompt)
        self._session_factory = session_factory
        self._store = store
        self._session_id = session_id
        self._call_timeout = call_timeout
        self._clients: dict[object, _Client] = {}
        self._open_runs = 0
        # Policies check the prompt's tools when an executor is built: a prompt they
        # refuse fails here, not at a client's first call.
        self._executor(Session())
        self._offer = Offer(prompt)
        super().__init__(
            name or prompt.name,
            version=wink_version() if version is None else version,
            instructions=self._render.rendered.text if instructions is None else instructions,
            lifespan=self._lifespan,
            get_tool_input_schema=self._input_schema,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            **self._catalog_handlers(),
        )
        # Registered by hand: the constructor's argument warns that 2026-07-28 clients
        # opt in per request, but clients of the handshake still set a level.
        self.add_request_handler(
            "logging/setLevel", types.SetLevelRequestParams, self._set_log_level
        )

    @property
    def prompt(self) -> Prompt:
        """The prompt whose tools are served."""
        return self._prompt

    @property
    def rendered_prompt(self) -> RenderedPrompt:
        """The render whose tools ``tools/list`` answers."""
        return self._render.rendered

    @property
    def sessions(self) -> tuple[Session, ...]:
        """The sessions of the clients connected now, oldest first."""
        return tuple(client.session for client in self._clients.values())

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        """The SDK's options, announcing ``tools.listChanged`` (see ``update``)."""
        return super().create_initialization_options(
            notification_options or NotificationOptions(tools_changed=True),
            experimental_capabilities,
            extensions,
        )

    async def update(self, prompt: Prompt) -> bool:
        """Serve ``prompt`` from now on (the same template and resources, other params).

        Connected clients keep their sessions. When the enabled tools' specs change,
        each client with a lasting connection gets ``notifications/tools/list_changed``
        and lists them again. Returns whether they changed. Raises ``ValueError`` for
        a prompt with other resources and ``PromptValidationError`` for one its
        policies refuse; the served prompt is then left as it was.
        """
        if prompt.resources is not self._prompt.resources:
            raise ValueError(
                "update() needs a prompt with the served prompt's resources: "
                "bind new params with served.prompt.bind(...)"
            )
        render = _render(prompt)
        changed = render.specs != self._render.specs
        # Built before anything changes, so that a prompt the policies refuse changes nothing.
        ToolExecutor(prompt=prompt, session=Session(), rendered_prompt=render.rendered)
        self._prompt, self._render = prompt, render
        for client in self._clients.values():
            client.executor = self._executor(client.session)
        if changed:
            for client in tuple(self._clients.values()):
                if client.connection is not None:
                    await client.connection.send_tool_list_changed()
        return changed

    @asynccontextmanager
    async def _lifespan(self, _: Server[_Run]) -> AsyncIterator[_Run]:
        run = _Run()
        if self._open_runs == 0:
            self._prompt.resources.__enter__()
        self._open_runs += 1
        try:
            yield run
        finally:
            self._release(run)
            self._open_runs -= 1
            if self._open_runs == 0:
                self._prompt.resources.close()

    async def _list_tools(
        self, ctx: ServerRequestContext[_Run], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        if _client_key(ctx, _connection_of(ctx)) is not None:
            self._client_of(ctx)  # a client that lists the tools hears when they change
        return self._render.listing

    async def _call_tool(
        self, ctx: ServerRequestContext[_Run], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        client = self._client_of(ctx)
        if client.stale:
            await self._open_stored(client)
        channel = client_channel_set(_Channel(ctx, client))
        try:
            return await self._run_call(ctx, client, params)
        finally:
            client_channel_unset(channel)

    async def _set_log_level(
        self, ctx: ServerRequestContext[_Run], params: types.SetLevelRequestParams
    ) -> types.EmptyResult:
        self._client_of(ctx).log_level = params.level
        return types.EmptyResult()

    async def resource_updated(self, uri: str) -> int:
        """Tell each connected client subscribed to ``uri`` that it changed
        (``notifications/resources/updated``); returns how many were told."""
        told = 0
        for client in tuple(self._clients.values()):
            if uri in client.subscriptions and client.connection is not None:
                await client.connection.send_resource_updated(uri)
                told += 1
        return told

    def _catalog_handlers(self) -> dict[str, Any]:
        """The SDK's handlers for what the prompt's ``McpCatalog``s offer, and no more:
        the SDK announces a capability for each handler given."""
        offer = self._offer
        handlers: dict[str, Any] = {}
        if offer.prompts:
            handlers.update(on_list_prompts=offer.list_prompts, on_get_prompt=offer.get_prompt)
        if offer.offers_resources:
            handlers.update(
                on_list_resources=offer.list_resources,
                on_list_resource_templates=offer.list_templates,
                on_read_resource=offer.read_resource,
                on_subscribe_resource=self._subscribe,
                on_unsubscribe_resource=self._unsubscribe,
            )
        if offer.completes:
            handlers.update(on_completion=offer.complete)
        return handlers

    async def _subscribe(
        self, ctx: ServerRequestContext[_Run], params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        uri = str(params.uri)
        if not self._offer.knows(uri):
            raise MCPError(RESOURCE_NOT_FOUND, f"Resource not found: {safe_repr(uri)}")
        self._client_of(ctx).subscriptions.add(uri)
        return types.EmptyResult()

    async def _unsubscribe(
        self, ctx: ServerRequestContext[_Run], params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        self._client_of(ctx).subscriptions.discard(str(params.uri))
        return types.EmptyResult()

    async def _run_call(
        self,
        ctx: ServerRequestContext[_Run],
        client: _Client,
        params: types.CallToolRequestParams,
    ) -> types.CallToolResult:
        call_id = None if ctx.request_id is None else str(ctx.request_id)
        call = ToolCall(params.name, params.arguments or {}, call_id)
        executor = client.executor
        if self._call_timeout is not None:
            executor = self._executor(client.session, Deadline.after(self._call_timeout))
        binding = executor.rendered_prompt.binding(call.name)
        if binding is None:
            # The specification makes an unknown tool a protocol error, not a tool
            # result: the client asked for something the server never offered.
            available = ", ".join(tool.name for tool in executor.rendered_prompt.tools)
            raise MCPError(
                types.INVALID_PARAMS,
                f"Unknown tool {safe_repr(call.name)}. Available tools: {available or 'none'}.",
            )
        # A cancelled request still waits for its call to finish, so the call commits
        # or rolls back whole, as it would have had the client waited.
        if binding.tool.awaited_handler is not None:
            # On the server's own loop, where awaiting blocks no other client.
            with anyio.CancelScope(shield=True):
                result = await _aexecute(executor, call)
        else:
            # A synchronous handler would block every client: a worker thread runs it.
            result = await anyio.to_thread.run_sync(_execute, executor, call)
        if client.stored_id is not None and _lost_race(result):
            client.stale = True
        payload = call_tool_result(result, tool=binding.tool)
        return types.CallToolResult.model_validate(payload)

    def _input_schema(self, name: str) -> Mapping[str, Any] | None:
        for spec in self._render.specs:
            if spec["name"] == name:
                schema: Mapping[str, Any] = spec["inputSchema"]
                return schema
        return None

    def _client_of(self, ctx: ServerRequestContext[_Run]) -> _Client:
        """The client ``ctx`` comes from, created on its first request."""
        connection = _connection_of(ctx)
        key = _client_key(ctx, connection)
        if key is None:
            session = self._new_session()
            stored_id = None if self._store is None else _header_id(ctx)
            return _Client(
                session,
                self._executor(session),
                None,
                stored_id=stored_id,
                stale=stored_id is not None,
            )
        client = self._clients.get(key)
        if client is None:
            session = self._new_session()
            lasting = connection if key is connection else None
            stored_id = None
            if self._store is not None:
                stored_id = _header_id(ctx) or connection.session_id or self._session_id
            client = _Client(
                session,
                self._executor(session),
                lasting,
                stored_id=stored_id,
                stale=stored_id is not None,
            )
            self._clients[key] = client
            if key is connection:
                connection.exit_stack.callback(self._release, connection)
        return client

    async def _open_stored(self, client: _Client) -> None:
        """Open the client's session from the store, first or after a lost race."""
        assert self._store is not None and client.stored_id is not None  # as ``stale`` says
        async with client.opening:
            if not client.stale:
                return  # a concurrent call of the client opened it meanwhile
            try:
                session = await Session.aopen(self._store, client.stored_id)
            except ValueError as error:  # an id no store takes (too long, a NUL)
                raise MCPError(
                    types.INVALID_REQUEST,
                    f"the stored session cannot be opened: {error_message(error)}",
                ) from None
            except StoreError as error:
                raise MCPError(
                    types.INTERNAL_ERROR,
                    f"the stored session {bounded(client.stored_id)!r} could not be opened: "
                    f"{error_message(error)}",
                ) from None
            client.session = session
            client.executor = self._executor(session)
            client.stale = False

    def _new_session(self) -> Session:
        session = self._session_factory()
        if not isinstance(session, Session):
            raise TypeError(
                f"session_factory returned {type(session).__qualname__}, not a wink Session"
            )
        return session

    def _executor(self, session: Session, deadline: Deadline | None = None) -> ToolExecutor:
        return ToolExecutor(
            prompt=self._prompt,
            session=session,
            deadline=deadline,
            rendered_prompt=self._render.rendered,
        )

    def _release(self, key: object) -> None:
        if self._clients.pop(key, None) is not None:
            logger.debug("released the session of a disconnected client")


def server(
    prompt: Prompt,
    *,
    session_factory: Callable[[], Session] = Session,
    name: str | None = None,
    version: str | None = None,
    instructions: str | None = None,
    call_timeout: timedelta | float | None = None,
    store: SessionStore | None = None,
    session_id: str = DEFAULT_SESSION_ID,
) -> PromptServer:
    """An MCP server (the ``mcp`` package's ``Server``) for ``prompt``'s tools.

    One ``Session`` per client from ``session_factory``, or opened from ``store``
    (a client with no id of its own continuing ``session_id``); ``name`` defaults
    to the prompt's name, ``version`` to wink's, ``instructions`` to its rendered
    text. See ``PromptServer``.
    """
    return PromptServer(
        prompt,
        session_factory=session_factory,
        name=name,
        version=version,
        instructions=instructions,
        call_timeout=call_timeout,
        store=store,
        session_id=session_id,
    )


async def serve_stdio(
    served: Server[Any],
    stdout: BinaryIO | None = None,
    *,
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
) -> None:
    """Serve ``served`` over this process's stdin and stdout until stdin closes.

    While serving, anything else written to stdout (a handler's ``print``, a
    library's or a child process's output) goes to stderr, so it cannot corrupt
    the protocol stream (see ``protocol_stdout``), and fd 0 reads the null device
    (see ``protocol_stdin``). ``stdout`` is the protocol stream of a
    ``protocol_stdout()`` the caller already holds, to divert what loading and
    rendering the served code prints as well.

    A line longer than ``max_message_bytes``, not UTF-8, not JSON or no JSON-RPC
    message is answered with a JSON-RPC error and serving goes on; at most
    ``max_in_flight`` requests are served at once (see ``wink.providers._mcp_stdio``).
    """
    if stdout is None:
        with protocol_stdout() as owned:
            await serve_stdio(
                served, owned, max_message_bytes=max_message_bytes, max_in_flight=max_in_flight
            )
        return
    from wink.providers._mcp_stdio import stdio_streams

    with protocol_stdin() as stdin:
        async with stdio_streams(
            stdin, stdout, max_line_bytes=max_message_bytes, max_in_flight=max_in_flight
        ) as (read_stream, write_stream):
            await served.run(read_stream, write_stream, served.create_initialization_options())


def bind_http_socket(host: str = "127.0.0.1", port: int = 8000) -> socket.socket:
    """A listening TCP socket on ``host``:``port`` (``0``: a free port); raises ``OSError``.

    Created as ``IPPROTO_TCP`` rather than protocol 0: asyncio turns Nagle's algorithm
    off (``TCP_NODELAY``) only on connections whose socket names that protocol, and
    with it on, each small response waits for the client's delayed ACK (~40 ms).
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except BaseException:
        sock.close()
        raise
    return sock


def http_app(
    served: Server[Any],
    *,
    path: str = "/mcp",
    host: str = "127.0.0.1",
    session_idle_timeout: float | None = DEFAULT_SESSION_IDLE_TIMEOUT,
    max_sessions: int | None = DEFAULT_MAX_SESSIONS,
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
) -> Starlette:
    """The ASGI app serving ``served`` over Streamable HTTP at ``path``.

    The ``mcp`` package's own app (``streamable_http_app``), with limits on what
    clients can hold: a session with no request in flight for
    ``session_idle_timeout`` seconds is closed (its wink session released); at most
    ``max_sessions`` are kept, and a client opening one more ends the least
    recently used session that has no request in flight, so clients that leave
    without closing cannot lock others out (only when every session is busy is
    the newcomer refused, 503). A request body longer than ``max_message_bytes``
    is refused (413). ``None`` turns the timeout or the cap off. Raises
    ``ValueError`` for a limit that is not positive.
    """
    _check_limits(session_idle_timeout, max_sessions, max_message_bytes)
    app = served.streamable_http_app(
        streamable_http_path=path,
        host=host,
        session_idle_timeout=session_idle_timeout,
        max_sessions=max_sessions,
        max_request_body_size=max_message_bytes,
    )
    if max_sessions is not None:
        from wink.providers._mcp_sessions import SessionLimit

        app.add_middleware(
            SessionLimit, manager=served.session_manager, max_sessions=max_sessions, path=path
        )
    return app


async def serve_http(
    served: Server[Any],
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    sock: socket.socket | None = None,
    path: str = "/mcp",
    session_idle_timeout: float | None = DEFAULT_SESSION_IDLE_TIMEOUT,
    max_sessions: int | None = DEFAULT_MAX_SESSIONS,
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
) -> None:
    """Serve ``served`` over Streamable HTTP at ``http://host:port/mcp`` until stopped.

    ``sock`` (from ``bind_http_socket``) is served instead of binding ``host``:``port``;
    an IPv4 or IPv6 stream socket not created as ``IPPROTO_TCP`` raises ``ValueError``
    (each of its responses would wait ~40 ms, see ``bind_http_socket``). The limits
    are ``http_app``'s. Runs uvicorn with its own logging off: wink's log records go
    where the application's logging sends them.
    """
    import uvicorn

    if sock is not None and _delays_responses(sock):
        raise ValueError(
            "serve_http() needs a socket created as IPPROTO_TCP, such as bind_http_socket() "
            "returns: on this one every response would wait for the client's delayed ACK"
        )
    app = http_app(
        served,
        path=path,
        host=host,
        session_idle_timeout=session_idle_timeout,
        max_sessions=max_sessions,
        max_message_bytes=max_message_bytes,
    )
    config = uvicorn.Config(app, log_config=None, access_log=False, lifespan="on")
    listening = sock if sock is not None else bind_http_socket(host, port)
    try:
        await uvicorn.Server(config).serve(sockets=[listening])
    finally:
        listening.close()


def _delays_responses(sock: socket.socket) -> bool:
    """Whether asyncio would leave Nagle's algorithm on for ``sock``'s connections."""
    return (
        sock.family in (socket.AF_INET, socket.AF_INET6)
        and sock.type == socket.SOCK_STREAM
        and sock.proto != socket.IPPROTO_TCP
    )


def _check_limits(
    session_idle_timeout: float | None, max_sessions: int | None, max_message_bytes: int
) -> None:
    if session_idle_timeout is not None and not (
        math.isfinite(session_idle_timeout) and session_idle_timeout > 0
    ):
        raise ValueError(
            f"session_idle_timeout must be a positive number of seconds or None, "
            f"got {session_idle_timeout!r}"
        )
    if max_sessions is not None and max_sessions <= 0:
        raise ValueError(f"max_sessions must be positive or None, got {max_sessions!r}")
    if max_message_bytes <= 0:
        raise ValueError(f"max_message_bytes must be positive, got {max_message_bytes!r}")


def _execute(executor: ToolExecutor, call: ToolCall) -> ToolResult[Any]:
    try:
        return executor.execute(call)
    except _STOPPED as error:
        # Recorded and rolled back by the executor; a served call has no evaluation
        # to stop, so the client gets the reason as a failed call.
        return ToolResult.error(str(error))


async def _aexecute(executor: ToolExecutor, call: ToolCall) -> ToolResult[Any]:
    try:
        return await executor.aexecute(call)
    except _STOPPED as error:  # as in ``_execute``
        return ToolResult.error(str(error))


def wink_version() -> str:
    """The installed wink's version, or ``"0+unknown"`` when run from a bare source tree."""
    try:
        return importlib.metadata.version("wink")
    except importlib.metadata.PackageNotFoundError:
        return "0+unknown"


def _render(prompt: Prompt) -> _Render:
    rendered = prompt.render()
    specs = tuple(tool_specs(rendered))
    listing = types.ListToolsResult(tools=[types.Tool.model_validate(spec) for spec in specs])
    return _Render(rendered, specs, listing)


def _header_id(ctx: ServerRequestContext[_Run]) -> str | None:
    """The stored session the HTTP request of ``ctx`` names (``SESSION_HEADER``), if any."""
    from starlette.requests import Request

    if not isinstance(ctx.request, Request):
        return None  # not over HTTP
    return ctx.request.headers.get(SESSION_HEADER)


def _lost_race(result: ToolResult[Any]) -> bool:
    """Whether the call failed because another writer stored a version of its session
    first: the executor rolled it back with a message naming ``VersionConflict``."""
    return not result.success and f"{VersionConflict.__name__}: " in result.message


def _client_key(ctx: ServerRequestContext[_Run], connection: Connection) -> object | None:
    """What identifies the client of ``ctx`` for as long as it stays; ``None``: nothing."""
    if connection.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        return connection
    if ctx.request is None:
        # A 2026-07-28 client over a stream or in process: one client per run.
        return ctx.lifespan_context
    # A 2026-07-28 HTTP request: stateless, it names no client to remember.
    return None


def _connection_of(ctx: ServerRequestContext[Any]) -> Connection:
    """The SDK's per-client ``Connection`` behind ``ctx``.

    Its ``exit_stack`` is the SDK's teardown hook for a client, but the request
    context handed to low-level handlers exposes it only through its session.
    """
    connection = getattr(ctx.session, "_connection", None)
    if not isinstance(connection, Connection):
        raise RuntimeError(
            "this version of the mcp package does not expose a request's connection; "
            "wink cannot tell its clients apart"
        )
    return connection
