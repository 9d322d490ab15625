"""The shapes of what ``wink.providers.gemini`` returns with ``case="snake"``, as ``TypedDict``s.

The ``google-genai`` SDK types its dict arguments with snake_case ``TypedDict``s
(``FunctionDeclarationDict``, ``ToolDict``, ``ContentDict``, ``PartDict``,
``FunctionResponseDict``), while the REST API, and wink's default ``case="camel"``,
spell keys in camelCase. Each type here has exactly the keys, value types and
required keys of the SDK's type of the same role, so that mypy accepts it wherever
the SDK asks for that type (``client.models.generate_content(contents=...,
config={"tools": [{"function_declarations": ...}]})``) with no cast, while wink
imports no SDK. mypy compares ``TypedDict`` values invariantly: a value of an SDK
type that wink never sends (or sends as plain JSON, like a schema) is typed ``Any``.
"""

from __future__ import annotations

from typing import Any, TypedDict

__all__ = ["Content", "FunctionDeclaration", "FunctionResponse", "Part"]


class FunctionDeclaration(TypedDict, total=False):
    """One function a model may call (the SDK's ``FunctionDeclarationDict``).

    wink sends ``name`` and ``description``, and ``parameters_json_schema`` (a JSON
    Schema) or ``parameters`` (Gemini's OpenAPI-subset ``Schema``, snake_case) when
    the tool takes arguments.
    """

    description: str | None
    name: str | None
    parameters: Any  # the SDK: its SchemaDict; wink: the same keys, as plain JSON
    parameters_json_schema: Any
    response: Any
    response_json_schema: Any
    behavior: Any


class FunctionResponse(TypedDict, total=False):
    """A function's answer (the SDK's ``FunctionResponseDict``).

    wink sends ``name``, ``response`` (``{"output": text}`` or ``{"error": text}``)
    and ``id`` when the call had one.
    """

    will_continue: bool | None
    scheduling: Any
    parts: Any
    id: str | None
    name: str | None
    response: dict[str, Any] | None


class Part(TypedDict, total=False):
    """One part of a content (the SDK's ``PartDict``); wink sends ``function_response``."""

    media_resolution: Any
    code_execution_result: Any
    executable_code: Any
    file_data: Any
    function_call: Any
    function_response: FunctionResponse | None
    inline_data: Any
    text: str | None
    thought: bool | None
    thought_signature: bytes | None
    video_metadata: Any
    tool_call: Any
    tool_response: Any
    part_metadata: dict[str, Any] | None
    audio_transcription: Any
    media_processing: Any
    speech_metadata: Any
    document_metadata: Any
    spreadsheet_metadata: Any
    audio_metadata: Any


class Content(TypedDict, total=False):
    """A turn of the conversation (the SDK's ``ContentDict``); wink sends ``user`` turns
    whose parts are function responses."""

    parts: list[Part] | None
    role: str | None
