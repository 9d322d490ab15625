"""What a model sent, kept exactly in JSON even where JSON cannot carry it.

A ``ToolInvoked`` records a call's arguments, tool name and id as received, and
a provider may deliver anything: bytes that are not UTF-8, text holding lone
surrogates, mappings with NaN. Text that is valid Unicode, and mappings of plain
JSON data, are written as themselves. Everything else is written escaped, as an
object with exactly the keys ``escaped`` and ``data``:

- ``{"escaped": "bytes", "data": <base64>}``: bytes (invalid UTF-8 included);
- ``{"escaped": "text", "data": <base64 of the UTF-8 bytes, surrogates kept>}``:
  text holding lone surrogates;
- ``{"escaped": "mapping", "data": <base64 of the UTF-8 bytes of its JSON text>}``:
  a mapping that plain JSON would change (NaN or infinity, lone surrogates,
  nesting deeper than ``PLAIN_DEPTH``, or exactly the keys of an escaped form).
  The text is Python's JSON (``NaN``, ``Infinity``) with every character as itself,
  so two surrogates in a row stay two characters rather than becoming one pair.

Reading an escaped form gives back the original value, equal and of the same type.
A mapping holding what no JSON text keeps exactly (a tuple, a non-string key, an
integer of more than 4300 digits, an object) is refused when written.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeAlias, cast

from pydantic import PlainValidator
from pydantic_core import PydanticCustomError
from pydantic_core import core_schema as cs
from typing_extensions import TypedDict

if TYPE_CHECKING:
    from pydantic import GetCoreSchemaHandler

__all__ = [
    "PLAIN_DEPTH",
    "Escaped",
    "RawArguments",
    "RawText",
    "WrittenByEncode",
    "decode",
    "encode",
]

PLAIN_DEPTH = 64
"""Mappings nested deeper than this are written escaped, so the snapshot's own
nesting stays far below what JSON readers allow."""

_LARGEST_INT = 10**4300  # Python reads integers of at most 4300 digits from text


class Escaped(TypedDict):
    """A value received that JSON cannot carry as itself, kept exactly."""

    escaped: Literal["bytes", "text", "mapping"]
    """What it was: bytes, text holding lone surrogates, or a mapping plain JSON would change."""
    data: str
    """Base64 of the bytes; of the text's UTF-8 (surrogates kept); of the mapping's JSON."""


_ESCAPED_KEYS = frozenset(Escaped.__annotations__)

Written: TypeAlias = str | Escaped | dict[str, Any] | None


def encode(value: object) -> Any:
    """The JSON data that keeps ``value`` (text, bytes, a mapping or ``None``) exactly.

    Raises ``ValueError`` for a mapping no JSON text keeps exactly.
    """
    if value is None:
        return None
    if isinstance(value, bytes):
        import base64  # only escaped values need it: not loaded with wink

        return _escaped("bytes", base64.b64encode(value).decode("ascii"))
    if isinstance(value, str):
        if _is_unicode(value):
            return value
        return _escaped("text", _base64_text(value))
    if isinstance(value, Mapping):
        if set(value) != _ESCAPED_KEYS and _is_plain(value, 1):
            return dict(value)
        return _escaped("mapping", _base64_text(_exact_json(value)))
    raise ValueError(f"expected text, bytes, a mapping or None, got {type(value).__qualname__}")


def decode(data: object) -> Any:
    """The value ``encode`` wrote as ``data``; raises ``ValueError`` for anything else."""
    if data is None or isinstance(data, str):
        return data
    if not isinstance(data, dict):
        raise ValueError(f"expected a string, an object or null, got {_json_kind(data)}")
    if set(data) != _ESCAPED_KEYS:
        return data
    kind, text = data["escaped"], data["data"]
    if not isinstance(text, str):
        raise ValueError(f"data: expected a string, got {_json_kind(text)}")
    if kind not in ("bytes", "text", "mapping"):
        raise ValueError(f"escaped: expected 'bytes', 'text' or 'mapping', got {kind!r:.40}")
    import base64  # only escaped values need them: not loaded with wink
    import binascii

    try:
        raw = base64.b64decode(text, validate=True)
    except binascii.Error:
        raise ValueError(f"data: not valid base64 for escaped {kind}") from None
    if kind == "bytes":
        return raw
    try:
        decoded = raw.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError as error:
        raise ValueError(f"data: escaped {kind} is not UTF-8 at byte {error.start}") from None
    return decoded if kind == "text" else _read_mapping(decoded)


def _validated(data: object) -> Any:
    """``decode`` as a validator: its reason, in its own words, is the problem."""
    try:
        return decode(data)
    except ValueError as error:
        raise PydanticCustomError("raw_value", "{reason}", {"reason": str(error)}) from None


def _validated_text(data: object) -> str:
    value = _validated(data)
    if not isinstance(value, str):
        raise PydanticCustomError("raw_text", "expected text or escaped text")
    return value


def _base64_text(text: str) -> str:
    import base64  # only escaped values need it: not loaded with wink

    return base64.b64encode(text.encode("utf-8", "surrogatepass")).decode("ascii")


def _escaped(kind: Literal["bytes", "text", "mapping"], data: str) -> Escaped:
    return {"escaped": kind, "data": data}


def _is_unicode(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _is_plain(value: object, depth: int) -> bool:
    """Whether ``value`` is JSON data that reads back as itself, nested at most ``PLAIN_DEPTH``."""
    if value is None or isinstance(value, bool):
        return True
    if isinstance(value, str):
        return _is_unicode(value)
    if isinstance(value, int):
        return type(value) is int and -_LARGEST_INT < value < _LARGEST_INT
    if isinstance(value, float):
        return type(value) is float and math.isfinite(value)
    if depth > PLAIN_DEPTH:
        return False
    if isinstance(value, list):
        return all(_is_plain(item, depth + 1) for item in value)
    if isinstance(value, Mapping):
        return all(
            isinstance(key, str) and _is_unicode(key) and _is_plain(item, depth + 1)
            for key, item in value.items()
        )
    return False


def _exact_json(value: Mapping[Any, Any]) -> str:
    """Python's JSON text of ``value``, refused unless it reads back exactly."""
    try:
        text = json.dumps(dict(value), ensure_ascii=False, allow_nan=True)
        same = _same(value, json.loads(text))
    except (TypeError, ValueError, RecursionError) as error:
        raise ValueError(f"the mapping cannot be kept as JSON: {_reason(error)}") from None
    if not same:
        raise ValueError(
            "the mapping cannot be kept as JSON: it holds a tuple, a non-string key or "
            "another value JSON would change"
        )
    return text


