"""SDK errors of the OpenAI and Anthropic SDKs (same error classes) as provider failures."""

from __future__ import annotations

from types import ModuleType
from typing import Any

from wink.adapters import ProviderFailure

__all__ = ["http_failure", "retryable_status"]


def retryable_status(status: int) -> bool:
    """Whether an HTTP status is worth retrying: timeouts, conflicts, rate limits, 5xx."""
    return status in (408, 409, 429) or status >= 500


def http_failure(error: Exception, sdk: ModuleType) -> ProviderFailure | None:
    """``error`` as a failure if ``sdk`` (``openai`` or ``anthropic``) raised it."""
    if isinstance(error, sdk.APIStatusError):
        status: int = error.status_code
        message = f"HTTP {status} {type(error).__name__}: {_message(error)}"
        return ProviderFailure(
            message, error.body, retryable_status(status), _retry_after(error.response)
        )
    if isinstance(error, sdk.APIConnectionError):
        return ProviderFailure(f"{type(error).__name__}: {error}", None, retryable=True)
    if isinstance(error, sdk.APIError):
        return ProviderFailure(f"{type(error).__name__}: {error}", error.body)
    return None


def _message(error: Any) -> str:
    body = error.body
    if isinstance(body, dict):
        inner = body.get("error")
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return str(inner["message"])
        if isinstance(body.get("message"), str):
            return str(body["message"])
    return str(error.message)


def _retry_after(response: Any) -> float | None:
    value = response.headers.get("retry-after") if response is not None else None
    try:
        seconds = float(value) if value is not None else None
    except ValueError:
        return None
    return seconds if seconds is not None and seconds >= 0 else None
