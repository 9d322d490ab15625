"""Which value of a JSON text a line and column fall in, as a path (``slices[0].items[3]``).

JSON readers report errors by position; a path says where in the document's
structure that is. Only called on errors, so a plain scan of the text before
the position is enough.
"""

from __future__ import annotations

import json

from wink.contract import format_path

__all__ = ["path_at", "shown_path"]

_SHOWN_PARTS = 8


def path_at(text: str | bytes | bytearray, line: int, column: int) -> str:
    """The path of the innermost value open at ``line``:``column`` (both 1-based)."""
    if isinstance(text, bytes | bytearray):
        text = bytes(text).decode("utf-8", "replace")
    lines = text.split("\n")
    offset = sum(len(part) + 1 for part in lines[: max(line - 1, 0)]) + max(column - 1, 0)
    return shown_path(_open_path(text[:offset]))


def shown_path(parts: list[str | int]) -> str:
    """``parts`` as the contract layer writes a path; a deep one is cut short, saying how
    deep it goes, and lone surrogates in keys are shown as escapes."""
    readable: list[str | int] = [
        part.encode("utf-8", "backslashreplace").decode("utf-8") if isinstance(part, str) else part
        for part in parts[:_SHOWN_PARTS]
    ]
    text = format_path(readable)
    if len(parts) > _SHOWN_PARTS:
        text += f"... ({len(parts)} levels deep)"
    return text


class _Frame:
    __slots__ = ("index", "key", "wants_key")

    def __init__(self, is_object: bool) -> None:
        self.index: int | None = None if is_object else 0
        self.key: str | None = None
        self.wants_key = is_object

    def part(self) -> str | int | None:
        return self.index if self.index is not None else self.key


def _open_path(prefix: str) -> list[str | int]:
    stack: list[_Frame] = []
    position, size = 0, len(prefix)
    while position < size:
        char = prefix[position]
        if char == '"':
            end = _string_end(prefix, position)
            if stack and stack[-1].wants_key:
                stack[-1].key = _string_value(prefix[position:end])
            position = end
            continue
        if char in "{[":
            stack.append(_Frame(char == "{"))
        elif char in "}]" and stack:
            stack.pop()
        elif char == ":" and stack:
            stack[-1].wants_key = False
        elif char == "," and stack:
            frame = stack[-1]
            if frame.index is not None:
                frame.index += 1
            else:
                frame.wants_key, frame.key = True, None
        position += 1
    return [part for frame in stack if (part := frame.part()) is not None]


def _string_end(text: str, start: int) -> int:
    """The position just after the string starting at ``start`` (or the end of ``text``)."""
    position = start + 1
    while position < len(text):
        if text[position] == "\\":
            position += 2
        elif text[position] == '"':
            return position + 1
        else:
            position += 1
    return len(text)


def _string_value(literal: str) -> str:
    try:
        value = json.loads(literal)
    except ValueError:
        return literal.strip('"')
    return value if isinstance(value, str) else literal
