"""The first example of the Tool Runtime Specification, running on wink.

Run it with ``make demo`` (or ``.venv/bin/python examples/lookup_entity.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from wink import MarkdownSection, Prompt, PromptTemplate, Tool, ToolContext, ToolResult


@dataclass
class LookupParams:
    entity_id: str = field(metadata={"description": "Global identifier to fetch"})
    include_related: bool = field(default=False)


@dataclass
class LookupResult:
    entity_id: str
    document_url: str


def lookup_handler(params: LookupParams, *, context: ToolContext) -> ToolResult[LookupResult]:
    result = LookupResult(entity_id=params.entity_id, document_url="https://example.com")
    message = f"Fetched entity {result.entity_id}."
    return ToolResult(message=message, value=result)


lookup_tool = Tool[LookupParams, LookupResult](
    name="lookup_entity",
    description="Fetch structured information for a given entity id.",
    handler=lookup_handler,
)

template = PromptTemplate(
    ns="examples/tooling",
    key="tools_overview",
    name="tools_overview",
    sections=[
        MarkdownSection(
            title="Guidance",
            template="Use tools when you need up-to-date context.",
            tools=[lookup_tool],
        )
    ],
)
prompt = Prompt(template)


def main() -> None:
    """Render the prompt and show what a model would be given."""
    import json

    rendered = prompt.render()
    markdown = rendered.text
    tools = rendered.tools
    assert tools[0].name == "lookup_entity"
    print(markdown)
    print()
    for tool in tools:
        print(f"tool {tool.name}: {tool.description}")
        print(json.dumps(tool.params_schema, indent=2))


if __name__ == "__main__":
    main()
