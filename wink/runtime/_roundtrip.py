"""Whether slice values come back from a snapshot's JSON exactly.

``Snapshot.to_json`` refuses a value it could write but ``from_json`` could not
read back, or would read back as something else. It reads each slice back and
``difference`` compares what was saved with what came back, which catches what
a type's own serialization changes (computed fields, custom serializers,
excluded fields, aliases that differ between reading and writing) and time zones
that would lose their name. Only when something fails does ``unsavable`` walk
the values for the cause JSON cannot hold (NaN, lone surrogates, huge integers,
deep nesting), so that the error names it. Both give the path of the offending
part in Python terms (attribute names and indexes).

Reading back cannot change a value of a plain dataclass whose fields are all ``str``,
``int``, ``bool`` or finite ``float`` (or ``None`` where allowed): nothing but
pydantic's own writing and reading of those scalars is involved, and those are exact.
``exact_record`` finds such types once; ``holds_exact_values`` then tells, per value,
that the comparison can be skipped.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from collections.abc import Iterator, Mapping
from datetime import date, datetime, time, timedelta, timezone, tzinfo
from decimal import Decimal
from typing import Any

from pydantic import BaseModel, PlainSerializer, WrapSerializer
from pydantic_core import TzInfo, to_jsonable_python

from wink.contract.messages import short_repr
from wink.runtime._json_path import shown_path
from wink.runtime._raw import WrittenByEncode
from wink.runtime._vector import SliceValues

__all__ = [
    "MAX_DEPTH",
    "ExactRecord",
    "describe",
    "difference",
    "exact_record",
    "holds_exact_values",
    "unsavable",
]

MAX_DEPTH = 196
"""How many objects and arrays deep one slice value may nest: JSON readers (pydantic's
included) stop at 200 levels, and the snapshot document itself takes four."""

_LARGEST_INT = 10**4300  # JSON readers refuse integers of more than 4300 digits

Path = list[str | int]


def unsavable(value: object, path: Path) -> tuple[Path, str] | None:
    """The first part of ``value`` JSON cannot hold exactly, with why; ``None`` if none."""
    return _unsavable(value, path, 0, base64_bytes=False)


def _unsavable(
    value: object, path: Path, depth: int, *, base64_bytes: bool
) -> tuple[Path, str] | None:
    if isinstance(value, bytes) and not base64_bytes:
        try:
            value.decode("utf-8")
        except UnicodeDecodeError as error:
            return path, (
                f"bytes that are not UTF-8 (at byte {error.start}) cannot be written as a JSON "
                "string; a model with ser_json_bytes and val_json_bytes set to 'base64' keeps any"
            )
        return None
    reason = _scalar_problem(value)
    if reason is not None:
        return path, reason
    children = _children(value)
    if children is None or _serializes_itself(type(value)):
        return None
    skipped = _self_serialized_fields(type(value))
    from pydantic.root_model import RootModel  # defining it builds a validator: not at import

    if isinstance(value, BaseModel):
        base64_bytes = type(value).model_config.get("ser_json_bytes") == "base64"
    if not isinstance(value, RootModel):
        depth += 1
    if depth > MAX_DEPTH:
        return path, f"it nests more than {MAX_DEPTH} objects and arrays deep"
    for key, child in children:
        if key in skipped:
            continue  # the type writes it its own way: only reading it back can judge it
        if isinstance(key, str) and not _is_unicode(key):
            return [*path, key], "a key holding a lone surrogate cannot be written as JSON"
        found = _unsavable(child, [*path, key], depth, base64_bytes=base64_bytes)
        if found is not None:
            return found
    return None


def _serializes_itself(cls: type[Any]) -> bool:
    """Whether a model writes its JSON with a ``model_serializer``."""
    decorators = getattr(cls, "__pydantic_decorators__", None)
    return bool(decorators is not None and decorators.model_serializers)


_custom_fields: dict[type[Any], frozenset[str]] = {}


def _self_serialized_fields(cls: type[Any]) -> frozenset[str]:
    """Fields written by their own serializer (``field_serializer``, ``PlainSerializer``...)."""
    found = _custom_fields.get(cls)
    if found is None:
        found = _custom_fields.setdefault(cls, _find_self_serialized_fields(cls))
    return found


def _find_self_serialized_fields(cls: type[Any]) -> frozenset[str]:
    names: set[str] = set()
    decorators = getattr(cls, "__pydantic_decorators__", None)
    if decorators is not None:
        for serializer in decorators.field_serializers.values():
            names.update(serializer.info.fields)
    if issubclass(cls, BaseModel):
        hints = {
            name: [*field.metadata, *_metadata(field.annotation)]
            for name, field in cls.model_fields.items()
        }
    elif dataclasses.is_dataclass(cls):
        try:
            resolved = typing.get_type_hints(cls, include_extras=True)
        except Exception:
            resolved = {}
        hints = {name: _metadata(hint) for name, hint in resolved.items()}
    else:
        return frozenset(names)
    for name, metadata in hints.items():
        serializers = PlainSerializer | WrapSerializer | WrittenByEncode
        if any(isinstance(item, serializers) for item in metadata):
            names.add(name)
    return frozenset(names)


def _metadata(hint: Any) -> list[Any]:
    """The ``Annotated`` metadata of a hint, or of the members of a union hint."""
    found = list(getattr(hint, "__metadata__", ()))
    for member in typing.get_args(hint):
        found.extend(getattr(member, "__metadata__", ()))
    return found


def _scalar_problem(value: object) -> str | None:
    if isinstance(value, str):
        return _text_problem(value)
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        if -_LARGEST_INT < value < _LARGEST_INT:
            return None
        return "an integer of more than 4300 digits cannot be read back from JSON"
    if isinstance(value, float | Decimal):
        if value.is_finite() if isinstance(value, Decimal) else math.isfinite(value):
            return None
        return f"{value} cannot be written as JSON (it has no NaN or Infinity)"
    if isinstance(value, datetime | time):
        return _zone_problem(value.tzinfo, value.utcoffset())
    return None


def _text_problem(text: str) -> str | None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        return (
            f"a string holding a lone surrogate ({text[error.start]!r} at index "
            f"{error.start}) cannot be written as JSON"
        )
    return None


def _zone_problem(zone: tzinfo | None, offset: timedelta | None) -> str | None:
    """Why a time zone does not survive as a JSON date-time's fixed UTC offset."""
    if zone is None:
        return None
    if offset is None:  # a ZoneInfo on a time of day: no date, so no offset
        return (
            f"the time zone {str(zone)!r} gives this value no UTC offset, so it would be "
            "read back without a zone"
        )
    if offset % timedelta(minutes=1):
        return (
            f"the UTC offset {_offset(offset)} has seconds, which a JSON date-time "
            "(RFC 3339) cannot carry; it would be read back as another instant"
        )
    if isinstance(zone, TzInfo):
        return None
    if not isinstance(zone, timezone):
        return (
            f"the time zone {str(zone)!r} would be saved as its offset at that moment "
            f"({_offset(offset)}) and read back without its name; save UTC or a fixed "
            "offset, and the zone name in a field of its own"
        )
    if zone.tzname(None) != timezone(offset).tzname(None):
        return (
            f"the fixed offset named {zone.tzname(None)!r} would be read back as "
            f"{_offset(offset)} without its name"
        )
    return None


