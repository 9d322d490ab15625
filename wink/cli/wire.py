"""JSON Schemas of wink's own wire types, for the files under ``wire/``."""

from __future__ import annotations

from typing import Any

from wink.contract import DRAFT_2020_12, JsonSchema, compile_contract
from wink.runtime.call import ToolCall
from wink.runtime.events import ToolInvoked
from wink.tools import ToolResult

__all__ = ["WIRE_TYPES", "wire_schemas"]

WIRE_TYPES: dict[str, Any] = {
    "ToolCall": ToolCall,
    "ToolInvoked": ToolInvoked,
    "ToolResult": ToolResult[Any],
}
"""File stem to type: what wink receives from models and records of each call."""


def wire_schemas() -> dict[str, JsonSchema]:
    """File stem to a standalone Draft 2020-12 document of the type as wink serializes it."""
    return {
        name: {"$schema": DRAFT_2020_12, "title": name, **compile_contract(tp).output_schema}
        for name, tp in WIRE_TYPES.items()
    }
