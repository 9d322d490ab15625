"""ToolExecutor: each step of a call, the failure table, and rollback on every failure path."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from wink import (
    Binding,
    DeadlineExceededError,
    Filesystem,
    HostFilesystem,
    InMemoryFilesystem,
    MarkdownSection,
    Prompt,
    PromptEvaluationError,
    PromptTemplate,
    PromptValidationError,
    ResourceRegistry,
    Scope,
    Tool,
    ToolContext,
    ToolResult,
    ToolValidationError,
    VisibilityExpansionRequired,
)
from wink.policy import PolicyDecision, PolicyState, SequentialDependencyPolicy
from wink.runtime import (
    Budget,
    BudgetTracker,
    Deadline,
    Session,
    SliceKind,
    SliceValues,
    TokenUsage,
    ToolCall,
    ToolExecutor,
    ToolInvoked,
)

START = datetime(2025, 1, 1, tzinfo=UTC)


class FakeClock:
    """A clock that moves one second each time it is read."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        current = self.now
        self.now += timedelta(seconds=1)
        return current


@dataclass(frozen=True)
class LookupParams:
    entity_id: str = field(metadata={"description": "Global identifier to fetch"})
    include_related: bool = False


@dataclass(frozen=True)
class LookupResult:
    entity_id: str
    document_url: str


@dataclass(frozen=True)
class Greeting:
    text: str

    def render(self) -> str:
        return f"<<{self.text}>>"


@dataclass(frozen=True)
class MutateParams:
    mode: str


@dataclass(frozen=True)
class Note:
    text: str


@dataclass(frozen=True)
class Audit:
    entry: str


@dataclass(frozen=True)
class Exploding:
    n: int


class BrokenRender(BaseModel):
    n: int

    def render(self) -> str:
        raise RuntimeError("cannot render")


def lookup(params: LookupParams, *, context: ToolContext) -> ToolResult[LookupResult]:
    value = LookupResult(params.entity_id, f"https://example.com/{params.entity_id}")
    return ToolResult.ok(value, message=f"Fetched {params.entity_id}.")


def greet(params: None, *, context: ToolContext) -> ToolResult[Greeting]:
    return ToolResult.ok(Greeting("hi"))


def mutate(params: MutateParams, *, context: ToolContext) -> ToolResult[Any]:
    """Change session state and the filesystem, then fail the way ``mode`` says."""
    context.session.dispatch(Note("partial"))
    context.session.dispatch(Audit("mutate ran"))
    context.filesystem.write("out.txt", "partial")
    context.filesystem.write("new/created.txt", "partial")
    outcomes: dict[str, Callable[[], Any]] = {
        "ok": lambda: ToolResult.ok(Note("done")),
        "error": lambda: ToolResult.error("refused"),
        "reducer": lambda: ToolResult.ok(Exploding(1)),
        "not_result": lambda: "text",
        "render": lambda: ToolResult.ok(BrokenRender(n=1)),
        "recorder": lambda: ToolResult.ok(Note("recorded")),
    }
    errors: dict[str, BaseException] = {
        "raise": RuntimeError("boom"),
        "invalid": ToolValidationError("bad value"),
        "type": TypeError("wrong type"),
        "visibility": VisibilityExpansionRequired("expand"),
        "abort": PromptEvaluationError("stop"),
        "deadline": DeadlineExceededError("late"),
        "interrupt": KeyboardInterrupt(),
    }
    if params.mode in errors:
        raise errors[params.mode]
    result: ToolResult[Any] = outcomes[params.mode]()
    return result


lookup_tool = Tool[LookupParams, LookupResult](
    name="lookup_entity",
    description="Fetch structured information for a given entity id.",
    handler=lookup,
)
greet_tool = Tool[None, Greeting](name="greet", description="Say hello.", handler=greet)
# The result type admits every value the modes return: only the mode decides the outcome.
mutate_tool = Tool[MutateParams, Note | Exploding | BrokenRender](
    name="mutate", description="Change state, then fail as asked.", handler=mutate
)
advertised_tool = Tool[None, None](name="advertised", description="Has no handler.")


