"""Planning tools: the plan lifecycle through the executor, its rules and its section."""

from __future__ import annotations

import json
import typing
from dataclasses import dataclass
from typing import Any

import pytest

from wink import (
    PolicyDecision,
    Prompt,
    PromptTemplate,
    Session,
    Tool,
    ToolContext,
    ToolResult,
)
from wink.contrib.planning import (
    Plan,
    PlanningStrategy,
    PlanningToolsSection,
    PlanStep,
    register_plan_slice,
    update_step_tool,
)
from wink.prompt import Enabled, MarkdownSection
from wink.providers import openai
from wink.runtime import ToolCall, ToolExecutor, ToolInvoked

NO_PLAN = "No plan exists yet: call planning_setup_plan first."


def executor_for(session: Session, section: PlanningToolsSection | None = None) -> ToolExecutor:
    template = PromptTemplate(
        ns="tests", key="planning", sections=[section or PlanningToolsSection()]
    )
    return ToolExecutor(prompt=Prompt(template), session=session)


def run(executor: ToolExecutor, name: str, arguments: Any = None) -> ToolResult[Any]:
    encoded = json.dumps({} if arguments is None else arguments)
    return executor.execute(ToolCall(f"planning_{name}", encoded))


def started(*titles: str) -> tuple[Session, ToolExecutor]:
    """A session whose plan has the objective "Ship" and steps ``titles``."""
    session = Session()
    executor = executor_for(session)
    result = run(executor, "setup_plan", {"objective": "Ship", "initial_steps": list(titles)})
    assert result.success, result.message
    return session, executor


def test_setup_creates_an_active_plan_of_pending_steps() -> None:
    session = Session()
    result = run(executor_for(session), "setup_plan", {"objective": "Ship", "initial_steps": ["a"]})
    expected = Plan("Ship", "active", (PlanStep(1, "a", "pending"),), next_step_id=2)
    assert (result.success, result.message, result.value) == (
        True,
        "Plan created with 1 step.",
        expected,
    )
    assert session[Plan].latest() == expected


def test_setup_without_steps_gives_an_active_plan_with_no_steps() -> None:
    session = Session()
    result = run(executor_for(session), "setup_plan", {"objective": "Ship"})
    assert result.value == Plan("Ship", "active", (), next_step_id=1)


def test_add_step_appends_steps_with_the_next_ids() -> None:
    _, executor = started("a")
    result = run(executor, "add_step", {"steps": ["b", "c"]})
    assert result.message == "Added 2 steps (ids 2, 3)."
    assert result.value == Plan(
        "Ship",
        "active",
        (PlanStep(1, "a"), PlanStep(2, "b"), PlanStep(3, "c")),
        next_step_id=4,
    )


def test_update_step_changes_the_title_and_the_status() -> None:
    _, executor = started("a", "b")
    result = run(executor, "update_step", {"step_id": 2, "title": "B", "status": "in_progress"})
    assert result.message == "Step 2 updated."
    assert result.value == Plan(
        "Ship", "active", (PlanStep(1, "a"), PlanStep(2, "B", "in_progress")), next_step_id=3
    )


def test_update_step_with_null_title_keeps_the_title() -> None:
    _, executor = started("a")
    result = run(executor, "update_step", {"step_id": 1, "title": None, "status": "done"})
    assert result.value is not None
    assert result.value.steps == (PlanStep(1, "a", "done"),)


def test_plan_is_completed_when_every_step_is_done() -> None:
    session, executor = started("a", "b")
    run(executor, "update_step", {"step_id": 1, "status": "done"})
    assert session[Plan].latest() == Plan(
        "Ship", "active", (PlanStep(1, "a", "done"), PlanStep(2, "b")), next_step_id=3
    )
    result = run(executor, "update_step", {"step_id": 2, "status": "done"})
    assert result.message == "Step 2 updated. Every step is done: the plan is completed."
    assert result.value is not None
    assert result.value.status == "completed"


def test_step_set_back_to_pending_makes_a_completed_plan_active_again() -> None:
    session, executor = started("a")
    run(executor, "update_step", {"step_id": 1, "status": "done"})
    run(executor, "update_step", {"step_id": 1, "status": "pending"})
    latest = session[Plan].latest()
    assert latest is not None
    assert latest.status == "active"


def test_adding_a_step_to_a_completed_plan_makes_it_active_again() -> None:
    session, executor = started("a")
    run(executor, "update_step", {"step_id": 1, "status": "done"})
    run(executor, "add_step", {"steps": ["b"]})
    latest = session[Plan].latest()
    assert latest is not None
    assert (latest.status, latest.steps) == ("active", (PlanStep(1, "a", "done"), PlanStep(2, "b")))


def test_step_ids_are_not_reused_when_setup_replaces_the_plan() -> None:
    _, executor = started("a", "b")
    result = run(executor, "setup_plan", {"objective": "Again", "initial_steps": ["c"]})
    assert result.message == "Plan replaced with 1 step."
    assert result.value == Plan("Again", "active", (PlanStep(3, "c"),), next_step_id=4)


