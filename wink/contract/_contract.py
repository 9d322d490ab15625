"""Compile a params or result type into a contract, once per type."""

from __future__ import annotations

import ast
import json
import re
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, Generic, TypeVar

from pydantic import PydanticSchemaGenerationError, PydanticUserError, TypeAdapter, ValidationError
from pydantic.errors import PydanticInvalidForJsonSchema
from pydantic_core import CoreConfig, PydanticSerializationError, SchemaValidator, to_json

from wink.contract._core_schema import (
    ARGUMENTS_TEXT,
    CoreReferences,
    fail_fast_everywhere,
    forbid_extra_everywhere,
    quick_schema,
    reads_arguments_text,
)
from wink.contract._field_search import field_mentioning, field_not_json
from wink.contract._flat import FlatRecord, flat_record
from wink.contract._json_text import KeyNames, read_repeated_key, repeated_key
from wink.contract.conformance import check_schema
from wink.contract.frozen import freeze
from wink.contract.messages import (
    FieldProblem,
    Problems,
    describe_problems,
    format_path,
    problems_from_validation_error,
    short_repr,
)
from wink.contract.schema import generate_json_schema
from wink.contract.walk import JsonSchema
from wink.errors import PromptValidationError, ToolValidationError

__all__ = [
    "DEFAULT_MAX_BYTES",
    "Contract",
    "ContractViolation",
    "compile_contract",
    "type_name",
]

T = TypeVar("T")

Arguments = str | bytes | Mapping[str, Any] | None
"""What ``Contract.parse`` reads: a JSON document, or a mapping already decoded."""

DEFAULT_MAX_BYTES = 1024 * 1024
"""The default size limit of a tool's arguments (1 MiB); see ``Tool.max_argument_bytes``."""

_MANY_PROBLEMS = 1000
"""Past this many problems, the first ones are found again by a fail-fast validation."""

_EMPTY_OBJECT: JsonSchema = {"type": "object", "properties": {}, "additionalProperties": False}
_EMPTY_ARGUMENTS = frozenset({"", "{}", "null"})
_UNPREPARED = -1
_NO_QUICK_PATH = -2
_NEVER_WRITTEN = "\x00"
"""A character no valid JSON text holds (a control character is escaped in a string)."""
_STRICT = CoreConfig(strict=True)


class ContractViolation(ToolValidationError):
    """A payload broke a contract; ``problems`` says where and why."""

    def __init__(self, subject: str, problems: tuple[FieldProblem, ...]) -> None:
        self.subject = subject
        self.problems = problems
        """The first problems (at most ``MAX_PROBLEMS_SHOWN`` when parsing found them)."""
        self.total = problems.total if isinstance(problems, Problems) else len(problems)
        """How many problems there were, described or not."""
        super().__init__(f"{subject}:\n{describe_problems(problems)}")


