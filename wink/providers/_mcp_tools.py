"""``McpToolsSection``: the tools another MCP server lists, as a section of wink tools.

Each listed tool becomes a ``Tool`` whose params type is made from its
``inputSchema`` and whose result type from its ``outputSchema`` (``None`` without
one; see ``wink.providers._mcp_schemas``). Its handler, an ``McpToolCall``, sends
the parsed arguments with ``tools/call`` on the session's connection to the server
(the ``McpClients`` resource) and turns the answer into a ``ToolResult``. So an
imported tool is rendered, offered to every provider, governed by policies and
recorded like any other; what differs is said by its handler's fields.
"""

from __future__ import annotations

import asyncio
import copy
import json
import logging
import re
import unicodedata
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from wink._error_text import bounded
from wink.contract import ContractViolation, compile_contract
from wink.errors import PromptValidationError
from wink.prompt import Section
from wink.prompt.section import Enabled
from wink.providers._mcp_client import McpClients, McpConnection, McpConnectionError, McpServer
from wink.providers._mcp_schemas import (
    JsonSchemaDocument,
    check_imported_schema,
    schema_document_type,
)
from wink.resources import Binding, ResourceRegistry, Scope
from wink.tools import Tool, ToolContext, ToolResult

if TYPE_CHECKING:
    import mcp_types as types

__all__ = ["McpToolCall", "McpToolsSection", "is_destructive", "text_of_content"]

logger = logging.getLogger(__name__)

_NAME_LIMIT = 64
_DESCRIPTION_LIMIT = 200
_UNNAMEABLE = re.compile(r"[^a-z0-9_-]")


@dataclass(frozen=True, slots=True)
class McpToolCall:
    """The handler of an imported tool: one ``tools/call`` to the server that lists it.

    ``can_roll_back`` is always ``False``: the call changes the server's world, which
    no snapshot of the session reaches. A failed call still rolls the session back,
    and policies still decide before anything is sent.
    """

    server: McpServer
    """The server the call goes to."""
    remote_name: str
    """The tool's name on the server."""
    read_only: bool
    """The server marks the tool ``readOnlyHint``: its calls may overlap in a model turn."""
    destructive: bool
    """The tool may destroy what it acts on: MCP's ``destructiveHint``, which is true unless
    the server says otherwise, and false for a read-only tool."""
    params_type: type[JsonSchemaDocument]
    """The params type made from the ``inputSchema``."""
    result_type: type[JsonSchemaDocument] | None
    """The result type made from the ``outputSchema``; ``None`` when it has none."""

    can_roll_back: ClassVar[bool] = False
    """What the call did on the server is never undone by wink."""

    def __call__(self, params: JsonSchemaDocument, *, context: ToolContext) -> ToolResult[Any]:
        """Send the call and return the server's answer as a result (a failure for any error)."""
        clients = context.resources.get(McpClients)
        connection = clients.connection(self.server)
        return self.send(connection, dict(params))

    async def acall(self, params: JsonSchemaDocument, *, context: ToolContext) -> ToolResult[Any]:
        """``__call__`` awaited (the tool's ``async_handler``): under ``aexecute`` the call
        waits for the server on the caller's event loop, taking no worker thread."""
        connection = context.resources.get(McpClients).connection(self.server)
        try:
            if connection.tools_changed:  # as in ``send``; listing again may block
                changed = await asyncio.to_thread(_changed_since_import, connection, self)
                if changed is not None:
                    return ToolResult.error(changed)
            answer = await connection.acall_tool(self.remote_name, dict(params))
        except McpConnectionError as error:
            return ToolResult.error(str(error))
        return result_of(answer, self.result_type, self.subject)

    @property
    def subject(self) -> str:
        """The tool and its server, as messages name them."""
        return f"tool {self.remote_name!r} of MCP server {self.server.name!r}"

    def send(self, connection: McpConnection, arguments: dict[str, Any]) -> ToolResult[Any]:
        """``tools/call`` on ``connection``; what the server answers, or a failed result."""
        try:
            if connection.tools_changed:
                # The server changed its tools since the connection opened: the call
                # goes out only if this tool is still the one imported.
                changed = _changed_since_import(connection, self)
                if changed is not None:
                    return ToolResult.error(changed)
            answer = connection.call_tool(self.remote_name, arguments)
        except McpConnectionError as error:
            return ToolResult.error(str(error))
        return result_of(answer, self.result_type, self.subject)


