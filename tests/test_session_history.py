"""``Session(keep_history=True)``: every committed version of a ``STATE`` slice."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from wink import (
    MarkdownSection,
    PolicyDecision,
    Prompt,
    PromptTemplate,
    Session,
    SliceKind,
    SliceValues,
    SliceVersion,
    Snapshot,
    SnapshotError,
    ToolCall,
    ToolContext,
    ToolExecutor,
    ToolInvoked,
    ToolResult,
    tool,
)
from wink.runtime.history import undone_versions

START = datetime(2025, 1, 1, 12, tzinfo=UTC)


class StepClock:
    """Each reading is 1 ms after the previous one."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        self.now += timedelta(milliseconds=1)
        return self.now


def at(milliseconds: int) -> datetime:
    return START + timedelta(milliseconds=milliseconds)


@dataclass(frozen=True)
class Count:
    value: int


@dataclass(frozen=True)
class Label:
    text: str


@dataclass(frozen=True)
class Seen:
    what: str


@dataclass(frozen=True)
class Bump:
    by: int


COUNT = f"{__name__}:Count"
LABEL = f"{__name__}:Label"


def fields(version: SliceVersion) -> tuple[Any, ...]:
    return (
        version.slice_type,
        tuple(version.values),
        version.changed_at,
        version.cause,
        version.call_id,
        version.tool,
        version.undoes_from,
    )


def test_each_committed_change_of_a_state_slice_is_kept_as_a_version() -> None:
    session = Session(keep_history=True, clock=StepClock())
    session[Seen].declare(SliceKind.LOG)
    session[Count].register(Bump, lambda values, e: (Count(values[-1].value + e.by),))
    session[Label].register(Bump, lambda values, e: (Label(f"+{e.by}"),))
    session.dispatch(Count(1))
    session.dispatch(Bump(2))  # one dispatch, two slices: two versions, one moment
    session.dispatch(Seen("a LOG slice"))  # not state: no version
    session[Count].seed([Count(7)])
    session[Label].clear()
    assert session.keeps_history is True
    assert session[SliceVersion].kind is SliceKind.LOG
    assert [fields(v) for v in session[SliceVersion]] == [
        (COUNT, (Count(1),), at(1), COUNT, None, None, None),
        (COUNT, (Count(3),), at(2), f"{__name__}:Bump", None, None, None),
        (LABEL, (Label("+2"),), at(2), f"{__name__}:Bump", None, None, None),
        (COUNT, (Count(7),), at(3), "update", None, None, None),
        (LABEL, (), at(4), "update", None, None, None),
    ]
    # Each version holds the slice's own values: nothing is copied.
    assert session[SliceVersion].all()[3].values is session[Count].values()


def test_a_session_without_keep_history_keeps_no_versions() -> None:
    session = Session()
    session.dispatch(Count(1))
    session[Count].seed([Count(2)])
    session.restore(Snapshot())
    assert session.keeps_history is False
    assert session[SliceVersion].all() == ()
    assert session.snapshot().log == {}


@dataclass(frozen=True)
class CountParams:
    value: int


@tool
def set_count(params: CountParams, *, context: ToolContext) -> ToolResult[Count]:
    """Set the count; a negative one fails after changing it."""
    if params.value < 0:
        context.session.dispatch(Count(params.value))
        raise ValueError("negative")
    return ToolResult.ok(Count(params.value), message="Set.")


@dataclass(frozen=True)
class NoZero:
    name: str = "no_zero"

    def check(self, tool: Any, params: Any, *, context: ToolContext) -> PolicyDecision:
        return PolicyDecision.deny("No zeros.") if params.value == 0 else PolicyDecision.allow()

    def on_result(self, tool: Any, params: Any, result: Any, *, context: ToolContext) -> None:
        pass


def run_calls(session: Session, clock: StepClock, *arguments: str) -> list[ToolInvoked]:
    template = PromptTemplate(
        ns="tests",
        key="count",
        sections=[MarkdownSection(title="Count", tools=[set_count], policies=[NoZero()])],
    )
    executor = ToolExecutor(prompt=Prompt(template), session=session, clock=clock)
    for number, text in enumerate(arguments, 1):
        executor.execute(ToolCall("set_count", text, call_id=f"c{number}"))
    return list(session[ToolInvoked])