def _offset(offset: timedelta) -> str:
    sign = "-" if offset < timedelta(0) else "+"
    seconds = int(abs(offset).total_seconds())
    text = f"{sign}{seconds // 3600:02}:{seconds // 60 % 60:02}"
    return text + (f":{seconds % 60:02}" if seconds % 60 else "")


def _is_unicode(text: str) -> bool:
    return _text_problem(text) is None


def _children(value: object) -> Iterator[tuple[str | int, Any]] | None:
    """The parts of a container value, by key; ``None`` for a scalar."""
    from pydantic.root_model import RootModel  # defining it builds a validator: not at import

    if isinstance(value, RootModel):
        return iter(((_ROOT, value.root),))
    if isinstance(value, BaseModel):
        fields = ((name, getattr(value, name)) for name in type(value).model_fields)
        extra = (value.model_extra or {}).items()
        return iter([*fields, *extra])
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return ((field.name, getattr(value, field.name)) for field in dataclasses.fields(value))
    if isinstance(value, Mapping):
        return iter(value.items())
    if isinstance(value, list | tuple | set | frozenset | SliceValues):
        return enumerate(value)
    return None


_ROOT = "root"


def difference(saved: object, loaded: object, path: Path) -> tuple[Path, str] | None:
    """Where ``loaded`` is not ``saved``, with both shown; ``None`` when they match.

    Fields typed ``Any`` come back as JSON data: a loaded value of another type
    matches when it is the saved value's JSON form. A time zone that would come
    back without its name is a difference too.
    """
    found = _difference(saved, loaded)
    if found is None:
        return None
    reversed_path, reason = found
    return [*path, *reversed(reversed_path)], reason


