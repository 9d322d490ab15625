"""Strict (grammar-constrained) tool schemas: one rewrite, parameterised by a dialect's rules.

OpenAI's strict mode and Anthropic's strict tool use both compile the schema
into a grammar and accept only a subset of JSON Schema. The rewrite:

- closes every object (``additionalProperties: false``, including ``$defs``);
- requires a property that admits one value (a ``const`` or one-value ``enum``,
  such as a union's tag) and has a default: the default can only be that value,
  and a discriminated union needs its tag sent;
- for OpenAI, requires every property and makes the other optional ones
  nullable with their defaults dropped (the contract turns ``null`` back into
  the declared default, see ``wink.contract._core_schema``); a dropped default
  is said in the field's description (``Default: "normal".``), so the model
  knows what ``null`` stands for. An optional
  property without a default (a ``TypedDict`` ``NotRequired`` key) cannot be
  required faithfully, since ``null`` is not "left out": a loss, or a
  ``ProviderSchemaError`` when the field rejects ``null``;
- renames ``oneOf`` to ``anyOf`` (pydantic's discriminated unions have disjoint
  branches, so both mean the same) and drops the ``discriminator`` annotation;
- wraps a ``$ref`` that has sibling keywords as ``{"anyOf": [{"$ref": ...}], ...}``
  (a ``$ref`` must stand alone, and ``allOf`` is not supported);
- moves keywords the dialect cannot enforce into the description, recording
  each assertion it loses, so ``strict="auto"`` can refuse a lossy rewrite.

What no rewrite can express raises ``ProviderSchemaError`` naming tool and
field: free-form mappings (``dict[str, X]``), ``Any``, bare ``list``, ``allOf``
of several schemas, and (where the dialect says so) recursive types.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, NamedTuple, NoReturn

from wink.contract.frozen import FrozenDict, FrozenList, freeze
from wink.contract.walk import (
    ONE_SCHEMA,
    SCHEMA_LIST,
    SCHEMA_MAP,
    JsonSchema,
    iter_schema_nodes,
)
from wink.providers._describe import describe_moved, readable_json, widen_tuple
from wink.providers._errors import ProviderSchemaError
from wink.providers._fields import field_path
from wink.providers._inline import object_root

__all__ = [
    "Figures",
    "StrictRules",
    "StrictSchema",
    "accepts_null",
    "make_strict",
    "pattern_problem",
]

# Keywords every strict dialect keeps: the structure itself.
_STRUCTURE = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "anyOf",
        "$ref",
        "$defs",
        "enum",
        "const",
        "description",
        "title",
    }
)
_STRUCTURE_OR_DEFAULT = _STRUCTURE | {"default"}
# Keywords that only annotate: moving them into the description loses nothing.
_ANNOTATIONS = frozenset(
    {
        "format",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "$comment",
        "contentEncoding",
        "contentMediaType",
        "$schema",
        "$id",
    }
)
# The keywords of an object whose rewrite is only closing it.
_PLAIN_OBJECT = frozenset(
    {"type", "properties", "required", "additionalProperties", "description", "title", "$defs"}
)
# Keywords that can let ``null`` in beside ``type``.
_CHOICES = frozenset({"const", "enum", "anyOf", "oneOf"})
# Keywords whose value holds schemas.
_SUBSCHEMA_KEYS = ONE_SCHEMA | SCHEMA_LIST | SCHEMA_MAP
# Keywords a leaf may carry whatever the dialect: a node with only these (and a scalar
# type) comes out of the rewrite as it went in, unless its format or pattern moves,
# or its default goes (into the description).
_LEAF = frozenset({"type", "enum", "const", "description", "title", "format", "pattern", "default"})
# A node with none of these keywords accepts any JSON value.
_TYPED = frozenset({"type", "anyOf", "oneOf", "allOf", "$ref", "enum", "const"})


@dataclass(frozen=True, slots=True)
class StrictRules:
    """What one dialect's strict mode accepts."""

    dialect: str
    """Named in error messages, e.g. ``"OpenAI strict mode"``."""
    kept: frozenset[str]
    """Keywords beyond the structure the dialect enforces, kept in place."""
    formats: frozenset[str]
    """String formats the dialect enforces; others move into the description."""
    require_every_property: bool
    """Every property must be listed in ``required`` (optional ones become nullable)."""
    keep_defaults: bool
    """Whether ``default`` may stay (otherwise it is dropped)."""
    allow_recursion: bool
    """Whether a type may refer to itself."""
    min_items: frozenset[int] | None = None
    """The only ``minItems`` values allowed, or ``None`` for any value."""
    leaf_keys: frozenset[str] = field(init=False, repr=False, compare=False)
    """The keywords of a leaf the rewrite keeps in place, or drops (``default``) without
    a loss; ``format`` and ``pattern`` only for some values, checked per node."""
    kept_leaf_keys: frozenset[str] = field(init=False, repr=False, compare=False)
    """The keywords of a leaf the rewrite keeps as it is, whatever their values, with
    nothing to count: ``leaf_keys`` but choices, ``format``, ``pattern`` and ``default``."""

    def __post_init__(self) -> None:
        leaf_keys = _LEAF | (self.kept - _SUBSCHEMA_KEYS - {"minItems"})
        object.__setattr__(self, "leaf_keys", leaf_keys)
        object.__setattr__(
            self, "kept_leaf_keys", leaf_keys - {"enum", "const", "format", "pattern", "default"}
        )


