"""Model Context Protocol: ``tools/list`` entries, ``tools/call`` requests, ``CallToolResult``s.

A tool whose result type is rich content (``Image``, ``Audio``, ``EmbeddedResource``,
``Text`` or mixed ``Content``, from ``wink.tools.content``) has no ``outputSchema``:
its result is sent as MCP content blocks, the message first as a text block
unless it is empty.

Each tool becomes ``{"name", "description", "inputSchema", "outputSchema"}``;
``outputSchema`` (the result type's JSON Schema) is left out for tools that
return nothing. MCP requires ``outputSchema`` to describe an object, so a
result type that is not one (a list, a union, a scalar) is wrapped as
``{"type": "object", "properties": {"result": <schema>}, "required": ["result"]}``
and its ``structuredContent`` as ``{"result": <value>}``.

A client checks a successful result of a tool with an ``outputSchema`` for
``structuredContent`` (the official one raises without it), so a success carries
it whenever its value fits the schema: ``{"result": null}`` for a ``None`` value
of a result type that allows it (``R | None``).
MCP has no flag that keeps ``structuredContent`` from the model; a value kept
out of context (``exclude_value_from_context``) is left out of the text content
only, and clients that show ``structuredContent`` to the model will show it.

``server(prompt)`` serves a prompt's tools with the ``mcp`` package's own server:
one wink ``Session`` per client, every call through a ``ToolExecutor``;
``serve_stdio`` and ``serve_http`` (``http_app``) run it within limits on what
clients can hold (see ``PromptServer``); over stdio, ``protocol_stdout`` keeps
stdout for the protocol and sends all else to stderr.

An ``McpCatalog`` section of the served prompt adds MCP prompts (``McpPrompt``:
a ``PromptTemplate`` or messages of text, images and resources, with argument
completion) and resources (``McpResource``, ``McpResourceTemplate``, the bound
filesystem read-only) to what the server offers.

``McpToolsSection(McpServer.stdio([...]) | McpServer.http(url))`` goes the other
way: another server's tools as a section of wink tools, each with the server's
schemas as its contract and a handler (``McpToolCall``) sending ``tools/call``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from wink.contract.frozen import freeze
from wink.contract.walk import JsonSchema, map_schema
from wink.providers._errors import ProviderPayloadError, RecursiveSchemaError
from wink.providers._inline import inline_all_refs, inline_root_ref, object_root, resolve_ref
from wink.providers._null_default import null_means_default as _null_means_default
from wink.providers._payload import as_data, text_field
from wink.providers._specs import SpecCache, ToolSource, tools_of
from wink.providers._stdio import protocol_stdout
from wink.providers._strict import accepts_null
from wink.runtime.call import ToolCall
from wink.tools import Tool, ToolResult
from wink.tools.content import RICH_TYPES, Audio, Content, EmbeddedResource, Image, Text

if TYPE_CHECKING:
    from wink.providers._mcp_catalog import McpCatalog
    from wink.providers._mcp_client import (
        McpClients,
        McpConnection,
        McpConnectionError,
        McpServer,
    )
    from wink.providers._mcp_prompts import McpPrompt, PromptMessage
    from wink.providers._mcp_resources import McpResource, McpResourceTemplate
    from wink.providers._mcp_schemas import JsonSchemaDocument
    from wink.providers._mcp_server import (
        DEFAULT_MAX_IN_FLIGHT,
        DEFAULT_MAX_MESSAGE_BYTES,
        DEFAULT_MAX_SESSIONS,
        DEFAULT_SESSION_IDLE_TIMEOUT,
        PromptServer,
        bind_http_socket,
        http_app,
        serve_http,
        serve_stdio,
        server,
    )
    from wink.providers._mcp_tools import McpToolCall, McpToolsSection, is_destructive

__all__ = [
    "DEFAULT_MAX_IN_FLIGHT",
    "DEFAULT_MAX_MESSAGE_BYTES",
    "DEFAULT_MAX_SESSIONS",
    "DEFAULT_SESSION_IDLE_TIMEOUT",
    "RESULT_KEY",
    "JsonSchemaDocument",
    "McpCatalog",
    "McpClients",
    "McpConnection",
    "McpConnectionError",
    "McpPrompt",
    "McpResource",
    "McpResourceTemplate",
    "McpServer",
    "McpToolCall",
    "McpToolsSection",
    "PromptMessage",
    "PromptServer",
    "bind_http_socket",
    "call_tool_result",
    "content_block",
    "http_app",
    "is_destructive",
    "parse_tool_call",
    "protocol_stdout",
    "serve_http",
    "serve_stdio",
    "server",
    "tool_specs",
]

_SERVING = frozenset(
    {
        "DEFAULT_MAX_IN_FLIGHT",
        "DEFAULT_MAX_MESSAGE_BYTES",
        "DEFAULT_MAX_SESSIONS",
        "DEFAULT_SESSION_IDLE_TIMEOUT",
        "PromptServer",
        "bind_http_socket",
        "http_app",
        "serve_http",
        "serve_stdio",
        "server",
    }
)
"""Names served by ``wink.providers._mcp_server``, which needs the ``mcp`` package."""

_IMPORTING = {
    "JsonSchemaDocument": "_mcp_schemas",
    "McpCatalog": "_mcp_catalog",
    "McpPrompt": "_mcp_prompts",
    "McpResource": "_mcp_resources",
    "McpResourceTemplate": "_mcp_resources",
    "PromptMessage": "_mcp_prompts",
    "McpClients": "_mcp_client",
    "McpConnection": "_mcp_client",
    "McpConnectionError": "_mcp_client",
    "McpServer": "_mcp_client",
    "McpToolCall": "_mcp_tools",
    "McpToolsSection": "_mcp_tools",
    "is_destructive": "_mcp_tools",
}
"""Names of the client side (other servers' tools as a section) and of the catalog a
server offers beside tools (prompts, resources), by the module that has them."""

RESULT_KEY = "result"
"""The property holding a result that is not an object, in ``outputSchema`` and
``structuredContent``."""

_DIALECT = "MCP"
_tool_cache = SpecCache()
_list_cache = SpecCache(max_entries=256)


def tool_specs(source: ToolSource) -> list[dict[str, Any]]:
    """The ``tools`` of a ``tools/list`` result, in order.

    Specs are cached and read-only; ``copy.deepcopy`` one to change it.
    """
    tools = tools_of(source)

    def build() -> tuple[dict[str, Any], ...]:
        return tuple(_tool_spec(tool) for tool in tools)

    return list(_list_cache.get(tools, build))


def parse_tool_call(request: Any) -> ToolCall:
    """The call in a ``tools/call`` JSON-RPC request or its ``params`` (dicts or SDK objects).

    The JSON-RPC id, when present, becomes the call id. ``arguments`` is optional in
    MCP: a call without it gets ``{}`` (no arguments), not ``None``, which every object
    contract would reject.
    """
    data = as_data(request)
    if not isinstance(data, Mapping):
        raise ProviderPayloadError(
            f"expected a tools/call request or its params, got {type(data).__name__}"
        )
    call_id = data.get("id")
    params = data.get("params", data)
    if "method" in data and data["method"] != "tools/call":
        raise ProviderPayloadError(f"expected a tools/call request, got method {data['method']!r}")
    if not isinstance(params, Mapping):
        raise ProviderPayloadError(f"params: expected an object, got {type(params).__name__}")
    name = text_field(params, "name", "params" if "params" in data else "request")
    arguments = params.get("arguments")
    return ToolCall(
        name, {} if arguments is None else arguments, None if call_id is None else str(call_id)
    )


def call_tool_result(result: ToolResult[Any], *, tool: Tool[Any, Any]) -> dict[str, Any]:
    """The ``CallToolResult`` of ``result``: a text block (``result.render()`` after the
    message, unless the value is kept out of context), ``structuredContent``
    matching the tool's ``outputSchema``, ``isError``.

    ``structuredContent`` is left out when the tool has no ``outputSchema``, and
    when there is no value, except for a success whose result type accepts
    ``None`` (``R | None``), which sends ``{"result": null}``.
    """
    if _is_rich(tool) and result.value is not None:
        return {
            "content": _content_blocks(result.message, result.value),
            "isError": not result.success,
        }
    text = result.model_text()
    payload: dict[str, Any] = {
        "content": [{"type": "text", "text": text}] if text else [],
        "isError": not result.success,
    }
    if not _has_output_schema(tool):
        return payload
    wrapped = _result_is_wrapped(tool)
    if result.value is not None or (result.success and wrapped and _accepts_none(tool)):
        structured = tool.result_contract.dump(result.value)
        payload["structuredContent"] = {RESULT_KEY: structured} if wrapped else structured
    return payload


def _tool_spec(tool: Tool[Any, Any]) -> dict[str, Any]:
    def build() -> dict[str, Any]:
        spec: dict[str, Any] = {
            "name": tool.name,
            "description": tool.description,
            "inputSchema": map_schema(
                _without_bare_refs(object_root(tool.params_schema, tool.name, _DIALECT), tool.name),
                _null_means_default,
            ),
        }
        if _has_output_schema(tool):
            spec["outputSchema"] = _without_bare_refs(_output_schema(tool.result_schema), tool.name)
        frozen: dict[str, Any] = freeze(spec)
        return frozen

    return _tool_cache.get(tool, build)


def _output_schema(schema: JsonSchema) -> JsonSchema:
    root = inline_root_ref(schema)
    if root.get("type") == "object":
        return root
    inner = {key: value for key, value in root.items() if key != "$defs"}
    wrapped: JsonSchema = {
        "type": "object",
        "properties": {RESULT_KEY: inner},
        "required": [RESULT_KEY],
        "additionalProperties": False,
    }
    if "$defs" in root:
        wrapped["$defs"] = root["$defs"]
    return wrapped


def _without_bare_refs(schema: JsonSchema, tool_name: str) -> JsonSchema:
    """``schema`` as clients that do not follow ``$ref`` can still use it.

    Such clients (the MCP Inspector among them) read a node's ``type`` to decide
    what to send, and send a bare ``{"$ref": ...}`` field as a string. Every
    reference is inlined; a recursive one cannot be, so it keeps its ``$ref`` and
    gets its target's ``type`` beside it.
    """
    try:
        return inline_all_refs(schema, f"tool {tool_name!r}", "kept as $ref")
    except RecursiveSchemaError:
        return map_schema(schema, lambda node: _typed_ref(schema, node))


def _typed_ref(root: JsonSchema, node: JsonSchema) -> JsonSchema:
    ref = node.get("$ref")
    if not isinstance(ref, str) or "type" in node:
        return node
    kinds = _types_of(root, resolve_ref(root, ref), ())
    if kinds:
        node["type"] = kinds[0] if len(kinds) == 1 else list(kinds)
    return node


def _types_of(root: JsonSchema, node: JsonSchema, seen: tuple[str, ...]) -> tuple[str, ...]:
    """The JSON types ``node`` allows, following references and unions; ``()``: any."""
    kind = node.get("type")
    if isinstance(kind, str):
        return (kind,)
    if isinstance(kind, list):
        return tuple(kind)
    ref = node.get("$ref")
    if isinstance(ref, str):
        return () if ref in seen else _types_of(root, resolve_ref(root, ref), (*seen, ref))
    branches = node.get("anyOf") or node.get("oneOf")
    if not isinstance(branches, list):
        return ()
    found: list[str] = []
    for branch in branches:
        kinds = _types_of(root, branch, seen)
        if not kinds:
            return ()
        found.extend(kind for kind in kinds if kind not in found)
    return tuple(found)


def _result_is_wrapped(tool: Tool[Any, Any]) -> bool:
    return inline_root_ref(tool.result_schema).get("type") != "object"


def _has_output_schema(tool: Tool[Any, Any]) -> bool:
    return (
        tool.result_type is not None and tool.result_type is not type(None) and not _is_rich(tool)
    )


def _is_rich(tool: Tool[Any, Any]) -> bool:
    return tool.result_type in RICH_TYPES


def _content_blocks(
    message: str, value: Text | Image | Audio | EmbeddedResource | Content
) -> list[dict[str, Any]]:
    """The message as a text block (unless empty), then the value's parts as MCP blocks."""
    parts = value.parts if isinstance(value, Content) else (value,)
    blocks = [{"type": "text", "text": message}] if message else []
    blocks.extend(content_block(part) for part in parts)
    return blocks


def content_block(part: Text | Image | Audio | EmbeddedResource) -> dict[str, Any]:
    """The MCP content block of one part of a rich result or a prompt message."""
    if isinstance(part, Text):
        return {"type": "text", "text": part.text}
    if isinstance(part, Image | Audio):
        return {"type": part.type, "data": part.data, "mimeType": part.mime_type}
    resource: dict[str, Any] = {"uri": part.uri}
    if part.mime_type is not None:
        resource["mimeType"] = part.mime_type
    if part.text is not None:
        resource["text"] = part.text
    else:
        resource["blob"] = part.blob
    return {"type": "resource", "resource": resource}


def _accepts_none(tool: Tool[Any, Any]) -> bool:
    return accepts_null(inline_root_ref(tool.result_schema))


def __getattr__(name: str) -> Any:
    # The server needs the mcp package; the dialect functions above do not.
    if name in _SERVING:
        from wink.providers import _mcp_server

        return getattr(_mcp_server, name)
    if name in _IMPORTING:
        import importlib

        return getattr(importlib.import_module(f"wink.providers.{_IMPORTING[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
