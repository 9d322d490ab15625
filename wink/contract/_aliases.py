"""The property name a JSON Schema shows for a field, read from its validation alias."""

from __future__ import annotations

from typing import Any

__all__ = ["shown_name"]


def shown_name(field_name: str, validation_alias: Any) -> str | None:
    """The property name the JSON Schema shows, or ``None`` when parsing would not read it.

    pydantic's schema shows a plain alias, or the first one-key choice of an
    ``AliasChoices``; parsing reads that key too. A path into a nested value
    (``AliasPath("outer", 0)``) has no property to show: the schema falls back to
    the field's name, which parsing refuses.
    """
    if validation_alias is None:
        return field_name
    if isinstance(validation_alias, str):
        return validation_alias
    for path in validation_alias:
        if isinstance(path, list) and len(path) == 1 and isinstance(path[0], str):
            return path[0]
    return None
