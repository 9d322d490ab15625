"""``SessionLimit``: Streamable HTTP sessions kept within a cap by ending the least recently used.

The ``mcp`` package's session manager closes a session that has had no request in
flight for its ``session_idle_timeout``, and refuses a new one (503) while
``max_sessions`` are open. Refusing lets clients that leave without closing their
session lock every other client out until the timeout. This ASGI layer, in front
of the manager, makes room instead: before a request that opens a session reaches
the manager, it ends the least recently used session that has no request in
flight, the way the manager itself ends one (``_discard_session``: forgotten,
transport terminated, its server task and the wink session of its client
released; a session opened from a store stays stored). Only when every session is
busy does the manager's own refusal apply.

A session is busy while a request of it is being served, an open GET stream
included; its last use is when its last request ended.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

import anyio
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

if TYPE_CHECKING:
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["SessionLimit", "check_session_manager"]

logger = logging.getLogger(__name__)

_SESSION_HEADER = MCP_SESSION_ID_HEADER.lower().encode("ascii")
_VERSION_HEADER = MCP_PROTOCOL_VERSION_HEADER.lower().encode("ascii")


def check_session_manager(manager: StreamableHTTPSessionManager) -> None:
    """Raise ``RuntimeError`` unless ``manager`` keeps sessions as ``SessionLimit`` reads them.

    The manager has no public way to end one session; ``SessionLimit`` uses its
    session table and its own discard step, so an ``mcp`` release that renames
    them fails here, when the app is built, not silently at the cap.
    """
    sessions = getattr(manager, "_server_instances", None)
    discard = getattr(manager, "_discard_session", None)
    if not isinstance(sessions, dict) or not callable(discard):
        raise RuntimeError(
            "this version of the mcp package does not expose its Streamable HTTP sessions; "
            "wink cannot keep them within max_sessions (pass max_sessions=None to serve anyway)"
        )


class SessionLimit:
    """ASGI middleware: at ``max_sessions``, a new session ends the least recently used idle one."""

    def __init__(
        self, app: ASGIApp, *, manager: StreamableHTTPSessionManager, max_sessions: int, path: str
    ) -> None:
        """Guard the sessions ``manager`` serves at ``path`` of ``app`` (see the module)."""
        check_session_manager(manager)
        self._app = app
        self._manager = manager
        self._max_sessions = max_sessions
        self._path = path
        self._last_used: OrderedDict[str, None] = OrderedDict()
        """Known session ids, least recently used first."""
        self._busy: dict[str, int] = {}
        """Requests in flight per session id."""
        self._opening = 0
        """Requests that may open a session, let through and not yet finished."""
        self._lock = anyio.Lock()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one ASGI request, making room first when it may open a session."""
        if scope["type"] != "http" or scope["path"] != self._path:
            await self._app(scope, receive, send)
            return
        headers: dict[bytes, bytes] = dict(scope["headers"])
        session_id = headers.get(_SESSION_HEADER)
        if session_id is not None:
            await self._serve_session(session_id.decode("latin-1"), scope, receive, send)
            return
        version = headers.get(_VERSION_HEADER)
        handshake = version is None or version.decode("latin-1") in HANDSHAKE_PROTOCOL_VERSIONS
        if scope["method"] != "POST" or not handshake:
            # Neither opens a session: a 2026-07-28 request is served without one.
            await self._app(scope, receive, send)
            return
        await self._serve_opening(scope, receive, send)

    async def _serve_opening(self, scope: Scope, receive: Receive, send: Send) -> None:
        async with self._lock:
            await self._make_room()
            self._opening += 1
        opened: list[str] = []

        async def watch(message: Message) -> None:
            if message["type"] == "http.response.start" and not opened:
                for name, value in message.get("headers", ()):
                    if name.lower() == _SESSION_HEADER:
                        opened.append(value.decode("latin-1"))
                        self._begin(opened[0])
            await send(message)

        try:
            await self._app(scope, receive, watch)
        finally:
            self._opening -= 1
            if opened:
                self._end(opened[0])

    async def _serve_session(
        self, session_id: str, scope: Scope, receive: Receive, send: Send
    ) -> None:
        if session_id not in self._sessions():
            # Unknown or ended: the manager answers 404; nothing to remember.
            await self._app(scope, receive, send)
            return
        self._begin(session_id)
        try:
            await self._app(scope, receive, send)
        finally:
            self._end(session_id)

    def _begin(self, session_id: str) -> None:
        self._busy[session_id] = self._busy.get(session_id, 0) + 1
        self._last_used[session_id] = None
        self._last_used.move_to_end(session_id)

    def _end(self, session_id: str) -> None:
        remaining = self._busy.pop(session_id, 1) - 1
        if remaining:
            self._busy[session_id] = remaining
        if session_id in self._sessions():
            self._last_used[session_id] = None
            self._last_used.move_to_end(session_id)
        else:
            self._last_used.pop(session_id, None)

    async def _make_room(self) -> None:
        sessions = self._sessions()
        # Ended sessions (idle timeout, DELETE) are forgotten here, so the table
        # stays as large as the manager's.
        for session_id in [known for known in self._last_used if known not in sessions]:
            del self._last_used[session_id]
        while len(sessions) + self._opening >= self._max_sessions:
            victim = next((known for known in self._last_used if known not in self._busy), None)
            if victim is None:
                return  # every session is in use: the manager refuses the newcomer
            del self._last_used[victim]
            transport = sessions.get(victim)
            if transport is not None:
                logger.info("ending the least recently used idle session to admit a new one")
                await self._manager._discard_session(victim, transport)  # see check_session_manager

    def _sessions(self) -> dict[str, Any]:
        sessions: dict[str, Any] = self._manager._server_instances  # see check_session_manager
        return sessions
