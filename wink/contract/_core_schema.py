"""Rewrite a pydantic core schema so that parsing forbids unknown keys everywhere.

pydantic applies ``extra`` per class, and reuses a model's prebuilt validator
when the model appears inside another type, so a config passed from outside
never reaches nested models. We rebuild the validator from a rewritten copy of
the core schema instead; the user's classes are not touched.

The same walk rejects field types that cannot round-trip through JSON, and brings
parsing in line with the JSON Schema where pydantic is looser: booleans are not
numbers in literals and enumerations, numbers are finite, and sets refuse
repeated items.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from decimal import Decimal
from ipaddress import IPv6Address
from typing import Any, cast

from pydantic_core import PydanticCustomError, SchemaValidator
from pydantic_core import core_schema as cs

from wink.contract._aliases import shown_name
from wink.contract._discriminators import check_discriminator_reaches_every_choice
from wink.contract._formats import TEXT_FORMATS
from wink.contract._json_text import written_numbers
from wink.contract._set_items import unhashable_items
from wink.errors import PromptValidationError

__all__ = [
    "ARGUMENTS_TEXT",
    "CoreReferences",
    "core_references",
    "fail_fast_everywhere",
    "forbid_extra_everywhere",
    "quick_schema",
    "reads_arguments_text",
]

ARGUMENTS_TEXT = "wink.arguments"
"""Key of the parsed JSON text in the validation context, for checks that need the text."""
_READS_TEXT = "wink.reads-arguments-text"
"""Metadata of a rewritten node whose check reads ``ARGUMENTS_TEXT`` from the context."""
_WIDENS = "wink.widens"
"""Metadata of a wrapper that lets parsing accept more than the node inside it: its
value says which (``_NULL_DEFAULT`` or ``_INTEGRAL``), see ``quick_schema``."""
_NULL_DEFAULT = "null-means-default"
_INTEGRAL = "integral-floats"
_WRITTEN = "wink.written-numbers"
_TEXT_FORMATS = frozenset({"datetime", "date", "time", "timedelta", "decimal", "uuid"})

# Key types a JSON object can carry: strings and string-like enumerations.
_STRING_KEY_TYPES = frozenset({"str", "any", "literal", "enum", "definition-ref", "definitions"})


class CoreReferences:
    """The refs of a core schema (see ``core_references``), found on first use.

    Only some types need them (references among union choices, sets, discriminators
    that are functions): the others never walk the schema for them.
    """

    __slots__ = ("_found", "_schema")

    def __init__(self, schema: Any) -> None:
        self._schema = schema
        self._found: tuple[dict[str, str], dict[str, Any]] | None = None

    def _walked(self) -> tuple[dict[str, str], dict[str, Any]]:
        found = self._found
        if found is None:
            found = self._found = core_references(self._schema)
        return found

    @property
    def class_names(self) -> Mapping[str, str]:
        """Core schema ref to class name, to label union choices that are references."""
        return self._walked()[0]

    @property
    def definitions(self) -> Mapping[str, Any]:
        """Core schema ref to the schema it names."""
        return self._walked()[1]


@dataclasses.dataclass(frozen=True, slots=True)
class _Where:
    """Where in the author's types a core schema node sits, to name it in errors."""

    owner: str
    field: str
    references: CoreReferences

    def at(self, owner: str, field: str = "") -> _Where:
        return _Where(owner, field, self.references)

    @property
    def definitions(self) -> Mapping[str, Any]:
        return self.references.definitions

    def describe(self) -> str:
        return f"{self.owner}.{self.field}" if self.field else self.owner


def forbid_extra_everywhere(
    schema: cs.CoreSchema, root: str, references: CoreReferences | None = None
) -> cs.CoreSchema:
    """Return a copy of ``schema`` whose objects reject unknown keys at every level.

    ``references`` are ``schema``'s own, when the caller has them already.
    """
    if references is None:
        references = CoreReferences(schema)
    rewritten: cs.CoreSchema = _rewrite(schema, _Where(root, "", references))
    return rewritten


