"""JSON Schema (Draft 2020-12) generation for contracts.

pydantic does most of the work; this module makes the output agree with what
parsing enforces and with what models read best: no generated titles, field
descriptions from every place users write them, ``additionalProperties: false``
on every object that has named properties, and a facade check for dataclasses.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from pydantic.json_schema import GenerateJsonSchema, JsonSchemaMode
from pydantic_core import core_schema as cs

from wink.contract.facade import EMPTY_CONTAINER_FACTORIES, check_dataclass_facade
from wink.contract.walk import JsonSchema, map_schema

__all__ = ["DRAFT_2020_12", "generate_json_schema", "normalise_schema"]

DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"


class _WinkJsonSchema(GenerateJsonSchema):
    """pydantic's generator with wink's rules for fields and dataclasses."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def get_default_value(self, schema: cs.WithDefaultSchema) -> Any:
        # An empty-container factory has one obvious default worth showing; other
        # factories (``uuid4``, ``now``) would make the schema differ on every run.
        factory = schema.get("default_factory")
        if factory in EMPTY_CONTAINER_FACTORIES and not schema.get("default_factory_takes_data"):
            return factory()
        return super().get_default_value(schema)

    def dataclass_schema(self, schema: cs.DataclassSchema) -> JsonSchema:
        json_schema = super().dataclass_schema(schema)
        cls = schema["cls"]
        properties = json_schema.get("properties", {})
        for field in dataclasses.fields(cls):
            description = field.metadata.get("description")
            if isinstance(description, str) and field.name in properties:
                properties[field.name].setdefault("description", description)
        check_dataclass_facade(cls, schema, json_schema)
        return json_schema


def generate_json_schema(core: cs.CoreSchema, mode: JsonSchemaMode) -> JsonSchema:
    """Generate the normalised JSON Schema of a core schema."""
    generated = _WinkJsonSchema().generate(core, mode=mode)
    return normalise_schema(generated)


def normalise_schema(schema: JsonSchema) -> JsonSchema:
    """Drop generated titles and close every object that lists its properties."""
    return map_schema(schema, _normalise_node)


def _normalise_node(node: JsonSchema) -> JsonSchema:
    node.pop("title", None)
    if "properties" in node:
        # Parsing forbids unknown keys everywhere, even for ``extra="allow"`` models.
        node["additionalProperties"] = False
    return node