class RecorderPolicy:
    """Allows everything; its ``on_result`` breaks for the ``recorder`` mode."""

    name = "recorder"

    def __init__(self) -> None:
        self.checked: list[str] = []

    def check(self, tool: Tool[Any, Any], params: Any, *, context: ToolContext) -> PolicyDecision:
        self.checked.append(tool.name)
        return PolicyDecision.allow()

    def on_result(
        self, tool: Tool[Any, Any], params: Any, result: ToolResult[Any], *, context: ToolContext
    ) -> None:
        if isinstance(params, MutateParams) and params.mode == "recorder":
            raise RuntimeError("recorder broke")
        context.session.dispatch(Audit(f"recorded {tool.name}"))


class LabelPolicy:
    """Records the order policies are asked in; denies when told to."""

    def __init__(self, name: str, order: list[str], deny: bool = False) -> None:
        self.name = name
        self.order = order
        self.deny = deny
        self.results: list[str] = []

    def check(self, tool: Tool[Any, Any], params: Any, *, context: ToolContext) -> PolicyDecision:
        self.order.append(self.name)
        return PolicyDecision.deny(f"{self.name} says no") if self.deny else PolicyDecision.allow()

    def on_result(
        self, tool: Tool[Any, Any], params: Any, result: ToolResult[Any], *, context: ToolContext
    ) -> None:
        self.results.append(tool.name)


def make_executor(
    tools: Sequence[Tool[Any, Any]] = (lookup_tool, greet_tool, mutate_tool, advertised_tool),
    *,
    policies: Sequence[Any] = (),
    resources: Any = None,
    session: Session | None = None,
    **options: Any,
) -> tuple[ToolExecutor, Session]:
    template = PromptTemplate(
        ns="tests",
        key="executor",
        name="executor-prompt",
        sections=[MarkdownSection(title="Tools", template="Use them.", tools=tools)],
        policies=policies,
    )
    prompt = Prompt(template, resources=resources)
    session = session or Session()
    session[Audit].declare(SliceKind.LOG)
    session[Exploding].register(Exploding, explode)
    return ToolExecutor(prompt=prompt, session=session, **options), session


def explode(values: SliceValues[Exploding], event: Exploding) -> SliceValues[Exploding]:
    raise ValueError("exploded")


# Step 1: lookup


def test_known_tool_runs_and_returns_its_result() -> None:
    executor, _ = make_executor()
    result = executor.execute(ToolCall("lookup_entity", '{"entity_id": "e1"}', "c1"))
    assert result == ToolResult.ok(
        LookupResult("e1", "https://example.com/e1"), message="Fetched e1."
    )


def test_unknown_tool_is_a_failed_result_naming_the_available_tools() -> None:
    executor, _ = make_executor()
    result = executor.execute(ToolCall("lookup", "{}"))
    assert result == ToolResult.error(
        "Unknown tool 'lookup'. Available tools: lookup_entity, greet, mutate, advertised."
    )


def test_tool_of_a_disabled_section_is_unknown() -> None:
    template = PromptTemplate(
        ns="tests",
        key="disabled",
        sections=[
            MarkdownSection(title="On", tools=[greet_tool]),
            MarkdownSection(title="Off", tools=[lookup_tool], enabled=False),
        ],
    )
    executor = ToolExecutor(prompt=Prompt(template), session=Session())
    result = executor.execute(ToolCall("lookup_entity", '{"entity_id": "e1"}'))
    assert result.message == "Unknown tool 'lookup_entity'. Available tools: greet."


def test_tool_without_handler_is_a_failed_result() -> None:
    executor, _ = make_executor()
    assert executor.execute(ToolCall("advertised")) == ToolResult.error(
        "Tool 'advertised' has no handler; it cannot be called."
    )


# Step 2: arguments


@pytest.mark.parametrize(
    "arguments",
    ['{"entity_id": "e1"}', b'{"entity_id": "e1"}', {"entity_id": "e1"}],
    ids=["text", "bytes", "mapping"],
)
def test_arguments_may_be_json_text_bytes_or_a_mapping(arguments: Any) -> None:
    executor, _ = make_executor()
    assert executor.execute(ToolCall("lookup_entity", arguments)).success


@pytest.mark.parametrize("arguments", ["{}", "", "null", None, {}], ids=repr)
def test_parameterless_tool_accepts_empty_arguments(arguments: Any) -> None:
    executor, _ = make_executor()
    assert executor.execute(ToolCall("greet", arguments)) == ToolResult.ok(Greeting("hi"))


