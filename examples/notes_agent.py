"""wink end to end: typed tools, policies, an OpenAI-shaped tool-call round, rollback.

``make demo`` runs this. No network: the "model" is a recorded Chat Completions
response, so the example shows exactly what wink does with real provider payloads.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field

from wink import (
    InMemoryFilesystem,
    MarkdownSection,
    Prompt,
    PromptTemplate,
    ReadBeforeWritePolicy,
    Session,
    Tool,
    ToolContext,
    ToolExecutor,
    ToolInvoked,
    ToolResult,
)
from wink.providers import openai


@dataclass(frozen=True)
class ReadNote:
    path: str = field(metadata={"description": "Note path, relative to the notes folder"})


@dataclass(frozen=True)
class WriteNote:
    path: str = field(metadata={"description": "Note path, relative to the notes folder"})
    text: str = field(metadata={"description": "The whole new content of the note"})
    append: bool = field(default=False, metadata={"description": "Append instead of replace"})


@dataclass(frozen=True)
class NoteText:
    path: str
    text: str

    def render(self) -> str:
        return f"{self.path}:\n{self.text}"


def read_note(params: ReadNote, *, context: ToolContext) -> ToolResult[NoteText]:
    text = context.require_filesystem().read(params.path)
    return ToolResult.ok(NoteText(params.path, text), message=f"Read {params.path}.")


def write_note(params: WriteNote, *, context: ToolContext) -> ToolResult[NoteText]:
    fs = context.require_filesystem()
    old = fs.read(params.path) if params.append and fs.exists(params.path) else ""
    text = old + params.text
    fs.write(params.path, text)
    if "TODO" in text:
        # The write above is rolled back by the executor: failed calls leave no state.
        raise ValueError("notes must not contain TODO markers")
    return ToolResult.ok(NoteText(params.path, text), message=f"Wrote {params.path}.")


read_tool = Tool[ReadNote, NoteText](
    name="read_file", description="Read a note.", handler=read_note
)
write_tool = Tool[WriteNote, NoteText](
    name="write_file", description="Create, replace or append to a note.", handler=write_note
)

template = PromptTemplate(
    ns="examples/notes",
    key="notes_agent",
    sections=[
        MarkdownSection(
            title="Notes",
            template="Keep the user's notes tidy. Read a note before changing it.",
            tools=[read_tool, write_tool],
            policies=[ReadBeforeWritePolicy()],
        )
    ],
)

# What a model answered, as the Chat Completions API returns it.
RECORDED_RESPONSE = {
    "choices": [
        {
            "message": {
                "role": "assistant",
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {
                            "name": "write_file",
                            "arguments": '{"path": "todo.md", "text": "milk"}',
                        },
                    },
                    {
                        "id": "call_2",
                        "type": "function",
                        "function": {"name": "read_file", "arguments": '{"path": "./todo.md"}'},
                    },
                    {
                        "id": "call_3",
                        "type": "function",
                        "function": {
                            "name": "write_file",
                            "arguments": (
                                '{"path": "todo.md", "text": "bread\\nmilk", "append": null}'
                            ),
                        },
                    },
                    {
                        "id": "call_4",
                        "type": "function",
                        "function": {
                            "name": "write_file",
                            "arguments": (
                                '{"path": "todo.md", "text": "\\nTODO: eggs", "append": true}'
                            ),
                        },
                    },
                    {
                        "id": "call_5",
                        "type": "function",
                        "function": {
                            "name": "write_file",
                            "arguments": '{"path": "todo.md", "txt": "oops"}',
                        },
                    },
                    {
                        "id": "call_6",
                        "type": "function",
                        "function": {"name": "delete_file", "arguments": '{"path": "todo.md"}'},
                    },
                ],
            }
        }
    ]
}


def main() -> None:
    """Show the strict OpenAI spec, run the recorded calls, print the tool messages."""
    # A handler fails on purpose here to show the rollback; its failure is printed
    # below as the model sees it, so the executor's warning would only repeat it.
    logging.getLogger("wink.runtime.executor").setLevel(logging.ERROR)
    fs = InMemoryFilesystem(files={"todo.md": "bread"})
    prompt = Prompt(template).bind(resources={InMemoryFilesystem: fs})
    session = Session()
    executor = ToolExecutor(prompt=prompt, session=session)

    print(executor.rendered_prompt.text)
    print("\n# OpenAI tool specs (strict)")
    print(json.dumps(openai.tool_specs(executor.rendered_prompt, strict=True)[1], indent=2))

    print("\n# Tool calls")
    for call in openai.parse_tool_calls(RECORDED_RESPONSE):
        result = executor.execute(call)
        message = openai.tool_message(call, result)
        status = "ok " if result.success else "ERR"
        arguments = call.arguments  # OpenAI sends the arguments as JSON text
        print(f"{status} {call.name}({arguments!s}) -> {message['content']!r}")

    print("\n# State after the calls")
    print(f"todo.md = {fs.read('todo.md')!r}")
    events = session[ToolInvoked].all()
    print(f"{len(events)} ToolInvoked events, {sum(e.success for e in events)} successful")


if __name__ == "__main__":
    main()
