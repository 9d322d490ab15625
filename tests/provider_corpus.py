"""Hard model shapes for the provider dialects, each as a Tool.

``CORPUS`` maps a short name to a tool; ``STRICT_IMPOSSIBLE`` names the tools
strict modes cannot express (they must raise, naming the field), and
``RECURSIVE`` the ones whose schema refers to itself.
"""

from __future__ import annotations

import datetime
import uuid
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import AnyUrl, BaseModel, Field

from wink import Tool


class OptionalField(BaseModel):
    query: str
    limit: int | None = None


class Defaults(BaseModel):
    query: str
    limit: int = 10
    tags: list[str] = Field(default_factory=list)


class Address(BaseModel):
    """A postal address."""

    street: str
    city: str = Field(description="City name")


class NestedDescribed(BaseModel):
    home: Address = Field(description="Where the person lives")
    work: Address | None = None


class Cat(BaseModel):
    kind: Literal["cat"] = "cat"
    lives: int = 9


class Dog(BaseModel):
    kind: Literal["dog"]
    good: bool


class DiscriminatedUnion(BaseModel):
    pet: Annotated[Cat | Dog, Field(discriminator="kind")]


class TreeNode(BaseModel):
    value: int
    children: list[TreeNode] = []


class Point(BaseModel):
    x: float
    y: float


class SameModelTwice(BaseModel):
    start: Point
    end: Point


class FreeFormDict(BaseModel):
    counts: dict[str, int]


class BareList(BaseModel):
    items: list  # type: ignore[type-arg]  # a bare list is the shape under test


class DecimalField(BaseModel):
    amount: Decimal


class LiteralInts(BaseModel):
    level: Literal[1, 2, 3]


class SingleLiteral(BaseModel):
    mode: Literal["fast"]


class TupleField(BaseModel):
    pair: tuple[int, str]


class Formats(BaseModel):
    when: datetime.datetime
    ident: uuid.UUID
    link: AnyUrl


class Constraints(BaseModel):
    count: Annotated[int, Field(ge=1, le=10)]
    ratio: Annotated[float, Field(gt=0, lt=1)]
    name: Annotated[str, Field(min_length=1, max_length=20)]


class Empty(BaseModel):
    pass


class TitleProperty(BaseModel):
    title: str = Field(description="The document title")
    body: str


@dataclass
class DataclassParams:
    path: str = field(metadata={"description": "File path"})
    recursive: bool = False


class Listing(BaseModel):
    names: list[str]


def _tool(name: str, params: Any, result: Any = None) -> Tool[Any, Any]:
    return Tool[params, result](name=name, description=f"Corpus shape: {name}.")


CORPUS: dict[str, Tool[Any, Any]] = {
    "optional_field": _tool("optional_field", OptionalField, Listing),
    "non_none_default": _tool("non_none_default", Defaults, list[str]),
    "nested_described": _tool("nested_described", NestedDescribed, Address),
    "discriminated_union": _tool("discriminated_union", DiscriminatedUnion, Cat | Dog),
    "recursive_model": _tool("recursive_model", TreeNode, TreeNode),
    "same_model_twice": _tool("same_model_twice", SameModelTwice, Point),
    "free_form_dict": _tool("free_form_dict", FreeFormDict, dict[str, int]),
    "bare_list": _tool("bare_list", BareList, str),
    "decimal": _tool("decimal", DecimalField, Decimal),
    "literal_ints": _tool("literal_ints", LiteralInts, int),
    "single_literal": _tool("single_literal", SingleLiteral),
    "tuple": _tool("tuple", TupleField, tuple[int, str]),
    "formats": _tool("formats", Formats, Formats),
    "constraints": _tool("constraints", Constraints),
    "empty_params": _tool("empty_params", Empty, Listing),
    "no_params": _tool("no_params", None, bool),
    "title_property": _tool("title_property", TitleProperty, TitleProperty),
    "dataclass_params": _tool("dataclass_params", DataclassParams, Listing),
}

STRICT_IMPOSSIBLE = frozenset({"free_form_dict", "bare_list"})
"""Tools whose params strict modes cannot express."""

RECURSIVE = frozenset({"recursive_model"})
"""Tools whose params schema refers to itself."""
