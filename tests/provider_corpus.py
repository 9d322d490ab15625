"""Hard model shapes for the provider dialects, each as a Tool.

``CORPUS`` maps a short name to a tool; ``STRICT_IMPOSSIBLE`` names the tools
strict modes cannot express (they must raise, naming the field), and
``RECURSIVE`` the ones whose schema refers to itself.
"""

from __future__ import annotations

import collections.abc as abc
import datetime
import ipaddress
import uuid
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import (
    AliasChoices,
    AnyUrl,
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    HttpUrl,
    NaiveDatetime,
    Tag,
)

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
    when: AwareDatetime
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


class AbstractCollections(BaseModel):
    names: abc.Sequence[str]
    more: abc.MutableSequence[int] = []
    ids: abc.Set[int] = frozenset()


class AbstractMapping(BaseModel):
    counts: abc.Mapping[str, int]


class LookAroundPattern(BaseModel):
    model_config = ConfigDict(regex_engine="python-re")

    amount: Annotated[str, Field(pattern=r"^\d+(?!USD)$")]
    code: Annotated[str, Field(pattern=r"^[A-Z]{3}$")]


class PatternedKeys(BaseModel):
    labels: dict[Annotated[str, Field(pattern=r"^x-")], str]


class AliasChoice(BaseModel):
    city: str = Field(validation_alias=AliasChoices("town", "city_name"))


class FrozenPoint(BaseModel):
    model_config = ConfigDict(frozen=True)

    x: int
    y: int


class FrozenSetOfModels(BaseModel):
    points: frozenset[FrozenPoint]


class Hen(BaseModel):
    kind: Literal["hen"] = "hen"
    eggs: int


class Cow(BaseModel):
    kind: Literal["cow"]
    milk: float


def _animal_tag(value: Any) -> Any:
    return value.get("kind") if isinstance(value, dict) else getattr(value, "kind", None)


class CallableDiscriminator(BaseModel):
    animal: Annotated[
        Annotated[Hen, Tag("hen")] | Annotated[Cow, Tag("cow")], Discriminator(_animal_tag)
    ]


class Moments(BaseModel):
    at: datetime.datetime
    day: datetime.date
    clock: datetime.time
    span: datetime.timedelta
    naive: NaiveDatetime


class Identifiers(BaseModel):
    ident: uuid.UUID
    page: HttpUrl
    v4: ipaddress.IPv4Address
    v6: ipaddress.IPv6Address


class Numbers(BaseModel):
    count: int
    big: Annotated[int, Field(ge=-(2**63), le=2**63)]
    ratio: Annotated[float, Field(multiple_of=0.5)]
    price: Decimal = Decimal("0")


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
    "abstract_collections": _tool("abstract_collections", AbstractCollections),
    "abstract_mapping": _tool("abstract_mapping", AbstractMapping),
    "look_around_pattern": _tool("look_around_pattern", LookAroundPattern),
    "patterned_keys": _tool("patterned_keys", PatternedKeys),
    "alias_choices": _tool("alias_choices", AliasChoice),
    "frozenset_of_models": _tool("frozenset_of_models", FrozenSetOfModels),
    "callable_discriminator": _tool("callable_discriminator", CallableDiscriminator),
    "moments": _tool("moments", Moments, Moments),
    "identifiers": _tool("identifiers", Identifiers, Identifiers),
    "numbers": _tool("numbers", Numbers, Numbers),
}

STRICT_IMPOSSIBLE = {
    "free_form_dict": "counts",
    "bare_list": "items",
    "abstract_mapping": "counts",
    "patterned_keys": "labels",
}
"""Tools whose params strict modes cannot express, and the field each error names."""

RECURSIVE = frozenset({"recursive_model"})
"""Tools whose params schema refers to itself."""