def reads_arguments_text(schema: Any) -> bool:
    """Whether a rewritten core schema has a check that reads the JSON text from the context.

    Only such a schema needs ``{ARGUMENTS_TEXT: text}`` passed when parsing: an integer
    (or a number literal) that a whole float may stand for, or a decimal sent as a number.
    """
    if isinstance(schema, list | tuple):
        return any(reads_arguments_text(item) for item in schema)
    if not isinstance(schema, dict):
        return False
    metadata = schema.get("metadata")
    if isinstance(metadata, dict) and metadata.get(_READS_TEXT) is True:
        return True
    return any(reads_arguments_text(value) for value in schema.values())


_CONTAINERS = frozenset({"list", "tuple", "set", "frozenset", "dict"})

_NESTED = (dict, list, tuple)
"""What may hold a core schema; any other value is copied as it is."""
_NOT_VALIDATED = frozenset({"metadata", "config", "cls"})
"""Keys whose values are no core schemas (JSON Schema hints, a class's settings, the class)."""


def fail_fast_everywhere(schema: Any) -> Any:
    """A copy of a (rewritten) core schema whose arrays and mappings stop at their first error.

    A payload with a hundred thousand wrong items is reported by its first problems;
    validating it once more this way finds them without building every error.
    """
    if isinstance(schema, list | tuple):
        return type(schema)(fail_fast_everywhere(item) for item in schema)
    if not isinstance(schema, dict):
        return schema
    copied = {key: fail_fast_everywhere(value) for key, value in schema.items()}
    if copied.get("type") in _CONTAINERS:
        copied["fail_fast"] = True
    return copied


def quick_schema(schema: Any) -> tuple[Any, bool]:
    """A copy of a rewritten core schema, for a validator that parsing tries first, and
    whether a check of the copy reads the JSON text (see ``reads_arguments_text``).

    Whatever value the copy accepts is the value the full schema gives; whatever it
    refuses, the full schema decides (and its errors are the ones reported). It differs
    from the full schema in three ways:

    - No wrapper widens what it accepts on every parse. ``3.0`` for an integer is rare,
      but its check is a Python call on every parse: the copy refuses whole floats.
      ``null`` for a field's default is a union's second choice, so that only ``null``
      reaches the function that gives the default. A wrapper stays where changing it
      could let the copy accept a payload differently: under a union (another choice
      might take the value), under a wrap validator (it may catch the refusal), under
      a default that swallows errors, in shared definitions (reached from anywhere),
      and a ``null`` wrapper whose inner schema might accept ``null`` through a
      validator of the author's.
    - Every node and every class's config is strict. Parsing passes ``strict=True``,
      which overrides them all; a validator built from the copy with a strict config
      behaves the same with no argument to read.
    - Arrays and mappings stop at their first error: the copy's errors are never shown.
    """
    readers: list[Any] = []
    return _quick(schema, True, readers), bool(readers)


def _quick(node: Any, narrow: bool, readers: list[Any]) -> Any:
    """``quick_schema`` of ``node``; each kept node whose check reads the text is added
    to ``readers``."""
    if isinstance(node, list | tuple):
        items = [_quick(item, narrow, readers) for item in node]
        return items if type(node) is list else type(node)(items)
    if not isinstance(node, dict):
        return node
    kind = node.get("type")
    if narrow:
        widens = _widening(node)
        if widens == _NULL_DEFAULT and _refuses_null(node["schema"]["schema"]):
            # The field's own schema (inside the function's nullable one) first, and
            # only what it refuses reaches the function: nothing but ``null`` then.
            fill = {"type": "function-after", "function": node["function"], "schema": _NONE}
            inner = _quick(node["schema"]["schema"], narrow, readers)
            return {"type": "union", "mode": "left_to_right", "choices": [inner, fill]}
        if widens == _INTEGRAL:
            inner = _quick(node["schema"], narrow, readers)
            return {**inner, "ref": node["ref"]} if "ref" in node else inner
        narrow = kind not in _ALTERNATIVES and (
            kind != "default" or node.get("on_error", "raise") == "raise"
        )
    copied = {
        key: _quick(value, narrow and not (kind == "definitions" and key == "definitions"), readers)
        if isinstance(value, _NESTED) and key not in _NOT_VALIDATED
        else value
        for key, value in node.items()
    }
    metadata = node.get("metadata")
    if isinstance(metadata, dict) and metadata.get(_READS_TEXT) is True:
        readers.append(node)
    if copied.get("strict") is False:
        copied["strict"] = True
    if isinstance(copied.get("config"), dict):
        copied["config"] = {**copied["config"], "strict": True}
    if kind in _CONTAINERS:
        copied["fail_fast"] = True
    return copied


