"""``stdio_streams``: the line transport ``serve_stdio`` feeds the ``mcp`` package's ``Server.run``.

MCP over stdio is one JSON-RPC message per line. The package's own stdio transport
reads a line of any length into memory, turns bytes that are not UTF-8 into U+FFFD
(so a client's argument changes silently) and hands a line it cannot parse to the
server, which drops it unanswered. This transport reads the same lines and gives
the server the same messages, but:

- a line longer than ``max_line_bytes`` is skipped without being kept (read and
  discarded in small chunks) and answered with ``-32600``;
- a line that is not UTF-8 or not JSON is answered with ``-32700`` (parse error,
  naming the byte offset), one that is JSON but no JSON-RPC message with ``-32600``;
- a request reusing the id of a request still in flight is answered ``-32600``
  rather than run, since its answer could not be told from the first's;
- while ``max_in_flight`` requests are unanswered, no further line is read, so a
  client that sends faster than it is served waits instead of queueing work.

Error answers carry ``"id": null`` (the line named no request the server accepted)
and messages of bounded size. Blank lines are skipped.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from types import TracebackType
from typing import BinaryIO, Self

import anyio
import anyio.to_thread
import mcp_types as types
import pydantic_core
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.dispatcher import coerce_request_id
from mcp.shared.message import ServerMessageMetadata, SessionMessage
from pydantic import ValidationError

__all__ = ["stdio_streams"]

logger = logging.getLogger(__name__)

_DISCARD_CHUNK = 64 * 1024
"""Bytes read at a time while skipping the rest of a line that is too long."""

_SHOWN_ID = 64
"""Longest request id (as text) an error message repeats."""

_SHOWN_REASON = 200
"""Longest parser message an error message repeats."""


class _InFlight:
    """The ids of the requests passed to the server and not yet answered."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._ids: set[types.RequestId] = set()
        self._freed = anyio.Event()

    def __contains__(self, request_id: types.RequestId) -> bool:
        return coerce_request_id(request_id) in self._ids

    def add(self, request_id: types.RequestId) -> None:
        self._ids.add(coerce_request_id(request_id))

    def settle(self, request_id: types.RequestId) -> None:
        key = coerce_request_id(request_id)
        if key in self._ids:
            self._ids.remove(key)
            self._freed.set()

    def settler(self, request_id: types.RequestId) -> Callable[[], Awaitable[None]]:
        """What the server calls for a request it settles without an answer (a cancelled one)."""

        async def settle() -> None:
            self.settle(request_id)

        return settle

    async def wait_for_room(self) -> None:
        while len(self._ids) >= self._limit:
            self._freed = anyio.Event()
            await self._freed.wait()


class _Answers:
    """The server's write stream: an answer settles its request before it is written."""

    def __init__(
        self, stream: MemoryObjectSendStream[SessionMessage], in_flight: _InFlight
    ) -> None:
        self._stream = stream
        self._in_flight = in_flight

    async def send(self, item: SessionMessage, /) -> None:
        message = item.message
        if (
            isinstance(message, types.JSONRPCResponse | types.JSONRPCError)
            and message.id is not None
        ):
            self._in_flight.settle(message.id)
        await self._stream.send(item)

    async def aclose(self) -> None:
        await self._stream.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        await self.aclose()


@asynccontextmanager
async def stdio_streams(
    stdin: BinaryIO, stdout: BinaryIO, *, max_line_bytes: int, max_in_flight: int
) -> AsyncIterator[tuple[MemoryObjectReceiveStream[SessionMessage | Exception], _Answers]]:
    """The read and write streams for ``Server.run`` over ``stdin`` and ``stdout``.

    Reading ends at the end of ``stdin``; on exit, whatever the server wrote is
    flushed to ``stdout`` first. See the module docstring for what is refused.
    """
    if max_line_bytes <= 0 or max_in_flight <= 0:
        raise ValueError(
            f"max_line_bytes and max_in_flight must be positive, got {max_line_bytes} "
            f"and {max_in_flight}"
        )
    to_server, from_client = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    to_client, outgoing = anyio.create_memory_object_stream[SessionMessage](0)
    in_flight = _InFlight(max_in_flight)
    refusals = to_client.clone()
    async with anyio.create_task_group() as group:
        group.start_soon(_write_lines, stdout, outgoing)
        async with anyio.create_task_group() as reading:
            reading.start_soon(_read_lines, stdin, to_server, refusals, in_flight, max_line_bytes)
            try:
                yield from_client, _Answers(to_client, in_flight)
            finally:
                # The server is done: stop reading (a client may never close stdin);
                # the writer ends once it has written everything it was given.
                reading.cancel_scope.cancel()
                await to_client.aclose()


