"""Facade check: a dataclass, its compiled validator and its JSON Schema agree.

A dataclass facade is a plain ``@dataclass`` used as a tool's params or result
type. wink proves, field by field, that the names, required-ness, defaults and
descriptions seen by the model are the ones the dataclass declares.
"""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any, get_origin, get_type_hints

from pydantic.json_schema import JsonSchemaMode
from pydantic_core import PydanticSerializationError, PydanticUndefined, to_jsonable_python
from pydantic_core import core_schema as cs

from wink.contract._aliases import shown_name
from wink.errors import PromptValidationError

__all__ = ["EMPTY_CONTAINER_FACTORIES", "check_dataclass_facade"]

# Default factories whose default the JSON Schema shows: each builds one empty container.
EMPTY_CONTAINER_FACTORIES: tuple[type[Any], ...] = (list, dict, set, frozenset, tuple)


def check_dataclass_facade(
    cls: type[Any],
    core: cs.DataclassSchema,
    json_schema: dict[str, Any],
    mode: JsonSchemaMode = "validation",
) -> None:
    """Raise ``PromptValidationError`` where the three views of ``cls`` disagree.

    ``mode`` says which names ``json_schema`` shows: what parsing reads, or what
    serializing writes.
    """
    owner = cls.__qualname__
    args = core["schema"]
    compiled = {field["name"]: field for field in args.get("fields", [])}
    properties: dict[str, Any] = json_schema.get("properties", {})
    required = set(json_schema.get("required", []))
    declared = dataclasses.fields(cls)
    hints = _type_hints(cls, declared)
    declared_names = [field.name for field in declared]

    if set(declared_names) != set(compiled):
        raise PromptValidationError(
            f"{owner}: dataclass fields {sorted(declared_names)} differ from the "
            f"compiled fields {sorted(compiled)}"
        )
    for field in declared:
        where = f"{owner}.{field.name}"
        compiled_field = compiled[field.name]
        if mode == "validation":
            name = shown_name(field.name, compiled_field.get("validation_alias"))
        else:
            name = compiled_field.get("serialization_alias") or field.name
        if name is None or name not in properties:
            raise PromptValidationError(f"{where}: missing from the JSON Schema properties")
        declared_field = _declared(field, hints.get(field.name))
        _check_field(where, declared_field, properties[name], name in required)


@dataclasses.dataclass(frozen=True, slots=True)
class _Declared:
    """What a dataclass field declares, wherever it was written."""

    default: Any
    factory: Any
    descriptions: tuple[tuple[str, str], ...]
    """``(where it was written, text)`` for each description given."""

    @property
    def shown_default(self) -> Any:
        """The default the JSON Schema must show, or ``MISSING`` for none."""
        if self.factory in EMPTY_CONTAINER_FACTORIES:
            return self.factory()
        return self.default


def _declared(field: dataclasses.Field[Any], hint: Any) -> _Declared:
    from pydantic.fields import FieldInfo  # pydantic's fields module is slow to import

    default: Any = field.default
    factory: Any = field.default_factory
    descriptions: list[tuple[str, str]] = []
    if isinstance(field.metadata.get("description"), str):
        descriptions.append(("field metadata", field.metadata["description"]))
    annotated = _annotated_description(hint)
    if annotated is not None:
        descriptions.append(("Annotated Field", annotated))
    if isinstance(default, FieldInfo):  # ``x: int = Field(...)`` in a pydantic dataclass
        info = default
        default = dataclasses.MISSING if info.default is PydanticUndefined else info.default
        factory = dataclasses.MISSING if info.default_factory is None else info.default_factory
        if info.description is not None:
            descriptions.append(("Field default", info.description))
    return _Declared(default, factory, tuple(descriptions))


def _check_field(where: str, declared: _Declared, prop: dict[str, Any], required: bool) -> None:
    has_default = (
        declared.default is not dataclasses.MISSING or declared.factory is not dataclasses.MISSING
    )
    if has_default == required:
        expected = "optional" if has_default else "required"
        raise PromptValidationError(
            f"{where}: the dataclass makes it {expected} but the JSON Schema does not"
        )
    default = declared.shown_default
    if default is not dataclasses.MISSING:
        try:
            expected_default = to_jsonable_python(default)
        except PydanticSerializationError as error:
            raise PromptValidationError(
                f"{where}: default {default!r} cannot be written as JSON ({error})"
            ) from error
        if prop.get("default", dataclasses.MISSING) != expected_default:
            raise PromptValidationError(
                f"{where}: default {default!r} is shown to the model as "
                f"{prop.get('default', '<no default>')!r}"
            )
    texts = {text for _, text in declared.descriptions}
    if len(texts) > 1:
        sources = " and ".join(f"{text!r} ({source})" for source, text in declared.descriptions)
        raise PromptValidationError(f"{where}: conflicting descriptions {sources}")
    if texts and prop.get("description") not in texts:
        raise PromptValidationError(
            f"{where}: description {texts.pop()!r} is shown to the model as "
            f"{prop.get('description')!r}"
        )


def _type_hints(cls: type[Any], declared: tuple[dataclasses.Field[Any], ...]) -> dict[str, Any]:
    raw = {field.name: field.type for field in declared}
    if not any(isinstance(hint, str) for hint in raw.values()):
        # Nothing to resolve: an ``Annotated`` hint is one already, which is all that is read.
        return raw
    try:
        return get_type_hints(cls, include_extras=True)
    except Exception:  # pydantic resolved them in its own namespace; read them raw
        return raw


def _annotated_description(hint: Any) -> str | None:
    """The description an ``Annotated[..., Field(description=...)]`` hint gives, if any."""
    if get_origin(hint) is not Annotated:
        return None
    from pydantic.fields import FieldInfo  # pydantic's fields module is slow to import

    found = None
    for item in hint.__metadata__:
        if isinstance(item, FieldInfo) and item.description is not None:
            found = item.description
    return found
