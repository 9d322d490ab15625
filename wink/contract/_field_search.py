"""Find the field a compile error is about, so that the error can name it.

pydantic reports an unresolved name or an unsupported type without saying which
field holds it; these searches walk the type, nested classes included.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
from collections.abc import Iterator
from typing import Any, get_args, get_type_hints

from pydantic import BaseModel, PydanticSchemaGenerationError, TypeAdapter

__all__ = ["field_mentioning", "field_not_json"]


def field_mentioning(tp: Any, missing: str) -> str | None:
    """``Owner.field`` whose annotation names ``missing``, searching nested classes too."""
    pattern = re.compile(rf"\b{re.escape(missing)}\b")
    for owner in _classes(tp):
        for base in reversed(owner.__mro__):
            for field_name, annotation in inspect.get_annotations(base).items():
                text = getattr(annotation, "__forward_arg__", annotation)
                if isinstance(text, str) and pattern.search(text):
                    return f"{owner.__qualname__}.{field_name}"
    return None


def field_not_json(tp: Any) -> str | None:
    """The innermost ``Owner.field`` whose type pydantic cannot build a schema for."""
    for owner in _classes(tp):
        for field_name, hint in _field_hints(owner).items():
            try:
                TypeAdapter(hint)
            except PydanticSchemaGenerationError:
                return field_not_json(hint) or f"{owner.__qualname__}.{field_name}"
    return None


def _classes(tp: Any) -> Iterator[type[Any]]:
    """Dataclasses and models reachable from ``tp``, outermost first."""
    pending, seen = [tp], set()
    while pending:
        current = pending.pop(0)
        pending.extend(get_args(current))
        if not _has_fields(current) or current in seen:
            continue
        seen.add(current)
        yield current
        pending.extend(_field_hints(current).values())


def _has_fields(tp: Any) -> bool:
    return isinstance(tp, type) and (dataclasses.is_dataclass(tp) or issubclass(tp, BaseModel))


def _field_hints(owner: type[Any]) -> dict[str, Any]:
    """Resolved annotations of the fields of ``owner``; empty when they cannot resolve."""
    try:
        hints = get_type_hints(owner)
    except Exception:  # a class whose hints cannot resolve is searched no deeper
        return {}
    if dataclasses.is_dataclass(owner):
        names: Any = [field.name for field in dataclasses.fields(owner)]
    else:
        names = getattr(owner, "model_fields", {})
    return {name: hints[name] for name in names if name in hints}
