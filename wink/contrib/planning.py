"""Planning tools: a session-scoped plan the model keeps while it works.

Every tool returns the whole new ``Plan`` as its result value. The executor
records a successful dataclass value in the session slice of its type, so the
plan lives in ``session[Plan]`` (a ``STATE`` slice: a failed call leaves it as
it was) and the handlers read it back with ``session[Plan].latest()``.

The section registers the planning reducers in a session, so that
``session[Plan]`` holds only the current plan and the ``SetupPlan``, ``AddStep``
and ``UpdateStep`` events, dispatched by your own code, change the plan exactly as
the tools do: when it is built with ``session=``, else on the first planning call
in each session. ``register_plan_slice(session)`` does the same by hand (call it
before dispatching planning events yourself in a session no call has reached yet).
An event that cannot apply (a step id the plan lacks, no plan yet) raises
``PlanningError`` from ``dispatch`` with the tool's message, and changes nothing.
Reducers of your own for these types belong after that registration (they
replace the section's); registered before it, the section's replace them.

Step ids are never reused within a session, even when ``planning_setup_plan``
replaces the plan: the plan carries ``next_step_id``, and a replacement plan
continues from its predecessor's counter. A step id in the model's context
therefore always means one step.
"""

from __future__ import annotations

import enum
import threading
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Annotated, Literal

from pydantic import AfterValidator, Field

from wink.errors import WinkError
from wink.prompt import Enabled, MarkdownSection
from wink.runtime import Session, SliceKind, SliceValues, replace_latest
from wink.tools import Tool, ToolContext, ToolResult