@dataclass(frozen=True, slots=True, eq=False)
class Contract(Generic[T]):
    """A compiled type: strict forbidding validator, serializer and JSON Schemas."""

    type: Any
    """The type this contract was compiled from (``None`` for no payload)."""
    input_schema: JsonSchema
    """JSON Schema of what parsing accepts (validation mode)."""
    _validator: SchemaValidator | None = field(repr=False)
    _adapter: TypeAdapter[T] | None = field(repr=False)
    max_bytes: int | None = None
    """The largest JSON document ``parse`` reads, larger ones refused unread; ``None``
    for no limit (a tool's params contract has one: ``Tool.max_argument_bytes``)."""
    _key_names: KeyNames | None = field(default=None, repr=False)
    """The property names of a closed schema, for a quick repeated-key check."""
    _core: Any = field(default=None, repr=False)
    """The validator's core schema, for the fail-fast validator built on demand."""
    _fail_fast: list[SchemaValidator] = field(default_factory=list, repr=False)
    _output_schema: JsonSchema | None = field(default=None, repr=False)
    _flat: FlatRecord | None = field(default=None, repr=False)
    """The type as a ``FlatRecord`` (``None`` when it is not one), for quick dumps."""
    _locations: dict[tuple[int | str, ...], Any] = field(default_factory=dict, repr=False)
    """Where the validator's error locations lead in ``input_schema``, kept for reports."""
    _reads_text: bool | None = field(default=None, repr=False)
    """Whether a check reads the JSON text from the validation context; found on first parse."""
    _shortcut: list[_Shortcut] = field(default_factory=list, repr=False)
    """The narrower validator tried first, built on first parse and shared with copies."""
    parse: Callable[[Arguments], T] = field(init=False, repr=False)
    """Parse a JSON document or decoded mapping, raising ``ContractViolation``.

    A contract of ``None`` accepts only an empty payload: ``{}``, ``""`` or ``null``.
    A document over ``max_bytes`` is refused before it is read, and one whose
    objects repeat a key is refused although every value is valid.

    A function of this contract's own (see ``_quick_parser``), not a method: the usual
    call then reads no attribute."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "parse", _quick_parser(self))

    @property
    def output_schema(self) -> JsonSchema:
        """JSON Schema of what serializing produces (serialization mode).

        Emitted and checked on first use: most params types are only ever parsed.
        """
        schema = self._output_schema
        if schema is None:
            assert self._adapter is not None  # the None contract is built with its schema
            schema = _output_schema_of(self.type, self._adapter, self.input_schema)
            object.__setattr__(self, "_output_schema", schema)
        return schema

    @property
    def name(self) -> str:
        """A readable name of the contract's type."""
        return type_name(self.type)

    def _parse(self, arguments: Arguments, *, shortcut_refused: bool = False) -> T:
        """``parse`` in full: any payload, tried first with the shortcut's validator unless
        it refused the payload already."""
        validator = self._validator
        if validator is None:
            return self._parse_nothing(arguments)
        limit = self.max_bytes
        if type(arguments) is str:
            text: str | bytes = arguments
            if limit is not None and len(arguments) > limit >> 2:  # a character: 1 to 4 bytes
                self._check_size(arguments, limit)
        else:
            text = arguments if isinstance(arguments, bytes) else to_json(arguments)
            if limit is not None and len(text) > limit:  # bytes: the length is the size
                self._check_size(text, limit)
        shortcut = self._shortcut[0] if self._shortcut else self._prepare_shortcut()
        value = self._validated(validator, None if shortcut_refused else shortcut, text)
        if text is arguments:  # a decoded mapping cannot repeat a key
            self._check_keys(text)
        return value

    def _validated(
        self, validator: SchemaValidator, shortcut: _Shortcut | None, text: str | bytes
    ) -> T:
        """``text`` validated: by the shortcut's narrower validator if it accepts it, or else
        by the full one, whose refusal is the one reported."""
        quick = None if shortcut is None else shortcut.validator
        if shortcut is not None and quick is not None:
            context = {ARGUMENTS_TEXT: text} if shortcut.reads_text else None
            try:
                accepted: T = quick.validate_json(text, context=context)
            except ValidationError:
                pass
            else:
                return accepted
        reads_text = self._reads_text
        if reads_text is None:
            reads_text = self._find_whether_checks_read_text()
        try:
            if reads_text:
                value: T = validator.validate_json(
                    text, strict=True, context={ARGUMENTS_TEXT: text}
                )
            else:
                value = validator.validate_json(text, strict=True)
        except ValidationError as error:
            raise ContractViolation(f"invalid {self.name}", self._problems(error, text)) from None
        return value

    def _prepare_shortcut(self) -> _Shortcut:
        """Build the narrower validator, once for this contract and its copies."""
        with _lock:
            if not self._shortcut:
                shortcut = _Shortcut.of(self._core, self._key_names, self.input_schema)
                self._shortcut.append(shortcut)
        return self._shortcut[0]

    def _find_whether_checks_read_text(self) -> bool:
        """Whether some check of the type reads the JSON text, found once and kept."""
        reads_text = self._core is None or reads_arguments_text(self._core)
        object.__setattr__(self, "_reads_text", reads_text)
        return reads_text

    def _check_keys(self, text: str | bytes) -> None:
        """Refuse a text where an object repeats a key."""
        names = self._key_names
        if names is None or not names.unique_in(text):  # settles most texts
            self._refuse_repeated_key(text, names)

    def _refuse_repeated_key(self, text: str | bytes, names: KeyNames | None) -> None:
        repeated = read_repeated_key(text) if names is not None else repeated_key(text)
        if repeated is not None:
            path, key = repeated
            reason = (
                f"key {short_repr(key)} appears more than once; send each key once "
                "(a repeated key is ambiguous)"
            )
            problem = FieldProblem(format_path(path), reason)
            raise ContractViolation(f"invalid {self.name}", (problem,))

    def _problems(self, error: ValidationError, text: str | bytes) -> Problems:
        """The first problems of ``error``, at a cost bounded by the ones shown.

        Building every error of a payload with thousands of wrong items costs more
        than reading it; such a payload is validated again with arrays and mappings
        stopping at their first error, whose problems are the ones described.
        """
        total = error.error_count()
        if total > _MANY_PROBLEMS and self._core is not None:
            if not self._fail_fast:
                self._fail_fast.append(SchemaValidator(fail_fast_everywhere(self._core)))
            try:
                self._fail_fast[0].validate_json(text, strict=True, context={ARGUMENTS_TEXT: text})
            except ValidationError as fewer:
                error = fewer
        shown = problems_from_validation_error(
            error, self.input_schema, text, locations=self._locations
        )
        # The fail-fast validation counts fewer problems than there were.
        return shown if shown.total >= total else Problems(shown, total)

    def with_max_bytes(self, max_bytes: int) -> Contract[T]:
        """This contract with another size limit on the documents ``parse`` reads."""
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1:
            raise ValueError(f"max_bytes must be a positive integer, got {max_bytes!r}")
        return replace(self, max_bytes=max_bytes)

    def _check_size(self, text: str | bytes, limit: int) -> None:
        # A character is at least one UTF-8 byte and at most four: count bytes only
        # when the character count cannot decide.
        size = len(text)
        if isinstance(text, str) and limit // 4 < size <= limit:
            size = len(text.encode("utf-8", "surrogatepass"))
        if size > limit:
            problem = FieldProblem(
                "<root>",
                f"arguments are {size:,} bytes of JSON, over the limit of {limit:,} bytes; "
                "send less data",
            )
            raise ContractViolation(f"invalid {self.name}", (problem,))

    def _parse_nothing(self, arguments: object) -> T:
        if arguments is None or arguments == {}:
            return None  # type: ignore[return-value]  # T is None for this contract
        if isinstance(arguments, bytes):
            arguments = arguments.decode("utf-8", "replace")
        if isinstance(arguments, str) and "".join(arguments.split()) in _EMPTY_ARGUMENTS:
            return None  # type: ignore[return-value]  # T is None for this contract
        problem = FieldProblem("<root>", f"this tool takes no arguments (got {arguments!r:.60})")
        raise ContractViolation("unexpected arguments", (problem,))

    def dump(self, value: T, *, exclude_none: bool = False) -> Any:
        """Serialize ``value`` to JSON-compatible Python data, keys named as ``output_schema``.

        A value that does not match the type (a str in an int field) raises
        ``ContractViolation`` instead of being written as something else.
        """
        if self._adapter is None:
            return None
        # The serializer itself: ``TypeAdapter``'s wrapper only passes these through.
        serializer = self._adapter.serializer
        if self._holds_exact_types(value):
            return serializer.to_python(
                value, mode="json", exclude_none=exclude_none, by_alias=True, warnings=False
            )
        try:
            return serializer.to_python(
                value, mode="json", exclude_none=exclude_none, by_alias=True, warnings="error"
            )
        except PydanticSerializationError as error:
            raise self._unexpected(error) from None

    def dump_json(self, value: T, *, exclude_none: bool = False) -> str:
        """Serialize ``value`` to compact JSON text, keys named as ``output_schema``."""
        if self._adapter is None:
            return "null"
        serializer = self._adapter.serializer
        if self._holds_exact_types(value):
            # Nothing can mismatch: asking pydantic-core for the check costs ~1 us.
            return serializer.to_json(
                value, exclude_none=exclude_none, by_alias=True, warnings=False
            ).decode()
        try:
            dumped = serializer.to_json(
                value, exclude_none=exclude_none, by_alias=True, warnings="error"
            )
        except PydanticSerializationError as error:
            raise self._unexpected(error) from None
        return dumped.decode()

    def _holds_exact_types(self, value: object) -> bool:
        """Whether ``value`` is a flat record of this type whose fields hold exactly their
        declared scalar types (see ``wink.contract._flat``): then no check is needed."""
        flat = self._flat
        return flat is not None and flat.holds_exact_types(value)

    def _unexpected(self, error: PydanticSerializationError) -> ContractViolation:
        found = _UNEXPECTED.search(str(error))
        if found is None:
            problem = FieldProblem("<root>", _first_line(error))
        else:
            expected, field_name, got = found.groups()
            got = _as_json_text(got)
            problem = FieldProblem(field_name or "<root>", f"expected {expected} (got {got})")
        return ContractViolation(f"value does not match {self.name}", (problem,))


