"""Offline provider endpoints for the SDK round-trip tests.

``Endpoint`` stands in for an HTTP API: the SDK's own HTTP client sends to it
through a mock transport, it records each request's JSON body and answers with
the next queued reply. ``RecordingTransport`` connects an MCP client to an
in-process server over JSON-RPC memory streams and records every message; it
wraps ``mcp.client._memory.InMemoryTransport``, the transport ``Client`` itself
uses for an in-process server in legacy mode (the package does not export it, and
wrapping it is the one way to see the messages).

The SDKs are built on ``httpx2`` (Anthropic refuses an ``httpx`` client), so the
mock transport is ``httpx2.MockTransport``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from types import TracebackType
from typing import Any, Generic, TypeVar

import anyio
import httpx2
from mcp.client._memory import InMemoryTransport
from mcp.client._transport import ReadStream, TransportStreams, WriteStream
from mcp.server import Server
from mcp.shared.message import SessionMessage

__all__ = ["Endpoint", "RecordingTransport"]

T = TypeVar("T")


class Endpoint:
    """A fake provider API: records request bodies, answers with queued JSON replies."""

    def __init__(self, *replies: dict[str, Any]) -> None:
        self.bodies: list[dict[str, Any]] = []
        self._replies: Iterator[dict[str, Any]] = iter(replies)

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        """Record the request and answer with the next reply (a 500 when none is left)."""
        self.bodies.append(json.loads(request.content))
        reply = next(self._replies, None)
        if reply is None:
            return httpx2.Response(500, json={"error": {"message": "no reply queued"}})
        return httpx2.Response(200, json=reply)

    def http_client(self) -> httpx2.Client:
        """An HTTP client whose every request goes to this endpoint."""
        return httpx2.Client(transport=httpx2.MockTransport(self.handle))


class _RecordingRead(Generic[T]):
    """A read stream that keeps a copy of every item it hands on."""

    def __init__(self, inner: ReadStream[T], seen: list[T]) -> None:
        self._inner = inner
        self._seen = seen
        self.last_context = None

    async def receive(self) -> T:
        item = await self._inner.receive()
        self.last_context = getattr(self._inner, "last_context", None)
        self._seen.append(item)
        return item

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> _RecordingRead[T]:
        return self

    async def __anext__(self) -> T:
        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None

    async def __aenter__(self) -> _RecordingRead[T]:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


class _RecordingWrite(Generic[T]):
    """A write stream that keeps a copy of every item it sends."""

    def __init__(self, inner: WriteStream[T], seen: list[T]) -> None:
        self._inner = inner
        self._seen = seen

    async def send(self, item: T, /) -> None:
        self._seen.append(item)
        await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _RecordingWrite[T]:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


class RecordingTransport:
    """An in-memory MCP transport to ``server`` recording what the client sends and receives."""

    def __init__(self, server: Server[Any]) -> None:
        self._inner = InMemoryTransport(server, raise_exceptions=True)
        self.sent: list[SessionMessage] = []
        self.received: list[SessionMessage | Exception] = []

    async def __aenter__(self) -> TransportStreams:
        read, write = await self._inner.__aenter__()
        return _RecordingRead(read, self.received), _RecordingWrite(write, self.sent)

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        await self._inner.__aexit__(exc_type, exc_val, exc_tb)

    def sent_json(self) -> list[dict[str, Any]]:
        """The JSON-RPC messages the client sent, as wire JSON."""
        return [_wire(message) for message in self.sent]

    def received_json(self) -> list[dict[str, Any]]:
        """The JSON-RPC messages the client received, as wire JSON."""
        return [_wire(message) for message in self.received if isinstance(message, SessionMessage)]


def _wire(message: SessionMessage) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        message.message.model_dump_json(by_alias=True, exclude_unset=True)
    )
    return data