@dataclass(slots=True)
class Figures:
    """What strict dialects limit, counted over the schema the rewrite read.

    The rewrite adds no property, enum value, name or level of nesting the input
    lacks (it drops, merges, moves into descriptions and wraps), so each figure is
    at least the strict schema's own: where these figures are within a dialect's
    limits, the strict schema is too, and need not be counted again.
    """

    properties: int = 0
    """Properties of every object."""
    enum_values: int = 0
    """Values of every ``enum``."""
    characters: int = 0
    """Characters of property names, ``$defs`` names, and string enum and const values."""
    depth: int = 0
    """Most objects on one path from the root (``$defs`` included), an object without
    properties too (the rewrite gives it an empty ``properties``)."""
    longest_enum: int = 0
    """Values of the longest ``enum``."""
    widest_enum: int = 0
    """Characters of the string values of the ``enum`` whose values have the most."""

    def count_choices(self, node: JsonSchema) -> None:
        """Count the ``enum`` and ``const`` of ``node``."""
        enum = node.get("enum")
        if isinstance(enum, list):
            values = len(enum)
            characters = sum([len(value) for value in enum if isinstance(value, str)])
            self.enum_values += values
            self.characters += characters
            if values > self.longest_enum:
                self.longest_enum = values
            if characters > self.widest_enum:
                self.widest_enum = characters
        const = node.get("const")
        if isinstance(const, str):
            self.characters += len(const)


class StrictSchema(NamedTuple):
    """A strict schema, and the assertions the rewrite could not keep (read-only: a tuple,
    cheaper to build than a frozen dataclass)."""

    schema: JsonSchema
    """Read-only (``wink.contract.frozen``): it shares the input's unchanged parts."""
    losses: tuple[str, ...]
    """One line per lost assertion, e.g. ``url: minLength moved into the description``."""
    figures: Figures
    """Counted over the input as it was read: bounds of the strict schema's figures."""


def make_strict(
    schema: JsonSchema,
    rules: StrictRules,
    tool_name: str,
    without_default: Callable[[], frozenset[str]] = frozenset,
) -> StrictSchema:
    """Rewrite a tool's params schema for ``rules``; raise what cannot be made strict.

    ``without_default`` gives the JSON pointers (into ``schema``) of the optional
    properties that have no default (``wink.contract.schema.fields_without_default``);
    it is called only if an optional property shows no ``default``.
    """
    root = object_root(schema, tool_name, rules.dialect)
    walk = _Walk(schema, rules, f"tool {tool_name!r}", without_default)
    if "$defs" in root:
        walk.figures.characters = sum(map(len, root["$defs"]))
    made = walk.strict(root, "#", "", 0)
    if not rules.allow_recursion:
        _check_not_recursive(root, rules, walk.subject)
    return StrictSchema(made, (*walk.default_losses, *walk.rewrite_losses), walk.figures)


