"""Planning tools: a session-scoped plan the model keeps while it works.

Every tool returns the whole new ``Plan`` as its result value. The executor
records a successful dataclass value in the session slice of its type, so the
plan lives in ``session[Plan]`` (a ``STATE`` slice: a failed call leaves it as
it was) and the handlers read it back with ``session[Plan].latest()``. Call
``register_plan_slice(session)`` to keep only the current plan in that slice.

Step ids are never reused within a session, even when ``planning_setup_plan``
replaces the plan: the plan carries ``next_step_id``, and a replacement plan
continues from its predecessor's counter. A step id in the model's context
therefore always means one step.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Annotated, Literal

from pydantic import Field

from wink.errors import WinkError
from wink.prompt import Enabled, MarkdownSection
from wink.runtime import Session, SliceKind, replace_latest
from wink.tools import Tool, ToolContext, ToolResult

__all__ = [
    "MAX_TITLE_LENGTH",
    "AddStep",
    "Plan",
    "PlanStatus",
    "PlanStep",
    "PlanningStrategy",
    "PlanningToolsSection",
    "SetupPlan",
    "StepStatus",
    "UpdateStep",
    "add_step_tool",
    "read_plan_tool",
    "register_plan_slice",
    "setup_plan_tool",
    "update_step_tool",
]

StepStatus = Literal["pending", "in_progress", "done"]
"""Where a step stands."""
PlanStatus = Literal["active", "completed"]
"""``completed`` once every step is ``done``; ``active`` otherwise (also with no steps)."""

MAX_TITLE_LENGTH = 500
"""Longest objective or step title, in characters."""

_Title = Annotated[str, Field(min_length=1, max_length=MAX_TITLE_LENGTH)]

_NO_PLAN = "No plan exists yet: call planning_setup_plan first."


@dataclass(frozen=True, slots=True)
class PlanStep:
    """One step of a plan."""

    step_id: int
    """Identifies the step; never reused within a session."""
    title: str
    """What the step does."""
    status: StepStatus = "pending"
    """Where the step stands."""


@dataclass(frozen=True, slots=True)
class Plan:
    """The current plan: an objective and its ordered steps."""

    objective: str
    """What the plan achieves."""
    status: PlanStatus
    """``completed`` once every step is done."""
    steps: tuple[PlanStep, ...]
    """The steps, in order."""
    next_step_id: int = 1
    """The id the next added step gets; above every id used before in the session."""

    def __post_init__(self) -> None:
        highest = max((step.step_id for step in self.steps), default=0)
        if self.next_step_id <= highest:
            raise ValueError(
                f"Plan.next_step_id must exceed every step id: got {self.next_step_id}, "
                f"highest step id {highest}"
            )

    def render(self) -> str:
        """The plan as the model reads it: objective, status, one line per step."""
        lines = [f"Objective: {self.objective}", f"Status: {self.status}"]
        lines += [f"{step.step_id}. [{step.status}] {step.title}" for step in self.steps]
        if not self.steps:
            lines.append("No steps yet.")
        return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class SetupPlan:
    """The objective of a new plan and its first steps."""

    objective: Annotated[
        _Title, Field(description="What the plan must achieve, in one or two sentences")
    ]
    initial_steps: Annotated[
        tuple[_Title, ...],
        Field(description="Titles of the first steps, in order; each becomes a pending step"),
    ] = ()


@dataclass(frozen=True, slots=True)
class AddStep:
    """Steps to append to the current plan."""

    steps: Annotated[
        tuple[_Title, ...],
        Field(min_length=1, description="Titles of the steps to append, in order"),
    ]


@dataclass(frozen=True, slots=True)
class UpdateStep:
    """A step of the current plan and what to change in it."""

    step_id: Annotated[int, Field(ge=1, description="Id of the step to change")]
    title: Annotated[_Title | None, Field(description="New title; null keeps the title")] = None
    status: Annotated[StepStatus | None, Field(description="New status; null keeps the status")] = (
        None
    )


def setup_plan(params: SetupPlan, *, context: ToolContext) -> ToolResult[Plan]:
    """Create the plan, or replace the current one; step ids continue from it."""
    previous = _latest_plan(context)
    first_id = 1 if previous is None else previous.next_step_id
    steps = _new_steps(first_id, params.initial_steps)
    plan = _plan(params.objective, steps, first_id + len(steps))
    verb = "created" if previous is None else "replaced"
    return ToolResult.ok(plan, message=f"Plan {verb} with {_count(plan.steps)}.")


def add_step(params: AddStep, *, context: ToolContext) -> ToolResult[Plan]:
    """Append steps to the current plan."""
    current = _latest_plan(context)
    if current is None:
        return ToolResult.error(_NO_PLAN)
    added = _new_steps(current.next_step_id, params.steps)
    plan = _plan(current.objective, current.steps + added, current.next_step_id + len(added))
    ids = ", ".join(str(step.step_id) for step in added)
    return ToolResult.ok(plan, message=f"Added {_count(added)} (ids {ids}).")


def update_step(params: UpdateStep, *, context: ToolContext) -> ToolResult[Plan]:
    """Change the title and/or the status of one step of the current plan."""
    current = _latest_plan(context)
    if current is None:
        return ToolResult.error(_NO_PLAN)
    if params.title is None and params.status is None:
        return ToolResult.error(
            f"Nothing to change for step {params.step_id}: give a title, a status or both."
        )
    if all(step.step_id != params.step_id for step in current.steps):
        known = ", ".join(str(step.step_id) for step in current.steps) or "none"
        return ToolResult.error(
            f"The plan has no step {params.step_id} (its step ids: {known}); "
            "call planning_read_plan to see them."
        )
    steps = tuple(
        _updated(step, params) if step.step_id == params.step_id else step for step in current.steps
    )
    plan = _plan(current.objective, steps, current.next_step_id)
    done = " Every step is done: the plan is completed." if plan.status == "completed" else ""
    return ToolResult.ok(plan, message=f"Step {params.step_id} updated.{done}")


def read_plan(params: None, *, context: ToolContext) -> ToolResult[Plan]:
    """Return the current plan."""
    current = _latest_plan(context)
    if current is None:
        return ToolResult.error(_NO_PLAN)
    return ToolResult.ok(current, message="The current plan:")


def _latest_plan(context: ToolContext) -> Plan | None:
    session = context.session
    if not isinstance(session, Session):
        raise WinkError("the planning tools keep their plan in a Session; the call has none")
    return session[Plan].latest()


def _new_steps(first_id: int, titles: Iterable[str]) -> tuple[PlanStep, ...]:
    return tuple(PlanStep(first_id + index, title) for index, title in enumerate(titles))


def _plan(objective: str, steps: tuple[PlanStep, ...], next_step_id: int) -> Plan:
    """A plan whose status follows from its steps."""
    completed = bool(steps) and all(step.status == "done" for step in steps)
    return Plan(objective, "completed" if completed else "active", steps, next_step_id)


def _updated(step: PlanStep, params: UpdateStep) -> PlanStep:
    return replace(
        step,
        title=step.title if params.title is None else params.title,
        status=step.status if params.status is None else params.status,
    )


def _count(steps: tuple[PlanStep, ...]) -> str:
    return "1 step" if len(steps) == 1 else f"{len(steps)} steps"


setup_plan_tool = Tool[SetupPlan, Plan](
    name="planning_setup_plan",
    description="Create the plan for the task, or replace the current plan.",
    handler=setup_plan,
)
add_step_tool = Tool[AddStep, Plan](
    name="planning_add_step",
    description="Append steps to the end of the current plan.",
    handler=add_step,
)
update_step_tool = Tool[UpdateStep, Plan](
    name="planning_update_step",
    description="Change the title or the status of one step of the current plan.",
    handler=update_step,
)
read_plan_tool = Tool[None, Plan](
    name="planning_read_plan",
    description="Show the current plan: its objective, status and every step.",
    handler=read_plan,
)


class PlanningStrategy(enum.Enum):
    """How the planning instructions ask the model to work."""

    REACT = "react"
    """Short loops of reasoning, one tool call, and reading its result."""
    PLAN_ACT_REFLECT = "plan_act_reflect"
    """Outline the whole plan first, then act step by step and reflect after each."""
    GOAL_DECOMPOSE_ROUTE_SYNTHESISE = "goal_decompose_route_synthesise"
    """Restate the goal, split it, route each part to a tool, combine the answers."""


_MINDSETS = {
    PlanningStrategy.REACT: (
        "Work in short loops. Think about what you know and what is still missing, make "
        "one tool call, read what it returned, and let that observation choose your next "
        "move. Keep the plan light: it records where you are, and it changes whenever an "
        "observation changes your course."
    ),
    PlanningStrategy.PLAN_ACT_REFLECT: (
        "Outline the whole approach before you act: set up a plan whose steps, taken "
        "together, reach the objective. Then carry the steps out in order. After each one, "
        "compare what happened with what you expected, and revise the remaining steps "
        "before moving on if the result surprised you."
    ),
    PlanningStrategy.GOAL_DECOMPOSE_ROUTE_SYNTHESISE: (
        "Start by restating the goal in your own words so that its scope is clear. Break it "
        "into sub-goals small enough to settle one at a time, one step each, and decide "
        "which tool or source answers each of them. Work through the steps, then combine "
        "their results into a single answer to the original goal."
    ),
}

_INSTRUCTIONS = """\
Keep a plan for work that takes more than a few actions; a single action needs none.