def test_parameterless_tool_rejects_arguments() -> None:
    executor, _ = make_executor()
    result = executor.execute(ToolCall("greet", '{"name": "x"}'))
    assert result == ToolResult.error(
        "Invalid arguments for tool 'greet':\n"
        '<root>: this tool takes no arguments (got \'{"name": "x"}\')'
    )


def test_invalid_arguments_give_a_model_ready_message_and_skip_the_handler() -> None:
    executor, session = make_executor()
    result = executor.execute(ToolCall("lookup_entity", '{"entity_id": 7, "extra": 1}'))
    assert result == ToolResult.error(
        "Invalid arguments for tool 'lookup_entity':\n"
        "entity_id: input should be a valid string (got 7)\n"
        "extra: unknown field (allowed: entity_id, include_related)"
    )
    assert session[LookupResult].all() == ()


def test_arguments_that_are_not_json_are_reported() -> None:
    executor, _ = make_executor()
    result = executor.execute(ToolCall("lookup_entity", "{entity_id: e1"))
    assert result.message.startswith(
        "Invalid arguments for tool 'lookup_entity':\n<root>: arguments are not valid JSON"
    )


# Step 3: policies


def test_policies_are_asked_section_first_then_ancestors_then_prompt() -> None:
    order: list[str] = []
    inner = MarkdownSection(
        title="Inner", tools=[greet_tool], policies=[LabelPolicy("inner", order)]
    )
    outer = MarkdownSection(title="Outer", children=[inner], policies=[LabelPolicy("outer", order)])
    template = PromptTemplate(
        ns="tests", key="order", sections=[outer], policies=[LabelPolicy("prompt", order)]
    )
    executor = ToolExecutor(prompt=Prompt(template), session=Session())
    executor.execute(ToolCall("greet"))
    assert order == ["inner", "outer", "prompt"]


def test_denial_returns_the_reason_and_skips_the_handler_and_later_policies() -> None:
    order: list[str] = []
    executor, session = make_executor(
        policies=[LabelPolicy("first", order, deny=True), LabelPolicy("second", order)]
    )
    result = executor.execute(ToolCall("mutate", '{"mode": "ok"}'))
    assert result == ToolResult.error("first says no")
    assert order == ["first"]
    assert session[Note].all() == ()


def test_policy_that_raises_denies_the_call() -> None:
    class Broken:
        name = "broken"

        def check(self, tool: Any, params: Any, *, context: Any) -> PolicyDecision:
            raise KeyError("state")

        def on_result(self, *args: Any, **kwargs: Any) -> None:
            pass

    executor, _ = make_executor(policies=[Broken()])
    assert executor.execute(ToolCall("greet")) == ToolResult.error(
        "Policy 'broken' failed on tool 'greet': KeyError: 'state'"
    )


def test_on_result_runs_for_each_policy_only_after_success() -> None:
    order: list[str] = []
    first, second = LabelPolicy("first", order), LabelPolicy("second", order)
    executor, _ = make_executor(policies=[first, second])
    executor.execute(ToolCall("greet"))
    executor.execute(ToolCall("mutate", '{"mode": "error"}'))
    assert first.results == ["greet"]
    assert second.results == ["greet"]


def test_policy_attached_twice_is_asked_once() -> None:
    order: list[str] = []
    shared = LabelPolicy("shared", order)
    section = MarkdownSection(title="Tools", tools=[greet_tool], policies=[shared])
    template = PromptTemplate(ns="tests", key="twice", sections=[section], policies=[shared])
    ToolExecutor(prompt=Prompt(template), session=Session()).execute(ToolCall("greet"))
    assert order == ["shared"]


# Step 4: deadline and budget


def test_expired_deadline_stops_the_evaluation_before_the_handler() -> None:
    clock = FakeClock()
    deadline = Deadline(START, clock=clock)
    executor, session = make_executor(deadline=deadline, clock=clock)
    with pytest.raises(PromptEvaluationError) as raised:
        executor.execute(ToolCall("mutate", '{"mode": "ok"}'))
    assert str(raised.value) == (
        "Tool 'mutate' was stopped: deadline 2025-01-01T00:00:00+00:00 passed before tool "
        "'mutate' could start (now 2025-01-01T00:00:01+00:00)"
    )
    assert isinstance(raised.value.__cause__, DeadlineExceededError)
    assert session[Note].all() == ()


