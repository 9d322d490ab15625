"""A shop's tools as they were when its session was recorded."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from wink import MarkdownSection, Prompt, PromptTemplate, Tool, ToolContext, ToolResult


@dataclass(frozen=True)
class AddItem:
    sku: str
    quantity: int = 1


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
    total: int

    def render(self) -> str:
        return str(self.total)


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
    return ToolResult(message="total", value=Total(count))


def note(params: NoteParams, *, context: ToolContext) -> ToolResult[None]:
    assert context.session is not None
    context.session.dispatch(Note(params.text))
    return ToolResult(message="noted", value=None)


def checkout(params: CheckoutParams, *, context: ToolContext) -> ToolResult[None]:
    return ToolResult(message="ordered", value=None)


tools: list[Tool[Any, Any]] = [
    Tool[AddItem, Cart](name="add_item", description="Add an item.", handler=add_item),
    Tool[TotalParams, Total](name="total", description="Count the items.", handler=total),
    Tool[NoteParams, None](name="note", description="Keep a note.", handler=note),
    Tool[CheckoutParams, None](name="checkout", description="Order.", handler=checkout),
]
prompt = Prompt(
    PromptTemplate(
        ns="shop",
        key="cart",
        sections=[MarkdownSection(title="Shop", template="Shop.", tools=tools)],
    )
)
