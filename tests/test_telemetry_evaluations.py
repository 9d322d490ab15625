"""The span of each evaluation the shared loop runs, checked with the in-memory exporter."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from adapter_prompts import notes_template, parent_template
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from wink import Prompt, PromptEvaluationError, PromptExecuted, Session, TokenUsage, telemetry
from wink.testing import FunctionAdapter, ModelInput, Reply, ScriptedAdapter, call


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


def attributes(span: ReadableSpan) -> dict[str, object]:
    return dict(span.attributes or {})


def parent_of(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


def span_id(span: ReadableSpan) -> int:
    assert span.context is not None
    return span.context.span_id


def test_an_evaluation_is_one_chat_span_with_its_tool_calls_as_children(
    exporter: InMemorySpanExporter,
) -> None:
    adapter = ScriptedAdapter(
        [[call("search", {"query": "e"}, "c1"), call("get_note", {"id": 7}, "c2")], "eggs"],
        usage=TokenUsage(input_tokens=30, output_tokens=4),
    )
    adapter.evaluate(Prompt(notes_template), session=Session())
    search, get_note, chat = exporter.get_finished_spans()
    assert (chat.name, chat.kind, chat.status.status_code) == (
        "chat",
        SpanKind.CLIENT,
        StatusCode.UNSET,
    )
    assert attributes(chat) == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "script",
        "wink.prompt.name": "notes",
        "gen_ai.usage.input_tokens": 60,
        "gen_ai.usage.output_tokens": 8,
    }
    assert (search.name, get_note.name) == ("execute_tool search", "execute_tool get_note")
    assert attributes(get_note)["error.type"] == "tool_error"
    assert [parent_of(span) for span in (search, get_note, chat)] == [
        span_id(chat),
        span_id(chat),
        None,
    ]


def test_a_failed_evaluation_records_its_error_type_and_still_its_usage(
    exporter: InMemorySpanExporter,
) -> None:
    adapter = ScriptedAdapter(
        [call("search", {"query": "e"})], usage=TokenUsage(input_tokens=5, output_tokens=1)
    )
    with pytest.raises(PromptEvaluationError):
        adapter.evaluate(Prompt(notes_template), session=Session(), max_turns=1)
    _, chat = exporter.get_finished_spans()
    assert attributes(chat) == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "script",
        "wink.prompt.name": "notes",
        "gen_ai.usage.input_tokens": 5,
        "gen_ai.usage.output_tokens": 1,
        "error.type": "PromptEvaluationError",
    }
    assert (chat.status.status_code, chat.status.description) == (
        StatusCode.ERROR,
        "prompt 'notes': max_turns=1 reached: the model had not answered after 1 requests",
    )


def test_a_nested_evaluation_is_a_child_of_the_delegating_tool_call(
    exporter: InMemorySpanExporter,
) -> None:
    adapter = ScriptedAdapter(
        [
            call("delegate", {"task": "tag"}, "outer"),
            call("tag", {"tag": "food"}, "inner"),
            "tagged food",
            "all done",
        ]
    )
    adapter.evaluate(Prompt(parent_template), session=Session())
    tag, inner_chat, delegate, outer_chat = exporter.get_finished_spans()
    assert [span.name for span in (tag, inner_chat, delegate, outer_chat)] == [
        "execute_tool tag",
        "chat",
        "execute_tool delegate",
        "chat",
    ]
    assert [attributes(span)["wink.prompt.name"] for span in (inner_chat, outer_chat)] == [
        "tagger",
        "parent",
    ]
    assert [parent_of(span) for span in (tag, inner_chat, delegate, outer_chat)] == [
        span_id(inner_chat),
        span_id(delegate),
        span_id(outer_chat),
        None,
    ]


def test_an_interrupted_evaluation_ends_its_span_records_its_end_and_leaves_no_context(
    exporter: InMemorySpanExporter,
) -> None:
    def interrupted(model_input: ModelInput) -> Reply:
        raise KeyboardInterrupt

    session = Session()
    with pytest.raises(KeyboardInterrupt):
        FunctionAdapter(interrupted).evaluate(Prompt(notes_template), session=session)
    [chat] = exporter.get_finished_spans()
    assert attributes(chat)["error.type"] == "KeyboardInterrupt"
    assert trace.get_current_span() is trace.INVALID_SPAN
    [executed] = session[PromptExecuted].all()
    assert (executed.error, executed.phase, executed.turns) == ("KeyboardInterrupt: ", None, 1)


def test_a_provider_adapter_names_the_provider_and_model_of_its_span(
    exporter: InMemorySpanExporter,
) -> None:
    genai = pytest.importorskip("google.genai")
    from sdk_mocks import Endpoint

    from wink.providers.gemini import GeminiAdapter

    endpoint = Endpoint(
        {
            "candidates": [{"content": {"role": "model", "parts": [{"text": "eggs"}]}}],
            "usageMetadata": {"promptTokenCount": 12, "candidatesTokenCount": 3},
        }
    )
    options = genai.types.HttpOptions(
        base_url="http://gemini.test", httpx_client=endpoint.http_client()
    )
    client = genai.Client(api_key="test-key", http_options=options)
    GeminiAdapter(client, model="gemini-test").evaluate(Prompt(notes_template), session=Session())
    [chat] = exporter.get_finished_spans()
    assert chat.name == "chat gemini-test"
    assert attributes(chat) == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "gcp.gemini",
        "gen_ai.request.model": "gemini-test",
        "wink.prompt.name": "notes",
        "gen_ai.usage.input_tokens": 12,
        "gen_ai.usage.output_tokens": 3,
    }


def test_with_tracing_off_an_evaluation_records_no_span() -> None:
    exported = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exported))
    telemetry.instrument(tracer_provider=provider)
    telemetry.uninstrument()
    response = ScriptedAdapter([call("search", {"query": "e"}), "eggs"]).evaluate(
        Prompt(notes_template), session=Session()
    )
    assert (response.text, len(response.tool_results), exported.get_finished_spans()) == (
        "eggs",
        1,
        (),
    )