__all__ = [
    "MAX_TITLE_LENGTH",
    "AddStep",
    "Plan",
    "PlanStatus",
    "PlanStep",
    "PlanningError",
    "PlanningStrategy",
    "PlanningToolsSection",
    "ReadPlan",
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


def _visible(title: str) -> str:
    if not title.strip():
        raise ValueError("must contain a visible character, not only whitespace")
    return title


_Title = Annotated[str, Field(min_length=1, max_length=MAX_TITLE_LENGTH), AfterValidator(_visible)]

_NO_PLAN = "No plan exists yet: call planning_setup_plan first."


class PlanningError(WinkError):
    """A planning event cannot apply to the current plan; the message says why."""


def _check_title(where: str, title: str) -> None:
    """Titles are 1-500 characters and not blank (checked for events built in Python too)."""
    if not title.strip():
        raise ValueError(f"{where} is blank: give it at least one visible character")
    if len(title) > MAX_TITLE_LENGTH:
        raise ValueError(
            f"{where} has {len(title)} characters; at most {MAX_TITLE_LENGTH} are allowed"
        )


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

    def __post_init__(self) -> None:
        _check_title("the objective", self.objective)
        for index, title in enumerate(self.initial_steps):
            _check_title(f"initial step {index}", title)


@dataclass(frozen=True, slots=True)
class AddStep:
    """Steps to append to the current plan."""

    steps: Annotated[
        tuple[_Title, ...],
        Field(min_length=1, description="Titles of the steps to append, in order"),
    ]

    def __post_init__(self) -> None:
        if not self.steps:
            raise ValueError("no steps to add: give at least one title")
        for index, title in enumerate(self.steps):
            _check_title(f"step {index}", title)


@dataclass(frozen=True, slots=True)
class UpdateStep:
    """A step of the current plan and what to change in it."""

    step_id: Annotated[int, Field(ge=1, description="Id of the step to change")]
    title: Annotated[_Title | None, Field(description="New title; null keeps the title")] = None
    status: Annotated[StepStatus | None, Field(description="New status; null keeps the status")] = (
        None
    )

    def __post_init__(self) -> None:
        if self.title is not None:
            _check_title("the title", self.title)


@dataclass(frozen=True, slots=True)
class ReadPlan:
    """No arguments: the current plan is shown as it is."""


# What each event does to the plan: shared by the tools and the reducers, so that a
# dispatched event changes the plan exactly as the tool call would.


def _after_setup(previous: Plan | None, event: SetupPlan) -> Plan:
    """The plan ``event`` sets up; step ids continue from ``previous``."""
    first_id = 1 if previous is None else previous.next_step_id
    steps = _new_steps(first_id, event.initial_steps)
    return _plan(event.objective, steps, first_id + len(steps))


def _after_add(current: Plan | None, event: AddStep) -> Plan:
    """``current`` with ``event``'s steps appended; raises ``PlanningError`` without a plan."""
    if current is None:
        raise PlanningError(_NO_PLAN)
    added = _new_steps(current.next_step_id, event.steps)
    return _plan(current.objective, current.steps + added, current.next_step_id + len(added))


def _after_update(current: Plan | None, event: UpdateStep) -> Plan:
    """``current`` with one step changed; raises ``PlanningError`` when that cannot be."""
    if current is None:
        raise PlanningError(_NO_PLAN)
    if event.title is None and event.status is None:
        raise PlanningError(
            f"Nothing to change for step {event.step_id}: give a title, a status or both."
        )
    if all(step.step_id != event.step_id for step in current.steps):
        known = ", ".join(str(step.step_id) for step in current.steps) or "none"
        raise PlanningError(
            f"The plan has no step {event.step_id} (its step ids: {known}); "
            "call planning_read_plan to see them."
        )
    steps = tuple(
        _updated(step, event) if step.step_id == event.step_id else step for step in current.steps
    )
    return _plan(current.objective, steps, current.next_step_id)


def setup_plan(params: SetupPlan, *, context: ToolContext) -> ToolResult[Plan]:
    """Create the plan, or replace the current one; step ids continue from it."""
    previous = _latest_plan(context)
    plan = _after_setup(previous, params)
    verb = "created" if previous is None else "replaced"
    return ToolResult.ok(plan, message=f"Plan {verb} with {_count(plan.steps)}.")


def add_step(params: AddStep, *, context: ToolContext) -> ToolResult[Plan]:
    """Append steps to the current plan."""
    current = _latest_plan(context)
    try:
        plan = _after_add(current, params)
    except PlanningError as error:
        return ToolResult.error(str(error))
    added = plan.steps[len(plan.steps) - len(params.steps) :]
    ids = ", ".join(str(step.step_id) for step in added)
    return ToolResult.ok(plan, message=f"Added {_count(added)} (ids {ids}).")


def update_step(params: UpdateStep, *, context: ToolContext) -> ToolResult[Plan]:
    """Change the title and/or the status of one step of the current plan."""
    try:
        plan = _after_update(_latest_plan(context), params)
    except PlanningError as error:
        return ToolResult.error(str(error))
    done = " Every step is done: the plan is completed." if plan.status == "completed" else ""
    return ToolResult.ok(plan, message=f"Step {params.step_id} updated.{done}")


def read_plan(params: ReadPlan, *, context: ToolContext) -> ToolResult[Plan]:
    """Return the current plan."""
    current = _latest_plan(context)
    if current is None:
        return ToolResult.error(_NO_PLAN)
    return ToolResult.ok(current, message="The current plan:")


def _latest_plan(context: ToolContext) -> Plan | None:
    session = context.session
    if not isinstance(session, Session):
        raise WinkError("the planning tools keep their plan in a Session; the call has none")
    _register_once(session)
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
read_plan_tool = Tool[ReadPlan, Plan](
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
        accepts_overrides: bool = True,
        session: Session | None = None,
    ) -> None:
        """A section titled ``title`` whose mindset paragraph follows ``strategy``.

        With ``session``, the planning reducers are registered in it now; otherwise
        the first planning call in each session registers them.
        """
        if not isinstance(strategy, PlanningStrategy):
            raise TypeError(f"strategy must be a PlanningStrategy, got {strategy!r}")
        if session is not None:
            register_plan_slice(session)
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
            accepts_overrides=accepts_overrides,
        )


def register_plan_slice(session: Session) -> None:
    """Register the planning reducers: ``session[Plan]`` (a ``STATE`` slice) holds only
    the current plan, and ``SetupPlan``, ``AddStep`` and ``UpdateStep`` events change it
    as the tools do."""
    plans = session[Plan]
    if plans.kind is not SliceKind.STATE:
        plans.declare(SliceKind.STATE)
    plans.register(Plan, replace_latest)
    plans.register(SetupPlan, _reduce_setup)
    plans.register(AddStep, _reduce_add)
    plans.register(UpdateStep, _reduce_update)
    with _REGISTERED_LOCK:
        _REGISTERED.add(session)


_REGISTERED: weakref.WeakSet[Session] = weakref.WeakSet()
"""Sessions the reducers were registered in (by the section or by hand)."""
_REGISTERED_LOCK = threading.Lock()


def _register_once(session: Session) -> None:
    """Register the reducers on a session's first planning call, and never again.

    Once only: reducers the application registers for ``Plan`` later stay in place.
    """
    if session not in _REGISTERED:
        register_plan_slice(session)


def _reduce_setup(values: SliceValues[Plan], event: SetupPlan) -> tuple[Plan]:
    return (_after_setup(values.latest(), event),)


def _reduce_add(values: SliceValues[Plan], event: AddStep) -> tuple[Plan]:
    return (_after_add(values.latest(), event),)


def _reduce_update(values: SliceValues[Plan], event: UpdateStep) -> tuple[Plan]:
    return (_after_update(values.latest(), event),)