_NONE = {"type": "none"}
_ALTERNATIVES = frozenset({"union", "function-wrap"})
"""Nodes where refusing a value in one place may lead to accepting it in another."""
_NULL_REFUSING = frozenset(
    {"str", "int", "bool", "float", "bytes", "list", "tuple", "dict", "typed-dict"}
)
"""Nodes that refuse JSON ``null`` and run no function of the author's on it."""


def _widening(schema: dict[str, Any]) -> Any:
    metadata = schema.get("metadata")
    return metadata.get(_WIDENS) if isinstance(metadata, dict) else None


def _refuses_null(schema: Any) -> bool:
    """Whether ``schema`` surely refuses ``null`` (``False`` when it cannot tell)."""
    if not isinstance(schema, dict):
        return False
    kind = schema.get("type")
    if kind in _NULL_REFUSING:
        return True
    if kind == "function-after" or _widening(schema) == _INTEGRAL:
        # An after-validator sees only what its schema accepted; the integer wrapper
        # passes ``null`` on unchanged.
        return _refuses_null(schema.get("schema"))
    if kind in ("dataclass", "model"):
        # A before-validator of the class sits between the node and its fields.
        fields = schema.get("schema")
        return (
            not schema.get("root_model")
            and isinstance(fields, dict)
            and fields.get("type") in ("dataclass-args", "model-fields")
        )
    return False


def _rewrite(node: Any, where: _Where) -> Any:
    if isinstance(node, list | tuple):
        # Tuples hold labelled union choices: ``(schema, label)``.
        items = [_rewrite(item, where) if isinstance(item, _NESTED) else item for item in node]
        return items if type(node) is list else type(node)(items)
    if not isinstance(node, dict):
        return node
    kind = node.get("type")
    if kind == "model":
        return _model_without_prebuilt(node, where)
    if kind == "dataclass":
        owner = where.at(node["cls"].__qualname__)
        _reject_unsupported_dataclass(node["cls"])
        rewritten = {
            key: _rewrite(value, owner)
            if isinstance(value, _NESTED) and key not in _NOT_VALIDATED
            else value
            for key, value in node.items()
        }
        # A dataclass schema with a generic origin never reuses the class's prebuilt
        # validator; pointing it at the class itself changes nothing else.
        rewritten["generic_origin"] = node["cls"]
        return rewritten
    _reject_unsupported_node(node, where)
    if kind == "default":
        return _null_means_default(node, where)
    if kind == "json-or-python":
        # Parsing always reads JSON: only the JSON side must be sendable. The Python
        # side of an abstract collection (``Sequence``) is an instance check.
        return {**node, "json_schema": _rewrite(node["json_schema"], where)}
    if kind in ("set", "frozenset"):
        _refuse_unhashable_items(node, where)
    if kind == "tagged-union" and callable(node.get("discriminator")):
        check_discriminator_reaches_every_choice(node, where.describe(), where.definitions)
    rewritten = {}
    for key, value in node.items():
        if key == "fields" and kind in ("model-fields", "typed-dict"):
            rewritten[key] = {name: _field(field, name, where) for name, field in value.items()}
        elif key == "fields" and kind == "dataclass-args":
            rewritten[key] = [_field(field, field["name"], where) for field in value]
        elif isinstance(value, _NESTED) and key not in _NOT_VALIDATED:
            rewritten[key] = _rewrite(value, where)
        else:
            rewritten[key] = value
    if kind in ("model-fields", "dataclass-args", "typed-dict"):
        rewritten["extra_behavior"] = "forbid"
    if kind == "union":
        rewritten["choices"] = _union_choices(node["choices"], rewritten["choices"], where)
    if kind in ("float", "decimal"):
        # JSON has no NaN or Infinity, and ``1e400`` would parse as infinity.
        rewritten["allow_inf_nan"] = False
    if kind == "int":
        return _integral_floats_allowed(rewritten)
    if kind in _TEXT_FORMATS:
        return _text_format_checked(rewritten, kind)
    if kind == "function-after" and node.get("function", {}).get("function") is IPv6Address:
        return _text_format_checked(rewritten, "ipv6")
    if kind == "literal":
        return _json_kinds_kept_apart(rewritten, rewritten["expected"])
    if kind == "enum":
        return _json_kinds_kept_apart(rewritten, [member.value for member in node["members"]])
    if kind in ("set", "frozenset"):
        return _repeats_refused(rewritten, set if kind == "set" else frozenset)
    return rewritten


