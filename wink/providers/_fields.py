"""Readable field paths from JSON pointers, for error messages."""

from __future__ import annotations

__all__ = ["field_path"]

# Keywords that choose between alternatives: the value is still the same field.
_ALTERNATIVES = frozenset({"anyOf", "oneOf", "allOf"})


def field_path(pointer: str) -> str:
    """``#/properties/tags/items`` → ``tags[]``; ``#/$defs/Inner/properties/x`` → ``Inner.x``."""
    parts = [part for part in pointer.split("/") if part != "#"]
    path = ""
    index = 0
    while index < len(parts):
        keyword = parts[index]
        name = parts[index + 1] if index + 1 < len(parts) else ""
        if keyword in ("properties", "$defs", "definitions", "patternProperties"):
            path = f"{path}.{name}" if path else name
            index += 2
        elif keyword in _ALTERNATIVES:
            index += 2
        elif keyword == "prefixItems":
            path = f"{path}[{name}]"
            index += 2
        elif keyword == "items":
            path += "[]"
            index += 1
        elif keyword == "additionalProperties":
            path += "{}"
            index += 1
        else:
            path = f"{path}/{keyword}" if path else keyword
            index += 1
    return path or "<root>"