class _Walk:
    """One strict rewrite: one walk of a schema, where each node is checked before its
    children (so the first problem in document order is the one raised) and rewritten
    after them.

    An object rather than closures: closures calling each other would form a cycle per
    rewrite, left for the garbage collector to find.
    """

    __slots__ = (
        "default_losses",
        "figures",
        "formats",
        "found",
        "fuse",
        "keep_defaults",
        "keep_patterns",
        "leaf_keys",
        "require_every_property",
        "rewrite_losses",
        "rules",
        "schema",
        "subject",
        "without_default",
    )

    def __init__(
        self,
        schema: JsonSchema,
        rules: StrictRules,
        subject: str,
        without_default: Callable[[], frozenset[str]],
    ) -> None:
        self.schema = schema
        self.rules = rules
        self.subject = subject
        self.without_default = without_default
        self.found: frozenset[str] | None = None
        self.default_losses: list[str] = []
        self.rewrite_losses: list[str] = []
        self.figures = Figures()
        self.leaf_keys = rules.leaf_keys
        self.formats = rules.formats
        self.keep_patterns = "pattern" in rules.kept
        self.keep_defaults = rules.keep_defaults
        self.require_every_property = rules.require_every_property
        # Where every property is required and defaults go, an optional leaf with a
        # default is rewritten straight into its nullable form, without the leaf between.
        self.fuse = rules.require_every_property and not rules.keep_defaults

    def no_default(self) -> frozenset[str]:
        """The pointers ``without_default`` gives, asked for only when an optional property
        shows no default, and then once."""
        if self.found is None:
            self.found = _rooted(self.without_default(), self.schema)
        return self.found

    def strict(
        self, node: JsonSchema, prefix: str, step: str | int, level: int, optional: bool = False
    ) -> JsonSchema:
        """``node``, at JSON pointer ``prefix`` + ``step``, rewritten; ``level`` objects
        enclose it. ``optional`` (only where every property is required and defaults go):
        it is a property its object does not require, returned in the nullable form the
        object gives it (``_optional``).

        The pointer is spelled out only for a node that is not a leaf: only those name it.
        """
        choices = "enum" in node or "const" in node
        if choices:
            self.figures.count_choices(node)
        kind = node.get("type")
        if self.leaf_keys.issuperset(node):
            # Most nodes are leaves the rewrite keeps as they are (but for a default it
            # drops): settled without the general rewrite.
            if (
                (type(kind) is str and kind != "object" and kind != "array")
                or (kind is None and choices)
            ) and (
                ("format" not in node or node["format"] in self.formats)
                and (
                    "pattern" not in node
                    or (self.keep_patterns and pattern_problem(node["pattern"]) is None)
                )
            ):
                if self.keep_defaults or "default" not in node:
                    kept = node if type(node) is FrozenDict else freeze(node)
                    return _optional(kept) if optional else kept
                # A leaf has no ``anyOf``: one type besides ``null`` and no choices is
                # neither one value nor ``null``.
                if optional and (
                    (not choices and kind != "null") or not (_one_value(node) or accepts_null(node))
                ):
                    return _nullable_default(node)
                # Admitting ``null`` or one value, it is its own nullable form.
                leaf = dict(node)
                _describe_default(leaf, leaf.pop("default"), self.rules)
                # A read-only node's values are read-only: only the dict needs freezing.
                return FrozenDict(leaf) if type(node) is FrozenDict else freeze(leaf)
        elif len(node) == 1 and "$ref" in node:
            kept = node if type(node) is FrozenDict else freeze(node)
            return _optional(kept) if optional else kept
        pointer = f"{prefix}{step}"
        # The usual object (closing it is its whole rewrite) expresses what it says.
        plain = (
            kind == "object"
            and "properties" in node
            and _PLAIN_OBJECT.issuperset(node)
            and node.get("additionalProperties", False) is False
        )
        if not plain:
            problem = _inexpressible(node)
            if problem is not None:
                _refuse(problem, pointer, self.rules, self.subject)
        properties = node.get("properties")
        figures = self.figures
        if isinstance(properties, dict):
            figures.properties += len(properties)
            figures.characters += sum(map(len, properties))
        if kind == "object" or "properties" in node:
            level += 1
            if level > figures.depth:
                figures.depth = level
        if (
            plain
            and self.fuse
            and type(node) is FrozenDict
            and type(properties) is FrozenDict
            and (type(node.get("required")) is FrozenList or "required" not in node)
        ):
            made = self.closed(node, pointer, level)
            return _optional(made) if optional else made
        if self.require_every_property and isinstance(properties, dict) and properties:
            _default_losses(
                node, pointer, self.rules, self.subject, self.no_default, self.default_losses
            )
        copy: JsonSchema = {}
        below = pointer + "/"
        for key, value in node.items():
            if key not in _SUBSCHEMA_KEYS:
                copy[key] = value
            elif key in ONE_SCHEMA and isinstance(value, dict):
                copy[key] = self.strict(value, below, key, level)
            elif key in SCHEMA_LIST and isinstance(value, list):
                prefix = f"{below}{key}/"
                items = [
                    # A reference alone (a union's branch) is kept as it is.
                    item
                    if type(item) is FrozenDict and len(item) == 1 and "$ref" in item
                    else self.strict(item, prefix, index, level)
                    if isinstance(item, dict)
                    else freeze(item)
                    for index, item in enumerate(value)
                ]
                # Read-only as built (no step of the rewrite changes a list in place); the
                # input's own list where the rewrite kept every item.
                kept = type(value) is FrozenList and all(map(operator.is_, items, value))
                copy[key] = value if kept else FrozenList(items)
            elif key == "properties" and self.fuse and isinstance(value, dict):
                prefix = below + "properties/"
                required = node.get("required", ())
                copy[key] = {  # still to close: ``_close_object`` freezes it
                    name: self.strict(sub, prefix, name, level, name not in required)
                    if isinstance(sub, dict)
                    else freeze(sub)
                    for name, sub in value.items()
                }
            elif key in SCHEMA_MAP and isinstance(value, dict):
                prefix = f"{below}{key}/"
                named = {
                    name: self.strict(sub, prefix, name, level)
                    if isinstance(sub, dict)
                    else freeze(sub)
                    for name, sub in value.items()
                }
                if key == "properties":
                    copy[key] = named  # still to close: ``_close_object`` freezes it
                else:
                    kept = type(value) is FrozenDict and all(
                        map(operator.is_, named.values(), value.values())
                    )
                    copy[key] = value if kept else FrozenDict(named)
            else:
                copy[key] = value
        if plain:
            _close_object(copy, self.rules)
            rewritten = copy
        else:
            rewritten = _rewrite_node(copy, pointer, self.rules, self.rewrite_losses)
        if type(node) is not FrozenDict:
            frozen: JsonSchema = freeze(rewritten)
            return _optional(frozen) if optional else frozen
        if optional and not _one_value(rewritten) and not accepts_null(rewritten):
            # Made nullable from the walk's own copy, with no read-only copy between.
            return _nullable_open(rewritten)
        if rewritten == node:
            return node  # unchanged: the input's read-only node is shared
        # The parts kept from a read-only input are read-only, and the rewrite builds
        # its own parts read-only: only this node's dict needs freezing.
        return FrozenDict(rewritten)

    def closed(self, node: JsonSchema, pointer: str, level: int) -> JsonSchema:
        """The usual read-only object (``plain`` in ``strict``: closing it is its whole
        rewrite) rewritten under rules that require every property and drop defaults: its
        children in order, each optional one made nullable, the object closed and every
        property required; ``node`` itself where that changes nothing.

        What ``_close_object`` does to the walk's copy, in the same pass as the children.
        Its optional properties' losses are found before any child is visited, as
        ``_default_losses`` finds them, so the first problem in document order is raised.
        """
        listed: list[str] = node.get("required", ())
        for name, sub in node["properties"].items():
            # The usual optional property (a default that ``null`` cannot be mistaken
            # for) loses nothing; any other asks ``_default_losses`` about them all.
            if name not in listed and not (
                type(sub) is FrozenDict
                and "default" in sub
                and (sub["default"] is None or not accepts_null(sub))
            ):
                _default_losses(
                    node, pointer, self.rules, self.subject, self.no_default, self.default_losses
                )
                break
        copy: JsonSchema = {}
        same = "additionalProperties" in node  # and False: the object is plain
        names: list[str] = []
        below = pointer + "/"
        kept_leaf_keys = self.rules.kept_leaf_keys
        for key, value in node.items():
            if key == "properties":
                prefix = below + "properties/"
                properties: JsonSchema = {}
                for name, sub in value.items():
                    if name not in listed:
                        made = (
                            self.strict(sub, prefix, name, level, True)
                            if isinstance(sub, dict)
                            else _optional(freeze(sub))
                        )
                    elif (
                        type(sub) is FrozenDict
                        and kept_leaf_keys.issuperset(sub)
                        and type(kind := sub.get("type")) is str
                        and kind != "object"
                        and kind != "array"
                    ):
                        made = sub  # a required leaf with nothing to count, check or drop
                    else:
                        made = (
                            self.strict(sub, prefix, name, level)
                            if isinstance(sub, dict)
                            else freeze(sub)
                        )
                    properties[name] = made
                    if made is not sub:
                        same = False
                names = list(properties)
                copy[key] = value if same else FrozenDict(properties)
            elif key == "$defs" and isinstance(value, dict):
                prefix = below + "$defs/"
                named = {
                    name: self.strict(sub, prefix, name, level)
                    if isinstance(sub, dict)
                    else freeze(sub)
                    for name, sub in value.items()
                }
                kept = type(value) is FrozenDict and all(
                    map(operator.is_, named.values(), value.values())
                )
                if not kept:
                    same = False
                copy[key] = value if kept else FrozenDict(named)
            else:
                copy[key] = value
        copy["additionalProperties"] = False
        if type(listed) is FrozenList and listed == names:
            copy["required"] = listed
        else:
            copy["required"] = FrozenList(names)
            same = False
        return node if same else FrozenDict(copy)


