"""Prompts shared by the adapter tests: a notes agent with a failing lookup, a structured
answer, and a delegating tool that evaluates a sub-prompt through ``context.adapter``."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, Field

from wink import (
    MarkdownSection,
    Prompt,
    PromptTemplate,
    Tool,
    ToolContext,
    ToolResult,
)

NOTES = {1: "milk", 2: "bread", 3: "eggs"}


class Search(BaseModel):
    query: str = Field(description="Text the note titles contain")


class GetNote(BaseModel):
    id: int


@dataclass(frozen=True)
class Tagged:
    """A note tag kept in the session's STATE."""

    tag: str


def search(params: Search, *, context: ToolContext) -> ToolResult[list[str]]:
    hits = [title for title in NOTES.values() if params.query in title]
    return ToolResult.ok(hits, message=f"{len(hits)} hits.")


def get_note(params: GetNote, *, context: ToolContext) -> ToolResult[str]:
    if params.id not in NOTES:
        return ToolResult.error(f"No note {params.id}.")
    return ToolResult.ok(NOTES[params.id], message="Found.")


search_tool = Tool[Search, list[str]](
    name="search", description="Find note titles.", handler=search
)
note_tool = Tool[GetNote, str](name="get_note", description="Read one note.", handler=get_note)

notes_template = PromptTemplate(
    ns="tests/adapters",
    key="notes",
    sections=[
        MarkdownSection(
            title="Notes", template="Which notes mention e?", tools=[search_tool, note_tool]
        )
    ],
)


class Summary(BaseModel):
    """The structured answer."""

    titles: list[str] = Field(description="Matching note titles")
    count: int


summary_template = PromptTemplate[Summary](
    ns="tests/adapters",
    key="summary",
    sections=[MarkdownSection(title="Summary", template="Summarise the notes.")],
)


class Tag(BaseModel):
    tag: str


def tag_note(params: Tag, *, context: ToolContext) -> ToolResult[Tagged]:
    return ToolResult.ok(Tagged(params.tag), message="Tagged.")


tag_tool = Tool[Tag, Tagged](name="tag", description="Tag the notes.", handler=tag_note)

child_template = PromptTemplate(
    ns="tests/adapters",
    key="tagger",
    sections=[MarkdownSection(title="Tagger", template="Tag the notes.", tools=[tag_tool])],
)


class Delegate(BaseModel):
    task: str
    fail_after: bool = False


def delegate(params: Delegate, *, context: ToolContext) -> ToolResult[str]:
    assert context.adapter is not None and context.session is not None
    child = context.adapter.evaluate(Prompt(child_template), session=context.session)
    if params.fail_after:
        raise RuntimeError("the delegated work was refused")
    return ToolResult.ok(child.text or "", message="Delegated.")


delegate_tool = Tool[Delegate, str](
    name="delegate", description="Hand a task to the tagger.", handler=delegate
)

parent_template = PromptTemplate(
    ns="tests/adapters",
    key="parent",
    sections=[MarkdownSection(title="Parent", template="Delegate tagging.", tools=[delegate_tool])],
)
