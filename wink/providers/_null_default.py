"""``null`` for a field's default, said in the schema every dialect advertises.

A tool's contract takes ``null`` for a field that has a default and hands the
handler the default (``wink.contract._core_schema``): OpenAI's strict mode sends
``null`` for every optional field, and clients that make schemas strict do too.
What a tool accepts and what its advertised schema allows must agree, so each
such property also accepts ``null`` in every dialect's schema, its default kept.
A field whose type already takes ``null`` (``int | None = None``) keeps it as a
value and is left as it is, as is a field the schema requires.
"""

from __future__ import annotations

from wink.contract.walk import JsonSchema, map_schema
from wink.providers._strict import accepts_null

__all__ = ["null_means_default", "with_null_defaults"]

# Keywords beside which ``type: [T, "null"]`` would not let ``null`` through (an enum or
# a const lists the values, a union's branches each refuse it): these get a null branch.
_RESTRICTING = frozenset({"enum", "const", "anyOf", "oneOf", "allOf", "$ref"})
# Annotations of the field itself, kept on the outer node when the type moves into a branch.
_OUTER = ("title", "description", "default")


def with_null_defaults(schema: JsonSchema) -> JsonSchema:
    """A copy of ``schema`` where every property with a default also accepts ``null``."""
    return map_schema(schema, null_means_default)


def null_means_default(node: JsonSchema) -> JsonSchema:
    """``node`` with each property that has a default also accepting ``null``.

    A visitor for ``wink.contract.walk.map_schema`` (it changes the fresh node it is given).
    """
    properties = node.get("properties")
    if not isinstance(properties, dict):
        return node
    # A required property's default is never used: a discriminated union's tag has one
    # (its only value) and must still be sent, so ``null`` is refused there.
    required = node.get("required", ())
    node["properties"] = {
        name: _nullable(prop)
        if isinstance(prop, dict)
        and "default" in prop
        and name not in required
        and not accepts_null(prop)
        else prop
        for name, prop in properties.items()
    }
    return node


def _nullable(prop: JsonSchema) -> JsonSchema:
    kind = prop.get("type")
    if isinstance(kind, str) and _RESTRICTING.isdisjoint(prop):
        return {**prop, "type": [kind, "null"]}
    outer: JsonSchema = {key: prop[key] for key in _OUTER if key in prop}
    inner = {key: value for key, value in prop.items() if key not in outer}
    return {**outer, "anyOf": [inner, {"type": "null"}]}