def accepts_null(node: JsonSchema) -> bool:
    """Whether ``null`` is valid for ``node`` without following references."""
    kind = node.get("type")
    if type(kind) is str and kind != "null" and _CHOICES.isdisjoint(node):
        return False  # the usual field: one type, no choices
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    if "const" in node and node["const"] is None:
        return True
    enum = node.get("enum")
    if isinstance(enum, list) and None in enum:
        return True
    for key in ("anyOf", "oneOf"):
        for branch in node.get(key, ()):
            if isinstance(branch, dict) and accepts_null(branch):
                return True
    return False


def _refuse(problem: str, pointer: str, rules: StrictRules, subject: str) -> NoReturn:
    raise ProviderSchemaError(
        f"{subject}: field {field_path(pointer)} {problem}; {rules.dialect} cannot express "
        "it (declare a model with named fields, or emit this tool with strict off)"
    )


def _inexpressible(node: JsonSchema) -> str | None:
    kind = node.get("type")
    if _TYPED.isdisjoint(node):
        return "accepts any JSON value (Any)"
    if kind == "object" or (isinstance(kind, list) and "object" in kind) or "properties" in node:
        extra = node.get("additionalProperties")
        if extra is True or isinstance(extra, dict) or "patternProperties" in node:
            return "is a free-form mapping (dict[str, X]) whose keys are not declared"
        if "properties" not in node and extra is not False:
            return "is a free-form object whose keys are not declared"
    if (kind == "array" or (isinstance(kind, list) and "array" in kind)) and (
        "prefixItems" not in node
    ):
        items = node.get("items")
        if not isinstance(items, dict) or _TYPED.isdisjoint(items):
            return "is a list of anything (bare list); give the items a type"
    if isinstance(node.get("allOf"), list) and len(node["allOf"]) > 1:
        return "combines several schemas with allOf"
    if "oneOf" in node and "anyOf" in node:
        return "has both oneOf and anyOf"
    return None


