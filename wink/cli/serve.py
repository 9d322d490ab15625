"""``wink serve``: a target's tools as an MCP server, over stdio or Streamable HTTP."""

from __future__ import annotations

import logging
import sys
from functools import partial
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import anyio
from pydantic import Field
from pydantic_settings import CliPositionalArg
from typing_extensions import TypeAliasType

from wink.cli.commands import Command
from wink.cli.failure import EXIT_USAGE, CliError
from wink.cli.settings import WinkSettings
from wink.cli.targets import load_target
from wink.errors import WinkError
from wink.prompt import MarkdownSection, Prompt, PromptTemplate, RenderedPrompt, Section
from wink.tools import Tool

if TYPE_CHECKING:
    from wink.providers.mcp import PromptServer
    from wink.store import SessionStore

__all__ = ["ServeCommand", "served_prompt"]

Transport = Literal["stdio", "http"]

_Limit = TypeVar("_Limit", int, float)

# Named aliases give readable metavars in --help (HOST rather than str).
HOST = TypeAliasType("HOST", str)
PORT = TypeAliasType("PORT", int)
NAME = TypeAliasType("NAME", str)
VERSION = TypeAliasType("VERSION", str)
SECONDS = TypeAliasType("SECONDS", float)
COUNT = TypeAliasType("COUNT", int)
BYTES = TypeAliasType("BYTES", int)
URL = TypeAliasType("URL", str)
ID = TypeAliasType("ID", str)

_SERVE_TARGET_HELP = (
    "module:attribute or path/to/file.py:attribute naming a Prompt (with its resources), "
    "PromptTemplate, Section, Tool or list of tools"
)


class ServeCommand(Command):
    """Serve the target's tools over MCP: stdio for a client that starts wink, http for others."""

    target: CliPositionalArg[str] = Field(description=_SERVE_TARGET_HELP)
    transport: Transport | None = Field(
        None, description="stdio or http [setting: serve_transport, else stdio]"
    )
    host: HOST | None = Field(
        None, description="http: address to listen on [setting: serve_host, else 127.0.0.1]"
    )
    port: PORT | None = Field(
        None,
        ge=0,
        le=65535,
        description="http: port to listen on, 0 for a free one [setting: serve_port, else 8000]",
    )
    name: NAME = Field("", description="server name clients see; empty: the prompt's name")
    server_version: VERSION = Field(
        "", description="server version clients see; empty: wink's version"
    )
    session_idle_timeout: SECONDS | None = Field(
        None,
        gt=0,
        allow_inf_nan=False,
        description="http: close a session idle this long "
        "[setting: serve_session_idle_timeout, else 600]",
    )
    max_sessions: COUNT | None = Field(
        None,
        gt=0,
        description="http: sessions kept; one more ends the least recently used idle one "
        "[setting: serve_max_sessions, else 1000]",
    )
    max_message_bytes: BYTES | None = Field(
        None,
        gt=0,
        description="longest stdio line or HTTP body read; longer ones are refused "
        "[setting: serve_max_message_bytes, else 4194304]",
    )
    max_in_flight: COUNT | None = Field(
        None,
        gt=0,
        description="stdio: requests run at once; further lines wait "
        "[setting: serve_max_in_flight, else 64]",
    )
    store: URL | None = Field(
        None,
        description="keep clients' sessions in this store (sqlite:///path or "
        "postgresql://...), across restarts and servers [setting: serve_store, else in memory]",
    )
    session_id: ID = Field(
        "default",
        min_length=1,
        description="with --store: the stored session a client with no id of its own "
        "(stdio) continues; HTTP clients send a Wink-Session-Id header",
    )

    def run(self, settings: WinkSettings) -> int:
        """Serve until the client closes stdin (stdio) or the process is interrupted (http)."""
        _log_to_stderr()
        url = self.store if self.store is not None else settings.serve_store
        store = None if url is None else _opened_store(url)
        try:
            return self._serve(settings, store)
        finally:
            if store is not None:
                store.close()

    def _serve(self, settings: WinkSettings, store: SessionStore | None) -> int:
        from wink.providers import mcp

        transport = self.transport or settings.serve_transport
        max_message_bytes = _chosen(self.max_message_bytes, settings.serve_max_message_bytes)
        if transport == "stdio":
            # stdout is the protocol from the first byte: what the target prints while
            # it loads, renders or runs (at the Python or descriptor level) goes to stderr.
            with mcp.protocol_stdout() as stdout:
                served = self._server(store)
                _announce(f"serving {_tools(served)} of {served.name!r} over stdio")
                serve = partial(
                    mcp.serve_stdio,
                    max_message_bytes=max_message_bytes,
                    max_in_flight=_chosen(self.max_in_flight, settings.serve_max_in_flight),
                )
                anyio.run(serve, served, stdout)
            return 0
        served = self._server(store)
        host = self.host or settings.serve_host
        port = settings.serve_port if self.port is None else self.port
        try:
            sock = mcp.bind_http_socket(host, port)
        except OSError as error:
            reason = (error.strerror or str(error)).lower()
            raise CliError(
                f"cannot listen on {host}:{port}: {reason} (choose another --port, or 0 for a "
                "free one)"
            ) from None
        bound_port = sock.getsockname()[1]
        shown_host = f"[{host}]" if ":" in host else host
        _announce(
            f"serving {_tools(served)} of {served.name!r} on http://{shown_host}:{bound_port}/mcp"
        )
        serve = partial(
            mcp.serve_http,
            served,
            host=host,
            sock=sock,
            session_idle_timeout=_chosen(
                self.session_idle_timeout, settings.serve_session_idle_timeout
            ),
            max_sessions=_chosen(self.max_sessions, settings.serve_max_sessions),
            max_message_bytes=max_message_bytes,
        )
        anyio.run(serve)
        return 0

    def _server(self, store: SessionStore | None) -> PromptServer:
        from wink.providers import mcp

        prompt = served_prompt(load_target(self.target), self.target)
        try:
            return mcp.server(
                prompt,
                name=self.name or None,
                version=self.server_version or None,
                store=store,
                session_id=self.session_id,
            )
        except WinkError as error:
            raise CliError(f"target {self.target!r}: {error}") from None


