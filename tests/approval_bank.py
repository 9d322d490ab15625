"""A prompt whose transfers above 100 need a person's approval (for the approval tests,
run in this process and in subprocesses)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from wink import (
    ApprovalPolicy,
    MarkdownSection,
    Prompt,
    PromptTemplate,
    Tool,
    ToolContext,
    ToolResult,
)


@dataclass(frozen=True)
class Transfer:
    amount: int


@dataclass(frozen=True)
class Sent:
    amount: int

    def render(self) -> str:
        return f"sent {self.amount}"


def transfer(params: Transfer, *, context: ToolContext) -> ToolResult[Sent]:
    # The result's value is filed in the session under its type (``Sent``).
    return ToolResult.ok(Sent(params.amount), message="done")


def large(tool: Tool[Any, Any], params: Any) -> bool:
    return bool(params.amount > 100)


def bank_prompt(text: str = "Pay the bills.") -> Prompt[Any]:
    template = PromptTemplate(
        ns="tests",
        key="bank",
        sections=[
            MarkdownSection(
                title="Bank",
                template=text,
                tools=[
                    Tool[Transfer, Sent](
                        name="transfer", description="Send money.", handler=transfer
                    )
                ],
                policies=[ApprovalPolicy(tools=frozenset({"transfer"}), when=large)],
            )
        ],
    )
    return Prompt(template)