def _rooted(pointers: frozenset[str], schema: JsonSchema) -> frozenset[str]:
    """``pointers`` plus, for a root ``$ref`` that ``object_root`` inlines, their root twins."""
    ref = schema.get("$ref")
    if not isinstance(ref, str):
        return pointers
    prefix = f"{ref}/"
    return pointers | {f"#/{p.removeprefix(prefix)}" for p in pointers if p.startswith(prefix)}


def _default_losses(
    node: JsonSchema,
    pointer: str,
    rules: StrictRules,
    subject: str,
    no_default: Callable[[], frozenset[str]],
    losses: list[str],
) -> None:
    """Add to ``losses`` the optional fields of ``node`` (an object with ``properties``,
    under rules requiring every property) where sending ``null`` would not mean "use
    the default".

    An optional field with no default whose contract rejects ``null`` cannot be
    required at all: ``ProviderSchemaError``.
    """
    listed = node.get("required", ())
    # A short list is searched faster than a set is built.
    required = listed if type(listed) is FrozenList or type(listed) is list else set(listed)
    for name, prop in node["properties"].items():
        if name in required or not isinstance(prop, dict):
            continue
        if "default" in prop:
            if prop["default"] is not None and accepts_null(prop):
                losses.append(_null_is_none(f"{pointer}/properties/{name}"))
            continue
        here = f"{pointer}/properties/{name}"
        if here not in no_default():
            if accepts_null(prop):
                losses.append(_null_is_none(here))
            continue
        where = field_path(here)
        if not (accepts_null(prop) or _one_value(prop)):
            raise ProviderSchemaError(
                f"{subject}: field {where} may be left out but has no default, and "
                f"{rules.dialect} requires every field; a model would send null, which the "
                "field rejects (make it required or accept None, or emit this tool with strict off)"
            )
        losses.append(f"{where}: has no default, so once required it is never left out")