def result_of(
    answer: types.CallToolResult, result_type: type[JsonSchemaDocument] | None, subject: str
) -> ToolResult[Any]:
    """The ``ToolResult`` of a ``CallToolResult``: content as text, ``isError`` as a failure,
    ``structuredContent`` checked against the ``outputSchema`` as the value."""
    text = text_of_content(answer.content)
    if answer.is_error:
        return ToolResult.error(bounded(text) or f"{subject} failed without saying why")
    if result_type is None:
        return ToolResult(message=text)
    structured = answer.structured_content
    if structured is None:
        return ToolResult.error(
            f"{subject} returned no structuredContent, but its outputSchema promises one"
        )
    try:
        value = compile_contract(result_type).parse(structured)
    except ContractViolation as error:
        problems = "\n".join(str(problem) for problem in error.problems)
        return ToolResult.error(
            f"{subject} returned structuredContent that does not match its outputSchema:\n"
            f"{problems}"
        )
    # Servers repeat the structured value as JSON text (MCP asks them to), a value that
    # is not an object as the ``{"result": ...}`` it is wrapped in: shown once, as the value.
    repeated = [structured]
    if len(structured) == 1 and "result" in structured:
        repeated.append(structured["result"])
    message = "\n\n".join(
        block
        for block in text.split("\n\n")
        if not any(_is_json_of(block, value) for value in repeated)
    ).strip()
    return ToolResult(message=message, value=value)


def _is_json_of(text: str, value: Any) -> bool:
    try:
        return bool(json.loads(text) == value)
    except ValueError:
        return False


def text_of_content(content: Sequence[Any]) -> str:
    """The text a model reads for MCP content blocks: text as is, other blocks described."""
    parts: list[str] = []
    for block in content:
        kind = getattr(block, "type", None)
        if kind == "text":
            parts.append(block.text)
        elif kind in ("image", "audio"):
            size = len(block.data) * 3 // 4
            parts.append(f"[{kind} {block.mime_type}, about {size:,} bytes]")
        elif kind == "resource_link":
            parts.append(f"[resource {block.uri}{_mime(block)}]")
        elif kind == "resource":
            resource = block.resource
            text = getattr(resource, "text", None)
            if isinstance(text, str):
                parts.append(text)
            else:
                parts.append(f"[resource {resource.uri}{_mime(resource)}]")
        else:
            parts.append(f"[{kind} content]")
    return "\n\n".join(parts)


def _mime(block: Any) -> str:
    mime = getattr(block, "mime_type", None)
    return f", {mime}" if mime else ""


def _changed_since_import(connection: McpConnection, call: McpToolCall) -> str | None:
    """Why the server's listing of ``call``'s tool differs from its imported contract, if so."""
    tool = connection.current_tools().get(call.remote_name)
    again = "; import its tools again (McpToolsSection.refresh(), then a new template)"
    if tool is None:
        return f"MCP server {call.server.name!r} no longer lists tool {call.remote_name!r}{again}"
    changes = []
    try:
        if check_imported_schema(tool.input_schema, "inputSchema") != call.params_type.json_schema:
            changes.append("inputSchema")
        output = tool.output_schema
        now = None if output is None else check_imported_schema(output, "outputSchema")
        before = None if call.result_type is None else call.result_type.json_schema
        if now != before:
            changes.append("outputSchema")
    except PromptValidationError:
        changes.append("schemas (no longer valid)")
    if changes:
        return (
            f"MCP server {call.server.name!r} changed the {' and '.join(changes)} of tool "
            f"{call.remote_name!r} since it was imported, so the call was not sent{again}"
        )
    return None


def _local_name(prefix: str, remote: str) -> str:
    return prefix + _UNNAMEABLE.sub("_", remote.lower())


def _short_description(text: str | None, fallback: str) -> str:
    """At most 200 ASCII characters: the first paragraph, cut at a word."""
    plain = unicodedata.normalize("NFKD", text or "").encode("ascii", "ignore").decode()
    first = " ".join(plain.strip().split("\n\n", 1)[0].split())
    if not first:
        return fallback
    if len(first) <= _DESCRIPTION_LIMIT:
        return first
    cut = first[: _DESCRIPTION_LIMIT - 3].rsplit(" ", 1)[0]
    return f"{cut}..."


