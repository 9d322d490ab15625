"""Find the tool calls in one recorded JSON document, whatever log it came from.

A document is one JSONL line. Recognised shapes:

- a plain call: ``{"name": ..., "arguments": {...} | "<json>"}`` (``input``/``args`` also read);
- OpenAI Chat Completions: an assistant message with ``tool_calls``, one tool call, a
  request body (``messages``) or a response body (``choices``);
- OpenAI Responses: a ``function_call`` item, a request body (``input``) or a response
  body (``output``);
- Anthropic Messages: a message whose ``content`` holds ``tool_use`` blocks, one block,
  a request body (``messages``) or a response body;
- Gemini: a content with ``functionCall`` parts, a request (``contents``) or response
  (``candidates``) body; and MCP ``tools/call`` requests.

Messages without calls (user turns, tool results, text) yield nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from wink.runtime.call import ToolCall

__all__ = ["UnrecognisedDocument", "calls_in"]

_CONTAINERS = ("messages", "choices", "output", "input", "contents", "candidates")


class UnrecognisedDocument(ValueError):
    """A document is neither a tool call, a message nor a request/response body."""


def calls_in(document: object) -> list[ToolCall]:
    """The tool calls recorded in ``document``, in order."""
    if isinstance(document, list):
        return [call for item in document for call in _calls(item)]
    if not isinstance(document, dict):
        raise UnrecognisedDocument(f"expected a JSON object, got {_json_kind(document)}")
    if not _is_known(document):
        raise UnrecognisedDocument(
            "expected a tool call ({name, arguments}), an OpenAI, Anthropic or Gemini "
            f"message, or a request/response body; got keys {sorted(document)[:6]}"
        )
    return list(_calls(document))


def _is_known(document: dict[str, Any]) -> bool:
    return (
        "name" in document
        or "role" in document
        or "tool_calls" in document
        or "function" in document
        or "parts" in document
        or document.get("method") == "tools/call"
        or document.get("type") in ("message", "tool_use", "function_call")
        or any(isinstance(document.get(key), list) for key in _CONTAINERS)
    )


def _calls(node: object) -> Iterator[ToolCall]:
    if isinstance(node, list):
        for item in node:
            yield from _calls(item)
        return
    if not isinstance(node, dict):
        return
    kind = node.get("type")
    if kind == "tool_use":
        yield _call(node.get("name"), node.get("input"), node.get("id"))
    elif kind == "function_call":
        yield _call(node.get("name"), node.get("arguments"), node.get("call_id"))
    elif isinstance(node.get("function"), dict):
        function = node["function"]
        yield _call(function.get("name"), function.get("arguments"), node.get("id"))
    elif node.get("method") == "tools/call" and isinstance(node.get("params"), dict):
        params = node["params"]
        yield _call(params.get("name"), params.get("arguments"), _text(node.get("id")))
    elif "role" in node or "parts" in node or kind == "message":
        yield from _message_calls(node)
    elif "name" in node:
        yield _plain_call(node)
    else:
        yield from _container_calls(node)


def _message_calls(message: dict[str, Any]) -> Iterator[ToolCall]:
    yield from _calls(message.get("tool_calls"))
    legacy = message.get("function_call")
    if isinstance(legacy, dict):
        yield _call(legacy.get("name"), legacy.get("arguments"), None)
    content = message.get("content")
    if isinstance(content, list):
        yield from _calls([block for block in content if _is_tool_use(block)])
    for part in message.get("parts") or ():
        if isinstance(part, dict) and isinstance(part.get("functionCall"), dict):
            function_call = part["functionCall"]
            yield _call(function_call.get("name"), function_call.get("args"), function_call.get("id"))


def _container_calls(body: dict[str, Any]) -> Iterator[ToolCall]:
    for key in _CONTAINERS:
        items = body.get(key)
        if not isinstance(items, list):
            continue
        for item in items:
            # A chat choice wraps its message; a Gemini candidate wraps its content.
            if isinstance(item, dict) and isinstance(item.get("message"), dict):
                yield from _calls(item["message"])
            elif key == "candidates" and isinstance(item, dict):
                yield from _calls(item.get("content"))
            else:
                yield from _calls(item)


def _plain_call(node: dict[str, Any]) -> ToolCall:
    for key in ("arguments", "input", "args"):
        if key in node:
            arguments = node[key]
            break
    else:
        arguments = None
    return _call(node.get("name"), arguments, _text(node.get("call_id", node.get("id"))))


def _is_tool_use(block: object) -> bool:
    return isinstance(block, dict) and block.get("type") == "tool_use"


def _call(name: object, arguments: Any, call_id: object) -> ToolCall:
    if not isinstance(name, str) or not name:
        raise UnrecognisedDocument(f"a tool call has no name (got {name!r:.40})")
    return ToolCall(name=name, arguments=arguments, call_id=_text(call_id))


def _text(value: object) -> str | None:
    return None if value is None else str(value)


def _json_kind(value: object) -> str:
    names = {str: "a string", bool: "a boolean", int: "a number", float: "a number"}
    return "null" if value is None else names.get(type(value), type(value).__name__)
