"""A support-triage agent: four tools written as plain functions, and a typed answer."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Literal

from wink import (
    InMemoryFilesystem,
    MarkdownSection,
    Prompt,
    PromptTemplate,
    ProviderAdapter,
    ReadBeforeWritePolicy,
    Session,
    ToolContext,
    ToolResult,
    tool,
)

Priority = Literal["p0", "p1", "p2"]


@dataclass(frozen=True)
class Report:
    text: str


@dataclass(frozen=True)
class Triage:
    ticket: str
    priority: Priority
    duplicate_of: str | None = None


@tool
def search(query: str, *, context: ToolContext) -> ToolResult[list[str]]:
    """Search the open tickets for any word of the query."""
    tickets = context.require_filesystem().list("tickets")
    return ToolResult.ok([t for t in tickets if any(w in t for w in query.lower().split())])


@tool
def create_ticket(
    title: str, body: str, priority: Priority = "p2", *, context: ToolContext
) -> ToolResult[str]:
    """Open a ticket; its path is its id.

    Args:
        title: What is wrong, in a few lowercase words.
        body: What happened and how to see it again.
        priority: p0 stops everyone, p1 stops someone, p2 can wait.
    """
    path = f"tickets/{title.replace(' ', '-')}.md"
    context.require_filesystem().write(path, f"{priority}: {body}")
    return ToolResult.ok(path, message="Opened.")


@tool
def read_note(path: str, *, context: ToolContext) -> ToolResult[str]:
    """Read a team note, such as notes/on-call.md."""
    return ToolResult.ok(context.require_filesystem().read(path))


@tool
def write_note(path: str, text: str, *, context: ToolContext) -> ToolResult[None]:
    """Replace a team note's whole text."""
    context.require_filesystem().write(path, text)
    return ToolResult(message=f"Wrote {path}.")


section = MarkdownSection[Report](
    title="Triage",
    template="Find or open the ticket for this report; add it to notes/on-call.md.\n\n${text}",
    tools=[search, create_ticket, read_note, write_note],
    policies=[ReadBeforeWritePolicy(frozenset({"read_note"}), frozenset({"write_note"}))],
)
template = PromptTemplate[Triage](ns="examples", key="triage", sections=[section])


def triage(adapter: ProviderAdapter, report: str, files: InMemoryFilesystem) -> Triage | None:
    prompt = Prompt(template).bind(Report(report), resources={InMemoryFilesystem: files})
    return adapter.evaluate(prompt, session=Session()).output


if __name__ == "__main__":
    import openai

    from wink.providers.openai import OpenAIAdapter

    files = InMemoryFilesystem(files={"notes/on-call.md": "Page Ana.", "tickets/login-loop.md": ""})
    print(triage(OpenAIAdapter(openai.OpenAI(), model="gpt-4.1-mini"), sys.argv[1], files))
    print(files.read("notes/on-call.md"))
