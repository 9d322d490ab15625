"""A cheap exact check that a record's serialization can meet no mismatched value.

Serializing with ``warnings="error"`` turns a value of the wrong type (a ``str`` in
an ``int`` field) into an error; asking pydantic-core for that mode costs about a
microsecond per call, several times the serialization of a small record. For a
dataclass or model whose fields are all plain scalars (``str``, ``int``, ``float``,
``bool``, or one of them or ``None``), serialized with no custom serializer, a
value whose fields each hold exactly such a type cannot meet a mismatch: it is
serialized without asking for the check. Any other value takes the checked way.
"""

from __future__ import annotations

from typing import Any

__all__ = ["FlatRecord", "flat_record"]

_MISSING = object()

_SCALARS: dict[str, type[Any]] = {"str": str, "int": int, "float": float, "bool": bool}


class FlatRecord:
    """The fields of a flat record type, and the exact types each may hold."""

    __slots__ = ("cls", "fields")

    def __init__(
        self, cls: type[Any], fields: tuple[tuple[str, frozenset[type[Any]]], ...]
    ) -> None:
        self.cls = cls
        """The record's class: instances of a subclass take the checked way."""
        self.fields = fields
        """Each field's name, and the exact types it may hold."""

    def holds_exact_types(self, value: object) -> bool:
        """Whether ``value`` is an instance of the class whose fields each hold exactly
        one of the types their annotation allows."""
        if type(value) is not self.cls:
            return False
        for name, allowed in self.fields:  # noqa: SIM110  (all() over a generator costs more)
            # A field left unset (``model_construct``) is missing: the checked way decides.
            if type(getattr(value, name, _MISSING)) not in allowed:
                return False
        return True


def flat_record(core_schema: Any) -> FlatRecord | None:
    """The ``FlatRecord`` of a dataclass or model core schema, or ``None`` when some
    field is not a plain scalar, or something serializes it in its own way."""
    if not isinstance(core_schema, dict) or "serialization" in core_schema:
        return None
    config = core_schema.get("config")
    if isinstance(config, dict) and config.get("extra_fields_behavior") == "allow":
        return None  # extra values are serialized too
    kind = core_schema.get("type")
    inner = core_schema.get("schema")
    if kind not in ("dataclass", "model") or not isinstance(inner, dict):
        return None
    if inner.get("computed_fields") or "serialization" in inner:
        return None
    if kind == "dataclass" and inner.get("type") == "dataclass-args":
        fields = [(field.get("name"), field) for field in inner.get("fields", ())]
    elif kind == "model" and inner.get("type") == "model-fields" and not inner.get("extras_schema"):
        fields = list(inner.get("fields", {}).items())
    else:
        return None
    checked: list[tuple[str, frozenset[type[Any]]]] = []
    for name, field in fields:
        types = _scalar_types(field.get("schema")) if "serialization" not in field else None
        if not isinstance(name, str) or types is None:
            return None
        checked.append((name, types))
    return FlatRecord(core_schema["cls"], tuple(checked)) if checked else None


def _scalar_types(schema: Any) -> frozenset[type[Any]] | None:
    """The exact types a field schema serializes without a check, or ``None``."""
    if not isinstance(schema, dict) or "serialization" in schema:
        return None
    kind = schema.get("type")
    if kind == "default":
        return _scalar_types(schema.get("schema"))
    if kind == "nullable":
        inner = _scalar_types(schema.get("schema"))
        return None if inner is None else inner | {type(None)}
    scalar = _SCALARS.get(kind) if isinstance(kind, str) else None
    return None if scalar is None else frozenset({scalar})