async def _read_lines(
    stdin: BinaryIO,
    to_server: MemoryObjectSendStream[SessionMessage | Exception],
    refusals: MemoryObjectSendStream[SessionMessage],
    in_flight: _InFlight,
    max_line_bytes: int,
) -> None:
    async with to_server, refusals:
        while True:
            # A thread blocked on stdin cannot be interrupted; when serving ends
            # first, it is left to finish on its own.
            line = await anyio.to_thread.run_sync(
                stdin.readline, max_line_bytes + 1, abandon_on_cancel=True
            )
            if not line:
                return
            if len(line) > max_line_bytes and not line.endswith(b"\n"):
                ended = await anyio.to_thread.run_sync(_skip_line, stdin, abandon_on_cancel=True)
                await refusals.send(_refusal(types.INVALID_REQUEST, _too_long(max_line_bytes)))
                if not ended:
                    return
                continue
            if not line.strip():
                continue
            message = _message(line.rstrip(b"\r\n"))
            if isinstance(message, types.JSONRPCError):
                await refusals.send(SessionMessage(message))
                continue
            if isinstance(message, types.JSONRPCRequest):
                if message.id in in_flight:
                    await refusals.send(_refusal(types.INVALID_REQUEST, _reused(message.id)))
                    continue
                await in_flight.wait_for_room()
                in_flight.add(message.id)
                metadata = ServerMessageMetadata(
                    on_request_unanswered=in_flight.settler(message.id)
                )
                await to_server.send(SessionMessage(message, metadata=metadata))
            else:
                await to_server.send(SessionMessage(message))


async def _write_lines(
    stdout: BinaryIO, outgoing: MemoryObjectReceiveStream[SessionMessage]
) -> None:
    async with outgoing:
        broken = False
        async for item in outgoing:
            if broken:
                continue  # the client is gone: drain, so the server never blocks on it
            line = item.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
            try:
                await anyio.to_thread.run_sync(_write, stdout, line.encode("utf-8"))
            except (OSError, ValueError) as error:
                logger.info("stdout closed (%s); answers are dropped from now on", error)
                broken = True


def _write(stdout: BinaryIO, data: bytes) -> None:
    stdout.write(data)
    stdout.flush()


def _skip_line(stdin: BinaryIO) -> bool:
    """Read up to the end of the current line without keeping it; ``False`` at end of input."""
    while True:
        chunk = stdin.readline(_DISCARD_CHUNK)
        if not chunk:
            return False
        if chunk.endswith(b"\n"):
            return True


def _message(line: bytes) -> types.JSONRPCMessage | types.JSONRPCError:
    """The message on ``line``, else the error that answers it."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as error:
        return _error(
            types.PARSE_ERROR,
            f"Parse error: invalid UTF-8 at byte {error.start} of the line "
            f"({error.reason}); MCP messages are UTF-8 text",
        )
    try:
        message: types.JSONRPCMessage = types.jsonrpc_message_adapter.validate_json(
            text, by_name=False
        )
    except ValidationError as error:
        first = error.errors(include_url=False)[0]
        if first["type"] == "json_invalid":
            return _error(types.PARSE_ERROR, f"Parse error: {_shown(first['msg'], _SHOWN_REASON)}")
        return _error(
            types.INVALID_REQUEST,
            f"Invalid Request: {_kind_of(text)} is not a JSON-RPC 2.0 request, notification "
            "or response",
        )
    return message


def _kind_of(text: str) -> str:
    value = pydantic_core.from_json(text)
    if isinstance(value, dict):
        return "the object"
    if isinstance(value, list):
        return "an array (batches are not part of MCP)"
    return f"a JSON {type(value).__name__}"


def _refusal(code: int, message: str) -> SessionMessage:
    return SessionMessage(_error(code, message))


def _error(code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(
        jsonrpc="2.0", id=None, error=types.ErrorData(code=code, message=message)
    )


def _too_long(max_line_bytes: int) -> str:
    return f"Invalid Request: a line longer than {max_line_bytes} bytes was skipped unread"


def _reused(request_id: types.RequestId) -> str:
    shown = _shown(repr(request_id), _SHOWN_ID)
    return (
        f"Invalid Request: id {shown} is already used by a request in flight; this one was "
        "not run (give each request its own id)"
    )


def _shown(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
