"""Failures of the machinery itself: every call is rolled back and recorded exactly once."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from wink import (
    Binding,
    Budget,
    BudgetTracker,
    Deadline,
    Filesystem,
    InMemoryFilesystem,
    MarkdownSection,
    Prompt,
    PromptEvaluationError,
    PromptRenderError,
    PromptTemplate,
    PromptValidationError,
    ResourceBuildError,
    ResourceRegistry,
    Scope,
    TokenUsage,
    Tool,
    ToolContext,
    ToolResult,
)
from wink._error_text import MAX_TEXT, describe_error, safe_repr
from wink.policy import PolicyDecision
from wink.runtime import Session, SliceValues, ToolCall, ToolExecutor, ToolInvoked


@dataclass(frozen=True)
class Mark:
    label: str


class Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("str failed")

    def __repr__(self) -> str:
        raise RuntimeError("repr failed")


class BadKey:
    def __hash__(self) -> int:
        return 1

    def __repr__(self) -> str:
        raise RuntimeError("repr failed")


@dataclass(frozen=True)
class Act:
    """What the handler does after writing ``a.txt`` and dispatching ``Mark``."""

    how: str = "succeed"


RAISED: dict[str, BaseException] = {}


def act(params: Act, *, context: ToolContext) -> ToolResult[None]:
    context.session.dispatch(Mark("from the handler"))
    context.require_filesystem().write("a.txt", "changed")
    if params.how == "unprintable":
        raise Unprintable()
    if params.how == "bad key":
        return {}[BadKey()]  # type: ignore[no-any-return]  # raises KeyError under test
    if params.how == "long":
        raise ValueError("x" * 10_000)
    if params.how in RAISED:
        raise RAISED[params.how]
    return ToolResult(message="done")


act_tool = Tool[Act, None](name="act", description="Act.", handler=act)


def executor_for(
    *tools: Tool[Any, Any],
    resources: Any = None,
    policies: tuple[Any, ...] = (),
    session: Session | None = None,
    **options: Any,
) -> ToolExecutor:
    template = PromptTemplate(
        ns="tests",
        key="failures",
        sections=[MarkdownSection(title="Tools", tools=tools or (act_tool,), policies=policies)],
    )
    return ToolExecutor(
        prompt=Prompt(template, resources=resources), session=session or Session(), **options
    )


def setup(**options: Any) -> tuple[ToolExecutor, Session, InMemoryFilesystem]:
    fs = InMemoryFilesystem(files={"a.txt": "original"})
    session = Session()
    resources = options.pop("resources", {Filesystem: fs})
    executor = executor_for(act_tool, resources=resources, session=session, **options)
    return executor, session, fs


def invoked(session: Session) -> list[tuple[str, bool, str]]:
    return [(e.name, e.success, e.result.message) for e in session[ToolInvoked].all()]


def assert_rolled_back(session: Session, fs: InMemoryFilesystem) -> None:
    assert session[Mark].all() == ()
    assert fs.read("a.txt") == "original"


# Describing an error never fails


def test_an_error_whose_str_and_repr_raise_is_a_recorded_rolled_back_failure() -> None:
    executor, session, fs = setup()
    result = executor.execute(ToolCall("act", '{"how": "unprintable"}'))
    message = "Tool 'act' raised Unprintable: <str() and repr() of the error raised>"
    assert result == ToolResult.error(message)
    assert invoked(session) == [("act", False, message)]
    assert_rolled_back(session, fs)


def test_a_key_error_whose_key_repr_raises_is_a_recorded_rolled_back_failure() -> None:
    executor, session, fs = setup()
    result = executor.execute(ToolCall("act", '{"how": "bad key"}'))
    assert result.message == "Tool 'act' raised KeyError: <str() and repr() of the error raised>"
    assert len(session[ToolInvoked]) == 1
    assert_rolled_back(session, fs)


def test_a_huge_error_message_is_cut_to_a_bounded_length() -> None:
    executor, _, _ = setup()
    result = executor.execute(ToolCall("act", '{"how": "long"}'))
    prefix = "Tool 'act' raised ValueError: "
    shown = "ValueError: " + "x" * (MAX_TEXT - len("ValueError: "))
    assert result.message == f"Tool 'act' raised {shown}… (8012 more characters)"
    assert result.message.startswith(prefix)


def test_describe_error_and_safe_repr_survive_broken_objects() -> None:
    assert describe_error(Unprintable()) == "Unprintable: <str() and repr() of the error raised>"
    assert describe_error(ValueError()) == "ValueError"
    assert safe_repr(BadKey()) == "<BadKey whose repr() raised>"


class UnprintablePolicy:
    name = "unprintable"

    def check(self, tool: Tool[Any, Any], params: Any, *, context: ToolContext) -> PolicyDecision:
        raise Unprintable()

    def on_result(self, *args: Any, context: ToolContext) -> None:
        raise Unprintable()


def test_a_policy_raising_an_unprintable_error_denies_the_call() -> None:
    executor, session, fs = setup(policies=(UnprintablePolicy(),))
    result = executor.execute(ToolCall("act", "{}"))
    assert result.message == (
        "Policy 'unprintable' failed on tool 'act': Unprintable: <str() and repr() of the "
        "error raised>"
    )
    assert_rolled_back(session, fs)


def test_a_factory_raising_an_unprintable_error_is_a_build_error() -> None:
    def factory(resolver: Any) -> InMemoryFilesystem:
        raise Unprintable()

    registry = ResourceRegistry.of(Binding(InMemoryFilesystem, factory))
    with pytest.raises(ResourceBuildError) as raised:
        registry.get(InMemoryFilesystem)
    assert str(raised.value) == (
        "building resource InMemoryFilesystem failed: the factory raised Unprintable: "
        "<str() and repr() of the error raised>"
    )


# Resources whose snapshot() or restore() fail


class Brittle:
    """A snapshotable whose snapshot or restore raises when told to."""

    def __init__(self, *, snapshot_error: BaseException | None = None) -> None:
        self.snapshot_error = snapshot_error
        self.restore_error: BaseException | None = None
        self.value = 0

    def snapshot(self) -> object:
        if self.snapshot_error is not None:
            raise self.snapshot_error
        return self.value

    def restore(self, snapshot: object) -> None:
        if self.restore_error is not None:
            raise self.restore_error
        assert isinstance(snapshot, int)
        self.value = snapshot


def test_a_restore_that_raises_still_restores_the_rest_records_and_stops() -> None:
    brittle = Brittle()
    brittle.restore_error = RuntimeError("cannot restore")
    fs = InMemoryFilesystem(files={"a.txt": "original"})
    executor, session, _ = setup(resources={Filesystem: fs, Brittle: brittle})
    RAISED["fail"] = ValueError("handler failed")
    with pytest.raises(PromptEvaluationError) as raised:
        executor.execute(ToolCall("act", '{"how": "fail"}'))
    assert str(raised.value) == (
        "Tool 'act' failed and its changes could not all be rolled back (resource Brittle: "
        "restore() raised RuntimeError: cannot restore); that state is unknown, so the "
        "evaluation stops"
    )
    assert isinstance(raised.value.__cause__, RuntimeError)
    assert invoked(session) == [("act", False, "Tool 'act' raised ValueError: handler failed")]
    assert_rolled_back(session, fs)


def test_a_snapshot_that_raises_is_a_recorded_failure_that_changes_nothing() -> None:
    brittle = Brittle(snapshot_error=OSError("no snapshot"))
    fs = InMemoryFilesystem(files={"a.txt": "original"})
    executor, session, _ = setup(resources={Filesystem: fs, Brittle: brittle})
    result = executor.execute(ToolCall("act", "{}"))
    message = (
        "Tool 'act' could not start: snapshot() of resource Brittle raised OSError: "
        "no snapshot; nothing was changed"
    )
    assert result == ToolResult.error(message)
    assert invoked(session) == [("act", False, message)]
    assert_rolled_back(session, fs)


def test_a_lazily_built_resource_whose_snapshot_raises_is_not_kept() -> None:
    built: list[Brittle] = []

    def build(resolver: Any) -> Brittle:
        built.append(Brittle(snapshot_error=OSError("no snapshot")))
        return built[-1]

    def use(params: None, *, context: ToolContext) -> ToolResult[None]:
        context.resources.get(Brittle)
        return ToolResult(message="used")

    tool = Tool[None, None](name="use", description="Use it.", handler=use)
    session = Session()
    registry = ResourceRegistry.of(Binding(Brittle, build))
    executor = executor_for(tool, resources=registry, session=session)
    result = executor.execute(ToolCall("use", "{}"))
    assert result.message == (
        "Tool 'use' raised ResourceBuildError: resource Brittle was built but its snapshot() "
        "raised OSError: no snapshot"
    )
    assert executor.execute(ToolCall("use", "{}")).success is False
    assert len(built) == 2  # forgotten after the first failure, built again
    assert len(session[ToolInvoked]) == 2


# BaseExceptions: rolled back, recorded, re-raised


@pytest.mark.parametrize(
    ("error", "described"),
    [
        (KeyboardInterrupt(), "KeyboardInterrupt"),
        (SystemExit(3), "SystemExit: 3"),
        (GeneratorExit(), "GeneratorExit"),
    ],
    ids=lambda e: type(e).__name__ if isinstance(e, BaseException) else "",
)
def test_a_base_exception_from_the_handler_is_recorded_then_re_raised(
    error: BaseException, described: str
) -> None:
    executor, session, fs = setup()
    RAISED["interrupt"] = error
    with pytest.raises(type(error)) as raised:
        executor.execute(ToolCall("act", '{"how": "interrupt"}'))
    assert raised.value is error
    message = f"Tool 'act' was interrupted by {described}; rolled back"
    assert invoked(session) == [("act", False, message)]
    assert_rolled_back(session, fs)


class InterruptingPolicy:
    name = "interrupting"

    def __init__(self, where: str) -> None:
        self.where = where

    def check(self, tool: Tool[Any, Any], params: Any, *, context: ToolContext) -> PolicyDecision:
        context.session.dispatch(Mark("from the policy"))
        if self.where == "check":
            raise KeyboardInterrupt
        return PolicyDecision.allow()

    def on_result(self, *args: Any, context: ToolContext) -> None:
        if self.where == "on_result":
            raise KeyboardInterrupt


@pytest.mark.parametrize("where", ["check", "on_result"])
def test_a_base_exception_from_a_policy_is_recorded_then_re_raised(where: str) -> None:
    executor, session, fs = setup(policies=(InterruptingPolicy(where),))
    with pytest.raises(KeyboardInterrupt):
        executor.execute(ToolCall("act", "{}"))
    assert invoked(session) == [
        ("act", False, "Tool 'act' was interrupted by KeyboardInterrupt; rolled back")
    ]
    assert_rolled_back(session, fs)


@dataclass(frozen=True)
class Loud:
    text: str

    def render(self) -> str:
        raise KeyboardInterrupt


def loud(params: None, *, context: ToolContext) -> ToolResult[Loud]:
    context.session.dispatch(Mark("before rendering"))
    return ToolResult.ok(Loud("x"))


def test_a_base_exception_while_rendering_the_result_is_recorded_then_re_raised() -> None:
    session = Session()
    executor = executor_for(
        Tool[None, Loud](name="loud", description="Loud.", handler=loud), session=session
    )
    with pytest.raises(KeyboardInterrupt):
        executor.execute(ToolCall("loud", "{}"))
    assert [e.success for e in session[ToolInvoked].all()] == [False]
    assert session[Mark].all() == ()


def interrupting_reducer(values: SliceValues[int], event: ToolInvoked) -> SliceValues[int]:
    if event.success:
        raise KeyboardInterrupt
    return values


def test_a_base_exception_from_a_reducer_on_success_is_recorded_then_re_raised() -> None:
    executor, session, fs = setup()
    session[int].register(ToolInvoked, interrupting_reducer)
    with pytest.raises(KeyboardInterrupt):
        executor.execute(ToolCall("act", "{}"))
    assert [e.success for e in session[ToolInvoked].all()] == [False]
    assert_rolled_back(session, fs)


class InterruptedOnClose:
    def close(self) -> None:
        raise KeyboardInterrupt


def use_closing(params: None, *, context: ToolContext) -> ToolResult[None]:
    context.resources.get(InterruptedOnClose)
    context.session.dispatch(Mark("before closing"))
    context.require_filesystem().write("a.txt", "changed")
    return ToolResult(message="used")


def test_a_base_exception_closing_a_call_resource_leaves_no_success_on_record() -> None:
    fs = InMemoryFilesystem(files={"a.txt": "original"})
    registry = ResourceRegistry.of(
        Binding.instance(Filesystem, fs),
        Binding(InterruptedOnClose, lambda r: InterruptedOnClose(), Scope.TOOL_CALL),
    )
    session = Session()
    tool = Tool[None, None](name="use", description="Use it.", handler=use_closing)
    executor = executor_for(tool, resources=registry, session=session)
    with pytest.raises(KeyboardInterrupt):
        executor.execute(ToolCall("use", "{}"))
    assert invoked(session) == [
        ("use", False, "Tool 'use' was interrupted by KeyboardInterrupt; rolled back")
    ]
    assert_rolled_back(session, fs)


def test_a_base_exception_from_restore_is_re_raised_after_the_rest_is_restored() -> None:
    brittle = Brittle()
    brittle.restore_error = KeyboardInterrupt()
    fs = InMemoryFilesystem(files={"a.txt": "original"})
    executor, session, _ = setup(resources={Filesystem: fs, Brittle: brittle})
    RAISED["fail"] = ValueError("handler failed")
    with pytest.raises(KeyboardInterrupt):
        executor.execute(ToolCall("act", '{"how": "fail"}'))
    assert invoked(session) == [("act", False, "Tool 'act' raised ValueError: handler failed")]
    assert_rolled_back(session, fs)


# Limits are checked again once the handler returns


def test_a_handler_that_overruns_the_deadline_is_rolled_back_and_stops_the_evaluation() -> None:
    now = [datetime(2025, 1, 1, tzinfo=UTC)]
    deadline = Deadline.after(30, clock=lambda: now[0])

    def slow(params: None, *, context: ToolContext) -> ToolResult[None]:
        context.session.dispatch(Mark("slow"))
        now[0] += timedelta(minutes=1)
        return ToolResult(message="finished late")

    session = Session()
    executor = executor_for(
        Tool[None, None](name="slow", description="Slow.", handler=slow),
        session=session,
        deadline=deadline,
    )
    with pytest.raises(PromptEvaluationError) as raised:
        executor.execute(ToolCall("slow", "{}"))
    message = (
        "Tool 'slow' was stopped: deadline 2025-01-01T00:00:30+00:00 passed before tool "
        "'slow' returned (now 2025-01-01T00:01:00+00:00)"
    )
    assert str(raised.value) == message
    assert invoked(session) == [("slow", False, message)]
    assert session[Mark].all() == ()


def test_a_handler_that_overruns_the_budget_is_rolled_back_and_stops_the_evaluation() -> None:
    tracker = BudgetTracker(Budget(max_total_tokens=1_000))

    def spend(params: None, *, context: ToolContext) -> ToolResult[None]:
        context.session.dispatch(Mark("spent"))
        tracker.record("sub-evaluation", TokenUsage(input_tokens=900, output_tokens=200))
        return ToolResult(message="spent")

    session = Session()
    executor = executor_for(
        Tool[None, None](name="spend", description="Spend.", handler=spend),
        session=session,
        budget_tracker=tracker,
    )
    with pytest.raises(PromptEvaluationError) as raised:
        executor.execute(ToolCall("spend", "{}"))
    message = (
        "Tool 'spend' was stopped: budget exceeded on total_tokens: 1100 tokens used, limit 1000"
    )
    assert str(raised.value) == message
    assert invoked(session) == [("spend", False, message)]
    assert session[Mark].all() == ()


# Policies fail closed


class Returning:
    name = "odd"

    def __init__(self, decision: object) -> None:
        self.decision = decision

    def check(self, tool: Tool[Any, Any], params: Any, *, context: ToolContext) -> Any:
        return self.decision

    def on_result(self, *args: Any, context: ToolContext) -> None:
        return None


@dataclass
class LookAlike:
    allowed: object
    reason: str | None = None


@pytest.mark.parametrize(
    ("decision", "returned"),
    [(None, "None"), (LookAlike(True), "a LookAlike"), ({"allowed": True}, "a dict")],
)
def test_a_policy_returning_anything_but_a_decision_denies_and_is_blamed(
    decision: object, returned: str
) -> None:
    executor, session, fs = setup(policies=(Returning(decision),))
    result = executor.execute(ToolCall("act", "{}"))
    message = f"Tool 'act' was denied: policy 'odd' returned {returned}, not a PolicyDecision."
    assert result == ToolResult.error(message)
    assert_rolled_back(session, fs)


def test_a_decision_whose_allowed_is_not_true_denies() -> None:
    decision = PolicyDecision(allowed=True)
    object.__setattr__(decision, "allowed", "yes")  # forced past the constructor's check
    executor, session, fs = setup(policies=(Returning(decision),))
    result = executor.execute(ToolCall("act", "{}"))
    assert result == ToolResult.error("Policy 'odd' denied tool 'act'.")
    assert_rolled_back(session, fs)


def test_a_policy_decision_refuses_a_non_bool_allowed() -> None:
    with pytest.raises(TypeError) as raised:
        PolicyDecision(allowed="no")  # type: ignore[arg-type]  # the mistake under test
    assert str(raised.value) == "PolicyDecision.allowed must be a bool, got str 'no'"
    with pytest.raises(TypeError) as raised:
        PolicyDecision(allowed=False, reason=3)  # type: ignore[arg-type]  # the mistake under test
    assert str(raised.value) == "PolicyDecision.reason must be a str or None, got int"


# ToolResult checks its fields


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"message": 123}, "ToolResult.message must be a str, got int 123"),
        ({"message": "m", "success": "yes"}, "ToolResult.success must be a bool, got str 'yes'"),
        (
            {"message": "m", "exclude_value_from_context": 1},
            "ToolResult.exclude_value_from_context must be a bool, got int 1",
        ),
    ],
)
def test_tool_result_refuses_wrongly_typed_fields(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(TypeError) as raised:
        ToolResult(**fields)
    assert str(raised.value) == message


def numeric_message(params: None, *, context: ToolContext) -> ToolResult[None]:
    return ToolResult(message=123)  # type: ignore[arg-type]  # the mistake under test


def test_a_handler_building_a_bad_tool_result_fails_its_call() -> None:
    tool = Tool[None, None](name="numeric", description="N.", handler=numeric_message)
    session = Session()
    result = executor_for(tool, session=session).execute(ToolCall("numeric", "{}"))
    message = "Tool 'numeric' raised TypeError: ToolResult.message must be a str, got int 123"
    assert result == ToolResult.error(message)
    assert len(session[ToolInvoked]) == 1


# Siblings: every other place that describes a user's object or meets an interruption


class UnprintableValidationError(PromptValidationError):
    def __str__(self) -> str:
        raise RuntimeError("str failed")


class RefusingPolicy:
    name = "refusing"

    def check(self, tool: Tool[Any, Any], params: Any, *, context: ToolContext) -> PolicyDecision:
        return PolicyDecision.allow()

    def on_result(self, *args: Any, context: ToolContext) -> None:
        return None

    def check_tools(self, tool_names: frozenset[str], governed: frozenset[str]) -> None:
        raise UnprintableValidationError()


def test_check_tools_raising_an_unprintable_validation_error_is_still_described() -> None:
    with pytest.raises(PromptValidationError) as raised:
        executor_for(act_tool, policies=(RefusingPolicy(),))
    assert str(raised.value) == (
        "prompt 'failures', policy attached to section tools: UnprintableValidationError()"
    )


class NotAPolicy:
    def __repr__(self) -> str:
        raise RuntimeError("repr failed")


def test_an_object_that_is_not_a_policy_is_named_even_when_its_repr_raises() -> None:
    with pytest.raises(PromptValidationError) as raised:
        executor_for(act_tool, policies=(NotAPolicy(),))
    assert str(raised.value).startswith(
        "tool 'act' (section tools): <NotAPolicy whose repr() raised> is not a ToolPolicy"
    )


@dataclass(frozen=True)
class Interrupting:
    value: int

    def __post_init__(self) -> None:
        if self.value < 0:
            raise KeyboardInterrupt


def test_an_interruption_while_parsing_arguments_is_recorded_then_re_raised() -> None:
    tool = Tool[Interrupting, None](
        name="parse", description="P.", handler=lambda params, *, context: ToolResult(message="")
    )
    session = Session()
    with pytest.raises(KeyboardInterrupt):
        executor_for(tool, session=session).execute(ToolCall("parse", '{"value": -1}'))
    assert invoked(session) == [
        ("parse", False, "Tool 'parse' was interrupted by KeyboardInterrupt")
    ]


def raise_unprintable(params: object) -> bool:
    raise Unprintable()


def test_an_enabled_predicate_raising_an_unprintable_error_is_a_render_error() -> None:
    template = PromptTemplate(
        ns="tests",
        key="enabled",
        sections=[MarkdownSection(title="Hi", template="hi", enabled=raise_unprintable)],
    )
    with pytest.raises(PromptRenderError) as raised:
        Prompt(template).render()
    assert str(raised.value) == (
        "section hi: the enabled predicate raised Unprintable: <str() and repr() of the "
        "error raised>"
    )


# Every test above runs on both of the executor's paths (see ``executor_path``).
pytestmark = pytest.mark.usefixtures("executor_path")