def _null_is_none(pointer: str) -> str:
    return f"{field_path(pointer)}: null means None, not the field's default, once required"


def _one_value(prop: JsonSchema) -> bool:
    """Whether ``prop`` admits a single value (a ``const`` or one-value ``enum``)."""
    enum = prop.get("enum")
    return "const" in prop or (isinstance(enum, list) and len(enum) == 1)


def _check_not_recursive(root: JsonSchema, rules: StrictRules, subject: str) -> None:
    definitions = root.get("$defs", {})
    edges = {
        name: {_ref_name(ref) for ref in _refs_in(definition)}
        for name, definition in definitions.items()
    }
    for start in definitions:
        stack, seen = list(edges.get(start, ())), set()
        while stack:
            name = stack.pop()
            if name == start:
                raise ProviderSchemaError(
                    f"{subject}: type {start} is recursive (it contains itself); "
                    f"{rules.dialect} does not support recursive schemas"
                )
            if name not in seen:
                seen.add(name)
                stack.extend(edges.get(name, ()))


def _refs_in(schema: JsonSchema) -> list[str]:
    return [
        node["$ref"] for _, node in iter_schema_nodes(schema) if isinstance(node.get("$ref"), str)
    ]


def _ref_name(ref: str) -> str:
    return ref.rsplit("/", 1)[-1]


def _rewrite_node(
    node: JsonSchema, pointer: str, rules: StrictRules, losses: list[str]
) -> JsonSchema:
    if node.keys() <= _PLAIN_OBJECT and ("properties" in node or node.get("type") == "object"):
        _close_object(node, rules)  # the usual object: closing it is the whole rewrite
        return node
    node.pop("discriminator", None)
    if "oneOf" in node:
        node["anyOf"] = node.pop("oneOf")
    all_of = node.pop("allOf", None)
    if isinstance(all_of, list) and all_of:
        node = {**all_of[0], **node}
    if "properties" in node or node.get("type") == "object":
        _close_object(node, rules)
    else:
        # A union branch's ``$ref`` may carry its tag as ``required`` (see
        # ``wink.contract.schema``); the object itself now requires the tag.
        node.pop("required", None)
    moved = _unsupported(node, pointer, rules, losses)
    if not rules.keep_defaults and "default" in node:
        _describe_default(node, node.pop("default"), rules)
    node = describe_moved(node, moved)
    if "$ref" in node and len(node) > 1:
        ref = node.pop("$ref")
        node["anyOf"] = FrozenList([FrozenDict({"$ref": ref})])
    return node


def _describe_default(node: JsonSchema, default: Any, rules: StrictRules) -> None:
    """Say a dropped ``default`` in the description, so the model knows what leaving it means.

    Nothing is said for a ``null`` default or a one-value field (its value is its
    default). Where every property is required and the field itself rejects ``null``,
    the contract reads ``null`` as the default, and the description says so.
    """
    if default is None or _one_value(node):
        return
    text = f"Default: {readable_json(default)}."
    if rules.require_every_property and not accepts_null(node):
        text += " null means the default."
    description = node.get("description")
    node["description"] = f"{description}\n\n{text}" if description else text