def test_deadline_in_the_future_lets_the_call_run() -> None:
    clock = FakeClock()
    executor, _ = make_executor(deadline=Deadline(START + timedelta(hours=1), clock=clock))
    assert executor.execute(ToolCall("greet")).success


def test_exceeded_budget_stops_the_evaluation() -> None:
    tracker = BudgetTracker(Budget(max_total_tokens=10))
    tracker.record("evaluation", TokenUsage(input_tokens=8, output_tokens=3))
    executor, _ = make_executor(budget_tracker=tracker)
    with pytest.raises(PromptEvaluationError, match="budget exceeded on total_tokens: 11 tokens"):
        executor.execute(ToolCall("greet"))


# Step 5: context


def test_handler_receives_the_full_context() -> None:
    seen: list[ToolContext] = []

    def capture(params: None, *, context: ToolContext) -> ToolResult[None]:
        seen.append(context)
        return ToolResult.ok(None)

    fs = InMemoryFilesystem()
    tool = Tool[None, None](name="capture", description="Capture the context.", handler=capture)
    adapter, deadline = object(), Deadline(START + timedelta(days=36500))
    tracker, beats = BudgetTracker(Budget(max_total_tokens=10)), [0]
    executor, session = make_executor(
        [tool],
        resources={Filesystem: fs},
        adapter=adapter,
        deadline=deadline,
        budget_tracker=tracker,
        heartbeat=lambda: beats.__setitem__(0, beats[0] + 1),
    )
    executor.execute(ToolCall("capture"))
    context = seen[0]
    assert context.prompt is not None and context.prompt.name == "executor-prompt"
    assert context.rendered_prompt is executor.rendered_prompt
    assert (context.adapter, context.session, context.deadline) == (adapter, session, deadline)
    assert context.budget_tracker is tracker
    assert context.filesystem is fs
    assert context.resources.get(Filesystem) is fs
    context.beat()
    assert beats == [1]


def test_tool_call_resource_is_built_once_per_call_and_closed_after_it() -> None:
    class Tracer:
        def __init__(self) -> None:
            self.closed = False

        def close(self) -> None:
            self.closed = True

    built: list[Tracer] = []
    seen: list[tuple[Tracer, Tracer, bool]] = []

    def build(resolver: Any) -> Tracer:
        built.append(Tracer())
        return built[-1]

    def trace(params: None, *, context: ToolContext) -> ToolResult[None]:
        first, second = context.resources.get(Tracer), context.resources.get(Tracer)
        seen.append((first, second, first.closed))
        return ToolResult.ok(None)

    tool = Tool[None, None](name="trace", description="Use a tracer.", handler=trace)
    registry = ResourceRegistry.of(Binding(Tracer, build, scope=Scope.TOOL_CALL))
    executor, _ = make_executor([tool], resources=registry)
    executor.execute(ToolCall("trace"))
    executor.execute(ToolCall("trace"))
    assert len(built) == 2
    assert [first is second for first, second, _ in seen] == [True, True]
    assert [closed_during for _, _, closed_during in seen] == [False, False]
    assert [tracer.closed for tracer in built] == [True, True]


# Steps 7-11: results and the ToolInvoked event


def test_tool_invoked_records_a_successful_call() -> None:
    clock = FakeClock()
    executor, session = make_executor(clock=clock)
    result = executor.execute(ToolCall("lookup_entity", '{"entity_id": "e1"}', "call-9"))
    assert session[ToolInvoked].all() == (
        ToolInvoked(
            prompt_name="executor-prompt",
            name="lookup_entity",
            call_id="call-9",
            params=LookupParams("e1"),
            arguments='{"entity_id": "e1"}',
            result=result,
            rendered_output='{"entity_id":"e1","document_url":"https://example.com/e1"}',
            started_at=START,
            finished_at=START + timedelta(seconds=1),
        ),
    )


def test_successful_value_is_appended_to_the_slice_of_its_type() -> None:
    executor, session = make_executor()
    executor.execute(ToolCall("lookup_entity", '{"entity_id": "e1"}'))
    assert session[LookupResult].all() == (LookupResult("e1", "https://example.com/e1"),)


def test_rendered_output_uses_the_value_render_method() -> None:
    executor, session = make_executor()
    executor.execute(ToolCall("greet"))
    event = session[ToolInvoked].latest()
    assert event is not None and event.rendered_output == "<<hi>>"


