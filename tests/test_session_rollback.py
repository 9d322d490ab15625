"""What a restore (and so a failed call) puts back: STATE slices and declarations; LOG
history is never lost."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from wink import MarkdownSection, Prompt, PromptTemplate, Tool, ToolContext, ToolResult
from wink.runtime import (
    Session,
    SliceKind,
    SliceValues,
    Snapshot,
    ToolCall,
    ToolExecutor,
    ToolInvoked,
)


@dataclass(frozen=True)
class Audit:
    text: str


@dataclass(frozen=True)
class Draft:
    text: str


@dataclass(frozen=True)
class Steps:
    how: str


def run_steps(params: Steps, *, context: ToolContext) -> ToolResult[None]:
    session = context.session
    assert session is not None
    for step in params.how.split(","):
        if step == "audit":
            session.dispatch(Audit("during the call"))
        elif step == "draft":
            session.dispatch(Draft("during the call"))
        elif step == "declare audit state":
            session[Audit].declare(SliceKind.STATE)
        elif step == "declare draft log":
            session[Draft].declare(SliceKind.LOG)
        elif step == "reset":
            session.reset()
        elif step == "clear audit":
            session[Audit].clear()
        elif step == "fail":
            raise RuntimeError("failed on purpose")
    return ToolResult(message="ok")


steps_tool = Tool[Steps, None](name="steps", description="Steps.", handler=run_steps)


def executor_on(session: Session) -> ToolExecutor:
    template = PromptTemplate(
        ns="tests", key="rollback", sections=[MarkdownSection(title="T", tools=[steps_tool])]
    )
    return ToolExecutor(prompt=Prompt(template), session=session)


def audited_session() -> Session:
    session = Session()
    session[Audit].declare(SliceKind.LOG)
    session.dispatch(Audit("before"))
    session.dispatch(Draft("before"))
    return session


def run(session: Session, how: str) -> ToolResult[Any]:
    return executor_on(session).execute(ToolCall("steps", f'{{"how": "{how}"}}'))


def test_a_failed_call_keeps_the_log_events_it_dispatched_and_drops_its_state_events() -> None:
    session = audited_session()
    assert not run(session, "audit,draft,fail").success
    assert session[Audit].all() == (Audit("before"), Audit("during the call"))
    assert session[Draft].all() == (Draft("before"),)
    assert [event.success for event in session[ToolInvoked].all()] == [False]


def to_both(values: SliceValues[Any], event: Audit) -> SliceValues[Any]:
    return values.append(event)


def test_an_event_reduced_into_a_log_and_a_state_slice_survives_only_in_the_log() -> None:
    session = audited_session()
    session[Audit].register(Audit, to_both)
    session[Draft].register(Audit, lambda values, event: values.append(Draft(event.text)))
    assert not run(session, "audit,fail").success
    assert session[Audit].all() == (Audit("before"), Audit("during the call"))
    assert session[Draft].all() == (Draft("before"),)


def test_declaring_a_slice_log_inside_a_failed_call_is_undone() -> None:
    session = audited_session()
    assert not run(session, "declare draft log,draft,fail").success
    assert session[Draft].kind is SliceKind.STATE
    assert session[Draft].all() == (Draft("before"),)


def test_declaring_a_log_slice_state_inside_a_failed_call_is_undone_and_keeps_history() -> None:
    session = audited_session()
    assert not run(session, "audit,declare audit state,audit,fail").success
    assert session[Audit].kind is SliceKind.LOG
    assert session[Audit].all() == (
        Audit("before"),
        Audit("during the call"),
        Audit("during the call"),
    )


def test_a_reset_inside_a_failed_call_keeps_the_log_history() -> None:
    session = audited_session()
    assert run(session, "draft").success
    assert run(session, "draft").success
    assert not run(session, "reset,audit,fail").success
    assert [event.success for event in session[ToolInvoked].all()] == [True, True, False]
    assert session[Audit].all() == (Audit("before"), Audit("during the call"))
    assert session[Draft].all() == (
        Draft("before"),
        Draft("during the call"),
        Draft("during the call"),
    )


def test_clearing_a_log_slice_inside_a_failed_call_is_undone() -> None:
    session = audited_session()
    assert not run(session, "clear audit,fail").success
    assert session[Audit].all() == (Audit("before"),)


def test_a_successful_reset_stays_reset() -> None:
    session = audited_session()
    assert run(session, "reset").success
    assert session[Audit].all() == ()
    assert [event.success for event in session[ToolInvoked].all()] == [True]


# Session.restore itself


def test_restore_after_reset_brings_the_log_back_followed_by_later_values() -> None:
    session = audited_session()
    saved = session.snapshot()
    session.reset()
    session.dispatch(Audit("after the reset"))
    session.restore(saved)
    assert session[Audit].all() == (Audit("before"), Audit("after the reset"))
    assert session[Draft].all() == (Draft("before"),)


def test_restore_keeps_an_appended_log_slice_without_copying_it() -> None:
    session = audited_session()
    saved = session.snapshot()
    session.dispatch(Audit("later"))
    appended = session[Audit].values()
    session.restore(saved)
    assert session[Audit].values() is appended


def test_restore_with_declarations_puts_slice_declarations_back() -> None:
    session = Session()
    session.dispatch(Draft("before"))
    saved = session.snapshot()
    session[Draft].declare(SliceKind.LOG)
    session.dispatch(Draft("logged"))
    session.restore(saved, declarations=True)
    assert session[Draft].kind is SliceKind.STATE
    assert session[Draft].all() == (Draft("before"),)


def test_restore_keeps_declarations_made_since_and_what_they_logged() -> None:
    session = Session()
    session.dispatch(Draft("before"))
    session.dispatch(Audit("state"))
    session[Audit].declare(SliceKind.LOG)  # before the snapshot: stays LOG
    saved = session.snapshot()
    session[Draft].declare(SliceKind.LOG)
    session.dispatch(Draft("logged"))
    session[Audit].declare(SliceKind.STATE)
    session.dispatch(Audit("changed"))
    session.restore(saved)
    assert session[Draft].kind is SliceKind.LOG
    assert session[Draft].all() == (Draft("before"), Draft("logged"))
    assert session[Audit].kind is SliceKind.STATE
    assert session[Audit].all() == (Audit("state"),)  # STATE now: back to its values
    assert session.snapshot().state.keys() == {Audit}
    assert session.snapshot().log.keys() == {Draft}


def test_a_declaration_made_before_a_snapshot_survives_its_restore() -> None:
    session = Session()
    session[Draft].declare(SliceKind.LOG)  # on an empty slice
    saved = session.snapshot()
    session.dispatch(Draft("later"))
    session.restore(saved)
    assert session[Draft].kind is SliceKind.LOG
    assert session[Draft].all() == (Draft("later"),)


def test_restore_without_keep_log_takes_the_declarations_of_the_snapshot() -> None:
    source = audited_session()
    fresh = Session()
    fresh.restore(source.snapshot(), keep_log=False)
    assert fresh[Audit].kind is SliceKind.LOG
    assert fresh[Audit].all() == (Audit("before"),)
    assert fresh[Draft].all() == (Draft("before"),)


def test_restoring_a_loaded_snapshot_keeps_this_sessions_log_as_it_is() -> None:
    session = audited_session()
    loaded = Snapshot.from_json(session.snapshot().to_json(), types=[Audit, Draft])
    session.dispatch(Draft("later"))
    session.restore(loaded)
    assert session[Audit].all() == (Audit("before"),)  # not doubled
    assert session[Draft].all() == (Draft("before"),)


def test_restoring_another_sessions_snapshot_keeps_this_sessions_log_and_declarations() -> None:
    other = audited_session()
    session = Session()
    session.dispatch(Audit("mine"))  # a STATE slice here
    session.restore(other.snapshot())
    assert session[Audit].kind is SliceKind.STATE
    assert session[Draft].all() == (Draft("before"),)


def test_restoring_a_foreign_snapshot_never_puts_a_log_slice_of_this_session_in_state() -> None:
    other = Session()
    other.dispatch(Audit("state there"))
    session = audited_session()  # Audit is LOG here
    session.restore(other.snapshot())
    assert session[Audit].all() == (Audit("before"),)
    assert Audit not in session.snapshot().state
    Snapshot.from_json(session.snapshot().to_json(), types=[Audit, Draft])  # saves and loads


def test_a_sub_evaluation_inside_a_failed_call_keeps_its_evaluation_events() -> None:
    from wink.adapters import PromptExecuted, PromptRendered
    from wink.testing import ScriptedAdapter

    sub_template = PromptTemplate(
        ns="tests", key="sub", sections=[MarkdownSection(title="Sub", template="Answer.")]
    )

    def delegate(params: Steps, *, context: ToolContext) -> ToolResult[None]:
        ScriptedAdapter(["ok"]).evaluate(Prompt(sub_template), session=context.session)
        raise RuntimeError("failed after the sub-evaluation")

    tool = Tool[Steps, None](name="delegate", description="D.", handler=delegate)
    template = PromptTemplate(
        ns="tests", key="outer", sections=[MarkdownSection(title="T", tools=[tool])]
    )
    session = Session()  # no evaluation ran on it before the call
    executor = ToolExecutor(prompt=Prompt(template), session=session)
    assert not executor.execute(ToolCall("delegate", '{"how": ""}')).success
    assert session[PromptRendered].kind is SliceKind.LOG
    assert (len(session[PromptRendered]), len(session[PromptExecuted])) == (1, 1)


def test_declare_default_makes_new_sessions_start_with_the_declaration() -> None:
    class History:
        pass

    Session.declare_default(History, SliceKind.LOG)
    assert Session()[History].kind is SliceKind.LOG
    with pytest.raises(TypeError, match="declare_default\\(\\) takes a SliceKind, got 'log'"):
        Session.declare_default(History, "log")  # type: ignore[arg-type]  # the mistake under test
