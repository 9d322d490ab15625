"""Reading provider payloads: plain JSON dicts, or SDK objects turned into them."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from wink.providers._errors import ProviderPayloadError

__all__ = [
    "arguments_of",
    "as_data",
    "decoded_arguments",
    "field",
    "fill_call_ids",
    "list_field",
    "object_at",
    "object_field",
    "text_field",
    "token_count",
    "unrecognised",
]


def as_data(payload: Any) -> Any:
    """``payload`` as plain JSON data; SDK objects go through their ``model_dump()``.

    Field aliases are asked for (``functionCall``, ``inputSchema``) where the SDK
    has them; the readers accept the snake_case names as well.
    """
    if type(payload) is dict or type(payload) is list:  # decoded JSON: most payloads
        return payload
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


def object_at(value: Any, where: str) -> Mapping[str, Any]:
    """``value`` (a dict or SDK object) as a mapping, or ``ProviderPayloadError`` naming
    ``where``."""
    if type(value) is dict:
        return value
    data = as_data(value)
    if not isinstance(data, Mapping):
        raise ProviderPayloadError(f"{where}: expected an object, got {_kind(data)}")
    return data


def object_field(data: Mapping[str, Any], name: str, where: str) -> Mapping[str, Any]:
    """The object under ``name``; absent or ``null`` reads as empty."""
    value = data.get(name)
    return {} if value is None else object_at(value, f"{where}.{name}" if where else name)


def list_field(data: Mapping[str, Any], name: str, where: str) -> list[Any]:
    """The list under ``name``; absent or ``null`` reads as empty."""
    value = data.get(name)
    if value is None:
        return []
    if not isinstance(value, list):
        here = f"{where}.{name}" if where else name
        raise ProviderPayloadError(f"{here}: expected a list, got {_kind(value)}")
    return value


def unrecognised(expected: str, data: Any) -> ProviderPayloadError:
    """The error for a payload no reader shape fits: what was expected, and the keys it had."""
    got = f"keys {sorted(str(key) for key in data)}" if isinstance(data, Mapping) else _kind(data)
    return ProviderPayloadError(f"expected {expected}; got {got}")


def _kind(value: Any) -> str:
    names = {str: "a string", bool: "a boolean", int: "a number", float: "a number"}
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list):
        return "a list"
    return "null" if value is None else names.get(type(value), type(value).__name__)


def arguments_of(value: Any) -> Any:
    """A call's arguments as wink keeps them: JSON text, a mapping, or ``None``.

    Anything else a model sends (a list, a number) becomes its JSON text, which the
    tool's contract refuses as a failed call and which a session can save.
    """
    if value is None or isinstance(value, str | bytes | Mapping):
        return value
    return decoded_arguments(value)


def decoded_arguments(value: Any) -> Any:
    """Arguments a provider sends as decoded JSON (Anthropic's ``input``, Gemini's
    ``args``): an object as it is, anything else (a list, a number, a string) as its
    JSON text, which the tool's contract refuses as a failed call."""
    if value is None or isinstance(value, Mapping):
        return value
    try:
        return json.dumps(value)
    except (TypeError, ValueError):  # not JSON data at all: say what it was
        return json.dumps(f"<{type(value).__name__}>")


def fill_call_ids(entries: list[dict[str, Any]], key: str, made: Callable[[], str]) -> None:
    """Give each entry whose ``key`` is missing, empty or already used in ``entries`` an
    id from ``made()``, in place, so that every call of a reply is answered by its own id
    (some OpenAI-compatible servers send ``""`` or reuse one)."""
    seen = {entry[key] for entry in entries if isinstance(entry.get(key), str)}
    used: set[str] = set()
    for entry in entries:
        value = entry.get(key)
        if isinstance(value, str) and value and value not in used:
            used.add(value)
            continue
        fresh = made()
        while fresh in seen or fresh in used:
            fresh = made()
        entry[key] = fresh
        used.add(fresh)


def token_count(data: Mapping[str, Any], name: str, where: str, *aliases: str) -> int:
    """A token count of a usage object: absent or ``null`` reads as 0; anything but a
    whole number not below 0 raises ``ProviderPayloadError`` naming it."""
    value = field(data, name, *aliases)
    if value is None:
        return 0
    if type(value) is not int or value < 0:
        shown = repr(value)[:100]  # a model's reply may put anything here
        raise ProviderPayloadError(
            f"{where}.{name}: expected a token count (a whole number, not negative), got {shown}"
        )
    return value
