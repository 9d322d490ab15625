"""A result value without ``render()`` is shown as JSON, with one warning per type."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import pytest

from wink import Prompt, PromptTemplate, Session, Tool, ToolContext, ToolResult
from wink.prompt import MarkdownSection
from wink.runtime import ToolCall, ToolExecutor


@dataclass(frozen=True)
class Unrendered:
    count: int


@dataclass(frozen=True)
class AlsoUnrendered:
    label: str


@dataclass(frozen=True)
class Rendered:
    count: int

    def render(self) -> str:
        return f"{self.count} items"


def count(params: None, *, context: ToolContext) -> ToolResult[Unrendered]:
    return ToolResult.ok(Unrendered(3), message="Counted.")


def test_missing_render_is_logged_once_per_result_type_not_per_call(
    caplog: pytest.LogCaptureFixture,
) -> None:
    tool = Tool[None, Unrendered](name="count", description="Count.", handler=count)
    template = PromptTemplate(
        ns="tests", key="render", sections=[MarkdownSection(title="Count", tools=[tool])]
    )
    executor = ToolExecutor(prompt=Prompt(template), session=Session())
    with caplog.at_level(logging.WARNING, logger="wink.tools.result"):
        first = executor.execute(ToolCall("count"))
        second = executor.execute(ToolCall("count"))
        assert ToolResult.ok(AlsoUnrendered("x")).render() == '{"label":"x"}'
        assert ToolResult.ok(Rendered(2)).render() == "2 items"
        assert ToolResult.ok([1, 2]).render() == "[1,2]"
    assert (first.render(), second.render()) == ('{"count":3}', '{"count":3}')
    assert caplog.messages == [
        "result value type Unrendered has no render() method, so the model sees it as JSON; "
        "define render(self) -> str on it to choose the text",
        "result value type AlsoUnrendered has no render() method, so the model sees it as "
        "JSON; define render(self) -> str on it to choose the text",
    ]
