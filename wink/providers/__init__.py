"""Provider dialects: one module per provider, pure functions, no SDK needed.

- ``wink.providers.openai``: Chat Completions and Responses API, strict mode.
- ``wink.providers.anthropic``: Messages API, optional strict tool use.
- ``wink.providers.gemini``: ``parametersJsonSchema`` or OpenAPI-subset ``parameters``.
- ``wink.providers.mcp``: ``tools/list`` entries and ``CallToolResult``s.

Each has ``tool_specs(source, **options)`` (``source``: a ``RenderedPrompt``, a
sequence of tools, or a tool), a parser of the provider's tool calls into
``ToolCall``s, and a formatter of ``ToolResult``s as the provider's tool message.
Specs are cached per (tool, dialect, options) and returned read-only.
"""

from wink.providers._errors import (
    ProviderPayloadError,
    ProviderSchemaError,
    RecursiveSchemaError,
)
from wink.providers._specs import clear_caches

__all__ = ["ProviderPayloadError", "ProviderSchemaError", "RecursiveSchemaError", "clear_caches"]