def _quick_parser(contract: Contract[T]) -> Callable[[Arguments], T]:
    """``contract.parse``: the usual call in as few steps as it takes, any other by
    ``Contract._parse``.

    The usual call is a text within a quarter of the size limit (so within the limit
    whatever its characters), that the shortcut's validator accepts and whose keys are
    known to be distinct: each key has a colon after it, so a text with no more colons
    than property names written as keys (see ``KeyNames.written_keys``) repeats none.
    Its steps read variables of this function, set once the first parse has built the
    shortcut; a contract whose shortcut cannot take such a text never takes this path.
    """
    size = _UNPREPARED  # the longest text (in characters) the quick path takes
    quick: Callable[[str], T] = _unprepared
    # The first two names written as keys are looked up inline (most tools have few).
    first = second = _NEVER_WRITTEN
    others: tuple[str, ...] = ()
    full = contract._parse
    check_keys = contract._check_keys

    def prepare(shortcut: _Shortcut) -> None:
        nonlocal size, quick, first, second, others
        if shortcut.validator is None or shortcut.reads_text or not shortcut.written_keys:
            size = _NO_QUICK_PATH
            return
        quick = shortcut.validator.validate_json  # strict: see ``quick_schema``
        keys = shortcut.written_keys
        first, second = (*keys, _NEVER_WRITTEN, _NEVER_WRITTEN)[:2]
        others = keys[2:]
        limit = contract.max_bytes
        size = sys.maxsize if limit is None else limit >> 2

    def parse(arguments: Arguments) -> T:
        if type(arguments) is str and len(arguments) <= size:
            try:
                value = quick(arguments)
            except ValidationError:
                pass  # the full validator decides, outside this handler
            else:
                unmatched = arguments.count(":") - (first in arguments) - (second in arguments)
                if unmatched > 0:
                    for key in others:
                        if key in arguments:
                            unmatched -= 1
                            if not unmatched:
                                break
                    else:
                        check_keys(arguments)
                return value
            return full(arguments, shortcut_refused=True)
        value = full(arguments)
        if size == _UNPREPARED and contract._shortcut:
            prepare(contract._shortcut[0])
        return value

    parse.__doc__ = "Parse a JSON document or decoded mapping, raising ``ContractViolation``."
    return parse