{mindset}

- `planning_setup_plan` starts a plan from an objective and its first steps; calling it \
again replaces the plan.
- `planning_add_step` appends steps as you discover them. Make each step one concrete \
action whose end you can recognise.
- `planning_update_step` renames a step or changes its status: mark it `in_progress` when \
you start it and `done` once it is finished. The plan is completed when every step is done.
- `planning_read_plan` shows the objective and every step with its id and status.
- Refer to steps by id; ids are never reused, even after the plan is replaced."""


class PlanningToolsSection(MarkdownSection[None]):
    """Planning instructions for one ``PlanningStrategy``, carrying the four planning tools."""

    def __init__(
        self,
        *,
        strategy: PlanningStrategy = PlanningStrategy.REACT,
        title: str = "Planning",
        key: str = "planning",
        policies: Sequence[object] = (),
        enabled: Enabled = True,
    ) -> None:
        """A section titled ``title`` whose mindset paragraph follows ``strategy``."""
        if not isinstance(strategy, PlanningStrategy):
            raise TypeError(f"strategy must be a PlanningStrategy, got {strategy!r}")
        self.strategy = strategy
        """The strategy the instructions describe."""
        text = _INSTRUCTIONS.format(mindset=_MINDSETS[strategy])
        super().__init__(
            title=title,
            key=key,
            # The text is literal: escape any "$" from string.Template substitution.
            template=text.replace("$", "$$"),
            tools=(setup_plan_tool, add_step_tool, update_step_tool, read_plan_tool),
            policies=tuple(policies),
            enabled=enabled,
        )


def register_plan_slice(session: Session) -> None:
    """Make ``session[Plan]`` a ``STATE`` slice that holds only the current plan."""
    session[Plan].declare(SliceKind.STATE)
    session[Plan].register(Plan, replace_latest)
