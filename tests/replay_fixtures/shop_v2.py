"""A shop's tools changed since its session was recorded: `quantity` is required,
`Total.total` is renamed `amount`, notes are kept in capitals, and a policy denies checkout."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from wink import (
    MarkdownSection,
    PolicyDecision,
    Prompt,
    PromptTemplate,
    Tool,
    ToolContext,
    ToolResult,
)


@dataclass(frozen=True)
class AddItem:
    sku: str
    quantity: int


@dataclass(frozen=True)
class Cart:
    lines: list[str]

    def render(self) -> str:
        return ", ".join(self.lines)


@dataclass(frozen=True)
class TotalParams:
    currency: str = "EUR"


@dataclass(frozen=True)
class Total:
    amount: int

    def render(self) -> str:
        return str(self.amount)


@dataclass(frozen=True)
class NoteParams:
    text: str


@dataclass(frozen=True)
class Note:
    text: str


@dataclass(frozen=True)
class CheckoutParams:
    note: str = ""


def add_item(params: AddItem, *, context: ToolContext) -> ToolResult[Cart]:
    assert context.session is not None
    cart = context.session[Cart].latest()
    lines = [*(cart.lines if cart else []), f"{params.sku} x{params.quantity}"]
    return ToolResult(message="added", value=Cart(lines))


def total(params: TotalParams, *, context: ToolContext) -> ToolResult[Total]:
    assert context.session is not None
    cart = context.session[Cart].latest()
    count = sum(int(line.rpartition("x")[2]) for line in (cart.lines if cart else []))
    return ToolResult(message="total", value=Total(amount=count))


def note(params: NoteParams, *, context: ToolContext) -> ToolResult[None]:
    assert context.session is not None
    context.session.dispatch(Note(params.text.upper()))
    return ToolResult(message="noted", value=None)


def checkout(params: CheckoutParams, *, context: ToolContext) -> ToolResult[None]:
    return ToolResult(message="ordered", value=None)


tools: list[Tool[Any, Any]] = [
    Tool[AddItem, Cart](name="add_item", description="Add an item.", handler=add_item),
    Tool[TotalParams, Total](name="total", description="Count the items.", handler=total),
    Tool[NoteParams, None](name="note", description="Keep a note.", handler=note),
    Tool[CheckoutParams, None](name="checkout", description="Order.", handler=checkout),
]


class NoCheckoutAtNight:
    """Denies every checkout."""

    name = "no-checkout-at-night"

    def check(self, tool: Tool[Any, Any], params: Any, *, context: ToolContext) -> PolicyDecision:
        """Deny checkout, allow the rest."""
        if tool.name == "checkout":
            return PolicyDecision.deny("checkout is closed at night; try again tomorrow")
        return PolicyDecision.allow()

    def on_result(
        self, tool: Tool[Any, Any], params: Any, result: ToolResult[Any], *, context: ToolContext
    ) -> None:
        """Nothing to record."""


prompt = Prompt(
    PromptTemplate(
        ns="shop",
        key="cart",
        sections=[MarkdownSection(title="Shop", template="Shop.", tools=tools)],
        policies=[NoCheckoutAtNight()],
    )
)
