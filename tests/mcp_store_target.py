"""A served prompt whose one tool keeps a running total in the session (``wink serve --store``)."""

from __future__ import annotations

from dataclasses import dataclass

from wink import MarkdownSection, Prompt, PromptTemplate, Tool, ToolContext, ToolResult


@dataclass(frozen=True)
class Add:
    amount: int


@dataclass(frozen=True)
class Total:
    amount: int

    def render(self) -> str:
        return str(self.amount)


def add(params: Add, *, context: ToolContext) -> ToolResult[Total]:
    assert context.session is not None
    latest = context.session[Total].latest()
    return ToolResult(
        message="added", value=Total((latest.amount if latest else 0) + params.amount)
    )


prompt = Prompt(
    PromptTemplate(
        ns="tests",
        key="counter",
        sections=[
            MarkdownSection(
                title="Tools",
                key="tools",
                tools=[Tool[Add, Total](name="add", description="Add to the total.", handler=add)],
            )
        ],
    )
)
