"""What a JSON document's text says where the parsed value cannot tell.

The parser keeps the last of two equal keys, rounds numbers to floats and reports
a broken document by line and column; the contract needs the repeated key, the
exact number and the field that a position falls in. Each reading here scans the
text with one regular expression that consumes strings whole, so a quote, colon
or bracket inside a string is never taken for structure.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from decimal import Decimal
from typing import Any, TypeVar

from wink.contract.walk import iter_schema_nodes

__all__ = [
    "KeyNames",
    "path_at",
    "read_repeated_key",
    "repeated_key",
    "utf8_offset",
    "written_numbers",
]

Path = list[int | str]

# A whole string (group 1: its body; group 2: the colon that makes it a key) or one
# structural character; anything else (numbers, literals, spaces) is skipped.
_TOKENS = re.compile(r'"([^"\\]*(?:\\.[^"\\]*)*)"(\s*:)?|([\[\]{},])|"', re.S)
_KEYS = re.compile(r'"([^"\\]*(?:\\.[^"\\]*)*)"(\s*:)?', re.S)
_KEYS_BYTES = re.compile(rb'"([^"\\]*(?:\\.[^"\\]*)*)"(\s*:)?', re.S)
_JSON_SPACES = (" ", "\n", "\r", "\t")
"""What JSON allows between a key and its colon."""
# A string, skipped whole, or a number written with a fraction or an exponent.
_FRACTIONAL = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)', re.S)


def repeated_key(text: str | bytes, names: KeyNames | None = None) -> tuple[Path, str] | None:
    """The path of the first object that repeats a key, and the key; ``None`` if none does.

    A quick pass first: with the ``names`` a closed schema allows (``key_names``),
    a key can repeat only if its quoted name occurs twice in the text; without them,
    every key of the document is compared at once. When all differ (the usual case)
    no object can repeat one. Only otherwise is the document read again, object by
    object, to tell a repeated key from one shared by two objects.
    """
    if names is not None:
        unique = names.unique_in(text)
    elif isinstance(text, str):
        unique = _unique_keys(text, _KEYS, "\\")
    else:
        unique = _unique_keys(text, _KEYS_BYTES, b"\\")
    return None if unique else read_repeated_key(text)


def read_repeated_key(text: str | bytes) -> tuple[Path, str] | None:
    """``repeated_key`` without the quick pass: the whole document is read."""
    try:
        json.loads(text, object_pairs_hook=_refuse_repeats)
    except _Repeated:
        # Read once more, keeping every object, to say where the repeat is.
        return _first_repeat(json.loads(text, object_pairs_hook=_Pairs), [])
    return None


class _Repeated(Exception):
    """An object repeats a key."""


def _refuse_repeats(pairs: list[tuple[str, Any]]) -> None:
    if len(pairs) > 1 and len({key for key, _ in pairs}) < len(pairs):
        raise _Repeated


AnyStr = TypeVar("AnyStr", str, bytes)


def _unique_keys(text: AnyStr, keys_pattern: re.Pattern[AnyStr], backslash: AnyStr) -> bool:
    """Whether no key of ``text`` is written twice (nor with an escape)."""
    keys = [found[1] for found in keys_pattern.finditer(text) if found[2]]
    return len(set(keys)) == len(keys) and not any(backslash in key for key in keys)


class KeyNames:
    """The property names a closed schema allows, as they are written in JSON text."""

    __slots__ = ("data", "text", "written_keys")

    def __init__(self, names: Iterable[str]) -> None:
        written = [json.dumps(name, ensure_ascii=False) for name in sorted(set(names))]
        plain = all(_PLAIN.isdisjoint(quoted[1:-1]) for quoted in written)
        self.written_keys = tuple(f"{name}:" for name in written) if plain else None
        """Each name quoted and followed by a colon, when no name holds a character that
        JSON escapes or writes between values (``None`` otherwise).

        In a text without backslashes, such a name's quoted form is a whole string (a
        closing and an opening quote have one of ``,:[]{}`` between them), so a match
        of ``"name":`` is a key. The text has a colon after each key: when it has at most
        as many colons as names matched this way, its keys are distinct, everywhere."""
        self.text = tuple(
            (name, f"{name}:", tuple(name + space for space in _JSON_SPACES)) for name in written
        )
        """Each name quoted; quoted and followed by a colon, as a key; and quoted and
        followed by each kind of space, as a key can be before its colon."""
        self.data = tuple(
            (_utf8(name), _utf8(key), tuple(map(_utf8, spaced))) for name, key, spaced in self.text
        )
        """The same in UTF-8."""

    def unique_in(self, text: str | bytes) -> bool:
        """Whether no name is written twice as a key in ``text`` (so no object repeats one).

        A text where each name occurs at most once, quoted, repeats none: one count in C
        per name, and the usual answer. Every key is followed by a colon, so a text with
        fewer than two colons has none. A name that occurs more often (as a value too)
        is not repeated if it occurs at most once with a colon right after its closing
        quote and never with space there (as in ``"name" : 1``). Escapes (``\\u0061``,
        ``\\/``) are other ways to write a name: with any of them in the text, the answer
        is no, and the caller reads the document.
        """
        if isinstance(text, str):
            if "\\" in text and ("\\u" in text or "\\/" in text):
                return False
            count = text.count
            for name, key, spaced in self.text:
                if count(name) > 1 and (
                    count(":") > 1 and (count(key) > 1 or any(form in text for form in spaced))
                ):
                    return False
            return True
        if b"\\" in text and (b"\\u" in text or b"\\/" in text):
            return False
        count_bytes = text.count
        for name_bytes, key_bytes, spaced_bytes in self.data:
            if count_bytes(name_bytes) > 1 and (
                count_bytes(b":") > 1
                and (count_bytes(key_bytes) > 1 or any(form in text for form in spaced_bytes))
            ):
                return False
        return True

    @classmethod
    def of(cls, schema: dict[str, Any]) -> KeyNames | None:
        """The names of ``schema``'s properties, or ``None`` when some object takes any key."""
        names: list[str] = []
        for _, node in iter_schema_nodes(schema):
            if not _TYPED & node.keys() and node.get("not") is None:
                return None  # any JSON value, objects with any keys among them
            extra = node.get("additionalProperties")
            if extra is True or isinstance(extra, dict) or "patternProperties" in node:
                return None
            kinds = node.get("type")
            takes_objects = kinds == "object" or (isinstance(kinds, list) and "object" in kinds)
            if takes_objects and extra is not False:
                return None
            names.extend(node.get("properties", {}))
        return cls(names)


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


