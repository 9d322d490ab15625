"""``Snapshot``: a session's slices at one moment, and their JSON form."""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

from wink.contract import Contract, ContractViolation, compile_contract
from wink.errors import PromptValidationError, WinkError
from wink.runtime._vector import SliceValues

__all__ = ["SNAPSHOT_VERSION", "Snapshot", "SnapshotError"]

SNAPSHOT_VERSION = 1
"""Version of the JSON layout written by ``Snapshot.to_json``."""

SliceMap = Mapping[type[Any], SliceValues[Any]]
_Proxy = MappingProxyType[type[Any], SliceValues[Any]]

_EMPTY: _Proxy = MappingProxyType({})


class SnapshotError(WinkError):
    """A snapshot could not be written as JSON or read back; the message names the slice."""


class Snapshot:
    """Immutable slices by type: ``STATE`` slices (restored) and ``LOG`` slices (kept).

    Taking one is O(1): the session hands out the maps it already holds, which it
    never changes (every update builds new maps that share the unchanged slices).
    """

    __slots__ = ("_log", "_state")

    def __init__(self, state: SliceMap = _EMPTY, log: SliceMap = _EMPTY) -> None:
        """A snapshot of the given ``STATE`` and ``LOG`` slices."""
        self._state: _Proxy = (
            state if isinstance(state, MappingProxyType) else MappingProxyType(dict(state))
        )
        self._log: _Proxy = (
            log if isinstance(log, MappingProxyType) else MappingProxyType(dict(log))
        )

    @property
    def state(self) -> MappingProxyType[type[Any], SliceValues[Any]]:
        """``STATE`` slices: what a restore puts back."""
        return self._state

    @property
    def log(self) -> MappingProxyType[type[Any], SliceValues[Any]]:
        """``LOG`` slices: kept by a restore unless asked otherwise."""
        return self._log

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
        """The snapshot as JSON: each slice's type, kind and items (via its contract)."""
        slices = [
            _dump_slice(slice_type, kind, values)
            for kind, slice_map in (("state", self.state), ("log", self.log))
            for slice_type, values in slice_map.items()
        ]
        return json.dumps({"version": SNAPSHOT_VERSION, "slices": slices}, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str | bytes, *, types: Iterable[type[Any]] | None = None) -> Snapshot:
        """Read a snapshot written by ``to_json``.

        With ``types``, every slice type must be one of them (nothing is imported:
        use this for documents from elsewhere). Without, each is imported by its
        ``module:QualifiedName``, which fails for classes defined inside functions.
        Fields typed ``Any`` (such as ``ToolInvoked.params``) come back as JSON data.
        """
        try:
            document = json.loads(text)
        except ValueError as error:
            raise SnapshotError(f"snapshot is not valid JSON: {error}") from None
        if not isinstance(document, dict) or document.get("version") != SNAPSHOT_VERSION:
            found = document.get("version") if isinstance(document, dict) else document
            raise SnapshotError(f"snapshot version must be {SNAPSHOT_VERSION}, got {found!r:.60}")
        known = None if types is None else {_type_key(tp): tp for tp in types}
        maps: dict[str, dict[type[Any], SliceValues[Any]]] = {"state": {}, "log": {}}
        for index, entry in enumerate(document.get("slices", [])):
            kind, slice_type, values = _load_slice(index, entry, known)
            maps[kind][slice_type] = values
        return cls(MappingProxyType(maps["state"]), MappingProxyType(maps["log"]))


def _type_key(slice_type: type[Any]) -> str:
    return f"{slice_type.__module__}:{slice_type.__qualname__}"


def _items_contract(slice_type: type[Any]) -> Contract[Any]:
    try:
        return compile_contract(list[slice_type])  # type: ignore[valid-type]  # runtime type
    except PromptValidationError as error:
        raise SnapshotError(
            f"slice {_type_key(slice_type)} cannot be written as JSON: {error}"
        ) from None


def _dump_slice(slice_type: type[Any], kind: str, values: SliceValues[Any]) -> dict[str, Any]:
    try:
        items = _items_contract(slice_type).dump(list(values))
    except SnapshotError:
        raise
    except Exception as error:
        raise SnapshotError(
            f"slice {_type_key(slice_type)} cannot be written as JSON: {error}"
        ) from None
    return {"type": _type_key(slice_type), "kind": kind, "items": items}


def _load_slice(
    index: int, entry: object, known: Mapping[str, type[Any]] | None
) -> tuple[str, type[Any], SliceValues[Any]]:
    where = f"slices[{index}]"
    if not isinstance(entry, dict) or set(entry) != {"type", "kind", "items"}:
        raise SnapshotError(f"{where}: expected an object with type, kind and items")
    kind, name, items = entry["kind"], entry["type"], entry["items"]
    if kind not in ("state", "log"):
        raise SnapshotError(f"{where}: kind must be 'state' or 'log', got {kind!r}")
    if not isinstance(name, str) or not isinstance(items, list):
        raise SnapshotError(f"{where}: type must be a string and items a list")
    if known is None:
        slice_type = _import_type(where, name)
    elif name in known:
        slice_type = known[name]
    else:
        raise SnapshotError(f"{where}: slice type {name} is not among the given types")
    try:
        values = _items_contract(slice_type).parse(json.dumps(items))
    except ContractViolation as error:
        raise SnapshotError(f"{where} ({name}): items do not match the type: {error}") from None
    return kind, slice_type, SliceValues(values)


def _import_type(where: str, name: str) -> type[Any]:
    module_name, _, qualified_name = name.partition(":")
    if "<locals>" in qualified_name:
        raise SnapshotError(f"{where}: {name} is defined inside a function; pass it in types=[...]")
    try:
        found: Any = importlib.import_module(module_name)
        for part in qualified_name.split("."):
            found = getattr(found, part)
    except (ImportError, AttributeError, ValueError):
        raise SnapshotError(
            f"{where}: cannot find slice type {name}; pass it in types=[...]"
        ) from None
    if not isinstance(found, type):
        raise SnapshotError(f"{where}: {name} is not a class")
    return found
