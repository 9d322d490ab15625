"""Reading provider payloads: plain JSON dicts, or SDK objects turned into them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from wink.providers._errors import ProviderPayloadError

__all__ = ["as_data", "field", "text_field"]


def as_data(payload: Any) -> Any:
    """``payload`` as plain JSON data; SDK objects go through their ``model_dump()``.

    Field aliases are asked for (``functionCall``, ``inputSchema``) where the SDK
    has them; the readers accept the snake_case names as well.
    """
    dump = getattr(payload, "model_dump", None)
    if callable(dump):
        try:
            return dump(mode="json", by_alias=True, exclude_none=True)
        except TypeError:  # an SDK whose model_dump takes no such arguments
            return dump()
    return payload


def field(data: Mapping[str, Any], *names: str) -> Any:
    """The first of ``names`` (camelCase and snake_case spellings) present in ``data``."""
    for name in names:
        if name in data:
            return data[name]
    return None


def text_field(data: Mapping[str, Any], name: str, where: str, *aliases: str) -> str:
    """A required string field, or ``ProviderPayloadError`` saying where it is missing."""
    value = field(data, name, *aliases)
    if not isinstance(value, str) or not value:
        raise ProviderPayloadError(f"{where}: expected a non-empty string {name!r}, got {value!r}")
    return value
