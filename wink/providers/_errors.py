"""The errors the provider dialects raise."""

from __future__ import annotations

from wink.errors import PromptValidationError, WinkError

__all__ = ["ProviderPayloadError", "ProviderSchemaError"]


class ProviderSchemaError(PromptValidationError):
    """A tool's schema cannot be expressed in a provider's dialect; names tool and field."""


class ProviderPayloadError(WinkError, ValueError):
    """A provider payload (response, tool call, call id) is not shaped as expected."""