def _close_object(node: JsonSchema, rules: StrictRules) -> None:
    properties: dict[str, Any] = node.get("properties", {})
    if type(properties) is not dict:
        # Not the walk's own (still open) copy: read-only, from an ``allOf`` member.
        properties = dict(properties)
    node["properties"] = properties  # in place, or added before additionalProperties
    node["additionalProperties"] = False
    listed = node.get("required", ())
    required = set(listed)
    every = rules.require_every_property
    for name, prop in properties.items():
        if name in required:
            continue
        # A property that admits one value is its default: requiring it loses nothing.
        if _one_value(prop):
            if every or "default" in prop:
                required.add(name)
        elif every:
            properties[name] = _nullable(prop)
    node["properties"] = FrozenDict(properties)
    if every or required:
        # Where every property is required, each is: as it was, or made nullable.
        names = list(properties) if every else [name for name in properties if name in required]
        node["required"] = (
            listed if type(listed) is FrozenList and listed == names else FrozenList(names)
        )


# The branch every nullable property gains; shared, since it is read-only.
_NULL_BRANCH = FrozenDict({"type": "null"})


def _nullable(prop: JsonSchema) -> JsonSchema:
    """``prop`` accepting ``null`` too; the description stays on the outside.

    Read-only, sharing ``prop``'s parts (a ``FrozenDict``'s values are read-only too).
    """
    if type(prop) is FrozenDict:
        branches = prop.get("anyOf")
        if (
            type(branches) is FrozenList
            and branches
            and branches[-1] is _NULL_BRANCH
            and "default" not in prop
        ):
            # Made nullable already (``_nullable_default``): it accepts ``null``, and has
            # no default.
            return prop
    else:
        prop = freeze(prop)
    if "default" in prop:
        prop = FrozenDict({key: value for key, value in prop.items() if key != "default"})
    if accepts_null(prop):
        return prop
    if "anyOf" in prop:
        return FrozenDict({**prop, "anyOf": FrozenList([*prop["anyOf"], _NULL_BRANCH])})
    if "description" not in prop and "title" not in prop:
        return FrozenDict({"anyOf": FrozenList([prop, _NULL_BRANCH])})
    return _described_or_null(dict(prop))


def _optional(prop: JsonSchema) -> JsonSchema:
    """The read-only ``prop`` as a property every property being required makes it: as it
    is where it admits one value (that value is its default), else nullable."""
    return prop if _one_value(prop) else _nullable(prop)


def _nullable_open(prop: JsonSchema) -> JsonSchema:
    """``_nullable`` of ``prop`` read-only, for a ``prop`` the caller owns and gives up: a
    plain dict whose values are read-only, with no ``default``, rejecting ``null``."""
    if "anyOf" in prop:
        prop["anyOf"] = FrozenList([*prop["anyOf"], _NULL_BRANCH])
        return FrozenDict(prop)
    if "description" not in prop and "title" not in prop:
        return FrozenDict({"anyOf": FrozenList([FrozenDict(prop), _NULL_BRANCH])})
    return _described_or_null(prop)


def _described_or_null(owned: JsonSchema) -> JsonSchema:
    """``owned`` (a plain dict the caller gives up) or ``null``, read-only, with its
    words (``_OUTER``) moved outside the ``anyOf``."""
    nullable: JsonSchema = {"anyOf": None}  # first, as the outer keys follow it
    for key in _OUTER:
        if key in owned:
            nullable[key] = owned.pop(key)
    nullable["anyOf"] = FrozenList([FrozenDict(owned), _NULL_BRANCH])
    return FrozenDict(nullable)


# What stays on the outside of a property made nullable, in this order.
_OUTER = ("description", "title")