def test_tool_invoked_records_a_failed_call_with_raw_arguments() -> None:
    executor, session = make_executor()
    result = executor.execute(ToolCall("lookup_entity", '{"entity_id": 7}', "call-2"))
    event = session[ToolInvoked].latest()
    assert event is not None
    assert (event.name, event.call_id, event.params) == ("lookup_entity", "call-2", None)
    assert event.arguments == '{"entity_id": 7}'
    assert (event.result, event.rendered_output) == (result, "")


def test_tool_invoked_records_an_unknown_tool() -> None:
    executor, session = make_executor()
    executor.execute(ToolCall("missing", "{}", "call-3"))
    event = session[ToolInvoked].latest()
    assert event is not None and (event.name, event.success) == ("missing", False)


# The failure table, and rollback on every failure path

FAILED_RESULTS = {
    "error": "refused",
    "raise": "Tool 'mutate' raised RuntimeError: boom",
    "type": "Tool 'mutate' raised TypeError: wrong type",
    "invalid": "Tool 'mutate' raised ToolValidationError: bad value",
    "not_result": "Tool 'mutate' returned str, not a ToolResult.",
    "reducer": (
        "Tool 'mutate' succeeded but its result could not be applied, so its changes were "
        "rolled back: ValueError: exploded"
    ),
    "render": (
        "Tool 'mutate' succeeded but its result could not be applied, so its changes were "
        "rolled back: RuntimeError: cannot render"
    ),
    "recorder": (
        "Tool 'mutate' succeeded but its result could not be applied, so its changes were "
        "rolled back: RuntimeError: recorder broke"
    ),
}

RAISED = {
    "visibility": (VisibilityExpansionRequired, "expand"),
    "abort": (PromptEvaluationError, "stop"),
    "deadline": (PromptEvaluationError, "Tool 'mutate' was stopped: late"),
    "interrupt": (KeyboardInterrupt, ""),
}


def prepared(fs: Filesystem, **options: Any) -> tuple[ToolExecutor, Session]:
    fs.write("out.txt", "before")
    executor, session = make_executor(
        resources={Filesystem: fs}, policies=[RecorderPolicy()], **options
    )
    session.dispatch(Note("before"))
    return executor, session


def assert_rolled_back(session: Session, fs: Filesystem) -> None:
    assert session[Note].all() == (Note("before"),)
    assert session[Exploding].all() == ()
    assert fs.read("out.txt") == "before"
    assert not fs.exists("new/created.txt")


@pytest.mark.parametrize("mode", sorted(FAILED_RESULTS))
def test_failed_call_returns_a_failed_result_and_restores_state(mode: str) -> None:
    fs = InMemoryFilesystem()
    executor, session = prepared(fs)
    result = executor.execute(ToolCall("mutate", f'{{"mode": "{mode}"}}'))
    assert result == ToolResult.error(FAILED_RESULTS[mode])
    assert_rolled_back(session, fs)


@pytest.mark.parametrize("mode", sorted(RAISED))
def test_call_that_must_stop_the_evaluation_raises_after_restoring_state(mode: str) -> None:
    fs = InMemoryFilesystem()
    executor, session = prepared(fs)
    error_type, message = RAISED[mode]
    with pytest.raises(error_type) as raised:
        executor.execute(ToolCall("mutate", f'{{"mode": "{mode}"}}'))
    assert str(raised.value) == message
    assert_rolled_back(session, fs)


def test_deadline_error_from_a_handler_is_chained() -> None:
    executor, _ = prepared(InMemoryFilesystem())
    with pytest.raises(PromptEvaluationError) as raised:
        executor.execute(ToolCall("mutate", '{"mode": "deadline"}'))
    assert isinstance(raised.value.__cause__, DeadlineExceededError)


@pytest.mark.parametrize(
    ("arguments", "policies"),
    [('{"mode": 1}', ()), ('{"mode": "ok"}', (LabelPolicy("no", [], deny=True),))],
    ids=["invalid arguments", "policy denial"],
)
def test_call_refused_before_the_handler_changes_nothing(
    arguments: str, policies: Sequence[Any]
) -> None:
    fs = InMemoryFilesystem()
    fs.write("out.txt", "before")
    executor, session = make_executor(resources={Filesystem: fs}, policies=policies)
    session.dispatch(Note("before"))
    before = session.snapshot().state
    assert not executor.execute(ToolCall("mutate", arguments)).success
    assert session.snapshot().state is before
    assert fs.read("out.txt") == "before"