def test_a_rolled_back_calls_versions_are_undone_by_a_restore_version() -> None:
    clock = StepClock()
    session = Session(keep_history=True, clock=clock)
    calls = run_calls(session, clock, '{"value": 4}', '{"value": -1}', '{"value": 5}')
    assert [(c.call_id, c.success, c.rolled_back) for c in calls] == [
        ("c1", True, False),
        ("c2", False, True),
        ("c3", True, False),
    ]
    history = session[SliceVersion].values()
    assert [fields(v) for v in history] == [
        # A result value's version names its call; it is committed with the call's record.
        (COUNT, (Count(4),), at(3), "wink.runtime.events:ToolInvoked", "c1", "set_count", None),
        # Made by the failing handler, then undone: the restore version says from where.
        (COUNT, (Count(4), Count(-1)), at(5), COUNT, None, None, None),
        (COUNT, (Count(4),), at(6), "restore", None, None, 1),
        (
            COUNT,
            (Count(4), Count(5)),
            at(10),
            "wink.runtime.events:ToolInvoked",
            "c3",
            "set_count",
            None,
        ),
    ]
    assert undone_versions(history) == {1}
    assert session[Count].all() == (Count(4), Count(5))


def test_a_denied_call_that_changed_nothing_adds_no_version() -> None:
    clock = StepClock()
    session = Session(keep_history=True, clock=clock)
    calls = run_calls(session, clock, '{"value": 0}')
    assert [(c.denied, c.result.message) for c in calls] == [(True, "No zeros.")]
    assert session[SliceVersion].all() == ()


def test_a_nested_rollback_undoes_the_inner_restore_version_too() -> None:
    session = Session(keep_history=True, clock=StepClock())
    outer = session.snapshot()
    session.dispatch(Count(1))
    inner = session.snapshot()
    session.dispatch(Count(2))
    session.restore(inner)
    session.restore(outer)
    history = session[SliceVersion].values()
    assert [(v.cause, tuple(v.values), v.undoes_from) for v in history] == [
        (COUNT, (Count(1),), None),
        (COUNT, (Count(1), Count(2)), None),
        ("restore", (Count(1),), 1),
        ("restore", (), 0),
    ]
    assert undone_versions(history) == {0, 1, 2}


def test_restoring_a_snapshot_from_elsewhere_records_what_it_changed() -> None:
    session = Session(keep_history=True, clock=StepClock())
    session.dispatch(Count(1))
    session.restore(Snapshot({Count: SliceValues([Count(9)])}))
    assert [(v.cause, tuple(v.values), v.undoes_from) for v in session[SliceVersion]] == [
        (COUNT, (Count(1),), None),
        ("restore", (Count(9),), None),
    ]
    assert undone_versions(session[SliceVersion].values()) == set()


HISTORY_JSON = (
    '{"type":"wink.runtime.history:SliceVersion","kind":"log","items":['
    f'{{"slice_type":"{COUNT}","values":[{{"value":1}}],'
    '"changed_at":"2025-01-01T12:00:00.001000Z",'
    f'"cause":"{COUNT}","call_id":null,"tool":null,"undoes_from":null}},'
    f'{{"slice_type":"{COUNT}","values":[],'
    '"changed_at":"2025-01-01T12:00:00.002000Z",'
    '"cause":"restore","call_id":null,"tool":null,"undoes_from":0}]}'
)


def test_the_history_is_saved_and_loaded_with_the_session() -> None:
    session = Session(keep_history=True, clock=StepClock())
    before = session.snapshot()
    session.dispatch(Count(1))
    session.restore(before)
    text = session.snapshot().to_json()
    # The restore took the Count slice away again: only the history is left.
    assert text == f'{{"version":1,"slices":[{HISTORY_JSON}]}}'
    loaded = Snapshot.from_json(text)
    assert loaded.to_json() == text
    versions = loaded.log[SliceVersion]
    # The values come back as JSON data, as fields typed Any do.
    assert [(v.slice_type, v.values, v.undoes_from) for v in versions] == [
        (COUNT, SliceValues([{"value": 1}]), None),
        (COUNT, SliceValues([]), 0),
    ]
    assert isinstance(versions[0].values, SliceValues)
    fresh = Session()
    fresh.restore(loaded, keep_log=False)
    assert fresh.snapshot().to_json() == text


def test_a_version_json_cannot_hold_is_refused_naming_where_it_is() -> None:
    @dataclass(frozen=True)
    class Reading:
        value: float

    session = Session(keep_history=True)
    session.dispatch(Reading(float("nan")))
    session[Reading].seed([Reading(1.0)])  # the slice is savable now; its history is not
    with pytest.raises(SnapshotError) as raised:
        session.snapshot().to_json()
    assert str(raised.value) == (
        "slice wink.runtime.history:SliceVersion cannot be written as JSON: "
        "[0].values[0].value: nan cannot be written as JSON (it has no NaN or Infinity)"
    )