def _camel(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[^A-Za-z0-9]+", name) if part)


def imported_tool(server: McpServer, listed: types.Tool, local_name: str) -> Tool[Any, Any]:
    """The wink tool for one listed tool, its schemas checked; ``PromptValidationError``
    naming the server and the tool otherwise."""
    subject = f"MCP server {server.name!r} tool {listed.name!r}"
    params_schema = check_imported_schema(listed.input_schema, f"{subject} inputSchema")
    params_type = schema_document_type(
        f"{_camel(local_name)}Arguments", params_schema, f"arguments of tool {local_name!r}"
    )
    result_type: type[JsonSchemaDocument] | None = None
    if listed.output_schema is not None:
        result_schema = check_imported_schema(listed.output_schema, f"{subject} outputSchema")
        result_type = schema_document_type(
            f"{_camel(local_name)}Result", result_schema, f"result of tool {local_name!r}"
        )
    annotations = listed.annotations
    read_only = bool(annotations is not None and annotations.read_only_hint)
    destructive = not read_only and (
        annotations is None or annotations.destructive_hint is not False
    )
    handler = McpToolCall(server, listed.name, read_only, destructive, params_type, result_type)
    fallback = f"Tool {listed.name} of MCP server {server.name}"
    description = _short_description(listed.description, _short_description(fallback, "tool"))
    specialised: Any = Tool[params_type, result_type]  # type: ignore[valid-type]  # made at run time
    try:
        tool: Tool[Any, Any] = specialised(
            name=local_name,
            description=description,
            handler=handler,
            # Under aexecute the call is awaited: the caller's loop goes on meanwhile.
            async_handler=handler.acall,
            sequential=not read_only,
        )
    except PromptValidationError as error:
        raise PromptValidationError(f"{subject}: {error}") from None
    return tool


def is_destructive(tool: Tool[Any, Any], params: Any) -> bool:
    """Whether ``tool`` is an imported tool its server marks destructive: a ``when`` for
    ``ApprovalPolicy``, so that a person approves those calls before they are sent."""
    handler = tool.handler
    return isinstance(handler, McpToolCall) and handler.destructive


class McpToolsSection(Section[None]):
    """The tools of another MCP server, imported when the section is built.

    The server is asked for its tools once, here; each becomes a ``Tool`` named
    ``prefix`` + its name (lowercased, characters wink refuses in names replaced by
    ``_``), described by the first paragraph of its description (at most 200 ASCII
    characters; the section's text gives the full ones). ``allow`` keeps only the
    tools it names, ``deny`` drops the ones it names (names as the server lists
    them; an unknown name is refused, so a typo cannot hide a tool).

    Calls go through each session's own connection (the ``McpClients`` resource,
    bound by default). A call's effect on the server cannot be rolled back (see
    ``McpToolCall``); tools the server marks ``readOnlyHint`` may overlap in a model
    turn, the others run one after another.

    The section keeps the tools it imported, and so does every template built with
    it. When the server says its tools changed (``tools/list_changed``) on a
    session's connection, an evaluation in that session lists them again before its
    next model request and offers the tools as they are then, from that request on
    (``Section.refreshed``: the evaluation goes on with a new template holding a new
    section; the prompt's text stays as first sent). Calls made before that, or
    outside an evaluation, check the server's listing: a call to a tool the server
    no longer lists, or whose schemas changed, fails without being sent, saying so.
    ``section.refresh()`` imports the tools again for new templates.

    Raises ``McpConnectionError`` when the server cannot be reached, and
    ``PromptValidationError`` for a tool whose schema wink cannot state, naming the
    server and the tool.
    """

    def __init__(
        self,
        server: McpServer,
        *,
        title: str | None = None,
        key: str | None = None,
        prefix: str = "",
        allow: Collection[str] | None = None,
        deny: Collection[str] = (),
        policies: Sequence[Any] = (),
        enabled: Enabled = True,
        accepts_overrides: bool = True,
    ) -> None:
        if not isinstance(server, McpServer):
            raise PromptValidationError(f"McpToolsSection needs an McpServer, got {server!r}")
        if not isinstance(prefix, str) or _UNNAMEABLE.search(prefix):
            raise PromptValidationError(
                f"McpToolsSection prefix {prefix!r} may hold only lowercase letters, digits, "
                "'_' and '-'"
            )
        self.server = server
        """The server the tools come from."""
        self.prefix = prefix
        self.allow = None if allow is None else frozenset(allow)
        self.deny = frozenset(deny)
        self.instructions: str | None = None
        """The server's instructions, shown in the section's text."""
        self.descriptions: dict[str, str] = {}
        """Local tool name to the full description the server gives."""
        self._imported: tuple[types.Tool, ...] = ()
        self._seen: tuple[McpConnection | None, int] = (None, 0)
        """A session's connection and its ``tools_version`` whose listing has these tools;
        any connection's version 0 is taken to have them."""
        with McpConnection(server) as connection:
            listed = connection.list_tools()
            self.instructions = connection.instructions
        super().__init__(
            title=title or f"Tools from {server.name}",
            key=key,
            tools=self._import(listed),
            policies=policies,
            enabled=enabled,
            accepts_overrides=accepts_overrides,
            default_resources=(_clients_binding(),),
        )

    def refresh(self) -> McpToolsSection | None:
        """A new section over the same server and options, its tools imported again;
        ``None`` when the server lists the same tools (names, descriptions, schemas).

        This section, and every template built with it, keep the tools they have:
        build a new template with the new section to offer the tools as they are now.
        """
        fresh = McpToolsSection(
            self.server,
            title=self.title,
            key=self.key,
            prefix=self.prefix,
            allow=self.allow,
            deny=self.deny,
            policies=self.policies,
            enabled=self.enabled,
            accepts_overrides=self.accepts_overrides,
        )
        if _signature(fresh) == _signature(self) and fresh.instructions == self.instructions:
            return None
        return fresh

    def tools_changed(self, resources: ResourceRegistry) -> bool:
        """Whether the session's connection to the server (in ``resources``) was told of
        a change of its tools that this section has not seen."""
        connection = self._connection_in(resources)
        if connection is None:
            return False
        seen_on, version = self._seen
        return connection.tools_version != (version if seen_on is connection else 0)

    def refreshed(self, resources: ResourceRegistry) -> McpToolsSection | None:
        """A new section with the tools the session's connection lists now; ``None`` when
        they are the ones this section has, or when they cannot be listed or imported
        (then calls check the listing, as they do outside an evaluation)."""
        connection = self._connection_in(resources)
        if connection is None:
            return None
        version = connection.tools_version  # read before listing: a later notice lists again
        try:
            listed = list(connection.current_tools().values())
            if tuple(self._kept(listed)) == self._imported:
                self._seen = (connection, version)
                return None
            fresh = copy.copy(self)
            fresh.instructions = connection.instructions
            tools = fresh._import(listed)
        except (McpConnectionError, PromptValidationError) as error:
            logger.warning(
                "the tools of MCP server %r changed and could not be imported again, so the "
                "evaluation goes on with those it has: %s",
                self.server.name,
                error,
            )
            return None
        fresh._seen = (connection, version)
        Section.__init__(
            fresh,
            title=self.title,
            key=self.key,
            tools=tools,
            policies=self.policies,
            enabled=self.enabled,
            accepts_overrides=self.accepts_overrides,
            default_resources=self.default_resources,
        )
        return fresh

    def _connection_in(self, resources: ResourceRegistry) -> McpConnection | None:
        """The session's connection to the server, if one was made (none is made here)."""
        clients = resources.get_optional(McpClients)
        return None if clients is None else clients.made(self.server)

    def _kept(self, listed: Sequence[types.Tool]) -> list[types.Tool]:
        """The listed tools that ``allow`` and ``deny`` keep, in listing order."""
        allow, deny = self.allow, self.deny
        return [
            item
            for item in listed
            if (allow is None or item.name in allow) and item.name not in deny
        ]

    def _import(self, listed: Sequence[types.Tool]) -> list[Tool[Any, Any]]:
        server = self.server
        names = [tool.name for tool in listed]
        for option, asked in (("allow", self.allow or frozenset()), ("deny", self.deny)):
            unknown = sorted(asked - set(names))
            if unknown:
                raise PromptValidationError(
                    f"McpToolsSection {option} names tools MCP server {server.name!r} does not "
                    f"list: {', '.join(map(repr, unknown))} (it lists: "
                    f"{bounded(', '.join(names) or 'none')})"
                )
        tools: list[Tool[Any, Any]] = []
        local_names: dict[str, str] = {}
        descriptions: dict[str, str] = {}
        kept = self._kept(listed)
        for item in kept:
            local = _local_name(self.prefix, item.name)
            if local in local_names:
                raise PromptValidationError(
                    f"MCP server {server.name!r} tools {local_names[local]!r} and {item.name!r} "
                    f"would both be named {local!r}; drop one with deny=..."
                )
            if len(local) > _NAME_LIMIT:
                raise PromptValidationError(
                    f"MCP server {server.name!r} tool {item.name!r}: its name {local!r} is over "
                    f"{_NAME_LIMIT} characters; use a shorter prefix or deny=..."
                )
            local_names[local] = item.name
            tools.append(imported_tool(server, item, local))
            if item.description:
                descriptions[local] = item.description
        self.descriptions = descriptions
        self._imported = tuple(kept)
        return tools

    def render_body(self, params: None) -> str:
        """The server's instructions, and each tool's full description when it was shortened."""
        parts: list[str] = []
        if self.instructions:
            parts.append(self.instructions.strip())
        for tool in self.tools:
            full = self.descriptions.get(tool.name, "").strip()
            if full and full != tool.description:
                parts.append(f"`{tool.name}`: {full}")
        return "\n\n".join(parts)


def _signature(section: McpToolsSection) -> list[tuple[Any, ...]]:
    """What the model is shown of each tool of ``section``."""
    return [
        (tool.name, tool.description, tool.params_schema, tool.result_schema)
        for tool in section.tools
    ] + [tuple(sorted(section.descriptions.items()))]


def _new_clients(resolver: object) -> McpClients:
    return McpClients()


def _clients_binding() -> Binding[McpClients]:
    return Binding(McpClients, _new_clients, Scope.SINGLETON)
