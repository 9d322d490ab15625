"""Packages that import each public name from its home module on first access.

A package lists where each name lives and defines ``__getattr__`` with ``exported``;
importing the package then loads none of its modules, and the first access to a
name loads only that name's module.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import import_module
from typing import Any

__all__ = ["exported"]


def exported(package: str, namespace: dict[str, Any], homes: Mapping[str, str], name: str) -> Any:
    """The public ``name`` of ``package``, imported from ``homes[name]`` and kept in the
    package's ``namespace`` (so that later accesses find it without this function)."""
    home = homes.get(name)
    if home is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    value = getattr(import_module(home), name)
    namespace[name] = value
    return value
