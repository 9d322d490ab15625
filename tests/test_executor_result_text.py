"""The text a successful call's result carries, however the handler built or kept it."""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass

from wink import MarkdownSection, Prompt, PromptTemplate, Tool, ToolContext, ToolResult
from wink.runtime import Session, ToolCall, ToolExecutor, ToolInvoked


@dataclass
class Count:
    n: int


@dataclass
class Total:
    total: int

    def render(self) -> str:
        return f"total {self.total}"


@dataclass
class LabelledTotal(Total):
    label: str = "x"


IN_PLACE = sys.version_info < (3, 14)
"""Whether this interpreter's reference counts let a result only the call holds take
its text in place (elsewhere every result is copied, which is equal)."""

built: list[int] = []
kept: list[ToolResult[Total]] = []
SHARED: ToolResult[Total] = ToolResult(message="shared", value=LabelledTotal(7, "seven"))


def fresh(params: Count, *, context: ToolContext) -> ToolResult[Total]:
    result = ToolResult(message="fresh", value=Total(params.n))
    built.append(id(result))
    return result


def keeping(params: Count, *, context: ToolContext) -> ToolResult[Count]:
    result = ToolResult(message="kept", value=Count(params.n))
    kept.append(result)  # type: ignore[arg-type]  # only its text is looked at
    return result


def shared(params: Count, *, context: ToolContext) -> ToolResult[Total]:
    return SHARED


def executor(session: Session | None = None) -> ToolExecutor:
    tools = [
        Tool[Count, Total](name="fresh", description="d", handler=fresh),
        Tool[Count, Count](name="keeping", description="d", handler=keeping),
        Tool[Count, Total](name="shared", description="d", handler=shared),
    ]
    template = PromptTemplate(
        ns="tests", key="result_text", sections=[MarkdownSection(title="T", tools=tools)]
    )
    return ToolExecutor(prompt=Prompt(template), session=session or Session())


def test_a_result_only_the_call_holds_is_returned_itself_with_its_text() -> None:
    built.clear()
    result = executor().execute(ToolCall("fresh", '{"n": 3}', "c1"))
    assert (id(result) == built[0]) is IN_PLACE
    assert result.render() == "total 3"
    assert result.model_text() == "fresh\n\ntotal 3"


def test_a_result_the_handler_keeps_is_copied_and_the_kept_one_is_unchanged() -> None:
    kept.clear()
    session = Session()
    result = executor(session).execute(ToolCall("keeping", '{"n": 4}', "c1"))
    assert result is not kept[0]
    assert result == kept[0]
    assert result.render() == '{"n":4}'
    # The kept result renders its value as it is now: no text was cached on it.
    kept[0].value.n = 5  # type: ignore[union-attr]  # a Count
    assert kept[0].render() == '{"n":5}'
    assert result.render() == '{"n":4}'
    assert session[ToolInvoked].latest().result is result  # type: ignore[union-attr]


def test_a_result_shared_between_calls_is_never_changed_and_each_call_has_its_text() -> None:
    run = executor()
    first = run.execute(ToolCall("shared", '{"n": 1}', "c1"))
    second = run.execute(ToolCall("shared", '{"n": 1}', "c2"))
    assert first is not SHARED and second is not SHARED and first is not second
    assert first.render() == second.render() == "total 7"
    # The shared result renders its value as it is now: no text was cached on it.
    value = SHARED.value
    assert isinstance(value, Total)
    value.total = 8
    try:
        assert SHARED.render() == "total 8"
        assert first.render() == "total 7"
    finally:
        value.total = 7


async def afresh(params: Count, *, context: ToolContext) -> ToolResult[Total]:
    result = ToolResult(message="fresh", value=Total(params.n))
    built.append(id(result))
    return result


def test_an_awaited_result_only_the_call_holds_is_returned_itself_with_its_text() -> None:
    built.clear()
    tool = Tool[Count, Total](name="afresh", description="d", handler=afresh)
    template = PromptTemplate(
        ns="tests", key="result_text_async", sections=[MarkdownSection(title="T", tools=[tool])]
    )
    run = ToolExecutor(prompt=Prompt(template), session=Session())
    result = asyncio.run(run.aexecute(ToolCall("afresh", '{"n": 6}', "c1")))
    assert (id(result) == built[0]) is IN_PLACE
    assert result.render() == "total 6"
