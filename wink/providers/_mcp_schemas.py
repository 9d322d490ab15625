"""Contract types whose JSON Schema is given: the tools another MCP server lists.

A ``Tool`` compiles its params and result types into contracts; an imported tool
has no Python types, only the ``inputSchema`` (and ``outputSchema``) its server
lists. ``schema_document_type`` makes a type for such a schema: a ``dict``
subclass whose pydantic schema is a plain validator checking the decoded JSON with
``jsonschema-rs`` (Draft 2020-12), and whose JSON Schema is the server's. The tool
is then an ordinary ``Tool``: the executor parses with it, the provider dialects
rewrite its schema, ``wink schemas`` exports it.

The schema checked is the one the model is shown: the server's, as wink states
every schema (generated titles dropped, each object that lists its properties
closed to others), so a key the model was told is unknown is refused here too,
never sent. Schemas whose meaning closing would change are refused at import
(see ``check_imported_schema``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic_core import PydanticCustomError, ValidationError
from pydantic_core import core_schema as cs

from wink.contract.conformance import SchemaChecker, check_schema, schema_checker
from wink.contract.frozen import freeze
from wink.contract.messages import short_repr
from wink.contract.schema import normalise_schema
from wink.contract.walk import JsonSchema, iter_schema_nodes
from wink.errors import PromptValidationError
from wink.providers._strict import accepts_null

__all__ = ["JsonSchemaDocument", "check_imported_schema", "schema_document_type"]

_MAX_SCHEMA_BYTES = 256 * 1024
"""A listed schema larger than this is refused: it is shown to the model with every call."""


class JsonSchemaDocument(dict[str, Any]):
    """A JSON object checked against the schema of its class (see ``schema_document_type``).

    Handlers of imported tools receive their arguments as one, and a tool with an
    ``outputSchema`` returns its ``structuredContent`` as one.
    """

    json_schema: ClassVar[JsonSchema] = {}
    """The schema instances are checked against: the server's, as wink states it."""
    subject: ClassVar[str] = "a JSON object"
    """What the schema describes, in the user's words (``arguments of tool 'x'``)."""

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> cs.CoreSchema:
        """A plain validator: the decoded JSON checked by ``jsonschema-rs``, then wrapped."""
        checker = schema_checker(cls.json_schema)
        return cs.no_info_plain_validator_function(
            _checked(cls, checker), serialization=cs.plain_serializer_function_ser_schema(dict)
        )

    @classmethod
    def __get_pydantic_json_schema__(cls, core: Any, handler: GetJsonSchemaHandler) -> Any:
        """The given schema, in both modes (a document is written as it was read)."""
        return _thawed(cls.json_schema)


def _checked(cls: type[JsonSchemaDocument], checker: SchemaChecker) -> Any:
    is_valid = checker.is_valid
    defaulted = _defaulted_fields(cls.json_schema)

    def check(value: Any) -> JsonSchemaDocument:
        if defaulted and isinstance(value, dict):
            value = _without_null_defaults(value, defaulted)
        if isinstance(value, dict) and is_valid(value):
            return cls(value)
        # In path order, as pydantic reports a type's problems (fields before their items).
        problems = sorted(_line_errors(checker, value), key=lambda line: _sort_key(line["loc"]))
        raise ValidationError.from_exception_data(cls.__name__, problems)

    return check


_Defaulted = dict[str, "_Defaulted | None"]
"""Per property: ``None`` when ``null`` stands for its default, else the same for its
own properties."""


def _defaulted_fields(schema: Any) -> _Defaulted:
    """Where ``null`` stands for a default in documents of ``schema``.

    Every dialect shows a property with a default as also taking ``null`` (OpenAI's
    strict mode requires every property, and a model sends ``null`` for "the
    default"), as wink's own contracts accept it. A server's schema refuses that
    ``null``; dropping the key lets the server apply its own default.
    """
    found: _Defaulted = {}
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    if not isinstance(properties, Mapping):
        return found
    for name, prop in properties.items():
        if not isinstance(prop, Mapping):
            continue
        # Thawed: ``accepts_null`` reads choices as plain dicts, as dialects emit them.
        if "default" in prop and not accepts_null(_thawed(prop)):
            found[name] = None
            continue
        nested = _defaulted_fields(prop)
        if nested:
            found[name] = nested
    return found


def _without_null_defaults(value: dict[str, Any], defaulted: _Defaulted) -> dict[str, Any]:
    """A copy of ``value`` without the ``null`` keys that stand for their defaults, at any depth."""
    kept = dict(value)
    for name, nested in defaulted.items():
        item = kept.get(name)
        if nested is None and name in kept and item is None:
            del kept[name]
        elif nested is not None and isinstance(item, dict):
            kept[name] = _without_null_defaults(item, nested)
    return kept


def _sort_key(location: tuple[Any, ...]) -> tuple[tuple[int, str], ...]:
    return tuple((0, f"{part:020d}") if isinstance(part, int) else (1, part) for part in location)


