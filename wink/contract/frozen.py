"""Read-only JSON containers: compiled schemas and cached specs are shared, so nobody may
change them.

They are ``dict`` and ``list`` subclasses, so ``json.dumps``, pydantic, the
provider SDKs and ``==`` treat them as plain JSON; every mutating method raises
``TypeError``. ``copy.deepcopy(spec)`` (or ``thaw(spec)``) returns plain,
mutable containers.
"""

from __future__ import annotations

from typing import Any, NoReturn, SupportsIndex

__all__ = ["FrozenDict", "FrozenList", "freeze", "thaw"]

_REFUSAL = (
    "compiled schemas and provider specs are shared, so they are read-only; "
    "copy.deepcopy(value) gives a mutable copy"
)


def _refuse() -> NoReturn:
    raise TypeError(_REFUSAL)


class FrozenDict(dict[str, Any]):
    """A ``dict`` whose contents cannot change."""

    __slots__ = ()

    def __setitem__(self, key: str, value: Any) -> NoReturn:
        _refuse()

    def __delitem__(self, key: str) -> NoReturn:
        _refuse()

    def __ior__(self, other: Any) -> NoReturn:  # type: ignore[misc]  # refusing is the point
        _refuse()

    def clear(self) -> NoReturn:
        _refuse()

    def pop(self, *args: Any, **kwargs: Any) -> NoReturn:
        _refuse()

    def popitem(self) -> NoReturn:
        _refuse()

    def setdefault(self, *args: Any, **kwargs: Any) -> NoReturn:
        _refuse()

    def update(self, *args: Any, **kwargs: Any) -> NoReturn:
        _refuse()

    def __copy__(self) -> dict[str, Any]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        thawed: dict[str, Any] = thaw(self)
        return thawed

    def __reduce__(self) -> tuple[Any, ...]:
        return (dict, (thaw(self),))


class FrozenList(list[Any]):
    """A ``list`` whose contents cannot change."""

    __slots__ = ()

    def __setitem__(self, index: Any, value: Any) -> NoReturn:
        _refuse()

    def __delitem__(self, index: Any) -> NoReturn:
        _refuse()

    def __iadd__(self, other: Any) -> NoReturn:  # type: ignore[misc]  # refusing is the point
        _refuse()

    def __imul__(self, count: SupportsIndex) -> NoReturn:
        _refuse()

    def append(self, value: Any) -> NoReturn:
        _refuse()

    def extend(self, values: Any) -> NoReturn:
        _refuse()

    def insert(self, index: SupportsIndex, value: Any) -> NoReturn:
        _refuse()

    def pop(self, index: SupportsIndex = -1) -> NoReturn:
        _refuse()

    def remove(self, value: Any) -> NoReturn:
        _refuse()

    def clear(self) -> NoReturn:
        _refuse()

    def sort(self, *args: Any, **kwargs: Any) -> NoReturn:
        _refuse()

    def reverse(self) -> NoReturn:
        _refuse()

    def __copy__(self) -> list[Any]:
        return list(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        thawed: list[Any] = thaw(self)
        return thawed

    def __reduce__(self) -> tuple[Any, ...]:
        return (list, (thaw(self),))


_SCALARS = frozenset({str, int, float, bool, type(None)})


# Shared as they are by ``freeze``: immutable scalars, and containers it built.
_SHARED = _SCALARS | {FrozenDict, FrozenList}


def freeze(value: Any) -> Any:
    """A read-only copy of a JSON value (dicts and lists at every level).

    A ``FrozenDict`` or ``FrozenList`` (which only ``freeze`` builds) is read-only all
    the way down already, and is shared rather than copied.
    """
    if type(value) in _SHARED:
        return value
    if isinstance(value, dict):
        # dict's constructor fills the mapping directly, never through __setitem__.
        # Values that are already read-only are kept inline: most are, and a call costs more.
        return FrozenDict(
            {key: item if type(item) in _SHARED else freeze(item) for key, item in value.items()}
        )
    if isinstance(value, list | tuple):
        return FrozenList([item if type(item) in _SHARED else freeze(item) for item in value])
    return value


def thaw(value: Any) -> Any:
    """A plain, mutable copy of a JSON value."""
    if isinstance(value, dict):
        return {key: thaw(item) for key, item in value.items()}
    if isinstance(value, list):
        return [thaw(item) for item in value]
    return value
