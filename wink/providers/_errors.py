"""The errors the provider dialects raise."""

from __future__ import annotations

from wink.errors import PromptValidationError, WinkError

__all__ = ["ProviderPayloadError", "ProviderSchemaError", "RecursiveSchemaError"]


class ProviderSchemaError(PromptValidationError):
    """A tool's schema cannot be expressed in a provider's dialect; names tool and field."""


class RecursiveSchemaError(ProviderSchemaError):
    """A tool's schema is recursive and the dialect inlines every reference (Gemini's
    OpenAPI form), which a recursive type cannot survive."""


class ProviderPayloadError(WinkError, ValueError):
    """A provider payload (response, tool call, call id) is not shaped as expected."""