def _line_errors(checker: SchemaChecker, value: Any) -> Iterator[Any]:
    """pydantic's line errors for ``value``'s problems, each at its JSON path."""
    found = False
    for error in checker.iter_errors(value):
        found = True
        path = tuple(error.absolute_path)
        instance = error.instance
        # A missing or unknown key is reported as pydantic reports them, at the key's
        # own path, so that wink's messages say it (and list the allowed names) alike.
        if error.validator == "required" and isinstance(instance, dict):
            missing = _missing_property(error.message)
            if missing is not None:
                yield {"type": "missing", "loc": (*path, missing), "input": instance}
                continue
        if error.validator == "additionalProperties" and isinstance(instance, dict):
            schema = error.schema if isinstance(error.schema, dict) else {}
            listed = schema.get("properties", {})
            unknown = [key for key in instance if key not in listed]
            if unknown and "patternProperties" not in schema:
                for key in unknown:
                    yield {"type": "extra_forbidden", "loc": (*path, key), "input": instance[key]}
                continue
        reason = _reason(error.validator, error.validator_value, instance, error.message)
        yield {
            "type": PydanticCustomError("json_schema", "{reason}", {"reason": reason}),
            "loc": path,
            "input": error.instance,
        }
    if not found:  # a mapping subclass the Rust checker does not read: say what was sent
        reason = f"expected a JSON object (got {short_repr(value)})"
        yield {
            "type": PydanticCustomError("json_schema", "{reason}", {"reason": reason}),
            "loc": (),
            "input": value,
        }


_JSON_TYPES = {
    "object": "an object",
    "array": "an array",
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "null": "null",
}
_QUOTED = re.compile(r"^'((?:[^'\\]|\\.)*)' is a required property$")


def _reason(keyword: Any, expected: Any, instance: Any, message: str) -> str:
    """What was wrong, in JSON words; the value sent is added by wink's messages."""
    if keyword == "type":
        kinds = expected if isinstance(expected, list) else [expected]
        return "expected " + " or ".join(_JSON_TYPES.get(str(kind), str(kind)) for kind in kinds)
    if keyword == "enum" and isinstance(expected, list):
        return "expected one of " + ", ".join(short_repr(item) for item in expected[:10])
    if keyword == "const":
        return f"expected {short_repr(expected)}"
    # The validator's own words name Python values; they are bounded like any text here.
    return message if len(message) <= 200 else f"{message[:197]}..."


def _missing_property(message: str) -> str | None:
    found = _QUOTED.match(message)
    return None if found is None else found.group(1)


def _thawed(value: Any) -> Any:
    """A mutable copy: pydantic's generator edits the schema it is handed."""
    if isinstance(value, Mapping):
        return {key: _thawed(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_thawed(item) for item in value]
    return value


def check_imported_schema(schema: object, subject: str) -> JsonSchema:
    """``schema`` as wink states it, or ``PromptValidationError`` saying why it cannot be used.

    Refused: a schema that is not an object schema or not valid Draft 2020-12; a
    ``$ref`` outside the document (it would be fetched, and could change under the
    contract); an object listing its properties whose ``additionalProperties`` is not
    ``false`` or absent, and ``allOf`` over objects that list properties (closing
    each object, as wink does, would refuse what the server accepts).
    """
    if not isinstance(schema, Mapping):
        raise PromptValidationError(
            f"{subject}: expected a JSON Schema object, got {short_repr(schema)}"
        )
    size = len(repr(schema))
    if size > _MAX_SCHEMA_BYTES:
        raise PromptValidationError(
            f"{subject}: the schema is about {size:,} characters, over the limit of "
            f"{_MAX_SCHEMA_BYTES:,}"
        )
    document = _thawed(schema)
    try:
        check_schema(document, subject)
    except PromptValidationError as error:
        message = str(error).replace("the emitted JSON Schema", "the schema")
        raise PromptValidationError(message) from None
    if document.get("type") != "object":
        raise PromptValidationError(
            f'{subject}: the schema must describe an object ("type": "object" at the root), '
            f"got type {short_repr(document.get('type'))}"
        )
    for pointer, node in iter_schema_nodes(document, ""):
        reference = node.get("$ref")
        if isinstance(reference, str) and not reference.startswith("#"):
            raise PromptValidationError(
                f"{subject}: {pointer or '<root>'}: $ref {short_repr(reference)} points outside "
                'the schema; only references within it ("#/...") are followed'
            )
        lists_properties = "properties" in node or "patternProperties" in node
        extra = node.get("additionalProperties", False)
        if lists_properties and extra is not False:
            raise PromptValidationError(
                f"{subject}: {pointer or '<root>'}: an object that lists its properties and "
                f"allows others (additionalProperties: {short_repr(extra)}) cannot be stated as "
                "wink states objects (closed to unlisted keys)"
            )
        branches = node.get("allOf")
        if isinstance(branches, list) and any(
            isinstance(branch, Mapping) and "properties" in branch for branch in branches
        ):
            raise PromptValidationError(
                f"{subject}: {pointer or '<root>'}: allOf over objects that list properties "
                "cannot be stated as wink states objects (each closed to the others' keys)"
            )
    normalised: JsonSchema = freeze(normalise_schema(document))
    return normalised


_types: dict[tuple[str, str, str], type[JsonSchemaDocument]] = {}
"""Types already made, by name, subject and schema: re-importing a server reuses them
(and so the contracts compiled for them)."""


def schema_document_type(name: str, schema: JsonSchema, subject: str) -> type[JsonSchemaDocument]:
    """A ``JsonSchemaDocument`` subclass named ``name`` for ``schema`` (already checked by
    ``check_imported_schema``), made once per name, subject and schema."""
    import json

    key = (name, subject, json.dumps(schema, sort_keys=True))
    made = _types.get(key)
    if made is None:
        made = type(name, (JsonSchemaDocument,), {"json_schema": schema, "subject": subject})
        made.__module__ = __name__
        made = _types.setdefault(key, made)
    return made