def _nullable_default(leaf: JsonSchema) -> JsonSchema:
    """``_nullable`` of the kept ``leaf`` with its default dropped and described, in one step.

    For a leaf with a ``default``, rejecting ``null``, admitting more than one value,
    under rules that require every property and drop defaults (see ``_describe_default``).
    """
    default = leaf["default"]
    outer: JsonSchema = {"anyOf": None}  # first, as the outer keys follow it
    if default is not None:
        text = f"Default: {readable_json(default)}. null means the default."
        description = leaf.get("description")
        outer["description"] = f"{description}\n\n{text}" if description else text
    elif "description" in leaf:
        outer["description"] = leaf["description"]
    if "title" in leaf:
        outer["title"] = leaf["title"]
    inner = dict(leaf)
    del inner["default"]
    inner.pop("description", None)
    inner.pop("title", None)
    # A read-only leaf's values are read-only: only the dict needs freezing.
    branch = FrozenDict(inner) if type(leaf) is FrozenDict else freeze(inner)
    if len(outer) == 1:
        return FrozenDict({"anyOf": FrozenList([branch, _NULL_BRANCH])})
    outer["anyOf"] = FrozenList([branch, _NULL_BRANCH])
    return FrozenDict(outer)


def _unsupported(
    node: JsonSchema, pointer: str, rules: StrictRules, losses: list[str]
) -> dict[str, Any]:
    """Pop the keywords ``rules`` cannot enforce; record the assertions among them."""
    moved: dict[str, Any] = {}
    if node.keys() <= _STRUCTURE_OR_DEFAULT:
        return moved  # a default is never moved: it stays, or the caller drops it
    for key in list(node):
        value = node[key]
        if key in _STRUCTURE or (key == "default" and rules.keep_defaults):
            continue
        if key == "format" and value in rules.formats:
            continue
        unportable = pattern_problem(value) if key == "pattern" else None
        if key == "minItems" and rules.min_items is not None and value not in rules.min_items:
            pass
        elif key in rules.kept and unportable is None:
            continue
        if key == "default":
            continue  # dropped by the caller, never described
        moved[key] = node.pop(key)
        if key == "prefixItems":
            widen_tuple(node, value)
            node["items"] = freeze(node["items"])
        if unportable is not None and key in rules.kept:
            losses.append(
                f"{field_path(pointer)}: pattern uses {unportable}, which {rules.dialect} "
                "does not support; moved into the description"
            )
        elif key not in _ANNOTATIONS:
            losses.append(f"{field_path(pointer)}: {key} moved into the description")
    return moved


# One token of a regular expression: an escape, a character class, or one character.
_REGEX_TOKEN = re.compile(r"\\.|\[\^?\]?(?:\\.|[^\]\\])*\]|.", re.S)
_QUANTIFIER_ENDS = frozenset({"*", "+", "?", "}"})


def pattern_problem(pattern: object) -> str | None:
    """What in a regular expression a grammar-constrained dialect cannot compile, if anything.

    Strict modes compile patterns to automata: look-around, backreferences,
    possessive quantifiers, atomic groups and conditionals have no automaton; inline
    flags, ``(?P<name>...)`` and ``\\A``/``\\Z`` are Python's, not JSON Schema's
    (ECMA-262) syntax.
    """
    if not isinstance(pattern, str):
        return "a value that is not a string"
    return _pattern_problem(pattern)


@lru_cache(maxsize=1024)
def _pattern_problem(pattern: str) -> str | None:
    # Cached: every tool with a date-time field carries the same long pattern.
    tokens = _REGEX_TOKEN.findall(pattern)
    for index, token in enumerate(tokens):
        following = "".join(tokens[index + 1 : index + 4])
        if token == "(" and following.startswith("?"):
            problem = _group_problem(following[1:])
            if problem is not None:
                return problem
        elif token[:1] == "\\" and len(token) == 2:
            if token[1] in "123456789" or token[1] == "k":
                return "a backreference"
            if token[1] in "AZzG":
                return f"the anchor {token} (not JSON Schema syntax)"
        elif (
            token == "+"
            and index > 0
            and tokens[index - 1] in _QUANTIFIER_ENDS
            and not (tokens[index - 1] == "?" and index > 1 and tokens[index - 2] == "(")
        ):
            return "a possessive quantifier"
    return None


def _group_problem(after: str) -> str | None:
    if after.startswith(("=", "!", "<=", "<!")):
        return "look-around"
    if after.startswith("P="):
        return "a backreference"
    if after.startswith("P<"):
        return "a Python named group (write (?<name>...))"
    if after.startswith(">"):
        return "an atomic group"
    if after.startswith("("):
        return "a conditional"
    if after.startswith("#"):
        return "a comment group"
    if after[:1].isalpha() or after[:1] == "-":
        return "inline flags"
    return None
