"""Schema conformance: emitted schemas are valid Draft 2020-12 documents.

Both checks run in ``jsonschema-rs`` first (microseconds); only a schema or a
document it refuses goes through the pure-Python ``jsonschema``, whose errors
name the location in the words wink reports. The two agree on the project's
corpus (see the tests). Where they could differ, on a ``pattern`` (ECMA-262
regular expressions in Rust, Python's ``re`` in ``jsonschema``), what either one
accepts passes. Both are imported on first use.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from wink.contract.walk import JsonSchema
from wink.errors import PromptValidationError

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError

__all__ = ["SchemaChecker", "check_schema", "schema_checker", "schema_validator"]

_DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"


def check_schema(schema: JsonSchema, subject: str) -> None:
    """Raise ``PromptValidationError`` unless ``schema`` conforms to Draft 2020-12."""
    # A schema naming another draft is checked by the Python validator alone, which
    # always reads it as Draft 2020-12 (the Rust one would follow ``$schema``).
    if schema.get("$schema", _DRAFT_2020_12) == _DRAFT_2020_12 and _rust_meta_is_valid(schema):
        return
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as error:
        raise PromptValidationError(
            f"{subject}: the emitted JSON Schema is not valid Draft 2020-12 "
            f"at {'/'.join(map(str, error.path)) or '<root>'}: {error.message}"
        ) from None


def _rust_meta_is_valid(schema: JsonSchema) -> bool:
    import jsonschema_rs

    try:
        return bool(jsonschema_rs.meta.is_valid(schema))
    except ValueError:  # a container it does not read (a list subclass): ask jsonschema
        return False


class SchemaChecker:
    """Checks documents against one JSON Schema: a fast yes, or the errors in detail."""

    __slots__ = ("_fast", "_schema", "_slow", "is_valid")

    def __init__(self, schema: JsonSchema) -> None:
        import jsonschema_rs

        self._schema = schema
        self._fast = jsonschema_rs.Draft202012Validator(schema)
        self._slow: Draft202012Validator | None = None
        self.is_valid: Callable[[Any], bool] = self._fast.is_valid
        """Whether a document conforms (the Rust validator's own method: no wrapper)."""

    def iter_errors(self, document: Any) -> Iterator[ValidationError]:
        """The ``jsonschema`` errors of ``document``: none at all when it conforms."""
        if self._fast.is_valid(document):
            return iter(())
        if self._slow is None:
            self._slow = schema_validator(self._schema)
        return self._slow.iter_errors(document)


@lru_cache(maxsize=4096)
def _checker_for(key: str) -> SchemaChecker:
    return SchemaChecker(json.loads(key))


def schema_checker(schema: JsonSchema) -> SchemaChecker:
    """A ``SchemaChecker`` for ``schema`` (cached by the schema's content)."""
    return _checker_for(json.dumps(schema, sort_keys=True))


@lru_cache(maxsize=4096)
def _validator_for(key: str) -> Draft202012Validator:
    from jsonschema import Draft202012Validator

    return Draft202012Validator(json.loads(key))


def schema_validator(schema: JsonSchema) -> Draft202012Validator:
    """A jsonschema validator for ``schema`` (cached by the schema's content)."""
    return _validator_for(json.dumps(schema, sort_keys=True))