def _field(field: dict[str, Any], name: str, where: _Where) -> Any:
    """Rewrite one field, refusing an alias that the JSON Schema cannot show."""
    at = where.at(where.owner, name)
    alias = field.get("validation_alias")
    if shown_name(name, alias) is None:
        raise PromptValidationError(
            f"{at.describe()}: validation alias {alias!r} reads a value nested in another "
            f"key, which the JSON Schema cannot show (it would show {name!r}, which parsing "
            "refuses); use a plain alias or AliasChoices with a plain name first"
        )
    if isinstance(alias, list):
        # The schema shows one name of an ``AliasChoices``: parsing reads that one only.
        field = {**field, "validation_alias": shown_name(name, alias)}
    return _rewrite(field, at)


def _integral_floats_allowed(node: dict[str, Any]) -> dict[str, Any]:
    """Accept ``3.0`` where an integer is expected, as JSON Schema's ``integer`` does.

    Strict parsing rejects every float; a float with a fractional part still fails.
    The float is a rounding of what was written, so the JSON text decides: ``1e-400``
    (read as ``0.0``) denotes no integer and is refused, and ``9007199254740993.0``
    (read as ``9007199254740992.0``) denotes ``9007199254740993``, which is what the
    field gets.
    """

    def integral_float_to_int(value: Any, info: cs.ValidationInfo) -> Any:
        if not (isinstance(value, float) and value.is_integer()):
            return value
        return _integer_written(value, info.context)

    wrapper = cs.with_info_before_validator_function(
        integral_float_to_int, node, metadata={_READS_TEXT: True, _WIDENS: _INTEGRAL}
    )
    return _wrapped(wrapper, node)


def _integer_written(value: float, context: Any) -> int:
    """The integer the JSON text wrote for the whole-number float ``value``; refuses a
    number written that is not an integer, or several that read as this same float."""
    written = _numbers_written(value, context)
    if not written:  # not from the text (a decoded mapping): the float is all there is
        return int(value)
    if len(written) > 1:
        raise PydanticCustomError(
            "int_ambiguous",
            "input should be an integer written without a fraction or exponent: "
            "different numbers of these arguments read as {rounded}, so which one this "
            "is is not known",
            {"rounded": int(value)},
        )
    (number,) = written
    if number != number.to_integral_value():
        raise PydanticCustomError(
            "int_lossy",
            "input should be an integer; the number sent is not exactly one "
            "(it only rounds to {rounded})",
            {"rounded": int(value)},
        )
    return int(number)


def _text_format_checked(node: dict[str, Any], kind: str) -> dict[str, Any]:
    """Refuse a string the JSON Schema's ``format`` (or pattern) does not allow.

    pydantic reads more than the format says; a model following the schema never
    sends the rest, and a model that does send it gets told the expected form. A
    string that has the form is converted by a lax copy of the node, since strict
    validation takes only instances once a function has seen the value.
    """
    constraint = node.get("tz_constraint")
    if kind in ("datetime", "time") and constraint is not None:
        kind = f"naive-{kind}" if constraint == "naive" else f"aware-{kind}"
    text_format = TEXT_FORMATS[kind]
    if kind == "ipv6":  # the node itself reads a string: keep it one
        lax = SchemaValidator(cs.str_schema())
    else:
        lax = SchemaValidator(
            cast(cs.CoreSchema, {**{k: v for k, v in node.items() if k != "ref"}, "strict": False})
        )
    takes_numbers = kind == "decimal"

    def formatted(value: Any, info: cs.ValidationInfo) -> Any:
        if isinstance(value, str):
            if text_format.pattern.fullmatch(value) is not None:
                return lax.validate_python(value)
        elif takes_numbers and isinstance(value, float):
            return lax.validate_python(_exact_decimal(value, info.context))
        elif takes_numbers and isinstance(value, int) and not isinstance(value, bool):
            return lax.validate_python(value)
        raise PydanticCustomError(
            "format_mismatch",
            "input should be {format}, such as {example}",
            {"format": text_format.name, "example": text_format.example},
        )

    metadata = {_READS_TEXT: True} if takes_numbers else None
    wrapper = cs.with_info_before_validator_function(formatted, node, metadata=metadata)
    return _wrapped(wrapper, node)


