"""Planning reducers: registered by the section, and events that change the plan as the tools do."""

from __future__ import annotations

import json
from typing import Any

import pytest

from wink import Prompt, PromptTemplate, Session, ToolResult
from wink.contrib.planning import (
    AddStep,
    Plan,
    PlanningError,
    PlanningToolsSection,
    PlanStep,
    ReadPlan,
    SetupPlan,
    UpdateStep,
    read_plan_tool,
    register_plan_slice,
)
from wink.runtime import ToolCall, ToolExecutor, append


def executor_for(session: Session, section: PlanningToolsSection | None = None) -> ToolExecutor:
    template = PromptTemplate(
        ns="tests", key="planning", sections=[section or PlanningToolsSection()]
    )
    return ToolExecutor(prompt=Prompt(template), session=session)


def run(executor: ToolExecutor, name: str, arguments: Any) -> ToolResult[Any]:
    return executor.execute(ToolCall(f"planning_{name}", json.dumps(arguments)))


def test_a_section_bound_to_a_session_registers_the_reducers_at_once() -> None:
    session = Session()
    PlanningToolsSection(session=session)
    session.dispatch(SetupPlan("Ship", ("build", "test")))
    session.dispatch(UpdateStep(2, status="done"))
    assert session[Plan].all() == (
        Plan("Ship", "active", (PlanStep(1, "build"), PlanStep(2, "test", "done")), 3),
    )
    assert session[SetupPlan].all() == ()  # reduced into the plan, not kept apart


def test_the_first_call_registers_the_reducers_so_only_the_current_plan_is_kept() -> None:
    session = Session()
    executor = executor_for(session)
    assert run(executor, "setup_plan", {"objective": "Ship", "initial_steps": ["a"]}).success
    assert run(executor, "add_step", {"steps": ["b"]}).success
    session.dispatch(AddStep(("c",)))
    assert session[Plan].all() == (
        Plan("Ship", "active", (PlanStep(1, "a"), PlanStep(2, "b"), PlanStep(3, "c")), 4),
    )


def test_dispatched_events_change_the_plan_exactly_as_the_tools_do() -> None:
    by_tools, by_events = Session(), Session()
    register_plan_slice(by_events)
    executor = executor_for(by_tools)
    steps: list[tuple[str, Any, object]] = [
        (
            "setup_plan",
            {"objective": "Ship", "initial_steps": ["a", "b"]},
            SetupPlan("Ship", ("a", "b")),
        ),
        ("add_step", {"steps": ["c"]}, AddStep(("c",))),
        ("update_step", {"step_id": 1, "status": "done"}, UpdateStep(1, status="done")),
        ("update_step", {"step_id": 3, "title": "C"}, UpdateStep(3, title="C")),
        ("setup_plan", {"objective": "Again", "initial_steps": ["d"]}, SetupPlan("Again", ("d",))),
        ("update_step", {"step_id": 4, "status": "done"}, UpdateStep(4, status="done")),
    ]
    for name, arguments, event in steps:
        result = run(executor, name, arguments)
        by_events.dispatch(event)
        assert result.value == by_events[Plan].latest()
        assert by_tools[Plan].all() == by_events[Plan].all()
    assert by_events[Plan].latest() == Plan("Again", "completed", (PlanStep(4, "d", "done"),), 5)


@pytest.mark.parametrize(
    ("events", "message"),
    [
        ((AddStep(("a",)),), "No plan exists yet: call planning_setup_plan first."),
        (
            (SetupPlan("Ship", ("a",)), UpdateStep(7, status="done")),
            "The plan has no step 7 (its step ids: 1); call planning_read_plan to see them.",
        ),
        (
            (SetupPlan("Ship"), UpdateStep(1)),
            "Nothing to change for step 1: give a title, a status or both.",
        ),
    ],
)
def test_an_event_that_cannot_apply_raises_the_tools_message_and_changes_nothing(
    events: tuple[object, ...], message: str
) -> None:
    session = Session()
    register_plan_slice(session)
    for event in events[:-1]:
        session.dispatch(event)
    before = session[Plan].all()
    with pytest.raises(PlanningError) as raised:
        session.dispatch(events[-1])
    assert str(raised.value) == message
    assert session[Plan].all() == before


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        (
            {"objective": "   "},
            "objective: value error, must contain a visible character, not only whitespace "
            '(got "   ")',
        ),
        (
            {"objective": "Ship", "initial_steps": ["a", "\t"]},
            "initial_steps[1]: value error, must contain a visible character, not only "
            'whitespace (got "\\t")',
        ),
    ],
)
def test_whitespace_only_titles_are_refused_by_the_tools(arguments: Any, problem: str) -> None:
    session = Session()
    result = run(executor_for(session), "setup_plan", arguments)
    assert (result.success, result.message) == (
        False,
        f"Invalid arguments for tool 'planning_setup_plan':\n{problem}",
    )
    assert session[Plan].all() == ()


def test_whitespace_only_titles_are_refused_in_events_built_in_python() -> None:
    for build, message in [
        (lambda: SetupPlan(" "), "the objective is blank: give it at least one visible character"),
        (lambda: AddStep(("a", "")), "step 1 is blank: give it at least one visible character"),
        (
            lambda: UpdateStep(1, title="\n"),
            "the title is blank: give it at least one visible character",
        ),
        (lambda: AddStep(()), "no steps to add: give at least one title"),
        (lambda: SetupPlan("x" * 501), "the objective has 501 characters; at most 500 are allowed"),
    ]:
        with pytest.raises(ValueError) as raised:
            build()
        assert str(raised.value) == message


def test_read_plan_takes_the_read_plan_params_type() -> None:
    assert read_plan_tool.params_type is ReadPlan
    assert read_plan_tool.params_schema == {
        "description": "No arguments: the current plan is shown as it is.",
        "properties": {},
        "type": "object",
        "additionalProperties": False,
    }


def test_reducers_registered_by_the_application_after_the_first_call_stay() -> None:
    session = Session()
    executor = executor_for(session)
    run(executor, "setup_plan", {"objective": "Ship"})
    session[Plan].register(Plan, append)  # keep every version from now on
    run(executor, "add_step", {"steps": ["a"]})
    assert [plan.steps for plan in session[Plan].all()] == [(), (PlanStep(1, "a"),)]
