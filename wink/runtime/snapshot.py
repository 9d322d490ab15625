"""``Snapshot``: a session's slices at one moment, and their JSON form."""

from __future__ import annotations

import importlib
import io
import re
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import IO, Any

from pydantic_core import from_json

from wink._error_text import bounded, error_message, type_label
from wink.contract import Contract, compile_contract
from wink.errors import PromptValidationError, WinkError
from wink.runtime._vector import SliceValues

__all__ = ["SNAPSHOT_VERSION", "Snapshot", "SnapshotError", "read_document"]

SNAPSHOT_VERSION = 1
"""Version of the JSON layout written by ``Snapshot.to_json``."""

SliceMap = Mapping[type[Any], SliceValues[Any]]
_Slices = dict[type[Any], SliceValues[Any]]
_Proxy = MappingProxyType[type[Any], SliceValues[Any]]

_EMPTY: _Proxy = MappingProxyType({})


class SnapshotError(WinkError):
    """A snapshot could not be written as JSON or read back; the message names the slice."""


class Snapshot:
    """Immutable slices by type: ``STATE`` slices (restored) and ``LOG`` slices (kept).

    Taking one is O(1): the session hands out the maps it already holds, which it
    never changes (every update builds new maps that share the unchanged slices).
    """

    # ``_state`` and ``_log`` are plain dicts that nothing changes once built; the
    # read-only views of them are made when first asked for (see ``_share_views``).
    __slots__ = ("_log", "_log_view", "_state", "_state_view")

    _state: _Slices
    _log: _Slices
    _state_view: _Proxy
    _log_view: _Proxy

    def __init__(self, state: SliceMap = _EMPTY, log: SliceMap = _EMPTY) -> None:
        """A snapshot of the given ``STATE`` and ``LOG`` slices."""
        self._state = dict(state)
        self._log = dict(log)

    @property
    def state(self) -> MappingProxyType[type[Any], SliceValues[Any]]:
        """``STATE`` slices: what a restore puts back."""
        try:
            return self._state_view
        except AttributeError:
            view = self._state_view = MappingProxyType(self._state)
            return view

    @property
    def log(self) -> MappingProxyType[type[Any], SliceValues[Any]]:
        """``LOG`` slices: kept by a restore unless asked otherwise."""
        try:
            return self._log_view
        except AttributeError:
            view = self._log_view = MappingProxyType(self._log)
            return view

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Snapshot):
            return NotImplemented
        return self._state == other._state and self._log == other._log

    __hash__ = None  # type: ignore[assignment]  # equal snapshots may hold unhashable values

    def __repr__(self) -> str:
        counts = {
            t.__qualname__: len(v) for slices in (self._state, self._log) for t, v in slices.items()
        }
        return f"Snapshot({counts})"

    def to_json(self) -> str:
        """The snapshot as JSON: each slice's type, kind and items (via its contract).

        Raises ``SnapshotError``, naming the slice and the path of the value, for
        anything ``from_json`` would not read back as it is now (see the guide's
        "Saving and loading sessions"): every value is read back and compared before
        the text is returned. ``write_json`` writes the same bytes to a file.
        """
        written = io.BytesIO()
        self.write_json(written)
        return written.getvalue().decode()

    def write_json(self, file: IO[bytes]) -> None:
        """Write ``to_json``'s document to ``file`` (opened for binary writing), a block
        of values at a time: the memory it takes does not grow with the snapshot.

        Each block is read back and compared before it is written; on ``SnapshotError``
        the file holds the document up to the block refused (write to a temporary file
        and rename it once written, to keep a previous save whole).
        """
        from wink.runtime._snapshot_writer import write_snapshot  # only saving needs it

        write_snapshot(self, file)

    @classmethod
    def from_json(cls, text: str | bytes, *, types: Iterable[type[Any]] | None = None) -> Snapshot:
        """Read a snapshot written by ``to_json``.

        With ``types``, every slice type must be one of them (nothing is imported:
        use this for documents from elsewhere). Without, each is imported by its
        ``module:QualifiedName``, which fails for classes defined inside functions.
        Fields typed ``Any`` (such as ``ToolInvoked.params``) come back as JSON data.
        Any problem with the text raises ``SnapshotError`` saying where.
        """
        if not isinstance(text, str | bytes | bytearray):
            raise SnapshotError(
                f"from_json takes the JSON text (str or bytes), got {type_label(text)}"
            )
        if isinstance(text, str):
            text = _utf8(text)
        return cls.read_json(io.BytesIO(text), types=types)

    @classmethod
    def read_json(cls, file: IO[bytes], *, types: Iterable[type[Any]] | None = None) -> Snapshot:
        """Read a snapshot that ``write_json`` (or ``to_json``) wrote, from ``file``
        (opened for binary reading), a block of values at a time.

        Beyond the values loaded, the memory it takes is bounded: one block of the
        text and the value being read, never the whole document. ``types`` and errors
        as for ``from_json``.
        """
        from wink.runtime._snapshot_reader import read_snapshot  # only loading needs it

        known = None if types is None else _known_types(types)
        maps = read_snapshot(file, known)
        return cls(maps["state"], maps["log"])