def _numbers_written(value: float, context: Any) -> set[Decimal]:
    """The exact numbers the JSON text in ``context`` wrote that parse as ``value`` (none
    when the payload came as a decoded mapping); read from the text once per parse."""
    if not (isinstance(context, dict) and ARGUMENTS_TEXT in context):
        return set()
    if _WRITTEN not in context:
        context[_WRITTEN] = written_numbers(context[ARGUMENTS_TEXT])
    found: set[Decimal] = context[_WRITTEN].get(value, set())
    return found


def _exact_decimal(value: float, context: Any) -> Any:
    """The number the JSON text wrote for a decimal, not its rounding to a float.

    ``0.1000000000000000000001`` parses as the float ``0.1``; the text has every digit.
    Two different numbers of one payload that round to the same float cannot be told
    apart: such a decimal must be sent as a string.
    """
    candidates = _numbers_written(value, context)
    if len(candidates) > 1:
        raise PydanticCustomError(
            "decimal_ambiguous",
            "input should be sent as a string: numbers of these arguments that differ "
            "round to the same float, so the digits of this one are not known",
        )
    return next(iter(candidates)) if candidates else value


def _refuse_unhashable_items(node: dict[str, Any], where: _Where) -> None:
    found = unhashable_items(node.get("items_schema"), where.definitions)
    if found is not None:
        raise PromptValidationError(
            f"{where.describe()}: a set cannot hold {found}, since they are not hashable, "
            "so no non-empty array would parse; use a list, or frozen items"
        )


def _wrapped(wrapper: Any, node: dict[str, Any]) -> dict[str, Any]:
    """``wrapper`` around ``node``, taking over its ref so references reach the wrapper."""
    result: dict[str, Any] = dict(wrapper)
    if "ref" in node:
        result["ref"] = node.pop("ref")
    return result


def _json_kind(value: Any) -> str | None:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    return None


def _json_kinds_kept_apart(node: dict[str, Any], expected: list[Any]) -> dict[str, Any]:
    """Match booleans only to booleans and numbers only to numbers, as JSON Schema's enum does.

    pydantic compares literal and enumeration values with Python equality, where
    ``True == 1 == 1.0``: ``true`` would become ``1`` (and ``1`` become ``True``).
    """
    typed = [(kind, value) for value in expected if (kind := _json_kind(value)) is not None]
    if not typed:
        return node  # no boolean or number to confuse: pydantic already refuses both
    allowed = _one_of(expected)
    kinds = {kind for kind, _ in typed}

    def same_json_kind(value: Any, info: cs.ValidationInfo) -> Any:
        kind = _json_kind(value)
        if kind is None:
            return value
        if isinstance(value, float) and value.is_integer():
            value = _integer_written(value, info.context)  # the number written, exactly
        for expected_kind, expected_value in typed:
            if kind == expected_kind and value == expected_value:
                # The declared value itself: pydantic would look ``1.0`` up among
                # values where ``1.0 == 1 == True`` and might return ``True``.
                return expected_value
        if kind in kinds:  # a value of an allowed kind, but not an allowed value
            raise PydanticCustomError(
                "literal_error", "Input should be {expected}", {"expected": allowed}
            )
        raise PydanticCustomError(
            "literal_error",
            "Input should be {expected}, not a {kind}",
            {"expected": allowed, "kind": kind},
        )

    wrapper = cs.with_info_before_validator_function(
        same_json_kind, node, metadata={_READS_TEXT: True}
    )
    return _wrapped(wrapper, node)


def _one_of(values: list[Any]) -> str:
    shown = list(dict.fromkeys(repr(value) for value in values))  # enum aliases repeat values
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} or {shown[-1]}"


