"""Reading a snapshot's JSON from a file a block of values at a time (``Snapshot.read_json``).

The document's outer levels (``{"version":1,"slices":[{"type":...,"kind":...,"items":
[...]},...]}``) are read here token by token; each slice's items are cut into blocks
of whole values, and each block is parsed by the slice type's contract. A value's end
is found by a scan that takes strings whole and counts brackets, so the bytes held are
one block plus the value being read, whatever the document's size: the memory taken
beyond the loaded values themselves is bounded. pydantic's JSON reader stays the
judge of every value, with its limits (200 levels of nesting, counted from the
document's top, and integers of 4300 digits); what it refuses is reported as the
whole-document read reports it, by path, line and column.

Whitespace may appear wherever JSON allows it. A slice's ``items`` must follow its
``type`` and ``kind`` (as ``Snapshot.to_json`` writes them): its values cannot be read
before their type is known.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import IO, Any, NoReturn

from pydantic_core import from_json

from wink._error_text import bounded, error_message, type_label
from wink.contract import ContractViolation
from wink.contract.messages import Problems
from wink.runtime._json_path import _open_path, shown_path
from wink.runtime._roundtrip import MAX_DEPTH
from wink.runtime._snapshot_writer import shifted
from wink.runtime._vector import SliceValues
from wink.runtime.snapshot import (
    _JSON_ERROR,
    _JSON_REASONS,
    SNAPSHOT_VERSION,
    SnapshotError,
    _import_type,
    _items_contract,
    _json_kind,
    _type_key,
)

__all__ = ["read_snapshot"]

_READ_BYTES = 256 * 1024
"""How much is read from the file at a time."""
_BLOCK_BYTES = 256 * 1024
"""The items text parsed at a time (a block ends at the first value ending past it)."""

_SPACES = re.compile(rb"[ \t\n\r]*")
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
# What a number or a literal is made of, and more: the parser judges it.
_WORD = re.compile(rb'[^ \t\n\r,:\[\]{}"]+')
# Everything up to the next bracket outside a string, strings taken whole.
_FLAT = re.compile(rb'[^"\[\]{}]*(?:"[^"\\]*(?:\\.[^"\\]*)*"[^"\[\]{}]*)*')
_OPENING = frozenset(b"[{")
_QUOTE = ord('"')

_Maps = dict[str, dict[type[Any], SliceValues[Any]]]
_Path = list[str | int]


def read_snapshot(file: IO[bytes], known: Mapping[str, type[Any]] | None) -> _Maps:
    """The ``STATE`` and ``LOG`` slices (``{"state": ..., "log": ...}``) of the snapshot
    JSON read from ``file``; with ``known``, slice types are looked up there only."""
    return _Reader(_Source(file), known).document()


class _Source:
    """The file's bytes, read a block at a time; ``data[pos:]`` is not consumed yet.

    Positions given out are absolute (from the start of the file), so that reading
    more, which drops what no one needs any more, does not move them.
    """

    __slots__ = ("base", "data", "eof", "file", "line_start", "lines", "pos")

    def __init__(self, file: IO[bytes]) -> None:
        self.file = file
        self.data = b""
        self.pos = 0  # in ``data``
        self.base = 0  # where ``data`` starts in the file
        self.eof = False
        self.lines = 0  # newlines in the bytes dropped
        self.line_start = 0  # where the line holding ``data[0]`` starts

    @property
    def at(self) -> int:
        """Where reading stands, from the start of the file."""
        return self.base + self.pos

    def more(self, keep: int) -> bool:
        """Read on, keeping the bytes from ``keep`` (absolute); ``False`` at the end."""
        if self.eof:
            return False
        data, cut = self.data, keep - self.base
        newlines = data.count(b"\n", 0, cut)
        if newlines:
            self.lines += newlines
            self.line_start = self.base + data.rindex(b"\n", 0, cut) + 1
        # Reading at least as much as is kept makes a long value cost linear time.
        read: bytes | str = self.file.read(max(_READ_BYTES, len(data) - cut))
        if isinstance(read, str):  # a file opened as text: read as its UTF-8
            read = read.encode("utf-8", "surrogatepass")
        self.eof = not read
        self.data = data[cut:] + read
        self.base += cut
        self.pos -= cut
        return not self.eof

    def skip_spaces(self, keep: int) -> int | None:
        """Move past whitespace; the next byte, or ``None`` at the end of the file."""
        while True:
            self.pos = _SPACES.match(self.data, self.pos).end()  # type: ignore[union-attr]  # matches empty
            if self.pos < len(self.data):
                return self.data[self.pos]
            if not self.more(min(keep, self.at)):
                return None

    def value_end(self, keep: int) -> tuple[int, int]:
        """Where the JSON value starting here ends (absolute) and how deep it nests.

        A broken value ends where the scan stops, the end of the file at worst: the
        parser then says what is wrong with it.
        """
        start = self.at
        while True:
            found = _end_of(self.data, start - self.base, self.eof)
            if found is not None:
                return found[0] + self.base, found[1]
            self.more(min(keep, start))

    def text(self, start: int, end: int) -> bytes:
        """The bytes from ``start`` to ``end`` (absolute, both still held)."""
        return self.data[start - self.base : end - self.base]

    def line_and_column(self, position: int) -> tuple[int, int]:
        """The 1-based line and column (in bytes) of ``position``, still held."""
        index = position - self.base
        newline = self.data.rfind(b"\n", 0, index)
        line_start = self.base + newline + 1 if newline >= 0 else self.line_start
        return self.lines + self.data.count(b"\n", 0, index) + 1, position - line_start + 1


def _end_of(data: bytes, start: int, eof: bool) -> tuple[int, int] | None:
    """``(end, depth)`` of the value at ``data[start]``; ``None`` when ``data`` ends first."""
    size = len(data)
    if start >= size:
        return (start, 0) if eof else None
    if data[start] == _QUOTE:
        string = _STRING.match(data, start)
        if string is None:  # it does not end within ``data``
            return (size, 0) if eof else None
        return string.end(), 0
    if data[start] not in _OPENING:
        word = _WORD.match(data, start)
        end = word.end() if word is not None else start + 1  # a stray byte: taken alone
        if end >= size and not eof:
            return None
        return min(end, size), 0
    depth = deepest = 0
    position = start
    while True:
        position = _FLAT.match(data, position).end()  # type: ignore[union-attr]  # matches empty
        if position >= size or data[position] == _QUOTE:  # the data ends, or within a string
            return (size, deepest) if eof else None
        if data[position] in _OPENING:
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
            if depth == 0:
                return position + 1, deepest
        position += 1


class _Reader:
    """Reads one document from a ``_Source``."""

    __slots__ = ("known", "seen", "source")

    def __init__(self, source: _Source, known: Mapping[str, type[Any]] | None) -> None:
        self.source = source
        self.known = known
        self.seen: dict[type[Any], int] = {}

    def document(self) -> _Maps:
        source = self.source
        maps: _Maps = {"state": {}, "log": {}}
        if source.skip_spaces(source.at) != ord("{"):
            found = self.value([])
            raise SnapshotError(
                f"snapshot: expected an object with version and slices, got {_json_kind(found)}"
            )
        keys: list[str] = []
        version: Any = None
        for key in self.keys([]):
            if key in keys:
                raise SnapshotError(f"snapshot: key {key!r:.60} appears twice")
            keys.append(key)
            if key == "version":
                version = self.value([key])
                if version != SNAPSHOT_VERSION:
                    raise SnapshotError(
                        f"snapshot version must be {SNAPSHOT_VERSION}, got {version!r:.60}"
                    )
            elif key == "slices":
                self.slices(maps)
            else:
                self.value([key])  # read, so that broken JSON is reported as such
                raise SnapshotError(
                    f"snapshot: unknown key {key!r:.60} (expected version and slices)"
                )
        if source.skip_spaces(source.at) is not None:
            self.refuse("trailing characters", source.at, [])
        if version != SNAPSHOT_VERSION:
            raise SnapshotError(f"snapshot version must be {SNAPSHOT_VERSION}, got {version!r:.60}")
        if "slices" not in keys:
            raise SnapshotError("slices: missing (expected a list of slices)")
        return maps

    def keys(self, path: _Path) -> Iterator[str]:
        """Each key of the object starting here, the reader left at its value."""
        source = self.source
        source.pos += 1  # the opening brace
        if source.skip_spaces(source.at) == ord("}"):
            source.pos += 1
            return
        while True:
            if source.skip_spaces(source.at) != _QUOTE:
                self.refuse("expected a key (a string)", source.at, path)
            key = str(self.value(path))  # a string: it starts with a quote and was read
            if source.skip_spaces(source.at) != ord(":"):
                self.refuse("expected ':'", source.at, [*path, key])
            source.pos += 1
            source.skip_spaces(source.at)
            yield key
            following = source.skip_spaces(source.at)
            source.pos += 1
            if following == ord("}"):
                return
            if following != ord(","):
                source.pos -= 1
                self.refuse("expected ',' or '}'", source.at, path)

    def slices(self, maps: _Maps) -> None:
        source = self.source
        if source.skip_spaces(source.at) != ord("["):
            raise SnapshotError(
                f"slices: expected a list, got {_json_kind(self.value(['slices']))}"
            )
        source.pos += 1
        if source.skip_spaces(source.at) == ord("]"):
            source.pos += 1
            return
        index = 0
        while True:
            self.slice(index, maps)
            following = source.skip_spaces(source.at)
            source.pos += 1
            if following == ord("]"):
                return
            if following != ord(","):
                source.pos -= 1
                self.refuse("expected ',' or ']'", source.at, ["slices", index])
            index += 1

    def slice(self, index: int, maps: _Maps) -> None:
        source = self.source
        where = f"slices[{index}]"
        path: _Path = ["slices", index]
        if source.skip_spaces(source.at) != ord("{"):
            got = _json_kind(self.value(path))
            raise SnapshotError(f"{where}: expected an object with type, kind and items, got {got}")
        fields: dict[str, Any] = {}
        for key in self.keys(path):
            if key in fields:
                raise SnapshotError(f"{where}: key {key!r:.60} appears twice")
            if key != "items":
                fields[key] = self.value([*path, key])
                continue
            if "type" not in fields or "kind" not in fields:
                raise SnapshotError(
                    f"{where}: items come before type and kind; a snapshot's slices are "
                    "read with type and kind first (as Snapshot.to_json writes them)"
                )
            kind, name = self.checked(index, fields)
            values, slice_type = self.items(index, name)
            fields[key] = (kind, values, slice_type)
        if set(fields) != {"type", "kind", "items"}:
            raise SnapshotError(
                f"{where}: expected an object with type, kind and items, got "
                f"{bounded(str(sorted(fields)))}"
            )
        kind, values, slice_type = fields["items"]
        if slice_type is None:  # no items: found only now that the entry is known whole
            slice_type = self.resolved(index, fields["type"])
        maps[kind][slice_type] = values

    def checked(self, index: int, fields: dict[str, Any]) -> tuple[str, str]:
        """The slice's kind and type name, checked as its items begin."""
        source = self.source
        where = f"slices[{index}]"
        kind, name = fields["kind"], fields["type"]
        if kind not in ("state", "log"):
            raise SnapshotError(f"{where}.kind: must be 'state' or 'log', got {kind!r:.60}")
        if not isinstance(name, str):
            raise SnapshotError(f"{where}.type: expected a string, got {_json_kind(name)}")
        if source.skip_spaces(source.at) != ord("["):
            got = _json_kind(self.value(["slices", index, "items"]))
            raise SnapshotError(f"{where}.items: expected a list, got {got}")
        return kind, name

    def resolved(self, index: int, name: str) -> type[Any]:
        """The slice type named ``name``, imported or among the given types."""
        where = f"slices[{index}]"
        known = self.known
        if known is None:
            slice_type = _import_type(where, name)
        elif name in known:
            slice_type = known[name]
        else:
            raise SnapshotError(f"{where}: slice type {bounded(name)} is not among the given types")
        if slice_type in self.seen:
            raise SnapshotError(
                f"{where}: slice type {bounded(_type_key(slice_type))} appears twice "
                f"(also slices[{self.seen[slice_type]}])"
            )
        self.seen[slice_type] = index
        return slice_type

    def items(self, index: int, name: str) -> tuple[SliceValues[Any], type[Any] | None]:
        """The slice's values, read and parsed a block at a time, and their type (found
        for the first block: ``None`` when there are no items)."""
        slice_type: type[Any] | None = None
        source = self.source
        values: list[Any] = []
        source.pos += 1  # the opening bracket
        if source.skip_spaces(source.at) == ord("]"):
            source.pos += 1
            return SliceValues(values), None
        block_start: int | None = None
        first = position = deepest = 0
        while True:
            if block_start is None:
                block_start, first, deepest = source.at, position, 0
            end, depth = source.value_end(block_start)
            deepest = max(deepest, depth)
            source.pos = end - source.base
            position += 1
            following = source.skip_spaces(block_start)
            if following != ord(",") or end - block_start >= _BLOCK_BYTES:
                block = source.text(block_start, end)
                if slice_type is None:
                    slice_type = self.resolved(index, name)
                values.extend(self.parsed(index, slice_type, block, block_start, first, deepest))
                block_start = None
            if following == ord("]"):
                source.pos += 1
                return SliceValues(values), slice_type
            if following != ord(","):
                self.refuse("expected ',' or ']'", source.at, ["slices", index, "items"])
            source.pos += 1
            source.skip_spaces(source.at if block_start is None else block_start)

    def parsed(
        self,
        index: int,
        slice_type: type[Any],
        block: bytes,
        block_start: int,
        first: int,
        deepest: int,
    ) -> list[Any]:
        """The values of ``block`` (items from ``first`` on, written from ``block_start``)."""
        where = f"slices[{index}] ({bounded(_type_key(slice_type))})"
        contract = _items_contract(slice_type)
        if deepest <= MAX_DEPTH:
            try:
                loaded: list[Any] = contract.parse(b"[" + block + b"]")
            except ContractViolation as error:
                violation = error
            except SnapshotError:
                raise
            except (
                Exception
            ) as error:  # a validator of the type raised something pydantic passes on
                text = " ".join(error_message(error).split())
                raise SnapshotError(
                    f"{where}: reading the items failed: {type_label(error)}: {text}"
                ) from None
            else:
                return loaded
        path: _Path = ["slices", index, "items"]
        # Nested as deep as in the document, so that the reader's limits count the same.
        self.check_json(b"[[[[" + block + b"]]]]", 4, block_start, path, first)
        shown = Problems(shifted(violation.problems, first), violation.total)
        message = error_message(ContractViolation(violation.subject, shown))
        raise SnapshotError(f"{where}: items do not match the type: {message}")

    def value(self, path: _Path) -> Any:
        """The JSON value starting here, decoded; ``SnapshotError`` saying where if broken."""
        source = self.source
        start = source.at
        end, _ = source.value_end(start)
        text = source.text(start, end)
        source.pos = end - source.base
        return self.check_json(text, 0, start, path, None)

    def check_json(
        self, text: bytes, wrapped: int, origin: int, path: _Path, first: int | None
    ) -> Any:
        """``text`` decoded by pydantic's reader, or ``SnapshotError`` saying where it broke.

        ``text`` was written from ``origin`` under ``path``, after ``wrapped`` added
        opening brackets; with ``first``, it holds the items from that one on.
        """
        inner = text[wrapped : len(text) - wrapped]  # as written: without the brackets added
        try:
            inner.decode("utf-8")
        except UnicodeDecodeError as error:
            place = _shown(path, inner[: error.start], first)
            raise SnapshotError(
                f"snapshot is not valid JSON: not UTF-8 at byte {origin + error.start}, in {place}"
            ) from None
        try:
            return from_json(text, allow_inf_nan=False)
        except ValueError as error:
            found = _JSON_ERROR.match(str(error))
            if found is None:
                raise SnapshotError(f"snapshot is not valid JSON: {bounded(str(error))}") from None
            reason, line, column = found[1], int(found[2]), int(found[3])
            # Within the text as written, not in the brackets added around it: an error
            # past its end (the end of the file) is at its last byte, as in the document.
            offset = min(max(0, _offset(text, line, column) - wrapped), max(0, len(inner) - 1))
            reason = _JSON_REASONS.get(reason, reason)
            self.refuse(reason, origin + offset, path, inner[:offset], first)

    def refuse(
        self, reason: str, position: int, path: _Path, prefix: bytes = b"", first: int | None = None
    ) -> NoReturn:
        """Raise ``SnapshotError``: broken JSON at ``position`` (absolute, still held), in
        the value open at the end of ``prefix`` under ``path`` (see ``_shown``)."""
        line, column = self.source.line_and_column(position)
        raise SnapshotError(
            f"snapshot is not valid JSON: {bounded(reason)} at {_shown(path, prefix, first)} "
            f"(line {line} column {column})"
        )


def _offset(text: bytes, line: int, column: int) -> int:
    """The byte offset of a 1-based line and column (pydantic counts columns in bytes)."""
    start = 0
    for _ in range(line - 1):
        start = text.index(b"\n", start) + 1
    return start + column - 1


def _shown(path: _Path, prefix: bytes, first: int | None) -> str:
    """``path`` followed by the path of the value open at the end of ``prefix``; with
    ``first``, ``prefix`` is a list of items counted from that one."""
    decoded = prefix.decode("utf-8", "replace")
    if first is None:
        return shown_path([*path, *_open_path(decoded)])
    inner = _open_path("[" + decoded)
    if inner and isinstance(inner[0], int):
        inner[0] += first
    return shown_path([*path, *inner])
