"""The shapes of what ``wink.providers.openai`` returns, as ``TypedDict``s.

Each one has exactly the keys, value types and required keys of the OpenAI SDK's
param type of the same role, so that mypy accepts it wherever the SDK asks for
that type (``client.chat.completions.create(tools=..., messages=...)``,
``client.responses.create(tools=..., input=...)``) with no cast, while wink
imports no SDK. mypy compares ``TypedDict`` values invariantly: a value whose SDK
type is a union of content blocks wink never sends is typed ``Any`` here.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal, Required, TypedDict

__all__ = [
    "CacheBreakpoint",
    "ChatFunction",
    "ChatToolMessage",
    "ChatToolSpec",
    "FunctionCallOutput",
    "ResponsesToolSpec",
    "TextPart",
]


class ChatFunction(TypedDict, total=False):
    """A function of a Chat Completions tool (the SDK's ``FunctionDefinition``)."""

    name: Required[str]
    description: str
    parameters: dict[str, object]
    strict: bool | None


class ChatToolSpec(TypedDict, total=False):
    """One Chat Completions tool (the SDK's ``ChatCompletionFunctionToolParam``)."""

    function: Required[ChatFunction]
    type: Required[Literal["function"]]


class CacheBreakpoint(TypedDict, total=False):
    """A prompt cache breakpoint (the SDK's ``PromptCacheBreakpoint``)."""

    mode: Required[Literal["explicit"]]
    ttl: Literal["30m", "12h"]


class TextPart(TypedDict, total=False):
    """A text content part (the SDK's ``ChatCompletionContentPartTextParam``)."""

    text: Required[str]
    type: Required[Literal["text"]]
    prompt_cache_breakpoint: CacheBreakpoint


class ChatToolMessage(TypedDict, total=False):
    """A ``tool`` message answering a call (the SDK's ``ChatCompletionToolMessageParam``).

    wink always sends ``content`` as text.
    """

    content: Required[str | Iterable[TextPart]]
    role: Required[Literal["tool"]]
    tool_call_id: Required[str]


# "async" is a keyword, so the key needs the functional form.
_ResponsesToolSpecKeywords = TypedDict("_ResponsesToolSpecKeywords", {"async": bool}, total=False)


class ResponsesToolSpec(_ResponsesToolSpecKeywords, total=False):
    """One Responses API function tool (the SDK's ``FunctionToolParam``)."""

    name: Required[str]
    parameters: Required[dict[str, object] | None]
    strict: Required[bool | None]
    type: Required[Literal["function"]]
    allowed_callers: list[Literal["direct", "programmatic"]] | None
    defer_loading: bool
    description: str | None
    output_schema: dict[str, object] | None


class FunctionCallOutput(TypedDict, total=False):
    """A ``function_call_output`` input item (the SDK's ``FunctionCallOutput``).

    wink always sends ``call_id`` and ``output`` as text.
    """

    output: Required[Any]  # the SDK: text, or a list of its input content parts
    type: Required[Literal["function_call_output"]]
    id: str | None
    call_id: str | None
    caller: Any  # the SDK: a union of caller shapes wink never sends
    name: str | None
    namespace: str | None
    status: Literal["in_progress", "completed", "incomplete"] | None
