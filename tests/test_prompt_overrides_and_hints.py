"""Sections that refuse overrides, skipped overrides, and the parameter hints of a render."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Annotated, Literal

import pytest
from pydantic import BaseModel, Field

from wink import (
    MarkdownSection,
    ParamHint,
    Prompt,
    PromptOverrides,
    PromptTemplate,
    PromptValidationError,
    Tool,
)


@dataclass
class Query:
    text: str = field(metadata={"description": "What to look for"})
    limit: int = 5


@dataclass
class Answer:
    text: str


def tool(name: str, *, accepts_overrides: bool = True) -> Tool[Query, Answer]:
    return Tool[Query, Answer](
        name=name, description=f"The {name} tool.", accepts_overrides=accepts_overrides
    )


def prompt_with(overrides: PromptOverrides) -> Prompt:
    template = PromptTemplate(
        ns="tests",
        key="overrides",
        sections=[
            MarkdownSection(
                title="Stable",
                accepts_overrides=False,
                tools=[tool("frozen")],
                children=[MarkdownSection(title="Inner", tools=[tool("inner")])],
            ),
            MarkdownSection(
                title="Open", tools=[tool("tuned"), tool("fixed", accepts_overrides=False)]
            ),
        ],
    )
    return Prompt(template, overrides=overrides)


EVERY_TOOL = PromptOverrides(
    tool_descriptions={name: "Changed." for name in ("frozen", "inner", "tuned", "fixed")},
    param_descriptions={"inner": {"text": "Changed too"}},
)


def test_overrides_refused_by_a_section_or_a_tool_are_skipped_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="wink.prompt.prompt"):
        rendered = prompt_with(EVERY_TOOL).render()
    assert {tool.name: tool.description for tool in rendered.tools} == {
        "frozen": "The frozen tool.",
        "inner": "The inner tool.",
        "tuned": "Changed.",
        "fixed": "The fixed tool.",
    }
    assert rendered.tool_param_descriptions["inner"]["text"].description == "What to look for"
    assert caplog.messages == [
        "override skipped: tool 'frozen' sits in section stable, which does not accept overrides",
        "override skipped: tool 'inner' sits in section stable, which does not accept overrides",
        "override skipped: tool 'fixed' does not accept overrides",
    ]


def test_strict_overrides_raise_for_the_first_refused_override() -> None:
    strict = PromptOverrides(
        tool_descriptions=dict(EVERY_TOOL.tool_descriptions),
        param_descriptions=dict(EVERY_TOOL.param_descriptions),
        strict=True,
    )
    with pytest.raises(PromptValidationError) as raised:
        prompt_with(strict)
    assert str(raised.value) == (
        "tool 'frozen' sits in section stable, which does not accept overrides"
    )


def test_sections_accept_overrides_by_default() -> None:
    assert MarkdownSection(title="Any").accepts_overrides is True


class Address(BaseModel):
    city: str


class Order(BaseModel):
    item: Annotated[str, Field(description="What to buy")]
    quantity: int = Field(default=1, ge=1, description="How many")
    note: str | None = None
    tags: list[str] = Field(default_factory=list)
    speed: Literal["slow", "fast"] = "slow"
    ship_to: Address


def test_param_hints_give_type_and_default_for_every_field() -> None:
    order_tool = Tool[Order, Answer](name="order", description="Order something.")
    hints = order_tool.param_hints()
    assert hints == {
        "item": ParamHint("What to buy", "string", required=True),
        "quantity": ParamHint("How many", "integer", False, True, 1),
        "note": ParamHint(None, "string | null", False, True, None),
        "tags": ParamHint(None, "array of string", False, True, []),
        "speed": ParamHint(None, '"slow" | "fast"', False, True, "slow"),
        "ship_to": ParamHint(None, "Address", required=True),
    }
    assert [str(hint) for hint in hints.values()] == [
        "What to buy (string, required)",
        "How many (integer, default 1)",
        "(string | null, default null)",
        "(array of string, default [])",
        '("slow" | "fast", default "slow")',
        "(Address, required)",
    ]


def test_rendered_param_descriptions_cover_fields_without_a_description() -> None:
    template = PromptTemplate(
        ns="tests", key="hints", sections=[MarkdownSection(title="T", tools=[tool("search")])]
    )
    rendered = Prompt(template).render()
    assert dict(rendered.tool_param_descriptions["search"]) == {
        "text": ParamHint("What to look for", "string", required=True),
        "limit": ParamHint(None, "integer", required=False, has_default=True, default=5),
    }
