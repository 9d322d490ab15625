"""JSON Schema (Draft 2020-12) generation for contracts.

pydantic does most of the work; this module makes the output agree with what
parsing enforces and with what models read best: no generated titles, field
descriptions from every place users write them (attribute docstrings included),
``additionalProperties: false`` on every object that has named properties, the
tag of a discriminated union required in each of its branches, and a facade check
for dataclasses.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Callable
from typing import Any

from pydantic.json_schema import GenerateJsonSchema, JsonSchemaMode
from pydantic_core import core_schema as cs

from wink.contract._core_schema import CoreReferences
from wink.contract._discriminators import tag_property
from wink.contract._docstrings import describe_from_docstrings
from wink.contract._formats import (
    DECIMAL_PATTERN,
    DURATION_PATTERN,
    NAIVE_DATETIME_PATTERN,
    NAIVE_TIME_PATTERN,
    scheme_pattern,
    uuid_pattern,
)
from wink.contract.facade import EMPTY_CONTAINER_FACTORIES, check_dataclass_facade
from wink.contract.walk import JsonSchema, iter_schema_nodes, map_schema

__all__ = [
    "DRAFT_2020_12",
    "fields_without_default",
    "generate_json_schema",
    "normalise_schema",
]

DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"


_JSON_SCALARS = frozenset({str, int, bool, type(None)})
_EMPTY_CONTAINERS = frozenset({list, tuple, set, frozenset, dict})

_method_names: dict[type[GenerateJsonSchema], dict[Any, str]] = {}
"""Generator class to core schema type to the name of the method that generates its schema."""


class _MethodTable(dict[Any, Callable[[Any], JsonSchema]]):
    """Core schema type to a generator's method for it, each looked up on first use.

    pydantic binds a method for each of the ~70 core schema types to every generator
    it builds; a type's schema uses a few of them.
    """

    __slots__ = ("_generator", "_names")

    def __init__(self, generator: GenerateJsonSchema, names: dict[Any, str]) -> None:
        super().__init__()
        self._generator = generator
        self._names = names

    def __missing__(self, kind: Any) -> Callable[[Any], JsonSchema]:
        method: Callable[[Any], JsonSchema] = getattr(self._generator, self._names[kind])
        self[kind] = method
        return method


class _WinkJsonSchema(GenerateJsonSchema):
    """pydantic's generator with wink's rules for fields and dataclasses."""

    def __init__(self, references: CoreReferences) -> None:
        super().__init__()
        self.references = references
        """The refs of the core schema being generated, to sample union branches."""

    def build_schema_type_to_method(self) -> dict[Any, Callable[[Any], JsonSchema]]:
        names = _method_names.get(type(self))
        if names is None:
            # pydantic's own table, once per class: it checks that every type has a method.
            methods = super().build_schema_type_to_method()
            names = {kind: method.__name__ for kind, method in methods.items()}
            _method_names[type(self)] = names
        return _MethodTable(self, names)

    def encode_default(self, dft: Any) -> Any:
        # pydantic builds a TypeAdapter to encode each default, which costs more than
        # the rest of the field's schema; a JSON scalar or an empty container is its own
        # encoding (a float only when finite: the config decides how others are written).
        kind = type(dft)
        if kind in _JSON_SCALARS or (kind is float and math.isfinite(dft)):
            return dft
        if kind in _EMPTY_CONTAINERS and not dft:
            return {} if kind is dict else []
        return super().encode_default(dft)

    def tagged_union_schema(self, schema: cs.TaggedUnionSchema) -> JsonSchema:
        json_schema = super().tagged_union_schema(schema)
        if callable(schema["discriminator"]) and "discriminator" not in json_schema:
            # Parsing needs the tag a callable reads: name its key, so that each branch
            # requires it (``_require_tags``) as for a discriminator given by name.
            key = tag_property(schema, self.references.definitions)
            if key is not None and "oneOf" in json_schema:
                json_schema["discriminator"] = {"propertyName": key}
        return json_schema

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def get_default_value(self, schema: cs.WithDefaultSchema) -> Any:
        # An empty-container factory has one obvious default worth showing; other
        # factories (``uuid4``, ``now``) would make the schema differ on every run.
        factory = schema.get("default_factory")
        if factory in EMPTY_CONTAINER_FACTORIES and not schema.get("default_factory_takes_data"):
            return factory()
        return super().get_default_value(schema)

    def decimal_schema(self, schema: cs.DecimalSchema) -> JsonSchema:
        json_schema = super().decimal_schema(schema)
        if self.mode == "validation":
            # Parsing reads a decimal string only in the form of a JSON number.
            for branch in json_schema.get("anyOf", ()):
                if branch.get("type") == "string":
                    branch["pattern"] = DECIMAL_PATTERN
        return json_schema

    def url_schema(self, schema: cs.UrlSchema) -> JsonSchema:
        json_schema = super().url_schema(schema)
        schemes = schema.get("allowed_schemes")
        if schemes:
            # ``format: uri`` allows any scheme; parsing allows these only (any case).
            json_schema["pattern"] = scheme_pattern(schemes)
        return json_schema

    def datetime_schema(self, schema: cs.DatetimeSchema) -> JsonSchema:
        return _zoned(super().datetime_schema(schema), schema, NAIVE_DATETIME_PATTERN)

    def timedelta_schema(self, schema: cs.TimedeltaSchema) -> JsonSchema:
        json_schema = super().timedelta_schema(schema)
        if json_schema.get("format") == "duration":
            # A timedelta may be negative or hold microseconds, which RFC 3339's
            # ``duration`` cannot say: a pattern says what is written and read.
            json_schema.pop("format")
            json_schema["pattern"] = DURATION_PATTERN
        return json_schema

    def time_schema(self, schema: cs.TimeSchema) -> JsonSchema:
        return _zoned(super().time_schema(schema), schema, NAIVE_TIME_PATTERN)

    def dataclass_schema(self, schema: cs.DataclassSchema) -> JsonSchema:
        json_schema = super().dataclass_schema(schema)
        cls = schema["cls"]
        properties = json_schema.get("properties", {})
        for field in dataclasses.fields(cls):
            description = field.metadata.get("description")
            if isinstance(description, str) and field.name in properties:
                properties[field.name].setdefault("description", description)
        describe_from_docstrings(json_schema, cls)
        check_dataclass_facade(cls, schema, json_schema, self.mode)
        return json_schema

    def model_schema(self, schema: cs.ModelSchema) -> JsonSchema:
        json_schema = super().model_schema(schema)
        describe_from_docstrings(json_schema, schema["cls"])
        return json_schema

    def typed_dict_schema(self, schema: cs.TypedDictSchema) -> JsonSchema:
        json_schema = super().typed_dict_schema(schema)
        if "cls" in schema:
            describe_from_docstrings(json_schema, schema["cls"])
        return json_schema


def _zoned(json_schema: JsonSchema, schema: Any, naive_pattern: str) -> JsonSchema:
    """A date-time's (or time's) schema as parsing reads it, by its time-zone constraint.

    RFC 3339's ``date-time`` and ``time`` always carry a UTC offset: a value that must
    not have one is shown by a pattern, and one that may or may not have one by both.
    """
    constraint = schema.get("tz_constraint")
    naive: JsonSchema = {"type": "string", "pattern": naive_pattern}
    if constraint == "naive":
        return naive
    if constraint is None:
        return {"anyOf": [json_schema, naive]}
    return json_schema


class _MarkingJsonSchema(_WinkJsonSchema):
    """Marks each property that may be left out and has no default (``_NO_DEFAULT``)."""

    def __init__(self, references: CoreReferences) -> None:
        super().__init__(references)
        self._totals: list[bool] = []

    def typed_dict_schema(self, schema: cs.TypedDictSchema) -> JsonSchema:
        self._totals.append(schema.get("total", True))
        try:
            return super().typed_dict_schema(schema)
        finally:
            self._totals.pop()

    def typed_dict_field_schema(self, schema: cs.TypedDictField) -> JsonSchema:
        json_schema = super().typed_dict_field_schema(schema)
        total = self._totals[-1] if self._totals else True
        if not self.field_is_required(schema, total) and schema["schema"]["type"] != "default":
            json_schema = {**json_schema, _NO_DEFAULT: True}
        return json_schema


_NO_DEFAULT = "x-wink-no-default"
"""Marker of ``_MarkingJsonSchema``; never left in a schema that is returned."""


def fields_without_default(tp: Any) -> frozenset[str]:
    """JSON pointers, into the validation schema of ``tp``, of the properties a caller
    may leave out that have no default (``TypedDict`` ``NotRequired`` keys).

    The schema cannot tell them from fields whose default it does not show (a
    ``default_factory``): both are optional without a ``default``.
    """
    if tp is None or tp is type(None):
        return frozenset()
    from wink.contract._contract import compile_contract  # which imports this module

    adapter = compile_contract(tp)._adapter  # the type's schema as compiled, not built again
    assert adapter is not None  # only the contract of None has no adapter
    core = adapter.core_schema
    marked = _MarkingJsonSchema(CoreReferences(core)).generate(core, mode="validation")
    return frozenset(
        f"{pointer}/properties/{name}"
        for pointer, node in iter_schema_nodes(marked)
        for name, prop in (node.get("properties") or {}).items()
        if isinstance(prop, dict) and prop.get(_NO_DEFAULT)
    )


def generate_json_schema(
    core: cs.CoreSchema, mode: JsonSchemaMode, references: CoreReferences | None = None
) -> JsonSchema:
    """Generate the normalised JSON Schema of a core schema.

    ``references`` are ``core``'s own, when the caller has them already.
    """
    generator = _WinkJsonSchema(CoreReferences(core) if references is None else references)
    generated = generator.generate(core, mode=mode)
    tagged = False

    def normalise(node: JsonSchema) -> JsonSchema:
        nonlocal tagged
        tagged = tagged or "discriminator" in node
        return _normalise_node(node)

    normalised = map_schema(generated, normalise)
    # Only a discriminated union has tags to require: most schemas have none to look for.
    return _require_tags(normalised) if tagged else normalised


def normalise_schema(schema: JsonSchema) -> JsonSchema:
    """Drop generated titles and close every object that lists its properties or key patterns."""
    return map_schema(schema, _normalise_node)


_UUID_VERSIONS = {f"uuid{version}": version for version in range(1, 9)}


def _normalise_node(node: JsonSchema) -> JsonSchema:
    node.pop("title", None)
    fmt = node.get("format")
    version = _UUID_VERSIONS.get(fmt) if isinstance(fmt, str) else None
    if version is not None:
        # ``uuid4`` is no JSON Schema format: the version is said by a pattern instead.
        node["format"] = "uuid"
        node["pattern"] = uuid_pattern(version)
    if "properties" in node or "patternProperties" in node:
        # Parsing forbids unknown keys everywhere, even for ``extra="allow"`` models,
        # and a mapping with patterned keys refuses keys that match no pattern.
        node["additionalProperties"] = False
    return node


def _require_tags(schema: JsonSchema) -> JsonSchema:
    """List each discriminated union's tag as required in every branch, in place.

    Parsing a discriminated union reads the tag before anything else, so a branch
    whose tag has a default (``kind: Literal["cat"] = "cat"``) still needs it sent.
    A branch's definition is changed only when every reference to it is such a
    branch; otherwise the branch says ``required`` beside its ``$ref``.
    """
    nodes = [node for _, node in iter_schema_nodes(schema)]
    references = Counter(node["$ref"] for node in nodes if isinstance(node.get("$ref"), str))
    branches: list[tuple[JsonSchema, str]] = []
    for node in nodes:
        discriminator = node.get("discriminator")
        tag = discriminator.get("propertyName") if isinstance(discriminator, dict) else None
        if isinstance(tag, str):
            branches.extend((b, tag) for b in node.get("oneOf", ()) if isinstance(b, dict))
    as_branch = Counter(branch["$ref"] for branch, _ in branches if "$ref" in branch)
    definitions = schema.get("$defs", {})
    for branch, tag in branches:
        ref = branch.get("$ref")
        if not isinstance(ref, str):
            _require(branch, tag)
        elif as_branch[ref] == references[ref] and ref.startswith("#/$defs/"):
            _require(definitions.get(ref.removeprefix("#/$defs/"), {}), tag)
        elif tag not in branch.get("required", ()):
            branch["required"] = [*branch.get("required", ()), tag]
    return schema


def _require(node: JsonSchema, name: str) -> None:
    """Add ``name`` to ``node``'s ``required``, kept in property order, right after them."""
    properties = node.get("properties")
    if not isinstance(properties, dict) or name not in properties:
        return
    wanted = {*node.get("required", ()), name}
    required = [key for key in properties if key in wanted]
    rebuilt = {}
    for key, value in node.items():
        if key != "required":
            rebuilt[key] = value
        if key == "properties":
            rebuilt["required"] = required
    node.clear()
    node.update(rebuilt)
