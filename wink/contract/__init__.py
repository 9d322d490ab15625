"""The contract layer: types compiled into validators and JSON Schemas."""

from wink.contract._contract import (
    DEFAULT_MAX_BYTES,
    Contract,
    ContractViolation,
    compile_contract,
    type_name,
)
from wink.contract.conformance import SchemaChecker, check_schema, schema_checker, schema_validator
from wink.contract.messages import FieldProblem, Problems, describe_problems, format_path
from wink.contract.schema import DRAFT_2020_12, normalise_schema
from wink.contract.walk import JsonSchema, iter_schema_nodes, map_schema

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DRAFT_2020_12",
    "Contract",
    "SchemaChecker",
    "ContractViolation",
    "FieldProblem",
    "JsonSchema",
    "Problems",
    "check_schema",
    "compile_contract",
    "describe_problems",
    "format_path",
    "iter_schema_nodes",
    "map_schema",
    "normalise_schema",
    "schema_checker",
    "schema_validator",
    "type_name",
]