def _read_mapping(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as error:
        raise ValueError(f"data: escaped mapping is not readable JSON: {_reason(error)}") from None
    if not isinstance(value, dict):
        raise ValueError(f"data: escaped mapping holds {_json_kind(value)}, not an object")
    return value


def _same(saved: object, loaded: object) -> bool:
    """Equal and of the same JSON kind at every level (NaN equals NaN)."""
    if isinstance(saved, float) and isinstance(loaded, float):
        return saved == loaded or (math.isnan(saved) and math.isnan(loaded))
    if isinstance(saved, Mapping):
        return (
            isinstance(loaded, dict)
            and list(saved) == list(loaded)
            and all(_same(saved[key], loaded[key]) for key in saved)
        )
    if isinstance(saved, list):
        return (
            isinstance(loaded, list)
            and len(saved) == len(loaded)
            and all(_same(a, b) for a, b in zip(saved, loaded, strict=True))
        )
    return type(saved) is type(loaded) and saved == loaded


def _reason(error: BaseException) -> str:
    if isinstance(error, RecursionError):
        return "nested too deeply"
    text = str(error)
    if "integer string conversion" in text:
        return "an integer has more than 4300 digits"
    return text


def _json_kind(value: object) -> str:
    if value is None:
        return "null"
    names = {bool: "a boolean", int: "a number", float: "a number", str: "a string"}
    return names.get(type(value), "an array" if isinstance(value, list) else "an object")


class WrittenByEncode:
    """``Annotated`` metadata: the value is written as ``encode`` returns it, a
    ``return_type``.

    It does what ``PlainSerializer(encode, return_type=...)`` does; pydantic's module
    of serializers is not loaded with wink for it.
    """

    __slots__ = ("return_type",)

    def __init__(self, return_type: Any) -> None:
        self.return_type = return_type

    def __repr__(self) -> str:
        return f"WrittenByEncode({self.return_type!r})"

    def __get_pydantic_core_schema__(
        self, source_type: Any, handler: GetCoreSchemaHandler
    ) -> cs.CoreSchema:
        schema = handler(source_type)
        # Set on the schema the handler made, as PlainSerializer does (a TypedDict union
        # to mypy, which allows no key assignment on it).
        cast(dict[str, Any], schema)["serialization"] = cs.plain_serializer_function_ser_schema(
            encode,
            info_arg=False,
            return_schema=handler.generate_schema(self.return_type),
            when_used="always",
        )
        return schema


RawArguments = Annotated[
    str | bytes | Mapping[str, Any] | None,
    PlainValidator(_validated, json_schema_input_type=Written),
    WrittenByEncode(Written),
]
"""Call arguments as received, written losslessly (see the module)."""

RawText = Annotated[
    str,
    PlainValidator(_validated_text, json_schema_input_type=str | Escaped),
    WrittenByEncode(str | Escaped),
]
"""Text as received (a tool name, a call id), lone surrogates kept."""
