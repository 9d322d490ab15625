"""Whether a value is an instance of a declared params or result type, and of which class.

Only the shape the type names is checked (classes, ``None``, unions, ``Annotated``,
``list[T]`` and ``tuple[T, ...]`` items); what ``isinstance`` cannot see, such as
the types of a dataclass's fields, is left to the result contract.
"""

from __future__ import annotations

import types
import typing
from typing import Annotated, Any, get_args, get_origin

__all__ = ["conforms", "declared_class", "plain_class"]

_UNIONS = (typing.Union, types.UnionType)


def conforms(value: object, tp: Any) -> bool:
    """Whether ``value`` is an instance of the declared type ``tp``."""
    if tp is None or tp is type(None):
        return value is None
    origin = get_origin(tp)
    if origin is Annotated:
        return conforms(value, get_args(tp)[0])
    if origin in _UNIONS:
        return any(conforms(value, arg) for arg in get_args(tp))
    if origin in (list, tuple):
        items = [arg for arg in get_args(tp) if arg is not Ellipsis]
        return isinstance(value, origin) and all(
            any(conforms(item, arg) for arg in items) for item in value
        )
    if tp is float:
        # JSON numbers: an int is a valid float, a bool is not.
        return isinstance(value, int | float) and not isinstance(value, bool)
    if isinstance(tp, type):
        try:
            return isinstance(value, tp)
        except TypeError:  # a class isinstance refuses (a TypedDict): the contract decides
            return True
    return True  # not a class (a Literal, say): the contract decides


def declared_class(value: object, tp: Any) -> type[Any] | None:
    """The class in ``tp`` that ``value`` is an instance of (its slice), if ``tp`` names one."""
    origin = get_origin(tp)
    if origin is Annotated:
        return declared_class(value, get_args(tp)[0])
    if origin in _UNIONS:
        for arg in get_args(tp):
            found = declared_class(value, arg)
            if found is not None:
                return found
        return None
    if origin is None and isinstance(tp, type) and tp is not type(None):
        try:
            return tp if isinstance(value, tp) else None
        except TypeError:
            return None
    return None


def plain_class(tp: Any) -> type[Any] | None:
    """``tp`` when it is a class ``isinstance`` can check (the common case), else ``None``.

    For such a class, ``conforms`` is ``isinstance`` and ``declared_class`` is the class.
    """
    if get_origin(tp) is not None or not isinstance(tp, type) or tp in (type(None), float):
        return None
    try:
        isinstance(None, tp)
    except TypeError:  # a TypedDict, a protocol that is not runtime-checkable
        return None
    return tp