# The path is built only for a difference, as the recursion unwinds (innermost key first).
_Found = tuple[list[str | int], str]
_EXACT = frozenset({str, int, bool, bytes, type(None), Decimal, date, timedelta})


def _difference(saved: Any, loaded: Any) -> _Found | None:
    if saved is loaded:
        return None
    kind = type(saved)
    if kind is not type(loaded):
        return _kinds_difference(saved, loaded)
    if kind in _EXACT:
        return None if saved == loaded else ([], _shown(saved, loaded))
    if kind is float:
        same = saved == loaded or (math.isnan(saved) and math.isnan(loaded))
        return None if same else ([], _shown(saved, loaded))
    if kind is datetime or kind is time:
        offset = saved.utcoffset()
        problem = _zone_problem(saved.tzinfo, offset)
        if problem is not None:
            return [], problem
        same = saved == loaded and offset == loaded.utcoffset()
        return None if same else ([], _shown(saved, loaded))
    names = _field_names(kind)
    if names is not None:
        for name in names:
            found = _difference(getattr(saved, name), getattr(loaded, name))
            if found is not None:
                found[0].append(name)
                return found
        if isinstance(saved, BaseModel) and (saved.model_extra or loaded.model_extra):
            return _mapping_difference(saved.model_extra or {}, loaded.model_extra or {})
        return None
    if kind is list or kind is tuple or kind is SliceValues:
        if len(saved) != len(loaded):
            return [], _shown(saved, loaded)
        for index, (before, after) in enumerate(zip(saved, loaded, strict=True)):
            found = _difference(before, after)
            if found is not None:
                found[0].append(index)
                return found
        return None
    if isinstance(saved, Mapping):
        return _mapping_difference(saved, loaded)
    return None if saved == loaded else ([], _shown(saved, loaded))


def _kinds_difference(saved: Any, loaded: Any) -> _Found | None:
    """Values of different types match only as JSON data (a field typed ``Any``), or as
    the same JSON number."""
    if _is_json_data(loaded) and not _is_json_data(saved):
        try:
            as_json = to_jsonable_python(saved)
        except Exception:  # a value with no JSON form cannot match
            return [], _shown(saved, loaded)
        return _difference(as_json, loaded)
    numbers = (saved, loaded)
    if all(isinstance(n, int | float) and not isinstance(n, bool) for n in numbers):
        return None if saved == loaded else ([], _shown(saved, loaded))
    if isinstance(saved, Mapping) and isinstance(loaded, Mapping):
        return _mapping_difference(saved, loaded)
    return [], _shown(saved, loaded)


