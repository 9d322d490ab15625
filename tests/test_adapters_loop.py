"""The evaluation loop, provider-free, through ``wink.testing``'s adapters."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from adapter_prompts import (
    Summary,
    Tag,
    Tagged,
    notes_template,
    parent_template,
    summary_template,
)
from pydantic import BaseModel

from wink import (
    Budget,
    BudgetTracker,
    Deadline,
    InMemoryFilesystem,
    MarkdownSection,
    Prompt,
    PromptEvaluationError,
    PromptExecuted,
    PromptRendered,
    PromptTemplate,
    PromptValidationError,
    Session,
    Snapshot,
    TokenUsage,
    Tool,
    ToolContext,
    ToolInvoked,
    ToolResult,
)
from wink.adapters import ModelRequest, Wait, evaluation_steps
from wink.testing import (
    AssistantMessage,
    FunctionAdapter,
    ModelInput,
    ModelReply,
    ProviderError,
    ScriptedAdapter,
    SystemMessage,
    ToolMessage,
    ToolSpec,
    UserMessage,
    call,
)

NOTES_TEXT = "## Notes\n\nWhich notes mention e?"
CORRECTION = (
    "Your answer does not match the required JSON Schema:\n{problem}\n"
    "Answer again with only the corrected JSON object."
)


def fixed_clock(start: datetime = datetime(2025, 1, 1, tzinfo=UTC)) -> list[datetime]:
    return [start]


def test_a_text_prompt_is_answered_with_text_and_no_output() -> None:
    adapter = ScriptedAdapter(["Nothing to do."])
    response = adapter.evaluate(Prompt(notes_template), session=Session())
    assert (response.prompt_name, response.text, response.output) == (
        "notes",
        "Nothing to do.",
        None,
    )
    assert (response.turns, response.tool_results) == (1, ())


def test_the_rendered_text_is_the_user_message_and_the_tools_are_shown() -> None:
    adapter = ScriptedAdapter(["ok"])
    adapter.evaluate(Prompt(notes_template), session=Session())
    (seen,) = adapter.inputs
    assert seen.messages == (UserMessage(NOTES_TEXT),)
    assert [tool.name for tool in seen.tools] == ["search", "get_note"]
    assert seen.tools[1] == ToolSpec(
        "get_note",
        "Read one note.",
        {
            "type": "object",
            "properties": {"id": {"type": "integer"}},
            "required": ["id"],
            "additionalProperties": False,
        },
    )
    assert seen.output_schema is None


def test_every_call_of_a_turn_runs_in_order_and_is_answered_in_the_next_request() -> None:
    adapter = ScriptedAdapter(
        [
            [call("search", {"query": "e"}, "c1"), call("get_note", {"id": 2}, "c2")],
            "bread and eggs",
        ]
    )
    session = Session()
    response = adapter.evaluate(Prompt(notes_template), session=session)
    second = adapter.inputs[1]
    assert second.messages[1:] == (
        AssistantMessage(
            None, (call("search", {"query": "e"}, "c1"), call("get_note", {"id": 2}, "c2"))
        ),
        ToolMessage("c1", "search", '2 hits.\n\n["bread","eggs"]', True),
        ToolMessage("c2", "get_note", 'Found.\n\n"bread"', True),
    )
    assert [(event.name, event.call_id) for event in response.tool_results] == [
        ("search", "c1"),
        ("get_note", "c2"),
    ]
    assert response.tool_results == session[ToolInvoked].all()
    assert response.text == "bread and eggs"


def test_a_failing_tool_is_answered_with_its_message_and_the_loop_goes_on() -> None:
    adapter = ScriptedAdapter(
        [call("get_note", {"id": 7}, "c1"), call("get_note", {"id": "x"}, "c2"), "none"]
    )
    response = adapter.evaluate(Prompt(notes_template), session=Session())
    assert adapter.inputs[1].tool_messages() == (
        ToolMessage("c1", "get_note", "No note 7.", False),
    )
    assert adapter.inputs[2].tool_messages() == (
        ToolMessage(
            "c2",
            "get_note",
            "Invalid arguments for tool 'get_note':\nid: input should be a valid integer "
            '(got "x")',
            False,
        ),
    )
    assert [event.success for event in response.tool_results] == [False, False]
    assert response.text == "none"


def test_structured_output_is_parsed_into_the_output_type() -> None:
    adapter = ScriptedAdapter([{"titles": ["bread"], "count": 1}])
    response = adapter.evaluate(Prompt(summary_template), session=Session())
    assert response.output == Summary(titles=["bread"], count=1)
    assert response.text == '{"titles": ["bread"], "count": 1}'
    assert adapter.inputs[0].output_schema == summary_template.output_contract.input_schema  # type: ignore[union-attr]


def test_an_invalid_answer_is_sent_back_with_the_contract_message_then_parsed() -> None:
    adapter = ScriptedAdapter(
        [{"titles": "bread", "count": 1, "extra": True}, Summary(titles=["bread"], count=1)]
    )
    response = adapter.evaluate(Prompt(summary_template), session=Session())
    problem = (
        'titles: input should be a valid array (got "bread")\n'
        "extra: unknown field (allowed: titles, count)"
    )
    assert adapter.inputs[1].messages[1:] == (
        AssistantMessage('{"titles": "bread", "count": 1, "extra": true}'),
        UserMessage(CORRECTION.format(problem=problem)),
    )
    assert response.output == Summary(titles=["bread"], count=1)
    assert response.turns == 2


def test_an_answer_still_invalid_after_the_retries_stops_with_phase_response() -> None:
    adapter = ScriptedAdapter(["not json", {"count": 1}, {"count": 2}])
    session = Session()
    with pytest.raises(PromptEvaluationError) as raised:
        adapter.evaluate(Prompt(summary_template), session=session, output_retries=2)
    error = raised.value
    assert (error.phase, error.prompt_name) == ("response", "summary")
    assert str(error) == (
        "prompt 'summary': the answer does not match the output type Summary after 2 retries "
        "(output_retries=2):\ntitles: required field is missing"
    )
    assert adapter.remaining == 0


def test_with_no_output_retries_the_first_invalid_answer_stops() -> None:
    adapter = ScriptedAdapter(["", "unused"])
    with pytest.raises(PromptEvaluationError) as raised:
        adapter.evaluate(Prompt(summary_template), session=Session(), output_retries=0)
    assert str(raised.value) == (
        "prompt 'summary': the answer does not match the output type Summary after 0 retries "
        "(output_retries=0):\n<root>: the answer is empty; a JSON object is required"
    )
    assert adapter.remaining == 1


def test_max_turns_stops_a_model_that_keeps_calling_tools() -> None:
    adapter = FunctionAdapter(lambda model_input: call("search", {"query": "e"}))
    session = Session()
    with pytest.raises(PromptEvaluationError) as raised:
        adapter.evaluate(Prompt(notes_template), session=session, max_turns=3)
    assert raised.value.phase == "max_turns"
    assert str(raised.value) == (
        "prompt 'notes': max_turns=3 reached: the model had not answered after 3 requests"
    )
    assert len(adapter.inputs) == 3
    assert len(session[ToolInvoked]) == 3  # the calls already made stay recorded


def test_usage_is_summed_over_the_requests_and_recorded_in_the_budget() -> None:
    adapter = ScriptedAdapter(
        [
            ModelReply(calls=(call("search", {"query": "e"}),), usage=TokenUsage(10, 5)),
            ModelReply("done", usage=TokenUsage(20, 7)),
        ]
    )
    tracker = BudgetTracker(Budget(max_total_tokens=1000))
    response = adapter.evaluate(Prompt(notes_template), session=Session(), budget_tracker=tracker)
    assert response.usage == TokenUsage(30, 12)
    assert tracker.consumed == TokenUsage(30, 12)


def test_a_budget_passed_by_a_response_stops_before_its_tool_calls_run() -> None:
    adapter = ScriptedAdapter([call("search", {"query": "e"})], usage=TokenUsage(80, 30))
    tracker = BudgetTracker(Budget(max_total_tokens=100))
    session = Session()
    with pytest.raises(PromptEvaluationError) as raised:
        adapter.evaluate(Prompt(notes_template), session=session, budget_tracker=tracker)
    assert raised.value.phase == "budget"
    assert str(raised.value) == (
        "prompt 'notes': after request 1: budget exceeded on total_tokens: 110 tokens used, "
        "limit 100"
    )
    assert len(session[ToolInvoked]) == 0


def test_a_passed_deadline_stops_before_the_request() -> None:
    now = fixed_clock()
    deadline = Deadline(now[0] + timedelta(seconds=5), lambda: now[0])
    now[0] += timedelta(seconds=5)
    adapter = ScriptedAdapter(["unused"])
    with pytest.raises(PromptEvaluationError) as raised:
        adapter.evaluate(Prompt(notes_template), session=Session(), deadline=deadline)
    assert raised.value.phase == "deadline"
    assert str(raised.value) == (
        "prompt 'notes': deadline 2025-01-01T00:00:05+00:00 passed before request 1 "
        "(now 2025-01-01T00:00:05+00:00)"
    )
    assert adapter.inputs == []


def test_a_deadline_passing_during_a_turn_stops_the_next_tool_call() -> None:
    now = fixed_clock()
    deadline = Deadline(now[0] + timedelta(seconds=5), lambda: now[0])

    def model(model_input: ModelInput) -> Any:
        now[0] += timedelta(seconds=10)  # the model was slow
        return call("search", {"query": "e"}, "c1")

    session = Session()
    with pytest.raises(PromptEvaluationError) as raised:
        FunctionAdapter(model).evaluate(Prompt(notes_template), session=session, deadline=deadline)
    assert raised.value.phase == "deadline"
    (invoked,) = session[ToolInvoked].all()
    assert not invoked.success and invoked.result.message.startswith("Tool 'search' was stopped")


def test_the_request_gets_the_time_left_before_the_deadline_as_its_timeout() -> None:
    now = fixed_clock()
    deadline = Deadline(now[0] + timedelta(seconds=30), lambda: now[0])
    steps = evaluation_steps(
        ScriptedAdapter([]), Prompt(notes_template), session=Session(), deadline=deadline
    )
    request = next(steps)
    assert isinstance(request, ModelRequest)
    assert (request.timeout, request.turn, request.attempt) == (30.0, 1, 0)


def test_a_retryable_failure_is_retried_by_the_loop_under_a_deadline() -> None:
    now = fixed_clock()
    deadline = Deadline(now[0] + timedelta(seconds=30), lambda: now[0])
    replies: list[Any] = [ProviderError("rate limited", retryable=True)] * 2 + ["ok"]

    def model(model_input: ModelInput) -> Any:
        reply = replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply

    adapter = FunctionAdapter(model)
    adapter.max_retries = 2
    waits: list[float] = []
    adapter.sleep = waits.append  # type: ignore[method-assign]  # record instead of sleeping
    response = adapter.evaluate(Prompt(notes_template), session=Session(), deadline=deadline)
    assert (response.text, response.turns, waits) == ("ok", 1, [0.5, 1.0])


def test_retries_stop_at_max_retries_with_phase_request() -> None:
    now = fixed_clock()
    deadline = Deadline(now[0] + timedelta(seconds=30), lambda: now[0])

    def model(model_input: ModelInput) -> Any:
        raise ProviderError("overloaded", payload={"code": 529}, retryable=True)

    adapter = FunctionAdapter(model)
    adapter.max_retries = 1
    adapter.sleep = lambda seconds: None  # type: ignore[method-assign]  # no real waiting
    with pytest.raises(PromptEvaluationError) as raised:
        adapter.evaluate(Prompt(notes_template), session=Session(), deadline=deadline)
    error = raised.value
    assert (error.phase, error.provider_payload, len(adapter.inputs)) == (
        "request",
        {"code": 529},
        2,
    )
    assert str(error) == "prompt 'notes': request 1 to function failed: overloaded"


def test_a_retry_that_would_wait_past_the_deadline_stops_with_phase_deadline() -> None:
    now = fixed_clock()
    deadline = Deadline(now[0] + timedelta(seconds=0.25), lambda: now[0])

    def model(model_input: ModelInput) -> Any:
        raise ProviderError("rate limited", retryable=True)

    adapter = FunctionAdapter(model)
    adapter.max_retries = 3
    with pytest.raises(PromptEvaluationError) as raised:
        adapter.evaluate(Prompt(notes_template), session=Session(), deadline=deadline)
    assert raised.value.phase == "deadline"
    assert str(raised.value) == (
        "prompt 'notes': deadline 2025-01-01T00:00:00.250000+00:00 leaves 0.250s, too little "
        "for retrying request 1 after waiting 0.500s"
    )


def test_without_a_deadline_a_provider_failure_is_not_retried_by_the_loop() -> None:
    def model(model_input: ModelInput) -> Any:
        raise ProviderError("bad key", payload={"error": "auth"})

    adapter = FunctionAdapter(model)
    adapter.max_retries = 5
    with pytest.raises(PromptEvaluationError) as raised:
        adapter.evaluate(Prompt(notes_template), session=Session())
    assert (raised.value.phase, raised.value.provider_payload) == ("request", {"error": "auth"})
    assert len(adapter.inputs) == 1


def test_a_bug_in_the_model_function_propagates_unchanged() -> None:
    def model(model_input: ModelInput) -> Any:
        raise KeyError("oops")

    with pytest.raises(KeyError):
        FunctionAdapter(model).evaluate(Prompt(notes_template), session=Session())


def test_prompt_rendered_and_prompt_executed_are_logged_in_the_session() -> None:
    adapter = ScriptedAdapter(
        [call("search", {"query": "e"}), ModelReply("done", usage=TokenUsage(3, 4))],
        usage=TokenUsage(1, 1),
    )
    session = Session()
    adapter.evaluate(Prompt(notes_template), session=session)
    (rendered,) = session[PromptRendered].all()
    assert (rendered.prompt_name, rendered.adapter, rendered.text, rendered.tool_names) == (
        "notes",
        "script",
        NOTES_TEXT,
        ("search", "get_note"),
    )
    (executed,) = session[PromptExecuted].all()
    assert (executed.text, executed.turns, executed.tool_calls, executed.usage) == (
        "done",
        2,
        1,
        TokenUsage(4, 5),
    )
    assert (executed.success, executed.error, executed.phase) == (True, None, None)
    assert executed.duration >= timedelta(0)


def test_a_failed_evaluation_is_logged_with_its_error_and_phase() -> None:
    session = Session()
    with pytest.raises(PromptEvaluationError):
        ScriptedAdapter([call("search", {"query": "e"})]).evaluate(
            Prompt(notes_template), session=session, max_turns=1
        )
    (executed,) = session[PromptExecuted].all()
    assert (executed.success, executed.phase, executed.tool_calls) == (False, "max_turns", 1)
    assert executed.error == (
        "PromptEvaluationError: prompt 'notes': max_turns=1 reached: the model had not "
        "answered after 1 requests"
    )


def test_prompt_executed_records_each_turn_with_its_usage_called_tools_and_times() -> None:
    session = Session()
    adapter = ScriptedAdapter(
        [[call("search", {"query": "e"}, "c1"), call("get_note", {"id": 2}, "c2")], "eggs"],
        usage=TokenUsage(input_tokens=7, output_tokens=3),
    )
    adapter.evaluate(Prompt(notes_template), session=session)
    [executed] = session[PromptExecuted].all()
    assert [(e.usage, e.tool_calls) for e in executed.exchanges] == [
        (TokenUsage(input_tokens=7, output_tokens=3), ("search", "get_note")),
        (TokenUsage(input_tokens=7, output_tokens=3), ()),
    ]
    first, second = executed.exchanges
    calls = session[ToolInvoked].all()
    moments = [
        executed.started_at,
        first.requested_at,
        first.replied_at,
        *(moment for c in calls for moment in (c.started_at, c.finished_at)),
        second.requested_at,
        second.replied_at,
        executed.finished_at,
    ]
    assert moments == sorted(moments)


def test_the_evaluation_events_survive_a_restore() -> None:
    session = Session()
    before = session.snapshot()
    ScriptedAdapter(["ok"]).evaluate(Prompt(notes_template), session=session)
    session.restore(before)
    assert (len(session[PromptRendered]), len(session[PromptExecuted])) == (1, 1)


def test_handlers_get_the_evaluating_adapter_on_their_context() -> None:
    seen: list[Any] = []

    def spy(params: BaseModel, *, context: ToolContext) -> ToolResult[None]:
        seen.append(context.adapter)
        return ToolResult(message="seen")

    class NoParams(BaseModel):
        pass

    spy_tool = Tool[NoParams, None](name="spy", description="Look.", handler=spy)
    template = PromptTemplate(
        ns="t", key="spy", sections=[MarkdownSection(title="S", template="x", tools=[spy_tool])]
    )
    adapter = ScriptedAdapter([call("spy"), "done"])
    adapter.evaluate(Prompt(template), session=Session())
    assert seen == [adapter]


def test_a_nested_prompt_runs_through_context_adapter_on_the_same_session() -> None:
    adapter = ScriptedAdapter(
        [
            call("delegate", {"task": "tag"}, "outer"),
            call("tag", {"tag": "food"}, "inner"),
            "tagged food",
            "all done",
        ]
    )
    session = Session()
    response = adapter.evaluate(Prompt(parent_template), session=session)
    assert [model_input.messages[0] for model_input in adapter.inputs] == [
        UserMessage("## Parent\n\nDelegate tagging."),
        UserMessage("## Tagger\n\nTag the notes."),
        UserMessage("## Tagger\n\nTag the notes."),
        UserMessage("## Parent\n\nDelegate tagging."),
    ]
    assert adapter.inputs[3].tool_messages() == (
        ToolMessage("outer", "delegate", 'Delegated.\n\n"tagged food"', True),
    )
    assert response.text == "all done"
    assert [event.name for event in response.tool_results] == ["delegate"]
    assert [(e.prompt_name, e.name) for e in session[ToolInvoked]] == [
        ("tagger", "tag"),
        ("parent", "delegate"),
    ]
    assert [e.prompt_name for e in session[PromptExecuted]] == ["tagger", "parent"]
    assert session[Tagged].all() == (Tagged("food"),)


def test_a_failed_delegating_call_rolls_back_the_child_state_and_keeps_its_log() -> None:
    adapter = ScriptedAdapter(
        [
            call("delegate", {"task": "tag", "fail_after": True}, "outer"),
            call("tag", {"tag": "food"}, "inner"),
            "tagged food",
            "gave up",
        ]
    )
    session = Session()
    response = adapter.evaluate(Prompt(parent_template), session=session)
    assert session[Tagged].all() == ()
    assert adapter.inputs[3].tool_messages() == (
        ToolMessage(
            "outer",
            "delegate",
            "Tool 'delegate' raised RuntimeError: the delegated work was refused",
            False,
        ),
    )
    assert [(e.prompt_name, e.success) for e in session[ToolInvoked]] == [
        ("tagger", True),
        ("parent", False),
    ]
    assert response.text == "gave up"


def test_raise_handler_errors_ends_the_evaluation_with_the_handlers_exception() -> None:
    adapter = ScriptedAdapter(
        [
            call("delegate", {"task": "tag", "fail_after": True}, "outer"),
            call("tag", {"tag": "food"}, "inner"),
            "tagged food",
        ]
    )
    session = Session()
    with pytest.raises(RuntimeError) as raised:
        adapter.evaluate(Prompt(parent_template), session=session, raise_handler_errors=True)
    assert raised.value.args == ("the delegated work was refused",)
    assert (session[Tagged].all(), adapter.remaining, len(adapter.inputs)) == ((), 0, 3)
    assert [(e.prompt_name, e.success, e.result.message) for e in session[ToolInvoked]] == [
        ("tagger", True, "Tagged."),
        ("parent", False, "Tool 'delegate' raised RuntimeError: the delegated work was refused"),
    ]
    assert [(e.prompt_name, e.error, e.phase) for e in session[PromptExecuted]] == [
        ("tagger", None, None),
        ("parent", "RuntimeError: the delegated work was refused", None),
    ]


def test_a_raising_handler_is_told_to_the_model_unless_raise_handler_errors_is_set() -> None:
    def raising(params: Tag, *, context: ToolContext) -> ToolResult[Tagged]:
        raise KeyError(params.tag)

    tool = Tool[Tag, Tagged](name="tag", description="Tag the notes.", handler=raising)
    template = PromptTemplate(
        ns="tests/adapters",
        key="raising",
        sections=[MarkdownSection(title="Tagger", template="Tag.", tools=[tool])],
    )
    adapter = ScriptedAdapter([call("tag", {"tag": "food"}, "c1"), "noted"])
    response = adapter.evaluate(Prompt(template), session=Session())
    assert [e.result.message for e in response.tool_results] == [
        "Tool 'tag' raised KeyError: 'food'"
    ]
    assert response.text == "noted"
    adapter = ScriptedAdapter([call("tag", {"tag": "food"}, "c1"), "noted"])
    with pytest.raises(KeyError) as raised:
        adapter.evaluate(Prompt(template), session=Session(), raise_handler_errors=True)
    assert (raised.value.args, adapter.remaining) == (("food",), 1)


def test_a_nested_prompt_with_resources_runs_without_deadlock() -> None:
    files = InMemoryFilesystem(files={"a.md": "x"})
    parent = Prompt(parent_template).bind(resources={InMemoryFilesystem: files})
    adapter = ScriptedAdapter(
        [call("delegate", {"task": "t"}), call("tag", {"tag": "a"}), "ok", "done"]
    )
    finished: list[str | None] = []
    worker = threading.Thread(
        target=lambda: finished.append(adapter.evaluate(parent, session=Session()).text)
    )
    worker.start()
    worker.join(timeout=10)
    assert finished == ["done"]


def test_messages_make_the_rendered_prompt_the_system_instruction() -> None:
    adapter = ScriptedAdapter(["hello again"])
    history = [UserMessage("hi"), AssistantMessage("hello"), UserMessage("again")]
    response = adapter.evaluate(Prompt(notes_template), session=Session(), messages=history)
    assert adapter.inputs[0].messages == (SystemMessage(NOTES_TEXT), *history)
    assert response.messages == (
        SystemMessage(NOTES_TEXT),
        *history,
        AssistantMessage("hello again"),
    )


def test_the_loop_runs_under_any_driver() -> None:
    steps = evaluation_steps(ScriptedAdapter([]), Prompt(notes_template), session=Session())
    first = steps.send(None)
    assert isinstance(first, ModelRequest) and not isinstance(first, Wait)
    with pytest.raises(StopIteration) as finished:
        steps.send(ModelReply("driven by hand", usage=TokenUsage(1, 2)))
    assert (finished.value.value.text, finished.value.value.usage) == (
        "driven by hand",
        TokenUsage(1, 2),
    )


def test_an_exhausted_script_names_the_request() -> None:
    adapter = ScriptedAdapter([call("search", {"query": "e"}, "c1")])
    with pytest.raises(
        Exception, match=r"the script has no reply left for request 2 \(it had 1 replies\)"
    ):
        adapter.evaluate(Prompt(notes_template), session=Session())


def test_an_output_type_that_is_not_an_object_is_refused() -> None:
    with pytest.raises(PromptValidationError) as raised:
        PromptTemplate[list[int]](ns="t", key="k")
    assert str(raised.value) == (
        "prompt template t/k: output type list[int] is not a JSON object; providers take an "
        "object schema for structured output: declare a pydantic model, a dataclass or a "
        "TypedDict (wrap a list or a scalar in one field)"
    )


def test_bad_limits_are_refused() -> None:
    with pytest.raises(ValueError, match="max_turns must be at least 1, got 0"):
        ScriptedAdapter([]).evaluate(Prompt(notes_template), session=Session(), max_turns=0)
    with pytest.raises(ValueError, match="output_retries must not be negative, got -1"):
        ScriptedAdapter([]).evaluate(Prompt(notes_template), session=Session(), output_retries=-1)


def test_a_failed_nested_evaluation_stops_the_outer_one_with_the_childs_error() -> None:
    def model(model_input: ModelInput) -> Any:
        if model_input.messages[0] == UserMessage("## Tagger\n\nTag the notes."):
            raise ProviderError("the tagger's provider is down", payload={"status": 503})
        return call("delegate", {"task": "tag"}, "outer")

    session = Session()
    with pytest.raises(PromptEvaluationError) as raised:
        FunctionAdapter(model).evaluate(Prompt(parent_template), session=session)
    error = raised.value
    assert (error.prompt_name, error.phase, error.provider_payload) == (
        "tagger",
        "request",
        {"status": 503},
    )
    (invoked,) = session[ToolInvoked].all()
    assert (invoked.name, invoked.success) == ("delegate", False)
    assert [(e.prompt_name, e.phase) for e in session[PromptExecuted]] == [
        ("tagger", "request"),
        ("parent", "request"),
    ]


def test_the_evaluation_events_round_trip_through_a_saved_snapshot() -> None:
    session = Session()
    ScriptedAdapter(
        [call("search", {"query": "e"}), ModelReply("done", usage=TokenUsage(3, 4))]
    ).evaluate(Prompt(notes_template), session=session)
    loaded = Session()
    loaded.restore(Snapshot.from_json(session.snapshot().to_json()), keep_log=False)
    assert loaded[PromptRendered].all() == session[PromptRendered].all()
    (executed,) = loaded[PromptExecuted].all()
    assert (executed.text, executed.usage, executed.turns) == ("done", TokenUsage(3, 4), 2)


def test_a_budget_deadline_bounds_the_requests_too() -> None:
    now = fixed_clock()
    budget_deadline = Deadline(now[0] + timedelta(seconds=20), lambda: now[0])
    later = Deadline(now[0] + timedelta(seconds=60), lambda: now[0])
    tracker = BudgetTracker(Budget(deadline=budget_deadline))
    for deadline in (None, later):
        steps = evaluation_steps(
            ScriptedAdapter([]),
            Prompt(notes_template),
            session=Session(),
            deadline=deadline,
            budget_tracker=tracker,
        )
        request = next(steps)
        assert isinstance(request, ModelRequest) and request.timeout == 20.0
        steps.close()