def _share_views(made: Snapshot, source: Snapshot) -> None:
    """Give ``made`` the views ``source`` has of the maps they share, so that
    ``made.state is source.state`` when the ``STATE`` slices did not change."""
    if made._state is source._state:
        view = getattr(source, "_state_view", None)
        if view is not None:
            made._state_view = view
    if made._log is source._log:
        view = getattr(source, "_log_view", None)
        if view is not None:
            made._log_view = view


def _known_types(types: Iterable[type[Any]]) -> dict[str, type[Any]]:
    known: dict[str, type[Any]] = {}
    for tp in types:
        if not isinstance(tp, type):
            raise TypeError(f"from_json(types=...) takes classes, got {tp!r:.60}")
        known[_type_key(tp)] = tp
    return known


def _type_key(slice_type: type[Any]) -> str:
    return f"{slice_type.__module__}:{slice_type.__qualname__}"


def _items_contract(slice_type: type[Any]) -> Contract[Any]:
    try:
        return compile_contract(list[slice_type])  # type: ignore[valid-type]  # runtime type
    except PromptValidationError as error:
        raise SnapshotError(
            f"slice {bounded(_type_key(slice_type))} cannot be written as JSON: "
            f"{error_message(error)}"
        ) from None


def read_document(text: str | bytes | bytearray) -> dict[str, Any]:
    """The decoded JSON of a snapshot, its top level checked (``{"version": 1, "slices":
    ...}``), without reading any slice: ``SnapshotError`` saying where for anything else.
    """
    return _parse_document(text)


def _utf8(text: str) -> bytes:
    """``text`` as UTF-8, or ``SnapshotError`` saying where a lone surrogate is."""
    from wink.runtime._json_path import path_at  # only reading a snapshot needs it

    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise SnapshotError(
            f"snapshot is not valid JSON: a lone surrogate ({text[error.start]!r}) at "
            f"{bounded(path_at(text[: error.start], 1, error.start + 1))} "
            f"(character {error.start})"
        ) from None


def _parse_document(text: str | bytes | bytearray) -> dict[str, Any]:
    """The document's top level, checked; its JSON read by pydantic's reader, whose limits
    (200 levels, integers of 4300 digits) are the snapshot's."""
    from wink.runtime._json_path import path_at  # only reading a snapshot needs it

    if isinstance(text, bytes | bytearray):
        try:
            bytes(text).decode("utf-8")
        except UnicodeDecodeError as error:
            before = bytes(text[: error.start]).decode("utf-8")
            raise SnapshotError(
                f"snapshot is not valid JSON: not UTF-8 at byte {error.start}, in "
                f"{bounded(path_at(before, 1, len(before) + 1))}"
            ) from None
    if isinstance(text, str):
        text = _utf8(text)
    try:
        document = from_json(text, allow_inf_nan=False)
    except ValueError as error:
        raise SnapshotError(
            f"snapshot is not valid JSON: {bounded(_json_error(str(error), text))}"
        ) from None
    if not isinstance(document, dict):
        raise SnapshotError(
            f"snapshot: expected an object with version and slices, got {_json_kind(document)}"
        )
    if document.get("version") != SNAPSHOT_VERSION:
        found = document.get("version")
        raise SnapshotError(f"snapshot version must be {SNAPSHOT_VERSION}, got {found!r:.60}")
    unknown = sorted(set(document) - {"version", "slices"})
    if unknown:
        raise SnapshotError(
            f"snapshot: unknown key {unknown[0]!r:.60} (expected version and slices)"
        )
    return document


_JSON_ERROR = re.compile(r"^(.*) at line (\d+) column (\d+)$")
_JSON_REASONS = {
    "recursion limit exceeded": "nested more than 200 objects and arrays deep",
    "number out of range": "a number too large to read (integers have at most 4300 digits)",
    "unexpected end of hex escape": "an invalid or unpaired \\u escape (JSON text is Unicode)",
}


def _json_error(message: str, text: str | bytes | bytearray) -> str:
    """pydantic's JSON error, in words, at the path where it occurred."""
    from wink.runtime._json_path import path_at  # only reading a snapshot needs it

    found = _JSON_ERROR.match(message)
    if found is None:
        return message
    reason, line, column = found[1], int(found[2]), int(found[3])
    reason = _JSON_REASONS.get(reason, reason)
    return f"{reason} at {path_at(text, line, column)} (line {line} column {column})"


def _json_kind(value: object) -> str:
    if value is None:
        return "null"
    names = {bool: "a boolean", int: "a number", float: "a number", str: "a string"}
    return names.get(type(value), "a list" if isinstance(value, list) else "an object")


def _import_type(where: str, name: str) -> type[Any]:
    module_name, _, qualified_name = name.partition(":")
    if "<locals>" in qualified_name:
        raise SnapshotError(
            f"{where}: {bounded(name)} is defined inside a function; pass it in types=[...]"
        )
    try:
        found: Any = importlib.import_module(module_name)
        for part in qualified_name.split("."):
            found = getattr(found, part)
    except Exception:  # importing runs the module: anything may fail
        raise SnapshotError(
            f"{where}: cannot find slice type {bounded(name)}; pass it in types=[...]"
        ) from None
    if not isinstance(found, type):
        raise SnapshotError(f"{where}: {bounded(name)} is not a class")
    return found