def test_step_ids_are_not_reused_after_a_replacement_without_steps() -> None:
    _, executor = started("a", "b")
    run(executor, "setup_plan", {"objective": "Again"})
    result = run(executor, "add_step", {"steps": ["c"]})
    assert result.value == Plan("Again", "active", (PlanStep(3, "c"),), next_step_id=4)


def test_read_plan_returns_the_current_plan_as_text() -> None:
    _, executor = started("a", "b")
    run(executor, "update_step", {"step_id": 1, "status": "done"})
    result = run(executor, "read_plan")
    assert result.message == "The current plan:"
    assert result.render() == ("Objective: Ship\nStatus: active\n1. [done] a\n2. [pending] b")


def test_plan_without_steps_renders_that_it_has_none() -> None:
    assert Plan("Ship", "active", ()).render() == "Objective: Ship\nStatus: active\nNo steps yet."


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("add_step", {"steps": ["a"]}),
        ("update_step", {"step_id": 1, "status": "done"}),
        ("read_plan", None),
    ],
)
def test_tools_other_than_setup_fail_without_a_plan_and_leave_no_state(
    name: str, arguments: Any
) -> None:
    session = Session()
    result = run(executor_for(session), name, arguments)
    assert (result.success, result.message, result.value) == (False, NO_PLAN, None)
    assert session[Plan].all() == ()


def test_update_of_an_unknown_step_fails_and_names_the_known_ids() -> None:
    session, executor = started("a", "b")
    before = session[Plan].all()
    result = run(executor, "update_step", {"step_id": 7, "status": "done"})
    assert (result.success, result.message) == (
        False,
        "The plan has no step 7 (its step ids: 1, 2); call planning_read_plan to see them.",
    )
    assert session[Plan].all() == before


def test_update_with_nothing_to_change_fails() -> None:
    _, executor = started("a")
    result = run(executor, "update_step", {"step_id": 1})
    assert (result.success, result.message) == (
        False,
        "Nothing to change for step 1: give a title, a status or both.",
    )


def test_empty_step_title_is_rejected_when_parsing() -> None:
    session, executor = started("a")
    before = session[Plan].all()
    result = run(executor, "add_step", {"steps": ["b", ""]})
    assert (result.success, result.message) == (
        False,
        "Invalid arguments for tool 'planning_add_step':\n"
        'steps[1]: string should have at least 1 character (got "")',
    )
    assert session[Plan].all() == before


def test_step_title_over_500_characters_is_rejected_when_parsing() -> None:
    session = Session()
    result = run(
        executor_for(session), "setup_plan", {"objective": "Ship", "initial_steps": ["x" * 501]}
    )
    assert (result.success, result.message) == (
        False,
        "Invalid arguments for tool 'planning_setup_plan':\n"
        f'initial_steps[0]: string should have at most 500 characters (got "{"x" * 56}...)',
    )
    assert session[Plan].all() == ()


def test_step_title_of_500_characters_is_accepted() -> None:
    _, executor = started("a")
    result = run(executor, "update_step", {"step_id": 1, "title": "x" * 500})
    assert result.success


def test_empty_objective_is_rejected_when_parsing() -> None:
    result = run(executor_for(Session()), "setup_plan", {"objective": ""})
    assert result.message == (
        "Invalid arguments for tool 'planning_setup_plan':\n"
        'objective: string should have at least 1 character (got "")'
    )


def test_adding_no_steps_is_rejected_when_parsing() -> None:
    _, executor = started("a")
    result = run(executor, "add_step", {"steps": []})
    assert result.message == (
        "Invalid arguments for tool 'planning_add_step':\n"
        "steps: array should have at least 1 item, not 0 (got [])"
    )


@dataclass(frozen=True)
class FailsAfterSuccess:
    """A policy whose bookkeeping fails, so the executor rolls a successful call back."""

    name: str = "fails_after_success"

    def check(self, tool: Tool[Any, Any], params: Any, *, context: ToolContext) -> PolicyDecision:
        return PolicyDecision.allow()

    def on_result(
        self, tool: Tool[Any, Any], params: Any, result: ToolResult[Any], *, context: ToolContext
    ) -> None:
        if tool.name == "planning_update_step":
            raise RuntimeError("bookkeeping failed")


def test_plan_change_of_a_call_that_fails_later_is_rolled_back() -> None:
    session = Session()
    register_plan_slice(session)
    executor = executor_for(session, PlanningToolsSection(policies=[FailsAfterSuccess()]))
    run(executor, "setup_plan", {"objective": "Ship", "initial_steps": ["a"]})
    result = run(executor, "update_step", {"step_id": 1, "status": "done"})
    assert (result.success, result.message) == (
        False,
        "Tool 'planning_update_step' succeeded but its result could not be applied, so its "
        "changes were rolled back: RuntimeError: bookkeeping failed",
    )
    assert session[Plan].all() == (Plan("Ship", "active", (PlanStep(1, "a"),), next_step_id=2),)
    assert [event.success for event in session[ToolInvoked]] == [True, False]


