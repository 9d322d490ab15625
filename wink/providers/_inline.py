"""``$ref`` handling: inline the root reference, or every reference (with a clear error
for recursion), and check that a tool's arguments are a JSON object."""

from __future__ import annotations

from collections.abc import Callable

from wink.contract.walk import ONE_SCHEMA, SCHEMA_LIST, JsonSchema
from wink.providers._errors import ProviderSchemaError, RecursiveSchemaError
from wink.providers._fields import field_path

__all__ = ["inline_all_refs", "inline_root_ref", "object_root", "resolve_ref"]

_DEFINITION_KEYS = ("$defs", "definitions")
_NAMED = frozenset({"properties", "patternProperties", "dependentSchemas"})


def resolve_ref(root: JsonSchema, ref: str) -> JsonSchema:
    """The schema a local ``$ref`` (``#/...``) points at inside ``root``."""
    if not ref.startswith("#"):
        raise ProviderSchemaError(f"only local $ref values are supported, got {ref!r}")
    target: object = root
    for raw in ref[1:].split("/")[1:]:
        part = raw.replace("~1", "/").replace("~0", "~")
        if not isinstance(target, dict) or part not in target:
            raise ProviderSchemaError(f"$ref {ref!r} points at nothing")
        target = target[part]
    if not isinstance(target, dict):
        raise ProviderSchemaError(f"$ref {ref!r} does not point at a schema")
    return target


def inline_root_ref(schema: JsonSchema) -> JsonSchema:
    """Replace a root ``{"$ref": ..., "$defs": ...}`` by the definition it names.

    A recursive model compiles to such a root; providers want the root to be the
    object itself. The definitions stay, since the object may refer to itself.
    """
    ref = schema.get("$ref")
    if not isinstance(ref, str):
        return schema
    target = resolve_ref(schema, ref)
    definition = {key: value for key, value in target.items() if key not in _DEFINITION_KEYS}
    return _merged(definition, schema)


def inline_all_refs(
    schema: JsonSchema,
    subject: str,
    hint: str,
    visit: Callable[[JsonSchema], JsonSchema] | None = None,
) -> JsonSchema:
    """A copy of ``schema`` with every ``$ref`` replaced by its target and no ``$defs``.

    Sibling keywords of a ``$ref`` win over the target's, except ``required``: both
    lists hold, so they are joined. A recursive reference
    cannot be inlined: ``ProviderSchemaError`` names the field where it loops, and
    ends with ``hint``.

    ``visit``, if given, rewrites each node of the copy, children first, as
    ``wink.contract.walk.map_schema`` would on the inlined schema, in the same walk:
    it gets a fresh node, which it may change, and returns the node to put in its place.
    """
    return _Inliner(schema, subject, hint, visit).inline(schema, "#", ())


class _Inliner:
    """One ``inline_all_refs`` walk (an object, not a closure calling itself, which would
    leave a cycle per walk for the garbage collector to find)."""

    __slots__ = ("hint", "schema", "subject", "visit")

    def __init__(
        self,
        schema: JsonSchema,
        subject: str,
        hint: str,
        visit: Callable[[JsonSchema], JsonSchema] | None,
    ) -> None:
        self.schema = schema
        self.subject = subject
        self.hint = hint
        self.visit = visit

    def inline(self, node: JsonSchema, pointer: str, active: tuple[str, ...]) -> JsonSchema:
        """``node``, at JSON pointer ``pointer``, inlined; ``active``: the references being
        inlined around it."""
        ref = node.get("$ref")
        if isinstance(ref, str):
            if ref in active:
                raise RecursiveSchemaError(
                    f"{self.subject}: field {field_path(pointer)} refers back to "
                    f"{ref.rsplit('/', 1)[-1]} (a recursive type), which cannot be inlined; "
                    f"{self.hint}"
                )
            merged = _merged(resolve_ref(self.schema, ref), node)
            return self.inline(merged, pointer, (*active, ref))
        inlined: JsonSchema = {}
        for key, value in node.items():
            where = f"{pointer}/{key}"
            if key in _DEFINITION_KEYS:
                continue
            if key in ONE_SCHEMA and isinstance(value, dict):
                inlined[key] = self.inline(value, where, active)
            elif key in SCHEMA_LIST and isinstance(value, list):
                inlined[key] = [
                    self.inline(item, f"{where}/{index}", active)
                    for index, item in enumerate(value)
                ]
            elif key in _NAMED and isinstance(value, dict):
                inlined[key] = {
                    name: self.inline(sub, f"{where}/{name}", active) for name, sub in value.items()
                }
            else:
                inlined[key] = value
        visit = self.visit
        return inlined if visit is None else visit(inlined)


def _merged(target: JsonSchema, referrer: JsonSchema) -> JsonSchema:
    """``target`` with the keywords beside ``referrer``'s ``$ref`` laid over it.

    A ``required`` beside a ``$ref`` adds to the target's (a discriminated union's
    branch requires its tag on top of the branch's own fields), so the two lists are
    joined, the target's names first.
    """
    merged = {**target, **{key: value for key, value in referrer.items() if key != "$ref"}}
    own, added = target.get("required"), referrer.get("required")
    if isinstance(own, list) and isinstance(added, list):
        merged["required"] = [*own, *(name for name in added if name not in own)]
    return merged


def object_root(schema: JsonSchema, tool_name: str, dialect: str) -> JsonSchema:
    """The params schema with its root reference inlined; it must describe an object."""
    root = inline_root_ref(schema)
    if root.get("type") != "object":
        described = root.get("type") or (
            "a union" if "anyOf" in root or "oneOf" in root else "any value"
        )
        raise ProviderSchemaError(
            f"tool {tool_name!r}: {dialect} needs the arguments to be a JSON object, but the "
            f"params type describes {described}; use a model or dataclass as the params type"
        )
    return root
