"""Find the tool calls in one recorded JSON document, whatever log it came from.

A document is one JSONL line. This module only decides which provider's reader
applies; the readers themselves live in ``wink.providers``. Recognised shapes:

- a plain call ``{"name": ..., "arguments": {...} | "<json>"}`` (also a recorded
  ``ToolInvoked``);
- OpenAI: a chat completion, an assistant message, one tool call, a Responses API
  response, ``function_call`` item, or request (``input``);
- Anthropic: a message or response whose ``content`` holds ``tool_use`` blocks, or one block;
- Gemini: a response (``candidates``), a content (``parts``), a part or request (``contents``);
- MCP: a ``tools/call`` request;
- a request body with ``messages`` (OpenAI Chat or Anthropic), read message by message.

Messages and items without calls (user turns, tool results, text, reasoning, MCP
responses and notifications) yield nothing, and so do calls that are not function
calls: custom tool calls and the calls of tools the provider runs itself (OpenAI's
``custom_tool_call``, ``mcp_call``, ``web_search_call``...; Anthropic's
``server_tool_use``), which no wink tool answers. A stream chunk is refused: its
calls are in pieces.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from wink.providers import anthropic, gemini, mcp, openai
from wink.runtime.call import ToolCall
from wink.runtime.events import recorded_call

__all__ = ["UnrecognisedDocument", "calls_in"]

_Reader = Callable[[dict[str, Any]], list[ToolCall]]

_OPENAI_KEYS = ("choices", "output", "tool_calls", "function")
_GEMINI_KEYS = ("candidates", "parts", "functionCall", "function_call")
_GEMINI_OTHER_PARTS = (
    "functionResponse",
    "function_response",
    "text",
    "inlineData",
    "inline_data",
    "fileData",
    "file_data",
)
# Item and block types: OpenAI Responses items and content parts, Anthropic content blocks.
_CALL_TYPES = frozenset({"function_call", "function", "tool_use", "tool_call", "message"})
_NO_CALL_TYPES = frozenset(
    {
        "text",
        "refusal",
        "reasoning",
        "thinking",
        "redacted_thinking",
        "image",
        "document",
        "tool_result",
        "mcp_list_tools",
        "mcp_approval_request",
        "mcp_approval_response",
        "item_reference",
    }
)
# function_call_output, custom_tool_call, mcp_call, web_search_call, server_tool_use,
# mcp_tool_result, output_text...
_NO_CALL_SUFFIXES = ("_call", "_call_output", "_tool_use", "_tool_result", "_text")
_PLAIN_CALL_KEYS = frozenset({"name", "arguments", "call_id", "id"})
_ASSISTANT_MESSAGE_KEYS = frozenset({"role", "content", "tool_calls"})
_INVOKED_KEYS = frozenset({"prompt_name", "name", "call_id", "arguments", "result"})


class UnrecognisedDocument(ValueError):
    """A document is neither a tool call, a message nor a request/response body."""


def calls_in(document: object) -> list[ToolCall]:
    """The tool calls recorded in ``document``, in order.

    Raises ``ValueError`` (``UnrecognisedDocument`` or the provider reader's
    ``ProviderPayloadError``) for a document no reader understands.
    """
    if type(document) is dict:  # decoded JSON: the usual line
        return _reader_for(document)(document)
    if isinstance(document, list):
        return [call for item in document for call in calls_in(item)]
    if not isinstance(document, dict):
        raise UnrecognisedDocument(f"expected a JSON object, got {_json_kind(document)}")
    return _reader_for(document)(document)


def _reader_for(document: dict[str, Any]) -> _Reader:
    # The two commonest shapes, settled by their keys alone (the checks below agree).
    keys = document.keys()
    if "name" in document and keys <= _PLAIN_CALL_KEYS:
        return _plain_call
    if "tool_calls" in document and keys <= _ASSISTANT_MESSAGE_KEYS:
        return _assistant_message
    if document.get("method") == "tools/call":
        return _mcp_request
    if "jsonrpc" in document or isinstance(document.get("method"), str):
        return _no_calls  # another MCP request, a response or a notification
    if isinstance(document.get("messages"), list):
        return _each("messages", calls_in)
    if isinstance(document.get("contents"), list):
        return gemini.parse_tool_calls
    kind = document.get("type")
    if _calls_no_function(kind):
        return _no_calls
    if "role" not in document and kind is None:
        if isinstance(document.get("input"), list):
            return openai.parse_tool_calls
        if isinstance(document.get("input"), str):
            return _no_calls  # a Responses request whose input is one user text
    if kind == "function_call" or not document.keys().isdisjoint(_OPENAI_KEYS):
        return openai.parse_tool_calls
    if not document.keys().isdisjoint(_GEMINI_KEYS):
        return gemini.parse_tool_calls
    if kind == "tool_use" or isinstance(document.get("content"), list):
        return anthropic.parse_tool_calls
    if "role" in document:
        return _no_calls
    if "name" in document:
        return _plain_call
    if not document.keys().isdisjoint(_GEMINI_OTHER_PARTS):
        return _no_calls
    raise UnrecognisedDocument(
        "expected a tool call ({name, arguments}), an OpenAI, Anthropic or Gemini message, "
        f"or a request/response body; got keys {sorted(document)[:6]}"
    )


def _calls_no_function(kind: object) -> bool:
    """Whether an item or block of this ``type`` holds no call of an application's function.

    Results, text and reasoning call nothing; custom (free-form) tool calls and the
    provider's hosted or MCP-server tool calls are answered by no wink tool.
    """
    if not isinstance(kind, str) or kind in _CALL_TYPES:
        return False
    return kind in _NO_CALL_TYPES or kind.endswith(_NO_CALL_SUFFIXES)


def _each(key: str, reader: Callable[[Any], list[ToolCall]]) -> _Reader:
    def read(document: dict[str, Any]) -> list[ToolCall]:
        return [call for item in document[key] for call in reader(item)]

    return read


def _mcp_request(document: dict[str, Any]) -> list[ToolCall]:
    return [mcp.parse_tool_call(document)]


def _assistant_message(document: dict[str, Any]) -> list[ToolCall]:
    """An OpenAI assistant message's calls, its list of tool calls read directly."""
    tool_calls = document["tool_calls"]
    if type(tool_calls) is list:
        try:
            return openai.parse_tool_calls(tool_calls)
        except ValueError:
            pass  # read again as a message, so that the error says where in it
    return openai.parse_tool_calls(document)


def _no_calls(document: dict[str, Any]) -> list[ToolCall]:
    return []


def _plain_call(document: dict[str, Any]) -> list[ToolCall]:
    if document.keys() >= _INVOKED_KEYS:
        # A saved ToolInvoked writes what JSON cannot carry escaped; read it back exactly.
        return [recorded_call(document)]
    name = document["name"]
    if not isinstance(name, str) or not name:
        raise UnrecognisedDocument(f"'name' must be a non-empty string, got {name!r:.40}")
    call_id = document.get("call_id", document.get("id"))
    return [ToolCall(name, document.get("arguments"), None if call_id is None else str(call_id))]


def _json_kind(value: object) -> str:
    names = {str: "a string", bool: "a boolean", int: "a number", float: "a number"}
    return "null" if value is None else names.get(type(value), type(value).__name__)