def _repeats_refused(
    node: dict[str, Any], build: type[set[Any] | frozenset[Any]]
) -> dict[str, Any]:
    """Parse a set from an array whose items are distinct, as ``uniqueItems`` demands.

    pydantic would silently drop repeated items; the caller would never know that
    one of them was not taken. Items are compared after parsing.
    """
    as_list = {
        key: node[key] for key in ("items_schema", "min_length", "max_length") if key in node
    }

    def distinct(items: list[Any]) -> Any:
        first_index: dict[Any, int] = {}
        for index, item in enumerate(items):
            try:
                earlier = first_index.setdefault(item, index)
            except TypeError:
                raise PydanticCustomError(
                    "set_item_not_hashable", "Set item {index} is not hashable", {"index": index}
                ) from None
            if earlier != index:
                raise PydanticCustomError(
                    "set_repeated_item",
                    "Set items should be unique: item {index} repeats item {earlier}",
                    {"index": index, "earlier": earlier},
                )
        return build(items)

    return _wrapped(cs.no_info_after_validator_function(distinct, cs.list_schema(**as_list)), node)


def core_references(schema: Any) -> tuple[dict[str, str], dict[str, Any]]:
    """Map each model's and dataclass's core schema ref to its class name, and every
    ref to the schema it names."""
    names: dict[str, str] = {}
    definitions: dict[str, Any] = {}
    pending = [schema]
    while pending:
        node = pending.pop()
        if isinstance(node, list | tuple):
            pending.extend(node)
        elif isinstance(node, dict):
            if node.get("type") in ("model", "dataclass") and "ref" in node:
                names[node["ref"]] = node["cls"].__name__
            if isinstance(node.get("ref"), str):
                definitions[node["ref"]] = node
            pending.extend(value for key, value in node.items() if key not in ("cls", "metadata"))
    return names, definitions


def _union_choices(originals: list[Any], choices: list[Any], where: _Where) -> list[Any]:
    # Beside a float choice, ``2.0`` must stay a float as in pydantic: the int choice
    # keeps refusing floats, and the float choice already accepts what JSON Schema does.
    has_float = any(isinstance(o, dict) and o.get("type") == "float" for o in originals)
    return [
        _labelled_choice(
            original,
            choice["schema"] if has_float and _is_int(original) else choice,
            where.references,
        )
        for original, choice in zip(originals, choices, strict=True)
    ]


def _is_int(schema: Any) -> bool:
    return isinstance(schema, dict) and schema.get("type") == "int" and "ref" not in schema


def _labelled_choice(original: Any, choice: Any, references: CoreReferences) -> Any:
    """Label a union choice with its class name (or kind), as error locations show it.

    Rewritten choices would otherwise be named after wink's wrapper functions.
    """
    if isinstance(original, tuple):
        return choice
    kind = original.get("type")
    if kind in ("model", "dataclass"):
        return (choice, original["cls"].__name__)
    if kind == "definition-ref":
        ref = original["schema_ref"]
        return (choice, references.class_names.get(ref, ref))
    return (choice, str(kind))


def _null_means_default(node: dict[str, Any], where: _Where) -> dict[str, Any]:
    """Let ``null`` stand for a field's default where the field's type refuses ``null``.

    OpenAI's strict mode requires every property and makes optional ones nullable:
    a model then sends ``null`` to mean "use the default". The handler must get
    the declared default, not ``None``; a field whose type accepts ``null`` keeps it.
    """
    inner = _rewrite(node["schema"], where)
    rewritten = {key: value for key, value in node.items() if key != "schema"}
    if _accepts_none(inner):
        rewritten["schema"] = inner
        return rewritten
    if "default_factory" in node:
        factory = node["default_factory"]
        takes_data = bool(node.get("default_factory_takes_data"))

        def fill(value: Any, info: cs.ValidationInfo) -> Any:
            if value is not None:
                return value
            return factory(info.data) if takes_data else factory()

        rewritten["schema"] = cs.with_info_after_validator_function(
            fill, cs.nullable_schema(inner), metadata={_WIDENS: _NULL_DEFAULT}
        )
    else:
        default = node.get("default")

        def fill_default(value: Any) -> Any:
            return _copy_default(default) if value is None else value

        rewritten["schema"] = cs.no_info_after_validator_function(
            fill_default, cs.nullable_schema(inner), metadata={_WIDENS: _NULL_DEFAULT}
        )
    return rewritten


