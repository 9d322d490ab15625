"""An agent evaluated end to end: ``adapter.evaluate`` runs the whole tool loop.

``make demo`` runs this after the notes example. Without an API key the model is
``wink.testing.ScriptedAdapter``, replaying a plausible conversation; with
``OPENAI_API_KEY`` (or ``ANTHROPIC_API_KEY``) set, the same prompt runs against
the real provider (model from ``WINK_DEMO_MODEL`` when set).

The agent tidies a shopping list with four tools. One of them delegates to a
sub-prompt with ``context.adapter.evaluate(...)``; a write that breaks a rule is
rolled back; the answer is a typed ``Report``.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from typing import Any

from wink import (
    Filesystem,
    InMemoryFilesystem,
    MarkdownSection,
    Prompt,
    PromptExecuted,
    PromptTemplate,
    ProviderAdapter,
    ReadBeforeWritePolicy,
    Session,
    Tool,
    ToolContext,
    ToolResult,
)
from wink.testing import Reply, ScriptedAdapter, call


@dataclass(frozen=True)
class NoParams:
    pass


@dataclass(frozen=True)
class ReadNote:
    path: str = field(metadata={"description": "Note path, relative to the notes folder"})


@dataclass(frozen=True)
class WriteNote:
    path: str = field(metadata={"description": "Note path, relative to the notes folder"})
    text: str = field(metadata={"description": "The whole new content of the note"})


@dataclass(frozen=True)
class Categories:
    """How the sub-prompt sorts a list."""

    food: list[str] = field(metadata={"description": "Items you eat or drink"})
    other: list[str] = field(metadata={"description": "Everything else"})

    def render(self) -> str:
        """The text the model reads in the tool message (JSON without this method)."""
        return f"food: {', '.join(self.food)}\nother: {', '.join(self.other)}"


@dataclass(frozen=True)
class Report:
    """The agent's final answer."""

    changed: list[str] = field(metadata={"description": "Paths of the notes you changed"})
    summary: str = field(metadata={"description": "One sentence for the user"})


def list_notes(params: NoParams, *, context: ToolContext) -> ToolResult[list[str]]:
    paths = context.require_filesystem().list(".")
    return ToolResult.ok(paths, message=f"{len(paths)} notes.")


def read_note(params: ReadNote, *, context: ToolContext) -> ToolResult[str]:
    text = context.require_filesystem().read(params.path)
    return ToolResult.ok(text, message=f"Read {params.path}.")


def write_note(params: WriteNote, *, context: ToolContext) -> ToolResult[None]:
    context.require_filesystem().write(params.path, params.text)
    if "TODO" in params.text:
        # The write above is rolled back: a failed call leaves no state behind.
        raise ValueError("notes must not contain TODO markers")
    return ToolResult(message=f"Wrote {params.path}.")


def categorise(params: ReadNote, *, context: ToolContext) -> ToolResult[Categories]:
    """Delegate to a sub-prompt on the same adapter and session."""
    assert context.adapter is not None and context.session is not None
    text = context.require_filesystem().read(params.path)
    child = Prompt(categorise_template).bind(ListText(text))
    response = context.adapter.evaluate(child, session=context.session)
    assert response.output is not None
    return ToolResult.ok(response.output, message="Sorted.")


@dataclass(frozen=True)
class ListText:
    text: str


categorise_template = PromptTemplate[Categories](
    ns="examples/agent",
    key="categorise",
    sections=[
        MarkdownSection[ListText](
            title="Sort a shopping list",
            template="Sort each line of this list into food or other:\n\n${text}",
        )
    ],
)

tools: list[Tool[Any, Any]] = [
    Tool[NoParams, list[str]](name="list_notes", description="List notes.", handler=list_notes),
    Tool[ReadNote, str](name="read_note", description="Read a note.", handler=read_note),
    Tool[WriteNote, None](name="write_note", description="Replace a note.", handler=write_note),
    Tool[ReadNote, Categories](
        name="categorise", description="Sort a list note into food and other.", handler=categorise
    ),
]

template = PromptTemplate[Report](
    ns="examples/agent",
    key="tidy",
    sections=[
        MarkdownSection(
            title="Tidy the shopping list",
            template=(
                "Sort shopping.md so that food comes first, one item per line, without "
                "duplicates or TODO markers. Read a note before writing it."
            ),
            tools=tools,
            policies=[ReadBeforeWritePolicy()],
        )
    ],
)

SCRIPT: list[Reply] = [
    [call("list_notes"), call("read_note", {"path": "shopping.md"})],
    call("categorise", {"path": "shopping.md"}),
    {"food": ["milk", "bread"], "other": ["soap"]},  # the sub-prompt's answer
    call("write_note", {"path": "shopping.md", "text": "milk\nbread\nsoap\nTODO: eggs"}),
    call("write_note", {"path": "shopping.md", "text": "milk\nbread\nsoap"}),
    {"changed": ["shopping.md"], "summary": "Food first, duplicates removed."},
]
"""What the scripted model answers, one reply per request."""


def choose_adapter() -> ProviderAdapter:
    """The real provider when its key is set, else the scripted model."""
    model = os.environ.get("WINK_DEMO_MODEL")
    if os.environ.get("OPENAI_API_KEY"):
        import openai

        from wink.providers.openai import OpenAIAdapter

        return OpenAIAdapter(openai.OpenAI(), model=model or "gpt-4.1-mini")
    if os.environ.get("ANTHROPIC_API_KEY"):
        import anthropic

        from wink.providers.anthropic import AnthropicAdapter

        return AnthropicAdapter(
            anthropic.Anthropic(), model=model or "claude-sonnet-4-5", max_tokens=2048
        )
    return ScriptedAdapter(SCRIPT)


def main() -> None:
    """Evaluate the agent and print its tool calls, its report and the notes."""
    # A handler fails on purpose here to show the rollback; its failure is printed
    # below as the model sees it, so the executor's warning would only repeat it.
    logging.getLogger("wink.runtime.executor").setLevel(logging.ERROR)
    files = InMemoryFilesystem(files={"shopping.md": "soap\nmilk\nTODO: bread\nmilk"})
    prompt = Prompt(template).bind(resources={Filesystem: files})
    session = Session()
    adapter = choose_adapter()
    response = adapter.evaluate(prompt, session=session)

    print(f"# Evaluated {response.prompt_name!r} with {adapter.name} in {response.turns} turns")
    for event in response.tool_results:
        status = "ok " if event.success else "ERR"
        print(f"{status} {event.name}({event.arguments!s}) -> {event.result.message}")
    print("\n# Report")
    print(response.output)
    print("\n# shopping.md")
    print(files.read("shopping.md"))
    print("\n# Evaluations in the session")
    for executed in session[PromptExecuted].all():
        print(f"{executed.prompt_name}: {executed.turns} turns, {executed.tool_calls} tool calls")


if __name__ == "__main__":
    main()
