"""Ready reducers for ``session[T].register(EventType, reducer)``."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import Any, TypeVar

from wink.runtime._vector import SliceValues

__all__ = ["append", "replace_latest", "upsert_by"]

T = TypeVar("T")


def append(values: SliceValues[T], event: T) -> SliceValues[T]:
    """Add the event at the end (what happens when no reducer is registered)."""
    return values.append(event)


def replace_latest(values: SliceValues[T], event: T) -> tuple[T, ...]:
    """Keep only the event: the slice holds one current value."""
    return (event,)


def upsert_by(key: Callable[[T], Hashable]) -> Callable[[SliceValues[T], T], Iterable[T]]:
    """A reducer that replaces the value with the event's key, or appends the event."""

    def upsert(values: SliceValues[T], event: T) -> Iterable[T]:
        wanted = key(event)
        kept: list[Any] = [value for value in values if key(value) != wanted]
        if len(kept) == len(values):
            return values.append(event)
        kept.append(event)
        return kept

    return upsert
