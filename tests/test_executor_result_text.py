"""The text a successful call's result carries, however the handler built, kept or
shared it: the executor returns a new result with its text and never changes the
handler's own."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wink import MarkdownSection, Prompt, PromptTemplate, Tool, ToolContext, ToolResult
from wink.runtime import Session, ToolCall, ToolExecutor, ToolInvoked


@dataclass
class Count:
    n: int


@dataclass
class Labelled(Count):
    """A subclass of a declared result type: its own JSON has a field more."""

    label: str = "x"


@dataclass
class Total:
    total: int

    def render(self) -> str:
        return f"total {self.total}"


built: list[int] = []
kept: list[ToolResult[Count]] = []
SHARED: ToolResult[Labelled] = ToolResult(message="shared", value=Labelled(7, "seven"))


def fresh(params: Count, *, context: ToolContext) -> ToolResult[Total]:
    result = ToolResult(message="fresh", value=Total(params.n))
    built.append(id(result))
    return result


def keeping(params: Count, *, context: ToolContext) -> ToolResult[Count]:
    result: ToolResult[Count] = ToolResult(message="kept", value=Labelled(params.n, "four"))
    kept.append(result)
    return result


def shared(params: Count, *, context: ToolContext) -> ToolResult[Labelled]:
    return SHARED


def executor(session: Session | None = None) -> ToolExecutor:
    tools = [
        Tool[Count, Total](name="fresh", description="d", handler=fresh),
        Tool[Count, Count](name="keeping", description="d", handler=keeping),
        # Two tools sharing one result, each rendering it through its own result type.
        Tool[Count, Count](name="shared_count", description="d", handler=shared),
        Tool[Count, Labelled](name="shared_labelled", description="d", handler=shared),
    ]
    template = PromptTemplate(
        ns="tests", key="result_text", sections=[MarkdownSection(title="T", tools=tools)]
    )
    return ToolExecutor(prompt=Prompt(template), session=session or Session())


def kept_and_shared_outcome() -> dict[str, Any]:
    """Call the keeping tool, then both sharing tools; what each party renders after."""
    kept.clear()
    session = Session()
    run = executor(session)
    returned = [
        run.execute(ToolCall(name, '{"n": 4}', name)).render()
        for name in ("keeping", "shared_count", "shared_labelled")
    ]
    return {
        "returned": returned,
        "recorded": [[e.result.render(), e.rendered_output] for e in session[ToolInvoked]],
        "kept": kept[0].render(),
        "shared": SHARED.render(),
    }


EXPECTED_OUTCOME = {
    "returned": ['{"n":4}', '{"n":7}', '{"n":7,"label":"seven"}'],
    "recorded": [
        ['{"n":4}', '{"n":4}'],
        ['{"n":7}', '{"n":7}'],
        ['{"n":7,"label":"seven"}', '{"n":7,"label":"seven"}'],
    ],
    # The handlers' own results render their whole values, as they did before the calls.
    "kept": '{"n":4,"label":"four"}',
    "shared": '{"n":7,"label":"seven"}',
}


def test_the_result_returned_is_a_new_one_carrying_the_rendered_text() -> None:
    built.clear()
    result = executor().execute(ToolCall("fresh", '{"n": 3}', "c1"))
    assert id(result) != built[0]
    assert result == ToolResult(message="fresh", value=Total(3))
    assert result.render() == "total 3"
    assert result.model_text() == "fresh\n\ntotal 3"


def test_a_result_the_handler_keeps_is_never_changed_and_renders_its_whole_value() -> None:
    kept.clear()
    session = Session()
    result = executor(session).execute(ToolCall("keeping", '{"n": 4}', "c1"))
    assert result is not kept[0]
    assert result == kept[0]
    assert result.render() == '{"n":4}'  # through the declared type, Count
    assert kept[0].render() == '{"n":4,"label":"four"}'
    # The kept result renders its value as it is now: no text was cached on it.
    kept[0].value.n = 5  # type: ignore[union-attr]  # a Labelled
    assert kept[0].render() == '{"n":5,"label":"four"}'
    assert result.render() == '{"n":4}'
    assert session[ToolInvoked].latest().result is result  # type: ignore[union-attr]


def test_a_result_shared_by_two_tools_gives_records_whose_result_and_text_agree() -> None:
    assert kept_and_shared_outcome() == EXPECTED_OUTCOME


def test_a_result_shared_between_calls_is_never_changed_and_each_call_has_its_text() -> None:
    run = executor()
    first = run.execute(ToolCall("shared_labelled", '{"n": 1}', "c1"))
    second = run.execute(ToolCall("shared_labelled", '{"n": 1}', "c2"))
    assert first is not SHARED and second is not SHARED and first is not second
    assert first.render() == second.render() == '{"n":7,"label":"seven"}'
    # The shared result renders its value as it is now: no text was cached on it.
    value = SHARED.value
    assert value is not None
    value.n = 8
    try:
        assert SHARED.render() == '{"n":8,"label":"seven"}'
        assert first.render() == '{"n":7,"label":"seven"}'
    finally:
        value.n = 7


TRACED_RUN = """
import json, sys

def tracer(frame, event, arg):
    # What a debugger stepping through an import, or a snooping tracer, does.
    if "wink" in frame.f_code.co_filename:
        frame.f_locals
        return tracer
    return None

sys.path.insert(0, sys.argv[1])
sys.settrace(tracer)
import test_executor_result_text as scenario  # imports wink under the tracer
sys.settrace(None)
print(json.dumps(scenario.kept_and_shared_outcome()))
"""


def test_results_are_never_changed_when_wink_was_imported_under_a_tracer() -> None:
    # A tracer that reads frames' locals while wink is imported holds extra references
    # meanwhile: nothing the executor decides may depend on such counts.
    completed = subprocess.run(
        [sys.executable, "-c", TRACED_RUN, str(Path(__file__).parent)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert json.loads(completed.stdout) == EXPECTED_OUTCOME


async def afresh(params: Count, *, context: ToolContext) -> ToolResult[Total]:
    result = ToolResult(message="fresh", value=Total(params.n))
    built.append(id(result))
    return result


def test_an_awaited_result_is_returned_as_a_new_one_carrying_its_text() -> None:
    built.clear()
    tool = Tool[Count, Total](name="afresh", description="d", handler=afresh)
    template = PromptTemplate(
        ns="tests", key="result_text_async", sections=[MarkdownSection(title="T", tools=[tool])]
    )
    run = ToolExecutor(prompt=Prompt(template), session=Session())
    result = asyncio.run(run.aexecute(ToolCall("afresh", '{"n": 6}', "c1")))
    assert id(result) != built[0]
    assert result.render() == "total 6"