def test_log_slices_written_by_a_failed_call_are_kept() -> None:
    executor, session = prepared(InMemoryFilesystem())
    executor.execute(ToolCall("mutate", '{"mode": "raise"}'))
    assert session[Audit].all() == (Audit("mutate ran"),)
    event = session[ToolInvoked].latest()
    assert event is not None and event.result.message == FAILED_RESULTS["raise"]


def test_calls_stopping_the_evaluation_are_recorded() -> None:
    executor, session = prepared(InMemoryFilesystem())
    with pytest.raises(VisibilityExpansionRequired):
        executor.execute(ToolCall("mutate", '{"mode": "visibility"}'))
    event = session[ToolInvoked].latest()
    assert event is not None
    assert event.result == ToolResult.error(
        "Tool 'mutate' raised VisibilityExpansionRequired: expand"
    )


def test_successful_call_keeps_its_changes() -> None:
    fs = InMemoryFilesystem()
    executor, session = prepared(fs)
    assert executor.execute(ToolCall("mutate", '{"mode": "ok"}')).success
    assert session[Note].all() == (Note("before"), Note("partial"), Note("done"))
    assert session[Audit].all() == (Audit("mutate ran"), Audit("recorded mutate"))
    assert fs.read("out.txt") == "partial"


def test_failed_call_records_nothing_in_policy_state() -> None:
    policy = SequentialDependencyPolicy(dependencies={"lookup_entity": frozenset({"mutate"})})
    fs = InMemoryFilesystem()
    executor, session = make_executor(policies=[policy], resources={Filesystem: fs})
    executor.execute(ToolCall("mutate", '{"mode": "raise"}'))
    assert session[PolicyState].all() == ()
    assert not executor.execute(ToolCall("lookup_entity", '{"entity_id": "e1"}')).success


def test_host_filesystem_is_restored_after_a_failed_call(tmp_path: Path) -> None:
    fs = HostFilesystem(tmp_path)
    executor, session = prepared(fs)
    executor.execute(ToolCall("mutate", '{"mode": "raise"}'))
    assert_rolled_back(session, fs)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]


def test_lazily_bound_filesystem_is_restored_after_its_first_call_fails() -> None:
    built: list[InMemoryFilesystem] = []

    def build(resolver: Any) -> InMemoryFilesystem:
        built.append(InMemoryFilesystem())
        return built[-1]

    registry = ResourceRegistry.of(Binding(Filesystem, build))
    executor, _ = make_executor(resources=registry)
    executor.execute(ToolCall("mutate", '{"mode": "raise"}'))
    assert len(built) == 1
    assert not built[0].exists("out.txt")


def test_mapping_arguments_that_json_cannot_carry_are_invalid_arguments() -> None:
    executor, _ = make_executor()
    result = executor.execute(ToolCall("lookup_entity", {"entity_id": object()}))
    assert result.message.startswith(
        "Invalid arguments for tool 'lookup_entity': PydanticSerializationError: "
    )


def test_object_that_is_not_a_policy_is_rejected_when_the_executor_is_built() -> None:
    with pytest.raises(PromptValidationError) as raised:
        make_executor(policies=["read_before_write"])
    assert str(raised.value).startswith(
        "tool 'lookup_entity' (section tools): 'read_before_write' is not a ToolPolicy"
    )


class Counter:
    """A snapshotable resource that is not a filesystem."""

    def __init__(self) -> None:
        self.value = 0

    def snapshot(self) -> object:
        return self.value

    def restore(self, snapshot: object) -> None:
        assert isinstance(snapshot, int)
        self.value = snapshot


@dataclass
class BumpParams:
    fail: bool


def bump(params: BumpParams, *, context: ToolContext) -> ToolResult[None]:
    context.resources.get(Counter).value += 1
    if params.fail:
        raise RuntimeError("bumped, then failed")
    return ToolResult(message="bumped")


bump_tool = Tool[BumpParams, None](name="bump", description="Bump the counter.", handler=bump)


