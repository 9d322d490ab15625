"""OpenTelemetry spans of tool calls and evaluations, checked with the SDK's in-memory exporter."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from wink import (
    InMemoryFilesystem,
    MarkdownSection,
    PolicyDecision,
    Prompt,
    PromptEvaluationError,
    PromptTemplate,
    Session,
    Tool,
    ToolCall,
    ToolContext,
    ToolExecutor,
    ToolResult,
    telemetry,
)
from wink.runtime import Deadline, TokenUsage


@dataclass(frozen=True)
class Params:
    mode: str


def handler(params: Params, *, context: ToolContext) -> ToolResult[None]:
    context.require_filesystem().write("log.txt", params.mode)
    if params.mode == "raise":
        raise KeyError("missing")
    if params.mode == "error":
        return ToolResult.error("Refused by the tool.")
    return ToolResult(message="Done.")


@dataclass(frozen=True)
class DenyDeletes:
    name: str = "deny_deletes"

    def check(self, tool: Any, params: Any, *, context: ToolContext) -> PolicyDecision:
        if params.mode == "delete":
            return PolicyDecision.deny("Deleting is not allowed.")
        return PolicyDecision.allow()

    def on_result(self, tool: Any, params: Any, result: Any, *, context: ToolContext) -> None:
        pass


TOOL = Tool[Params, None](name="work", description="Do some work.", handler=handler)


def executor(**options: Any) -> ToolExecutor:
    template = PromptTemplate(
        ns="tests",
        key="traced",
        sections=[MarkdownSection(title="Work", tools=[TOOL], policies=[DenyDeletes()])],
    )
    prompt = Prompt(template).bind(resources={InMemoryFilesystem: InMemoryFilesystem()})
    return ToolExecutor(prompt=prompt, session=Session(), **options)


@pytest.fixture
def exporter() -> Iterator[InMemorySpanExporter]:
    exported = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exported))
    telemetry.instrument(tracer_provider=provider)
    try:
        yield exported
    finally:
        telemetry.uninstrument()


def only_span(exporter: InMemorySpanExporter) -> ReadableSpan:
    [span] = exporter.get_finished_spans()
    return span


def events(span: ReadableSpan) -> list[tuple[str, dict[str, Any]]]:
    return [(event.name, dict(event.attributes or {})) for event in span.events]


BASE = {
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.name": "work",
    "gen_ai.tool.type": "function",
    "gen_ai.tool.description": "Do some work.",
    "wink.prompt.name": "traced",
}


def test_a_successful_call_is_one_execute_tool_span(exporter: InMemorySpanExporter) -> None:
    executor().execute(ToolCall("work", '{"mode": "ok"}', call_id="call_1"))
    span = only_span(exporter)
    assert (span.name, span.kind, span.status.status_code) == (
        "execute_tool work",
        SpanKind.INTERNAL,
        StatusCode.UNSET,
    )
    assert dict(span.attributes or {}) == {**BASE, "gen_ai.tool.call.id": "call_1"}
    assert span.events == ()
    assert span.instrumentation_scope is not None and span.instrumentation_scope.name == "wink"


def test_a_denial_and_its_rollback_are_events_of_a_failed_span(
    exporter: InMemorySpanExporter,
) -> None:
    executor().execute(ToolCall("work", '{"mode": "delete"}'))
    span = only_span(exporter)
    assert dict(span.attributes or {}) == {**BASE, "error.type": "policy_denied"}
    assert events(span) == [
        ("wink.policy_denied", {"wink.reason": "Deleting is not allowed."}),
        ("wink.rollback", {}),
    ]
    assert (span.status.status_code, span.status.description) == (
        StatusCode.ERROR,
        "Deleting is not allowed.",
    )


def test_a_raising_handler_names_its_exception_and_is_rolled_back(
    exporter: InMemorySpanExporter,
) -> None:
    executor().execute(ToolCall("work", '{"mode": "raise"}'))
    span = only_span(exporter)
    assert dict(span.attributes or {}) == {**BASE, "error.type": "KeyError"}
    assert [name for name, _ in events(span)] == ["exception", "wink.rollback"]
    assert events(span)[0][1]["exception.type"] == "KeyError"
    assert span.status.description == "Tool 'work' raised KeyError: 'missing'"


@pytest.mark.parametrize(
    ("call", "rolled_back", "description"),
    [
        (ToolCall("work", '{"mode": "error"}'), True, "Refused by the tool."),
        (
            ToolCall("work", '{"mode": 1}'),
            False,
            "Invalid arguments for tool 'work':\nmode: input should be a valid string (got 1)",
        ),
    ],
)
def test_other_failures_are_tool_errors(
    exporter: InMemorySpanExporter, call: ToolCall, rolled_back: bool, description: str
) -> None:
    executor().execute(call)
    span = only_span(exporter)
    assert dict(span.attributes or {}) == {**BASE, "error.type": "tool_error"}
    assert events(span) == ([("wink.rollback", {})] if rolled_back else [])
    assert (span.status.status_code, span.status.description) == (StatusCode.ERROR, description)


def test_an_unknown_tool_has_no_description(exporter: InMemorySpanExporter) -> None:
    executor().execute(ToolCall("nope", "{}"))
    span = only_span(exporter)
    assert span.name == "execute_tool nope"
    assert dict(span.attributes or {}) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "nope",
        "gen_ai.tool.type": "function",
        "wink.prompt.name": "traced",
        "error.type": "tool_error",
    }


def test_an_exception_leaving_execute_ends_the_span_with_its_type(
    exporter: InMemorySpanExporter,
) -> None:
    with pytest.raises(KeyError):
        executor(raise_handler_errors=True).execute(ToolCall("work", '{"mode": "raise"}'))
    span = only_span(exporter)
    assert dict(span.attributes or {}) == {**BASE, "error.type": "KeyError"}
    assert [name for name, _ in events(span)] == ["exception", "wink.rollback"]
    assert (span.status.status_code, span.status.description) == (StatusCode.ERROR, "'missing'")


def test_a_call_stopped_by_its_deadline_records_the_stopping_error(
    exporter: InMemorySpanExporter,
) -> None:
    now = datetime(2025, 1, 1, tzinfo=UTC)
    late = executor(deadline=Deadline(now, clock=lambda: now + timedelta(seconds=1)))
    with pytest.raises(PromptEvaluationError):
        late.execute(ToolCall("work", '{"mode": "ok"}'))
    span = only_span(exporter)
    assert dict(span.attributes or {}) == {**BASE, "error.type": "PromptEvaluationError"}
    assert [name for name, _ in events(span)] == ["wink.rollback", "exception"]


def test_tool_spans_are_children_of_the_evaluation_span_with_its_usage(
    exporter: InMemorySpanExporter,
) -> None:
    work = executor()
    with telemetry.evaluation_span(prompt_name="traced", provider="openai", model="gpt-5") as ev:
        work.execute(ToolCall("work", '{"mode": "ok"}', call_id="a"))
        ev.record_usage(TokenUsage(input_tokens=100, output_tokens=20))
        work.execute(ToolCall("work", '{"mode": "ok"}', call_id="b"))
        ev.record_usage(TokenUsage(input_tokens=150, output_tokens=30))
        ev.set_response_model("gpt-5-2025")
    first, second, evaluation = exporter.get_finished_spans()
    assert (evaluation.name, evaluation.kind) == ("chat gpt-5", SpanKind.CLIENT)
    assert dict(evaluation.attributes or {}) == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-5",
        "gen_ai.response.model": "gpt-5-2025",
        "wink.prompt.name": "traced",
        "gen_ai.usage.input_tokens": 250,
        "gen_ai.usage.output_tokens": 50,
    }
    assert evaluation.context is not None
    assert [span.parent.span_id if span.parent else None for span in (first, second)] == [
        evaluation.context.span_id,
        evaluation.context.span_id,
    ]


def test_an_evaluation_that_raises_records_the_error_type(exporter: InMemorySpanExporter) -> None:
    with (
        pytest.raises(TimeoutError),
        telemetry.evaluation_span(prompt_name="traced", provider="anthropic", model="claude"),
    ):
        raise TimeoutError("model too slow")
    span = only_span(exporter)
    assert dict(span.attributes or {})["error.type"] == "TimeoutError"
    assert (span.status.status_code, span.status.description) == (
        StatusCode.ERROR,
        "model too slow",
    )


def test_nothing_is_recorded_unless_instrumented() -> None:
    exported = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exported))
    telemetry.instrument(tracer_provider=provider)
    telemetry.uninstrument()
    assert not telemetry.is_instrumented()
    executor().execute(ToolCall("work", '{"mode": "delete"}'))
    with telemetry.evaluation_span(prompt_name="p", provider="openai", model="m") as ev:
        ev.record_usage(TokenUsage(input_tokens=1, output_tokens=1))
    assert exported.get_finished_spans() == ()
    assert (ev.span, ev.input_tokens) == (None, 1)


def test_without_an_sdk_provider_the_global_default_records_nothing() -> None:
    # No SDK was installed globally in this process: OpenTelemetry's proxy is in place,
    # so wink does not even start its non-recording spans.
    telemetry.instrument()
    try:
        assert telemetry.tracer() is None
    finally:
        telemetry.uninstrument()


def test_without_the_extra_calls_work_and_instrument_names_the_fix() -> None:
    script = textwrap.dedent(
        """
        import sys
        sys.modules["opentelemetry"] = None  # as if the otel extra were not installed

        from wink import Prompt, PromptTemplate, MarkdownSection, Session, Tool, ToolCall
        from wink import ToolExecutor, ToolResult, WinkError, telemetry

        def ping(params: None, *, context) -> ToolResult[None]:
            return ToolResult(message="pong")

        tool = Tool[None, None](name="ping", description="Ping.", handler=ping)
        section = MarkdownSection(title="T", tools=[tool])
        template = PromptTemplate(ns="t", key="t", sections=[section])
        result = ToolExecutor(prompt=Prompt(template), session=Session()).execute(ToolCall("ping"))
        print(result.message)
        try:
            telemetry.instrument()
        except WinkError as error:
            print(error)
        print(telemetry.is_instrumented(), any(m.startswith("opentelemetry.") for m in sys.modules))
        """
    )
    run = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    assert run.stderr == ""
    assert run.stdout.splitlines() == [
        "pong",
        "wink.telemetry.instrument() needs OpenTelemetry; install the otel extra "
        "(pip install -e '.[otel]' from a clone) and an OpenTelemetry SDK",
        "False False",
    ]


def test_a_concurrent_turn_is_one_execute_tool_span_per_call_under_the_evaluation(
    exporter: InMemorySpanExporter,
) -> None:
    work = executor()
    calls = [ToolCall("work", '{"mode": "ok"}', call_id=name) for name in ("a", "b")]

    async def turn() -> None:
        with telemetry.evaluation_span(prompt_name="traced", provider="openai", model="m"):
            await work.aexecute_all(calls)

    asyncio.run(turn())
    first, second, evaluation = exporter.get_finished_spans()
    assert [dict(span.attributes or {}) for span in (first, second)] == [
        {**BASE, "gen_ai.tool.call.id": "a"},
        {**BASE, "gen_ai.tool.call.id": "b"},
    ]
    assert evaluation.context is not None
    assert [span.parent.span_id if span.parent else None for span in (first, second)] == [
        evaluation.context.span_id,
        evaluation.context.span_id,
    ]
