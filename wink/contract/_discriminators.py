"""Whether a callable discriminator can choose each of its branches from JSON.

Parsing calls a callable discriminator with the decoded JSON object, a ``dict``.
One written for Python values (``isinstance(v, Cat)``) returns a tag for a model
instance that it never returns for a dict: that branch shows in the schema but can
never be parsed. Compiling calls the discriminator with a sample of each branch,
once as an instance and once as a JSON object, and refuses a tag reached only by
instances. A tag reached by neither (a value-based choice the samples miss) is
given the benefit of the doubt.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

from wink.contract._aliases import shown_name
from wink.errors import PromptValidationError

__all__ = ["check_discriminator_reaches_every_choice", "tag_property"]

_SAMPLES: dict[str, Any] = {
    "str": "",
    "int": 0,
    "float": 0.0,
    "bool": False,
    "none": None,
    "list": [],
    "set": [],
    "frozenset": [],
    "tuple": [],
    "dict": {},
    "decimal": "0",
    "date": "2024-01-01",
    "datetime": "2024-01-01T00:00:00Z",
    "time": "00:00:00Z",
    "timedelta": "P1D",
}
_MAX_DEPTH = 6


def check_discriminator_reaches_every_choice(
    node: Mapping[str, Any], where: str, definitions: Mapping[str, Any]
) -> None:
    """Raise ``PromptValidationError`` naming ``where`` for a branch JSON cannot reach."""
    discriminator: Callable[[Any], Any] = node["discriminator"]
    choices: Mapping[Any, Any] = node["choices"]
    from_json: set[Any] = set()
    from_python: set[Any] = set()
    for choice in choices.values():
        sample = _sample(choice, definitions, 0)
        from_json.add(_tag(discriminator, sample))
        instance = _instance(choice, sample, definitions)
        if instance is not None:
            from_python.add(_tag(discriminator, instance))
    unreachable = [tag for tag in choices if tag in from_python and tag not in from_json]
    if unreachable:
        tags = ", ".join(repr(tag) for tag in unreachable)
        raise PromptValidationError(
            f"{where}: the callable discriminator returns {tags} for a model or dataclass "
            "instance but not for the JSON object that parsing gives it, so that branch "
            "could never be chosen from JSON; read the tag from a dict too "
            "(v.get('kind') for a dict), or use Field(discriminator='kind')"
        )


def tag_property(node: Mapping[str, Any], definitions: Mapping[str, Any]) -> str | None:
    """The key a callable discriminator reads its tag from, when the samples show one.

    Each branch's sample is given to the discriminator without one of its keys at a
    time: the key without which no branch keeps its tag is the tag's key.
    """
    discriminator: Callable[[Any], Any] = node["discriminator"]
    found: set[str] = set()
    for tag, choice in node["choices"].items():
        sample = _sample(choice, definitions, 0)
        if not isinstance(sample, dict) or _tag(discriminator, sample) != tag:
            return None
        needed = {key for key in sample if _tag(discriminator, _without(sample, key)) != tag}
        if len(needed) != 1:
            return None
        found |= needed
    return found.pop() if len(found) == 1 else None


def _without(sample: dict[str, Any], key: str) -> dict[str, Any]:
    return {name: value for name, value in sample.items() if name != key}


def _tag(discriminator: Callable[[Any], Any], value: Any) -> Any:
    try:
        tag = discriminator(value)
        hash(tag)
    except Exception:  # a discriminator that fails on a value chooses nothing for it
        return _NO_TAG
    return tag


_NO_TAG = object()


def _resolved(schema: Any, definitions: Mapping[str, Any]) -> Any:
    seen = 0
    while isinstance(schema, dict) and schema.get("type") == "definition-ref" and seen < 32:
        schema = definitions.get(schema["schema_ref"])
        seen += 1
    return schema


def _sample(schema: Any, definitions: Mapping[str, Any], depth: int) -> Any:
    """A JSON value ``schema`` describes: each field filled with its default or a blank."""
    schema = _resolved(schema, definitions)
    if not isinstance(schema, dict) or depth > _MAX_DEPTH:
        return None
    kind = schema.get("type")
    if kind in _SAMPLES:
        return _SAMPLES[kind]
    if kind == "literal":
        return schema["expected"][0]
    if kind == "enum":
        return schema["members"][0].value
    if kind == "json-or-python":
        return _sample(schema["json_schema"], definitions, depth)
    if kind == "default" and "default" in schema:
        return schema["default"]
    if kind in ("model-fields", "typed-dict"):
        fields = schema["fields"].items()
    elif kind == "dataclass-args":
        fields = ((field["name"], field) for field in schema["fields"])
    elif kind in ("union", "tagged-union"):
        choices = schema["choices"]
        first = next(iter(choices.values() if isinstance(choices, dict) else choices))
        return _sample(first[0] if isinstance(first, tuple) else first, definitions, depth + 1)
    elif isinstance(schema.get("schema"), dict):
        return _sample(schema["schema"], definitions, depth + 1)
    else:
        return None
    return {
        shown_name(name, field.get("validation_alias")) or name: _sample(
            field["schema"], definitions, depth + 1
        )
        for name, field in fields
    }


def _instance(choice: Any, sample: Any, definitions: Mapping[str, Any]) -> Any:
    """A model or dataclass instance of ``choice`` holding ``sample``'s values, if it is one."""
    schema = _resolved(choice, definitions)
    while isinstance(schema, dict) and schema.get("type") in (
        "function-after",
        "function-before",
        "function-wrap",
    ):
        schema = _resolved(schema.get("schema"), definitions)
    if not isinstance(schema, dict) or not isinstance(sample, dict):
        return None
    cls = schema.get("cls")
    if schema.get("type") == "model" and cls is not None:
        fields = getattr(cls, "model_fields", {})
        values = {name: sample.get(name) for name in fields}
        return cls.model_construct(**values)
    if schema.get("type") == "dataclass" and cls is not None:
        instance = object.__new__(cls)
        for field in dataclasses.fields(cls):
            object.__setattr__(instance, field.name, sample.get(field.name))
        return instance
    return None