def _unprepared(text: str) -> Any:
    raise AssertionError("the quick path is taken only once it is prepared")


@dataclass(frozen=True, slots=True)
class _Shortcut:
    """A validator that ``parse`` tries before the full one (see ``quick_schema``):
    it accepts fewer payloads, stops at its first error, and calls Python only for ``null``
    sent for a default."""

    validator: SchemaValidator | None
    """``None`` when the contract has no core schema to narrow."""
    reads_text: bool
    """Whether a check of the narrower validator still reads the JSON text."""
    written_keys: tuple[str, ...] | None
    """``KeyNames.written_keys`` of the contract's property names, the top level's first
    (in the order the type declares them: the ones a payload most likely holds)."""

    @classmethod
    def of(cls, core: Any, key_names: KeyNames | None, input_schema: JsonSchema) -> _Shortcut:
        if core is None:
            return cls(None, False, None)
        narrowed, reads_text = quick_schema(core)
        written_keys = None if key_names is None else key_names.written_keys
        if written_keys:
            top = [f"{json.dumps(name, ensure_ascii=False)}:" for name in _properties(input_schema)]
            first = [key for key in top if key in written_keys]
            written_keys = tuple(dict.fromkeys([*first, *written_keys]))
        validator = SchemaValidator(narrowed, config=_STRICT)
        return cls(validator, reads_text, written_keys)


