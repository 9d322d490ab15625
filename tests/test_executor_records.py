"""The ``ToolInvoked`` the executor records: a plain frozen event, each field in place."""

from __future__ import annotations

import dataclasses
import pickle
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest

from wink import MarkdownSection, Prompt, PromptTemplate, Tool, ToolContext, ToolResult
from wink.policy import PolicyDecision
from wink.runtime import Session, ToolCall, ToolExecutor, ToolInvoked

START = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


class Clock:
    """Moves one second each time it is read."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        current = self.now
        self.now += timedelta(seconds=1)
        return current


@dataclass(frozen=True)
class Word:
    text: str


def echo(params: Word, *, context: ToolContext) -> ToolResult[Word]:
    if params.text == "boom":
        raise ValueError("boom")
    return ToolResult(message="echoed", value=params)


class RefuseNo:
    """Denies a call whose text is ``no``."""

    name = "refuse_no"

    def check(self, tool: object, params: Word, *, context: ToolContext) -> PolicyDecision:
        if params.text == "no":
            return PolicyDecision.deny("not that word")
        return PolicyDecision.allow()

    def on_result(self, tool: object, params: object, result: object, *, context: object) -> None:
        return None


def executor(session: Session) -> ToolExecutor:
    tool = Tool[Word, Word](name="echo", description="d", handler=echo)
    template = PromptTemplate(
        ns="tests",
        key="records",
        name="records-prompt",
        sections=[MarkdownSection(title="T", tools=[tool], policies=[RefuseNo()])],
    )
    return ToolExecutor(prompt=Prompt(template), session=session, clock=Clock())


def recorded(text: str) -> tuple[ToolResult[Word], ToolInvoked]:
    session = Session()
    result = executor(session).execute(ToolCall("echo", f'{{"text": "{text}"}}', "c1"))
    event = session[ToolInvoked].latest()
    assert event is not None
    return result, event


def test_a_successful_call_is_recorded_with_every_field_in_place() -> None:
    result, event = recorded("hi")
    assert dataclasses.astuple(event) == dataclasses.astuple(
        ToolInvoked(
            prompt_name="records-prompt",
            name="echo",
            call_id="c1",
            params=Word("hi"),
            arguments='{"text": "hi"}',
            result=result,
            rendered_output='{"text":"hi"}',
            started_at=START,
            finished_at=START + timedelta(seconds=1),
            denied=False,
            rolled_back=False,
        )
    )
    assert event.result is result


def test_a_denied_call_is_recorded_denied_and_not_rolled_back() -> None:
    result, event = recorded("no")
    assert (event.denied, event.rolled_back) == (True, False)
    assert (event.result, event.rendered_output) == (result, "")
    assert result == ToolResult.error("not that word")


def test_a_failed_call_is_recorded_rolled_back_and_not_denied() -> None:
    result, event = recorded("boom")
    assert (event.denied, event.rolled_back) == (False, True)
    assert result.message == "Tool 'echo' raised ValueError: boom"
    assert event.duration == timedelta(seconds=1)


def test_a_recorded_event_is_frozen_hashable_and_pickles_to_an_equal_event() -> None:
    _, event = recorded("hi")
    assert type(event) is ToolInvoked
    assert hash(event) == hash(dataclasses.replace(event))
    assert pickle.loads(pickle.dumps(event)) == event
    with pytest.raises(dataclasses.FrozenInstanceError):
        event.name = "changed"  # type: ignore[misc]  # frozen, as the test shows