def test_singleton_first_built_inside_a_failed_call_is_restored_to_its_fresh_state() -> None:
    registry = ResourceRegistry.of(Binding(Counter, lambda resolver: Counter()))
    executor, session = make_executor([bump_tool], resources=registry)
    assert not executor.execute(ToolCall("bump", '{"fail": true}')).success
    assert registry.for_session(session).get(Counter).value == 0
    assert executor.execute(ToolCall("bump", '{"fail": false}')).success
    assert not executor.execute(ToolCall("bump", '{"fail": true}')).success
    assert registry.for_session(session).get(Counter).value == 1


# The declared result type


@dataclass(frozen=True)
class DetailedResult(LookupResult):
    internal_token: str = "secret"


def returning(value: Any) -> Tool[None, LookupResult]:
    """A tool declared to return ``LookupResult`` whose handler notes, then returns ``value``."""

    def handler(params: None, *, context: ToolContext) -> ToolResult[Any]:
        context.session.dispatch(Audit("handler ran"))
        context.session.dispatch(Note("partial"))
        return ToolResult.ok(value)

    return Tool[None, LookupResult](name="typed", description="Return a value.", handler=handler)


@pytest.mark.parametrize(
    ("value", "returned"),
    [(Note("n"), "Note"), ("plain", "str"), ([LookupResult("e1", "u")], "list")],
    ids=["other dataclass", "string", "list"],
)
def test_value_of_another_type_is_a_failed_result_and_rolls_the_call_back(
    value: Any, returned: str
) -> None:
    executor, session = make_executor([returning(value)])
    result = executor.execute(ToolCall("typed"))
    assert result == ToolResult.error(f"Tool 'typed' returned {returned}, expected LookupResult")
    assert session[Note].all() == ()
    assert session[type(value)].all() == ()
    event = session[ToolInvoked].latest()
    assert event is not None and (event.result, event.rendered_output) == (result, "")


def test_list_item_of_another_type_is_a_failed_result() -> None:
    def handler(params: None, *, context: ToolContext) -> ToolResult[list[LookupResult]]:
        return ToolResult.ok([LookupResult("e1", "u"), Note("n")])  # type: ignore[list-item]  # the mistake under test

    tool = Tool[None, list[LookupResult]](name="many", description="Many.", handler=handler)
    executor, _ = make_executor([tool])
    result = executor.execute(ToolCall("many"))
    assert (result.success, result.message.startswith("Tool 'many' returned list, expected")) == (
        False,
        True,
    )


def test_none_value_is_a_success_whatever_the_declared_type() -> None:
    executor, session = make_executor([returning(None)])
    assert executor.execute(ToolCall("typed")) == ToolResult.ok(None)
    assert session[Note].all() == (Note("partial"),)


def test_subclass_value_is_rendered_with_only_the_declared_fields() -> None:
    executor, session = make_executor([returning(DetailedResult("e1", "u"))])
    result = executor.execute(ToolCall("typed"))
    assert result == ToolResult.ok(DetailedResult("e1", "u"))
    event = session[ToolInvoked].latest()
    assert event is not None
    assert event.rendered_output == '{"entity_id":"e1","document_url":"u"}'
    assert result.render() == '{"entity_id":"e1","document_url":"u"}'


def test_result_rendered_directly_still_uses_the_value_type() -> None:
    result = ToolResult.ok(DetailedResult("e1", "u"))
    assert result.render() == ('{"entity_id":"e1","document_url":"u","internal_token":"secret"}')


def test_subclass_value_joins_the_slice_of_the_declared_type() -> None:
    executor, session = make_executor([returning(DetailedResult("e1", "u"))])
    executor.execute(ToolCall("typed"))
    assert session[LookupResult].all() == (DetailedResult("e1", "u"),)
    assert session[DetailedResult].all() == ()


def test_subclass_value_of_a_union_member_joins_that_member_slice() -> None:
    def handler(params: None, *, context: ToolContext) -> ToolResult[LookupResult | Note]:
        return ToolResult.ok(DetailedResult("e1", "u"))

    tool = Tool[None, LookupResult | Note](name="either", description="Either.", handler=handler)
    executor, session = make_executor([tool])
    assert executor.execute(ToolCall("either")).success
    assert session[LookupResult].all() == (DetailedResult("e1", "u"),)


# Every test above runs on both of the executor's paths (see ``executor_path``).
pytestmark = pytest.mark.usefixtures("executor_path")