def _mapping_difference(saved: Mapping[Any, Any], loaded: Mapping[Any, Any]) -> _Found | None:
    for key, before in saved.items():
        if key not in loaded:
            return [key], "it would not be read back"
        found = _difference(before, loaded[key])
        if found is not None:
            found[0].append(key)
            return found
    for key in loaded:
        if key not in saved:
            return [key], f"it would be read back ({_short(loaded[key])}) although it was not saved"
    return None


_record_fields: dict[type[Any], tuple[str, ...] | None] = {}


def _field_names(cls: type[Any]) -> tuple[str, ...] | None:
    """The fields compared for a dataclass or model class (``None`` for other classes)."""
    try:
        return _record_fields[cls]
    except KeyError:
        pass
    names: tuple[str, ...] | None = None
    if issubclass(cls, BaseModel):
        names = tuple(cls.model_fields)
    elif dataclasses.is_dataclass(cls):
        names = tuple(field.name for field in dataclasses.fields(cls))
    return _record_fields.setdefault(cls, names)


def _is_json_data(value: object) -> bool:
    return value is None or isinstance(value, str | int | float | bool | list | dict)


def _shown(saved: object, loaded: object) -> str:
    return f"it would be read back as {_short(loaded)}, not {_short(saved)}"


def _short(value: object) -> str:
    return short_repr(value)


def describe(where: Path) -> str:
    """A path as the contract layer writes it (``[0].steps[2]``), a deep one shortened."""
    return shown_path(where)


ExactRecord = tuple[type[Any], tuple[tuple[str, frozenset[type[Any]]], ...]]
"""A class whose values read back as themselves, with each field's name and the exact
types it may hold for that."""

_SCALARS: frozenset[type[Any]] = frozenset({str, int, bool, float})
_exact_records: dict[type[Any], ExactRecord | None] = {}


def exact_record(cls: type[Any]) -> ExactRecord | None:
    """``cls`` as an ``ExactRecord`` when it is a plain dataclass of scalar fields that
    nothing of its own writes or reads (no ``__post_init__``, no annotations, no pydantic
    configuration); ``None`` for any other type. Found once per type."""
    try:
        return _exact_records[cls]
    except KeyError:
        pass
    return _exact_records.setdefault(cls, _find_exact_record(cls))


def _find_exact_record(cls: type[Any]) -> ExactRecord | None:
    if not dataclasses.is_dataclass(cls) or hasattr(cls, "__post_init__"):
        return None
    # pydantic reads these to change how the class is validated or written.
    hooks = ("__pydantic_config__", "__pydantic_fields__", "__get_pydantic_core_schema__")
    if any(hasattr(cls, hook) for hook in hooks):
        return None
    try:
        hints = typing.get_type_hints(cls, include_extras=True)
    except Exception:
        return None
    fields: list[tuple[str, frozenset[type[Any]]]] = []
    for field in dataclasses.fields(cls):
        allowed = _scalar_types(hints.get(field.name))
        if allowed is None or not field.init or field.metadata:
            return None
        fields.append((field.name, allowed))
    return cls, tuple(fields)


def _scalar_types(hint: Any) -> frozenset[type[Any]] | None:
    """The types a field hint allows when it is a scalar, or one or ``None``."""
    if hint in _SCALARS:
        return frozenset({hint})
    members = typing.get_args(hint)
    is_union = typing.get_origin(hint) in (typing.Union, types.UnionType)
    if is_union and len(members) == 2 and type(None) in members:
        (scalar,) = (member for member in members if member is not type(None))
        if scalar in _SCALARS:
            return frozenset({scalar, type(None)})
    return None


def holds_exact_values(record: ExactRecord, values: list[Any]) -> bool:
    """Whether every value is an instance of the record's own class (not a subclass)
    whose fields each hold exactly an allowed type, every float finite: such values
    read back as themselves."""
    cls, fields = record
    for value in values:
        if type(value) is not cls:
            return False
        for name, allowed in fields:
            item = getattr(value, name)
            kind = type(item)
            if kind not in allowed or (kind is float and not math.isfinite(item)):
                return False
    return True
