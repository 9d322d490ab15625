"""Schema conformance: emitted schemas are valid Draft 2020-12 documents."""

from __future__ import annotations

from functools import lru_cache

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from wink.contract.walk import JsonSchema
from wink.errors import PromptValidationError

__all__ = ["check_schema", "schema_validator"]


def check_schema(schema: JsonSchema, subject: str) -> None:
    """Raise ``PromptValidationError`` unless ``schema`` conforms to Draft 2020-12."""
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as error:
        raise PromptValidationError(
            f"{subject}: the emitted JSON Schema is not valid Draft 2020-12 "
            f"at {'/'.join(map(str, error.path)) or '<root>'}: {error.message}"
        ) from None


@lru_cache(maxsize=4096)
def _validator_for(key: str) -> Draft202012Validator:
    import json

    return Draft202012Validator(json.loads(key))


def schema_validator(schema: JsonSchema) -> Draft202012Validator:
    """A jsonschema validator for ``schema`` (cached by the schema's content)."""
    import json

    return _validator_for(json.dumps(schema, sort_keys=True))