def _properties(schema: JsonSchema) -> Any:
    properties = schema.get("properties")
    return properties if isinstance(properties, Mapping) else ()


# pydantic reports a mismatched value only in its warning text.
_UNEXPECTED = re.compile(
    r"Expected `([^`]+)`[^\[]*\[(?:field_name='([^']*)', )?input_value=(.{0,60}?), input_type"
)

_cache: dict[Any, Contract[Any]] = {}
_lock = threading.Lock()


def compile_contract(tp: Any) -> Contract[Any]:
    """Return the contract of ``tp``, compiling it on first use.

    Raises ``PromptValidationError`` naming the type and field for anything that
    cannot round-trip through JSON.
    """
    try:
        return _cache[tp]
    except KeyError:
        pass
    except TypeError as error:  # unhashable annotations
        raise PromptValidationError(f"{tp!r} cannot be used as a contract type: {error}") from None
    contract = _compile(tp)
    with _lock:
        return _cache.setdefault(tp, contract)


def _compile(tp: Any) -> Contract[Any]:
    if tp is None or tp is type(None):
        return Contract(
            None, freeze(_EMPTY_OBJECT), None, None, _output_schema=freeze({"type": "null"})
        )
    with _refusals(tp):
        adapter: TypeAdapter[Any] = TypeAdapter(tp)
        # An unresolved forward reference leaves a placeholder schema; raise it now.
        adapter.rebuild(raise_errors=True)
        # Both walks below share the refs of the type's schema, found once if at all.
        references = CoreReferences(adapter.core_schema)
        core = forbid_extra_everywhere(adapter.core_schema, type_name(tp), references)
        validator = SchemaValidator(core)
        input_schema = generate_json_schema(adapter.core_schema, "validation", references)
        # Conformance is checked here, once per type, not once per tool that uses it.
        check_schema(input_schema, f"{type_name(tp)} (parsing)")
    # Every tool with this type shares these schemas: read-only, so none can change another's.
    return Contract(
        tp,
        freeze(input_schema),
        validator,
        adapter,
        _key_names=KeyNames.of(input_schema),
        _core=core,
        _flat=flat_record(adapter.core_schema),
    )


def _output_schema_of(tp: Any, adapter: TypeAdapter[Any], input_schema: JsonSchema) -> JsonSchema:
    with _refusals(tp):
        output_schema = generate_json_schema(adapter.core_schema, "serialization")
        if output_schema != input_schema:
            check_schema(output_schema, f"{type_name(tp)} (serializing)")
    frozen: JsonSchema = freeze(output_schema)
    return frozen


@contextmanager
def _refusals(tp: Any) -> Iterator[None]:
    """Turn pydantic's refusal of ``tp`` into a ``PromptValidationError`` naming the field."""
    name = type_name(tp)
    try:
        yield
    except PromptValidationError as error:
        message = str(error)
        if not message.startswith((f"{name}.", f"{name}:")):
            message = f"{name}: {message}"
        raise PromptValidationError(message) from None
    except (PydanticSchemaGenerationError, PydanticInvalidForJsonSchema) as error:
        where = field_not_json(tp) or name
        raise PromptValidationError(
            f"{where}: a field type cannot be sent or received as JSON "
            # pydantic's advice to allow arbitrary types would not help: they are refused.
            f"({_first_line(error).split('. ')[0]})"
        ) from None
    except PydanticUserError as error:
        raise PromptValidationError(f"{name}: {_first_line(error)}") from None
    except NameError as error:
        missing = getattr(error, "name", None) or ""
        where = field_mentioning(tp, missing) or name
        raise PromptValidationError(f"{where}: unresolved forward reference {missing!r}") from None


def type_name(tp: Any) -> str:
    """A short readable name of a type or generic alias."""
    if tp is None or tp is type(None):
        return "None"
    if isinstance(tp, type) and not getattr(tp, "__args__", None):
        return tp.__qualname__
    return repr(tp).replace("typing.", "").replace("__main__.", "")


def _as_json_text(python_repr: str) -> str:
    """pydantic quotes the value with ``repr``; the model reads JSON."""
    try:
        return short_repr(ast.literal_eval(python_repr))
    except (ValueError, SyntaxError):
        return python_repr


def _first_line(error: Exception) -> str:
    return str(error).strip().splitlines()[0]