def _copy_default(default: Any) -> Any:
    # Mutable defaults are copied so that handlers never share one list or dict.
    if isinstance(default, list | dict | set):
        return type(default)(default)
    return default


def _accepts_none(schema: dict[str, Any]) -> bool:
    kind = schema.get("type")
    if kind in ("nullable", "none", "any"):
        return True
    if kind == "union":
        return any(
            _accepts_none(choice[0] if isinstance(choice, tuple) else choice)
            for choice in schema.get("choices", [])
        )
    if kind in ("function-after", "function-before", "function-wrap", "default"):
        inner = schema.get("schema")
        return isinstance(inner, dict) and _accepts_none(inner)
    if kind == "literal":
        return None in schema.get("expected", [])
    return False


class _ValidatedFields:
    """A stand-in instance holding a model's validated fields until the model is built.

    pydantic-core reuses a model class's own validator wherever the class appears,
    so a rewritten schema must not name the class; validating it as a model of this
    class instead keeps what only a model node carries: the class's config
    (``str_strip_whitespace``, ``str_max_length``, ``validate_default``...).
    """

    __pydantic_fields_set__: set[str]

    __slots__ = (
        "__dict__",
        "__pydantic_extra__",
        "__pydantic_fields_set__",
        "__pydantic_private__",
    )


_CONFIG_WINK_DECIDES = frozenset(
    {"extra_fields_behavior", "populate_by_name", "validate_by_name", "validate_by_alias"}
)


def _model_without_prebuilt(node: dict[str, Any], where: _Where) -> dict[str, Any]:
    """Validate a model's fields (or root) with a forbidding schema, then build the instance."""
    cls = node["cls"]
    is_root = bool(node.get("root_model"))
    # Unknown keys are refused by the rewritten fields schema, whatever the class says.
    # Unknown keys are forbidden here, and a key is accepted only by the name the JSON
    # Schema shows (the alias), so populating by field name is off too.
    config = {
        key: value
        for key, value in node.get("config", {}).items()
        if key not in _CONFIG_WINK_DECIDES
    }
    stand_in = cs.model_schema(
        _ValidatedFields,
        _rewrite(node["schema"], where.at(cls.__qualname__)),
        root_model=is_root,
        strict=node.get("strict"),
        config=cast(cs.CoreConfig, config),
    )
    replacement = cs.no_info_after_validator_function(_model_builder(cls, is_root), stand_in)
    if "ref" in node:
        replacement["ref"] = node["ref"]
    return dict(replacement)


def _model_builder(cls: Any, is_root: bool) -> Callable[[_ValidatedFields], Any]:
    def build(validated: _ValidatedFields) -> Any:
        values = validated.__dict__
        if is_root:
            return cls.model_construct(values["root"])
        return cls.model_construct(_fields_set=validated.__pydantic_fields_set__, **values)

    return build


def _reject_unsupported_node(node: dict[str, Any], where: _Where) -> None:
    kind = node.get("type")
    if kind == "callable":
        raise PromptValidationError(
            f"{where.describe()}: a callable cannot be sent or received as JSON"
        )
    if kind == "is-instance":
        name = getattr(node.get("cls"), "__qualname__", repr(node.get("cls")))
        raise PromptValidationError(
            f"{where.describe()}: arbitrary type {name} cannot be sent or received as JSON"
        )
    if kind == "dict":
        keys = node.get("keys_schema")
        if keys is not None and keys.get("type") not in _STRING_KEY_TYPES:
            raise PromptValidationError(
                f"{where.describe()}: mapping keys must be strings in JSON, not {keys.get('type')}"
            )


def _reject_unsupported_dataclass(cls: type[Any]) -> None:
    initvar_kind = getattr(dataclasses, "_FIELD_INITVAR", None)
    for name, field in getattr(cls, "__dataclass_fields__", {}).items():
        if initvar_kind is not None and getattr(field, "_field_type", None) is initvar_kind:
            raise PromptValidationError(
                f"{cls.__qualname__}.{name}: InitVar fields do not round-trip through JSON"
            )
    for field in dataclasses.fields(cls):
        if not field.init:
            raise PromptValidationError(
                f"{cls.__qualname__}.{field.name}: field(init=False) does not round-trip "
                "through JSON"
            )
