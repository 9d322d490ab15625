"""Randomized evaluations through the provider-free adapter, alone and on shared sessions.

Each input is a random model: turns of tool calls (valid, invalid, unknown,
failing after changing state, delegating to a sub-prompt that may fail), then a
structured answer that may be invalid a few times, with random ``max_turns``,
``output_retries`` and provider failures; two threads sometimes evaluate on one
session at once. After each evaluation:

- ``uncaught``: ``evaluate`` raised something other than ``PromptEvaluationError``;
- ``lost_events``: a call recorded twice; when every evaluation finished, a call
  the model made without exactly one ``ToolInvoked``; or other than one
  ``PromptExecuted`` per ``PromptRendered`` (nested evaluations included);
- ``state_leaks``: the session holds the draft a failed ``add`` call wrote before
  failing (every ``add`` writes one; only a successful call's may stay).
"""

from __future__ import annotations

import random
import threading
from dataclasses import dataclass
from typing import Any

from stress.report import FamilyReport
from wink import (
    MarkdownSection,
    Prompt,
    PromptEvaluationError,
    PromptExecuted,
    PromptRendered,
    PromptTemplate,
    Session,
    Tool,
    ToolContext,
    ToolInvoked,
    ToolResult,
)
from wink.testing import FunctionAdapter, ModelInput, ProviderError, UserMessage, call

QUICK_INPUTS = 60


@dataclass(frozen=True)
class Add:
    item: str
    fail: bool = False


@dataclass(frozen=True)
class Item:
    item: str


@dataclass(frozen=True)
class Delegate:
    item: str
    fail: bool = False


@dataclass(frozen=True)
class Answer:
    items: list[str]


def add(params: Add, *, context: ToolContext) -> ToolResult[Item]:
    assert context.session is not None
    context.session.dispatch(Item(f"{params.item}-draft"))  # rolled back if the call fails
    if params.fail:
        raise RuntimeError("add failed after changing state")
    return ToolResult.ok(Item(params.item), message="Added.")


def delegate(params: Delegate, *, context: ToolContext) -> ToolResult[str]:
    assert context.adapter is not None and context.session is not None
    context.adapter.evaluate(Prompt(child_template), session=context.session)
    if params.fail:
        raise RuntimeError("delegation refused after the child ran")
    return ToolResult.ok("delegated", message="Done.")


add_tool = Tool[Add, Item](name="add", description="Add an item.", handler=add)
delegate_tool = Tool[Delegate, str](name="delegate", description="Delegate.", handler=delegate)
child_template = PromptTemplate(
    ns="stress",
    key="child",
    sections=[MarkdownSection(title="Child", template="c", tools=[add_tool])],
)
parent_template = PromptTemplate[Answer](
    ns="stress",
    key="parent",
    sections=[MarkdownSection(title="Parent", template="p", tools=[add_tool, delegate_tool])],
)
CHILD_TEXT = "## Child\n\nc"


class RandomModel:
    """A model answering from a seeded random generator; thread-safe."""

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng
        self._lock = threading.Lock()
        self.calls = 0

    def __call__(self, model_input: ModelInput) -> Any:
        with self._lock:
            rng = self._rng
            if rng.random() < 0.03:
                raise ProviderError("random provider failure")
            child = model_input.messages[0] == UserMessage(CHILD_TEXT)
            if model_input.turn < 4 and rng.random() < 0.7:
                count = rng.randint(1, 3)
                self.calls += count
                return [self._call(rng, child) for _ in range(count)]
            if child:
                return "child done"
            if rng.random() < 0.3:
                return {"items": "not a list"}
            return {"items": ["x"]}

    def _call(self, rng: random.Random, child: bool) -> Any:
        kind = rng.choice(["add", "add", "bad", "unknown"] + ([] if child else ["delegate"]))
        item = f"i{rng.randint(0, 9)}"
        if kind == "add":
            return call("add", {"item": item, "fail": rng.random() < 0.3})
        if kind == "bad":
            return call("add", {"item": 3})
        if kind == "unknown":
            return call("nope", {})
        return call("delegate", {"item": item, "fail": rng.random() < 0.3})


def _evaluate(
    adapter: FunctionAdapter, session: Session, rng: random.Random, outcomes: list[Any]
) -> None:
    try:
        outcomes.append(
            adapter.evaluate(
                Prompt(parent_template),
                session=session,
                max_turns=rng.randint(1, 6),
                output_retries=rng.randint(0, 2),
            )
        )
    except PromptEvaluationError as error:
        outcomes.append(error)
    except BaseException as error:  # counted as uncaught
        outcomes.append(("uncaught", error))


def _check(report: FamilyReport, session: Session, outcomes: list[Any], calls: int) -> None:
    for outcome in outcomes:
        if isinstance(outcome, tuple):
            report.note("uncaught", f"{type(outcome[1]).__name__}: {outcome[1]}")
    invoked = session[ToolInvoked].all()
    # A stopped evaluation never runs the rest of its turn's calls; a finished one runs all.
    finished = all(not isinstance(o, PromptEvaluationError | tuple) for o in outcomes)
    if finished and len(invoked) != calls:
        report.note("lost_events", f"{calls} calls made, {len(invoked)} ToolInvoked recorded")
    call_ids = [event.call_id for event in invoked]
    if len(set(call_ids)) != len(call_ids):
        report.note("lost_events", f"a call was recorded twice: {call_ids}")
    executed = len(session[PromptExecuted])
    rendered = len(session[PromptRendered])
    if executed != rendered:
        report.note("lost_events", f"{rendered} PromptRendered but {executed} PromptExecuted")
    added = {e.result.value.item for e in invoked if e.success and isinstance(e.result.value, Item)}
    for item in session[Item].all():
        if item.item.endswith("-draft") and item.item.removesuffix("-draft") not in added:
            report.note("state_leaks", f"{item.item} survived without a successful add")


def run(scale: float) -> FamilyReport:
    """Try about ``60 * scale`` random evaluations."""
    report = FamilyReport("evaluation loop")
    rng = random.Random(7)
    for index in range(max(1, int(QUICK_INPUTS * scale))):
        with report.measure():
            model = RandomModel(random.Random(rng.random()))
            adapter = FunctionAdapter(model)
            session = Session()
            outcomes: list[Any] = []
            if index % 4 == 0:  # two evaluations at once on one session
                threads = [
                    threading.Thread(
                        target=_evaluate,
                        args=(adapter, session, random.Random(rng.random()), outcomes),
                    )
                    for _ in range(2)
                ]
                for thread in threads:
                    thread.start()
                for thread in threads:
                    thread.join(timeout=30)
                if any(thread.is_alive() for thread in threads):
                    report.note("uncaught", "two evaluations on one session deadlocked")
                    continue
            else:
                _evaluate(adapter, session, random.Random(rng.random()), outcomes)
            _check(report, session, outcomes, model.calls)
    return report