def test_register_plan_slice_keeps_only_the_current_plan() -> None:
    session = Session()
    register_plan_slice(session)
    executor = executor_for(session)
    run(executor, "setup_plan", {"objective": "Ship", "initial_steps": ["a"]})
    run(executor, "add_step", {"steps": ["b"]})
    run(executor, "read_plan")
    assert session[Plan].all() == (
        Plan("Ship", "active", (PlanStep(1, "a"), PlanStep(2, "b")), next_step_id=3),
    )


def test_plan_refuses_a_next_step_id_at_or_below_a_step_id() -> None:
    with pytest.raises(ValueError) as raised:
        Plan("Ship", "active", (PlanStep(3, "a"),), next_step_id=3)
    assert str(raised.value) == (
        "Plan.next_step_id must exceed every step id: got 3, highest step id 3"
    )


def test_section_carries_the_four_planning_tools_in_order() -> None:
    assert [tool.name for tool in PlanningToolsSection().tools] == [
        "planning_setup_plan",
        "planning_add_step",
        "planning_update_step",
        "planning_read_plan",
    ]


@dataclass(frozen=True)
class Mode:
    plans: bool


def test_section_enabled_may_be_a_predicate_over_the_inherited_params() -> None:
    section = PlanningToolsSection(enabled=lambda mode: mode.plans)
    assert typing.get_type_hints(PlanningToolsSection.__init__)["enabled"] == Enabled
    tree = PromptTemplate(
        ns="tests", key="mode", sections=[MarkdownSection[Mode](title="Work", children=[section])]
    )
    shown = Prompt(tree).bind(Mode(plans=True)).render()
    hidden = Prompt(tree).bind(Mode(plans=False)).render()
    assert [tool.name for tool in shown.tools] == [tool.name for tool in section.tools]
    assert (hidden.text, hidden.tools) == ("## Work", ())


def test_section_refuses_a_strategy_that_is_not_a_planning_strategy() -> None:
    with pytest.raises(TypeError) as raised:
        PlanningToolsSection(strategy="react")  # type: ignore[arg-type]  # the wrong type on purpose
    assert str(raised.value) == "strategy must be a PlanningStrategy, got 'react'"


def paragraphs(strategy: PlanningStrategy) -> list[str]:
    template = PromptTemplate(
        ns="tests", key="strategy", sections=[PlanningToolsSection(strategy=strategy)]
    )
    return Prompt(template).render().text.split("\n\n")


def test_strategies_differ_only_in_the_mindset_paragraph() -> None:
    texts = [paragraphs(strategy) for strategy in PlanningStrategy]
    assert all(len(text) == 4 for text in texts)
    assert len({text[2] for text in texts}) == len(PlanningStrategy)
    shared = {tuple(text[:2] + text[3:]) for text in texts}
    assert len(shared) == 1
    heading, opening, tools = next(iter(shared))
    assert (heading, opening) == (
        "## Planning",
        "Keep a plan for work that takes more than a few actions; a single action needs none.",
    )
    assert tools.startswith("- `planning_setup_plan` starts a plan")


def test_react_mindset_asks_for_short_observation_loops() -> None:
    assert paragraphs(PlanningStrategy.REACT)[2].startswith("Work in short loops.")


def test_update_step_params_schema() -> None:
    assert update_step_tool.params_schema == {
        "description": "A step of the current plan and what to change in it.",
        "properties": {
            "step_id": {
                "description": "Id of the step to change",
                "minimum": 1,
                "type": "integer",
            },
            "title": {
                "anyOf": [
                    {"maxLength": 500, "minLength": 1, "type": "string"},
                    {"type": "null"},
                ],
                "default": None,
                "description": "New title; null keeps the title",
            },
            "status": {
                "anyOf": [
                    {"enum": ["pending", "in_progress", "done"], "type": "string"},
                    {"type": "null"},
                ],
                "default": None,
                "description": "New status; null keeps the status",
            },
        },
        "required": ["step_id"],
        "type": "object",
        "additionalProperties": False,
    }


def test_openai_auto_strict_specs_cover_every_planning_tool() -> None:
    specs = openai.tool_specs(PlanningToolsSection().tools, strict="auto")
    # Length limits are outside OpenAI's strict subset, so only read_plan goes strict.
    assert [(spec["function"]["name"], spec["function"]["strict"]) for spec in specs] == [
        ("planning_setup_plan", False),
        ("planning_add_step", False),
        ("planning_update_step", False),
        ("planning_read_plan", True),
    ]
    assert specs[2]["function"]["parameters"] == update_step_tool.params_schema
