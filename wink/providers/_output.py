"""Naming a template's output type for providers that want a schema name."""

from __future__ import annotations

from typing import Any

from wink.contract import Contract, type_name

__all__ = ["output_name"]


def output_name(contract: Contract[Any]) -> str:
    """A name for the output schema (``^[A-Za-z0-9_-]{1,64}$``), from its type's name."""
    cleaned = "".join(c if c.isalnum() or c in "_-" else "_" for c in type_name(contract.type))
    return cleaned.strip("_")[-64:].lstrip("_") or "output"  # the end names the class
