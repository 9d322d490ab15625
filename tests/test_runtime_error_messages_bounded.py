"""Errors of the session, snapshots and the executor quote what they were given (a type
name, a slice name, a tool name from a model, a session id) at most 2,000 characters."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, make_dataclass
from typing import Any

import pytest

from wink import MarkdownSection, Prompt, PromptTemplate, Tool, ToolContext, ToolResult
from wink.runtime import Session, SliceKind, Snapshot, SnapshotError, ToolCall, ToolExecutor

HUGE = 1_000_000
CUT = f"… ({HUGE - 2000} more characters)"


def document(name: str, items: list[Any] | None = None) -> str:
    slice_entry = {"type": name, "kind": "state", "items": items or []}
    return json.dumps({"version": 1, "slices": [slice_entry]})


def test_a_huge_slice_type_name_that_cannot_be_found_is_quoted_cut() -> None:
    name = "m" * HUGE
    with pytest.raises(SnapshotError) as raised:
        Snapshot.from_json(document(name))
    assert str(raised.value) == (
        f"slices[0]: cannot find slice type {'m' * 2000}{CUT}; pass it in types=[...]"
    )


def test_a_huge_slice_type_name_not_among_the_given_types_is_quoted_cut() -> None:
    @dataclass(frozen=True)
    class Known:
        text: str

    with pytest.raises(SnapshotError) as raised:
        Snapshot.from_json(document("x" * HUGE), types=[Known])
    assert str(raised.value) == (
        f"slices[0]: slice type {'x' * 2000}{CUT} is not among the given types"
    )


def test_a_slice_entry_with_a_huge_key_is_quoted_cut() -> None:
    entry = {"type": "a:B", "kind": "state", "items": [], "k" * HUGE: 1}
    text = json.dumps({"version": 1, "slices": [entry]})
    with pytest.raises(SnapshotError) as raised:
        Snapshot.from_json(text)
    message = str(raised.value)
    assert message.startswith(
        "slices[0]: expected an object with type, kind and items, got ['items', 'k"
    )
    shown = str(sorted(entry))
    assert message.endswith(f"… ({len(shown) - 2000} more characters)")
    assert len(message) < 2200


def test_a_value_that_cannot_be_saved_in_a_slice_with_a_huge_name_is_quoted_cut() -> None:
    huge_type = make_dataclass("Huge", [("number", float)], frozen=True)
    huge_type.__qualname__ = "Q" * HUGE
    session = Session()
    session.dispatch(huge_type(float("nan")))
    with pytest.raises(SnapshotError) as raised:
        session.snapshot().to_json()
    key = f"{huge_type.__module__}:{'Q' * HUGE}"
    assert str(raised.value) == (
        f"slice {key[:2000]}… ({len(key) - 2000} more characters) cannot be written as JSON: "
        "[0].number: nan cannot be written as JSON (it has no NaN or Infinity)"
    )


def test_a_snapshot_slice_kind_contradiction_names_a_huge_type_cut() -> None:
    huge_type = make_dataclass("Huge", [("text", str)], frozen=True)
    huge_type.__qualname__ = "Q" * HUGE
    loaded = Snapshot(log={huge_type: Session()[huge_type].values().append(huge_type("x"))})
    session = Session()
    session[huge_type].declare(SliceKind.STATE)
    with pytest.raises(SnapshotError) as raised:
        session.restore(loaded, keep_log=False)
    assert str(raised.value) == (
        f"the snapshot holds {'Q' * 2000}{CUT} as a log slice, but this session declares it state"
    )


def test_an_unknown_tool_name_from_a_model_is_quoted_cut() -> None:
    @dataclass(frozen=True)
    class Params:
        text: str

    def echo(params: Params, *, context: ToolContext) -> ToolResult[None]:
        return ToolResult(message=params.text)

    tool = Tool[Params, None](name="echo", description="E.", handler=echo)
    prompt = Prompt(
        PromptTemplate(
            ns="tests", key="bounded", sections=[MarkdownSection(title="T", tools=[tool])]
        )
    )
    name = "n" * HUGE
    result = ToolExecutor(prompt=prompt, session=Session()).execute(ToolCall(name, "{}"))
    assert result.message == (
        f"Unknown tool '{'n' * 1999}… ({HUGE + 2 - 2000} more characters). Available tools: echo."
    )


def test_a_huge_session_id_is_quoted_cut_when_a_turn_waits_too_long() -> None:
    entered, release = threading.Event(), threading.Event()

    @dataclass(frozen=True)
    class Params:
        text: str

    def hold(params: Params, *, context: ToolContext) -> ToolResult[None]:
        entered.set()
        release.wait(10.0)
        return ToolResult(message="held")

    tool = Tool[Params, None](name="hold", description="H.", handler=hold)
    prompt = Prompt(
        PromptTemplate(
            ns="tests", key="bounded", sections=[MarkdownSection(title="T", tools=[tool])]
        )
    )
    session = Session(session_id="s" * HUGE)
    first = threading.Thread(
        target=lambda: ToolExecutor(prompt=prompt, session=session).execute(
            ToolCall("hold", '{"text": "a"}')
        )
    )
    first.start()
    try:
        assert entered.wait(10.0)
        waiting = ToolExecutor(prompt=prompt, session=session, turn_timeout=0.1)
        result = waiting.execute(ToolCall("hold", '{"text": "b"}'))
    finally:
        release.set()
        first.join(10.0)
    assert result.message is not None
    assert result.message.startswith("Tool 'hold' could not start: waited 0.1 s for session sss")
    assert f"… ({HUGE + 8 - 2000} more characters), held by another call." in result.message
    assert len(result.message) < 2700