def _opened_store(url: str) -> SessionStore:
    """The store ``url`` names, opened once for the whole run (created when new)."""
    from wink.store import StoreError, open_store  # a store's driver loads only when named

    try:
        return open_store(url)
    except ValueError as error:
        raise CliError(f"serve --store: {error}", EXIT_USAGE) from None
    except StoreError as error:
        raise CliError(f"serve --store: {error}") from None


def _tools(served: PromptServer) -> str:
    count = len(served.rendered_prompt.tools)
    return f"{count} tool" if count == 1 else f"{count} tools"


def served_prompt(value: object, target: str) -> Prompt:
    """The prompt to serve for a target's value; tools and sections get a prompt of their own."""
    if isinstance(value, Prompt):
        prompt = value
    elif isinstance(value, PromptTemplate):
        prompt = Prompt(value)
    elif isinstance(value, Section):
        prompt = Prompt(PromptTemplate(ns="wink.serve", key=value.key, sections=[value]))
    elif (tools := _tools_in(value)) is not None:
        key = target.rpartition(":")[2].rpartition(".")[2].lower().replace("_", "-")
        section: MarkdownSection[Any] = MarkdownSection(title="Tools", key="tools", tools=tools)
        prompt = Prompt(PromptTemplate(ns="wink.serve", key=key or "tools", sections=[section]))
    elif isinstance(value, RenderedPrompt):
        raise CliError(
            f"target {target!r} is a RenderedPrompt, which has no resources to serve with; "
            "name its Prompt or PromptTemplate"
        )
    else:
        raise CliError(
            f"target {target!r} is a {type(value).__qualname__}; expected a Prompt, "
            "PromptTemplate, Section, Tool or a sequence of tools"
        )
    try:
        rendered = prompt.render()
    except WinkError as error:
        raise CliError(f"target {target!r}: rendering the prompt failed: {error}") from None
    if not rendered.tools:
        raise CliError(f"target {target!r} has no enabled tools to serve")
    return prompt


def _tools_in(value: object) -> tuple[Tool[Any, Any], ...] | None:
    """The tools of a ``Tool`` or a sequence of tools, else ``None``."""
    if isinstance(value, Tool):
        return (value,)
    if isinstance(value, list | tuple) and all(isinstance(item, Tool) for item in value):
        return tuple(value)
    return None


def _chosen(flag: _Limit | None, setting: _Limit) -> _Limit:
    """The command line's value, else the setting's."""
    return setting if flag is None else flag


def _log_to_stderr() -> None:
    """Log records (wink's, the SDK's, uvicorn's) go to stderr: stdout may be the protocol."""
    root = logging.getLogger()
    if not root.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("wink serve: %(levelname)s %(name)s: %(message)s"))
        root.addHandler(handler)
        root.setLevel(logging.WARNING)


def _announce(line: str) -> None:
    print(f"wink serve: {line}", file=sys.stderr, flush=True)
