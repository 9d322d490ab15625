"""Facade check: a dataclass, its compiled validator and its JSON Schema agree.

A dataclass facade is a plain ``@dataclass`` used as a tool's params or result
type. wink proves, field by field, that the names, required-ness, defaults and
descriptions seen by the model are the ones the dataclass declares.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from pydantic_core import PydanticSerializationError, to_jsonable_python
from pydantic_core import core_schema as cs

from wink.errors import PromptValidationError

__all__ = ["check_dataclass_facade"]


def check_dataclass_facade(
    cls: type[Any], core: cs.DataclassSchema, json_schema: dict[str, Any]
) -> None:
    """Raise ``PromptValidationError`` where the three views of ``cls`` disagree."""
    owner = cls.__qualname__
    args = core["schema"]
    compiled = {field["name"]: field for field in args.get("fields", [])}  # type: ignore[typeddict-item]  # dataclass-args always has fields
    properties: dict[str, Any] = json_schema.get("properties", {})
    required = set(json_schema.get("required", []))
    declared = dataclasses.fields(cls)
    declared_names = [field.name for field in declared]

    if set(declared_names) != set(compiled):
        raise PromptValidationError(
            f"{owner}: dataclass fields {sorted(declared_names)} differ from the "
            f"compiled fields {sorted(compiled)}"
        )
    for field in declared:
        where = f"{owner}.{field.name}"
        compiled_field = compiled[field.name]
        name = compiled_field.get("validation_alias") or field.name
        if not isinstance(name, str) or name not in properties:
            raise PromptValidationError(f"{where}: missing from the JSON Schema properties")
        prop = properties[name]
        has_default = (
            field.default is not dataclasses.MISSING
            or field.default_factory is not dataclasses.MISSING
        )
        if has_default == (name in required):
            expected = "optional" if has_default else "required"
            raise PromptValidationError(
                f"{where}: the dataclass makes it {expected} but the JSON Schema does not"
            )
        if field.default is not dataclasses.MISSING:
            try:
                expected_default = to_jsonable_python(field.default)
            except PydanticSerializationError as error:
                raise PromptValidationError(
                    f"{where}: default {field.default!r} cannot be written as JSON ({error})"
                ) from error
            if prop.get("default", dataclasses.MISSING) != expected_default:
                raise PromptValidationError(
                    f"{where}: default {field.default!r} is shown to the model as "
                    f"{prop.get('default', '<no default>')!r}"
                )
        description = field.metadata.get("description")
        if isinstance(description, str) and prop.get("description") != description:
            raise PromptValidationError(
                f"{where}: description {description!r} is shown to the model as "
                f"{prop.get('description')!r}"
            )
