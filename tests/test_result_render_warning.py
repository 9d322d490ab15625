"""A result value without ``render()`` is shown as JSON, with one warning per type.

The warning comes where a model is shown the value (the executor's rendering, a
provider message's ``model_text()``), not when code asks a result for its text.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

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
class ReadByHand:
    label: str


@dataclass(frozen=True)
class Rendered:
    count: int

    def render(self) -> str:
        return f"{self.count} items"


def _warning(type_name: str) -> str:
    return (
        f"result value type {type_name} has no render() method, so the model sees it as "
        "JSON; define render(self) -> str on it to choose the text"
    )


def count(params: None, *, context: ToolContext) -> ToolResult[Unrendered]:
    return ToolResult.ok(Unrendered(3), message="Counted.")


def label(params: None, *, context: ToolContext) -> ToolResult[ReadByHand]:
    return ToolResult.ok(ReadByHand("c"), message="Labelled.")


def _executor(tool: Tool[None, Any]) -> ToolExecutor:
    template = PromptTemplate(
        ns="tests", key="render", sections=[MarkdownSection(title="Tools", tools=[tool])]
    )
    return ToolExecutor(prompt=Prompt(template), session=Session())


def test_missing_render_is_logged_once_per_result_type_not_per_call(
    caplog: pytest.LogCaptureFixture,
) -> None:
    executor = _executor(Tool[None, Unrendered](name="count", description="Count.", handler=count))
    with caplog.at_level(logging.WARNING, logger="wink.tools.result"):
        first = executor.execute(ToolCall("count"))
        second = executor.execute(ToolCall("count"))
        assert ToolResult.ok(AlsoUnrendered("x")).model_text() == 'ok\n\n{"label":"x"}'
        assert ToolResult.ok(AlsoUnrendered("y")).model_text() == 'ok\n\n{"label":"y"}'
        assert ToolResult.ok(Rendered(2)).model_text() == "ok\n\n2 items"
        assert ToolResult.ok([1, 2]).model_text() == "ok\n\n[1,2]"
    assert (first.render(), second.render()) == ('{"count":3}', '{"count":3}')
    assert caplog.messages == [_warning("Unrendered"), _warning("AlsoUnrendered")]


def test_asking_a_result_for_its_text_logs_nothing_until_a_model_is_shown_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # render() is the caller's own use of the text (a test, a log line): no model sees it.
    with caplog.at_level(logging.WARNING, logger="wink.tools.result"):
        assert ToolResult.ok(ReadByHand("a")).render() == '{"label":"a"}'
        assert ToolResult.ok(ReadByHand("b")).render() == '{"label":"b"}'
        assert caplog.messages == []
        # The type was not marked as checked: the executor still reports it.
        tool = Tool[None, ReadByHand](name="label", description="Label.", handler=label)
        executed = _executor(tool).execute(ToolCall("label"))
    assert executed.model_text() == 'Labelled.\n\n{"label":"c"}'
    assert caplog.messages == [_warning("ReadByHand")]
