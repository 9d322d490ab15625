"""Tools the ``wink`` command tests load as a file target (this folder is not a package)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, Field

from wink import MarkdownSection, Prompt, PromptOverrides, PromptTemplate, Tool


@dataclass
class SearchParams:
    query: str = field(metadata={"description": "Words to look for"})
    limit: int = 10


@dataclass
class SearchResult:
    titles: list[str]


class Filters(BaseModel):
    kind: Literal["book", "film"]
    year: int | None = None


class CatalogParams(BaseModel):
    filters: Filters
    tags: list[str] = []


class CatalogResult(BaseModel):
    count: int


class TallyParams(BaseModel):
    counts: dict[str, int]


class NoteParams(BaseModel):
    # The schema promises a limit the validator does not enforce: the two disagree.
    text: str = Field(json_schema_extra={"maxLength": 3})


class PageParams(BaseModel):
    page: int = 1
    size: int = 20


class Folder(BaseModel):
    name: str
    children: list[Folder] = []


search = Tool[SearchParams, SearchResult](name="search", description="Search the catalogue.")
catalog = Tool[CatalogParams, CatalogResult](name="catalog", description="Count entries.")
tally = Tool[TallyParams, None](name="tally", description="Add up counts.")
note = Tool[NoteParams, None](name="note", description="Keep a short note.")
browse = Tool[Folder, None](name="browse", description="Walk a folder tree.")
listing = Tool[PageParams, None](name="listing", description="List entries, a page at a time.")
ping = Tool[None, None](name="ping", description="Check the shop is open.")

template = PromptTemplate(
    ns="tests/cli",
    key="shop",
    sections=[
        MarkdownSection(
            title="Search",
            template="Find things.",
            tools=[search],
            children=[MarkdownSection(title="Catalog", template="Count things.", tools=[catalog])],
        )
    ],
)
prompt = Prompt(
    template, overrides=PromptOverrides(tool_descriptions={"search": "Search the shop."})
)
section = template.sections[0].children[0]
tools = [search, catalog]
free_form = [tally]
loose = [note]
with_tree = [search, browse]
all_optional = [listing, ping, search]
mixed = (search, "catalog")
empty: list[Tool[object, object]] = []
number = 42