_PLAIN = frozenset(',:[]{}" \t\n\r\\')
"""Characters that keep a quoted name from being known as a whole string by its quotes."""

# A node with none of these keywords accepts any JSON value.
_TYPED = frozenset({"type", "anyOf", "oneOf", "allOf", "$ref", "enum", "const"})


class _Pairs(list[tuple[str, Any]]):
    """An object's members in order, repeats kept (``json.loads``' ``object_pairs_hook``)."""


def _first_repeat(value: Any, path: Path) -> tuple[Path, str] | None:
    if isinstance(value, _Pairs):
        seen: set[str] = set()
        for key, _ in value:
            if key in seen:
                return path, key
            seen.add(key)
        children: list[tuple[int | str, Any]] = [(key, member) for key, member in value]
    elif isinstance(value, list):
        children = list(enumerate(value))
    else:
        return None
    for step, child in children:
        found = _first_repeat(child, [*path, step])
        if found is not None:
            return found
    return None


def path_at(text: str, offset: int) -> Path:
    """The path of the value (or key) that character ``offset`` of ``text`` falls in."""
    frames: list[list[Any]] = []  # [key or index, whether a key is expected next]
    for found in _TOKENS.finditer(text, 0, offset):
        if found.end() > offset:
            break
        body, colon, mark = found.groups()
        if body is not None:
            if colon and frames and isinstance(frames[-1][0], str | type(None)):
                frames[-1][0] = _decoded(body)
        elif mark is None:  # an unterminated string: the offset lies inside it
            break
        elif mark in "{[":
            frames.append([None if mark == "{" else 0])
        elif mark in "}]":
            if frames:
                frames.pop()
        elif mark == "," and frames and isinstance(frames[-1][0], int):
            frames[-1][0] += 1
    return [frame[0] for frame in frames if frame[0] is not None]


def _decoded(body: str) -> str:
    try:
        decoded: str = json.loads(f'"{body}"')
    except ValueError:
        return body
    return decoded


def utf8_offset(text: str | bytes, line: int, column: int) -> int:
    """The character offset in ``text`` of the parser's 1-based line and byte column."""
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    start = 0
    for _ in range(line - 1):
        start = data.index(b"\n", start) + 1
    return len(data[: start + column - 1].decode("utf-8", "replace"))


def written_numbers(text: str | bytes) -> dict[float, set[Decimal]]:
    """Each float the text's fractional or exponent numbers parse as, to the exact numbers
    written for it (more than one when different numbers round to the same float)."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    written: dict[float, set[Decimal]] = {}
    for found in _FRACTIONAL.finditer(text):
        token = found[1]
        if token is not None and any(mark in token for mark in ".eE"):
            written.setdefault(float(token), set()).add(Decimal(token))
    return written
