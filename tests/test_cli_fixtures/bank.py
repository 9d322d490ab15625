"""A stored session's tool, for ``wink sessions`` tests (loaded as a file target too)."""

from __future__ import annotations

from dataclasses import dataclass

from wink import MarkdownSection, PromptTemplate, Tool, ToolContext, ToolResult


@dataclass(frozen=True)
class Deposit:
    amount: int


@dataclass(frozen=True)
class Balance:
    amount: int

    def render(self) -> str:
        return str(self.amount)


def deposit(params: Deposit, *, context: ToolContext) -> ToolResult[Balance]:
    assert context.session is not None
    latest = context.session[Balance].latest()
    total = (latest.amount if latest else 0) + params.amount
    return ToolResult(message="deposited", value=Balance(total))


template = PromptTemplate(
    ns="bank",
    key="deposits",
    sections=[
        MarkdownSection(
            title="Tools",
            tools=[Tool[Deposit, Balance](name="deposit", description="Deposit.", handler=deposit)],
        )
    ],
)
