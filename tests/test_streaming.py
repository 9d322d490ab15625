"""Streamed evaluations on the four APIs, offline: recorded server-sent event bodies go
through each SDK's own streaming call (its HTTP client on a mock transport) into
``adapter.stream``; the same conversations read whole give the same session and the
same next requests."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import AsyncIterator, Callable, Iterator
from datetime import datetime
from typing import Any

import pytest

httpx2 = pytest.importorskip("httpx2")
openai_sdk = pytest.importorskip("openai")
anthropic_sdk = pytest.importorskip("anthropic")
genai = pytest.importorskip("google.genai")

from pydantic import BaseModel  # noqa: E402
from recorded_replies.streams import (  # noqa: E402
    ANTHROPIC_ANSWER,
    ANTHROPIC_THINKING,
    ANTHROPIC_TOOL_CALLS,
    CHAT_ANSWER,
    CHAT_TOOL_CALL,
    GEMINI_ANSWER,
    GEMINI_TOOL_CALL,
    RESPONSES_ANSWER,
    RESPONSES_TOOL_CALL,
    sse_body,
)

from wink import (  # noqa: E402
    MarkdownSection,
    Prompt,
    PromptEvaluationError,
    PromptTemplate,
    Session,
    Tool,
    ToolContext,
    ToolInvoked,
    ToolResult,
)
from wink.adapters import (  # noqa: E402
    EvaluationFinished,
    LoopAdapter,
    PromptExecuted,
    PromptRendered,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    ToolCallReady,
    ToolCallStarted,
    TurnEnded,
    TurnStarted,
)
from wink.providers.anthropic import AnthropicAdapter  # noqa: E402
from wink.providers.gemini import GeminiAdapter  # noqa: E402
from wink.providers.openai import OpenAIAdapter  # noqa: E402
from wink.testing import ScriptedAdapter, call  # noqa: E402

Events = list[tuple[str | None, str]]


class Body(httpx2.SyncByteStream, httpx2.AsyncByteStream):  # type: ignore[misc]  # both halves
    """A response body sent one event at a time, which may break off after ``frames``."""

    def __init__(self, data: bytes, break_after: int | None = None) -> None:
        self.frames = [frame + b"\n\n" for frame in data.split(b"\n\n") if frame]
        self.break_after = break_after
        self.closed = False

    def _frames(self) -> Iterator[bytes]:
        for number, frame in enumerate(self.frames):
            if number == self.break_after:
                raise httpx2.ReadError("connection reset by peer")
            yield frame

    def __iter__(self) -> Iterator[bytes]:
        yield from self._frames()

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for frame in self._frames():
            yield frame

    def close(self) -> None:
        self.closed = True

    async def aclose(self) -> None:
        self.closed = True


class Api:
    """A fake API: records request bodies; answers with queued event streams (``Body``)
    or JSON replies (dicts)."""

    def __init__(self, *replies: Body | dict[str, Any]) -> None:
        self.replies = list(replies)
        self.bodies: list[dict[str, Any]] = []

    def handle(self, request: Any) -> Any:
        self.bodies.append(json.loads(request.content))
        reply = self.replies.pop(0)
        if isinstance(reply, dict):
            return httpx2.Response(200, json=reply)
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, stream=reply)

    def client(self, asynchronous: bool = False) -> Any:
        transport = httpx2.MockTransport(self.handle)
        if asynchronous:
            return httpx2.AsyncClient(transport=transport)
        return httpx2.Client(transport=transport)


class NoParams(BaseModel):
    pass


class Multiply(BaseModel):
    a: int
    b: int


class MultiplyXY(BaseModel):
    x: int
    y: int


def _template(tool: Tool[Any, Any]) -> PromptTemplate[Any]:
    return PromptTemplate(
        ns="tests/streaming",
        key="ask",
        sections=[MarkdownSection(title="Ask", template="Answer.", tools=[tool])],
    )


def version(params: NoParams, *, context: ToolContext) -> ToolResult[str]:
    return ToolResult.ok("0.fixed-version")


def multiply(params: Multiply, *, context: ToolContext) -> ToolResult[int]:
    return ToolResult.ok(params.a * params.b)


def multiply_xy(params: MultiplyXY, *, context: ToolContext) -> ToolResult[int]:
    return ToolResult.ok(params.x * params.y)


def pelican_name(params: NoParams, *, context: ToolContext) -> ToolResult[str]:
    return ToolResult.ok("Charles")


def openai_adapter(fake: Api, asynchronous: bool = False, **options: Any) -> OpenAIAdapter:
    sdk = openai_sdk.AsyncOpenAI if asynchronous else openai_sdk.OpenAI
    client = sdk(
        api_key="k", base_url="http://openai.test/v1", http_client=fake.client(asynchronous)
    )
    return OpenAIAdapter(client, model="gpt-test", **options)


def anthropic_adapter(api: Api, asynchronous: bool = False, **options: Any) -> AnthropicAdapter:
    sdk = anthropic_sdk.AsyncAnthropic if asynchronous else anthropic_sdk.Anthropic
    client = sdk(
        api_key="k", base_url="http://anthropic.test", http_client=api.client(asynchronous)
    )
    return AnthropicAdapter(client, model="claude-test", max_tokens=options.pop("max_tokens", 1024))


def gemini_adapter(api: Api, asynchronous: bool = False, **options: Any) -> GeminiAdapter:
    http: dict[str, Any] = {"base_url": "http://gemini.test", "retry_options": {"attempts": 1}}
    http["httpx_async_client" if asynchronous else "httpx_client"] = api.client(asynchronous)
    return GeminiAdapter(genai.Client(api_key="k", http_options=http), model="gemini-test")


# --- the same conversations read whole ------------------------------------------------


def _data(events: Events, kind: str) -> dict[str, Any]:
    return next(json.loads(data) for event, data in events if event == kind)


def anthropic_whole(events: Events) -> dict[str, Any]:
    """The message the Anthropic SDK's own accumulator makes of ``events``."""
    api = Api(Body(sse_body(events)))
    client = anthropic_sdk.Anthropic(
        api_key="k", base_url="http://a.test", http_client=api.client()
    )
    with client.messages.stream(model="m", max_tokens=1, messages=[]) as stream:
        message = stream.get_final_message()
    whole: dict[str, Any] = message.model_dump(mode="json")
    return whole


def chat_whole(content: str, tool_calls: list[Any] | None, finish: str | None, usage: Any) -> Any:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "moonshotai/kimi-k2",
        "choices": [{"index": 0, "finish_reason": finish, "message": message}],
        "usage": usage,
    }


CHAT_WHOLE = [
    chat_whole(
        "",
        [{"id": "0", "type": "function", "function": {"name": "llm_version", "arguments": "{}"}}],
        None,
        {"prompt_tokens": 57, "completion_tokens": 17, "total_tokens": 74},
    ),
    chat_whole(
        "The current version of *llm* is **0.fixed-version**.",
        None,
        "stop",
        {"prompt_tokens": 107, "completion_tokens": 15, "total_tokens": 122},
    ),
]
SIGNATURE = json.loads(GEMINI_TOOL_CALL[0][1])["candidates"][0]["content"]["parts"][0][
    "thoughtSignature"
]
GEMINI_WHOLE = [
    {
        "candidates": [
            {
                "content": {
                    "role": "model",
                    "parts": [
                        {
                            "functionCall": {"name": "multiply", "args": {"y": 3, "x": 5}},
                            "thoughtSignature": SIGNATURE,
                        }
                    ],
                },
                "finishReason": "STOP",
                "index": 0,
            }
        ],
        "usageMetadata": {
            "promptTokenCount": 60,
            "candidatesTokenCount": 16,
            "totalTokenCount": 108,
            "thoughtsTokenCount": 32,
        },
    },
    {
        "candidates": [
            {
                "content": {"role": "model", "parts": [{"text": "5 times 3 is 15."}]},
                "finishReason": "STOP",
                "index": 0,
            }
        ],
        "usageMetadata": {
            "promptTokenCount": 121,
            "candidatesTokenCount": 9,
            "totalTokenCount": 130,
        },
    },
]


@dataclasses.dataclass(frozen=True)
class Conversation:
    name: str
    adapter: Callable[..., LoopAdapter]
    tool: Tool[Any, Any]
    streams: tuple[Events, Events]
    whole: Callable[[], list[dict[str, Any]]]
    done: bool = False
    """Chat Completions ends its streams with ``data: [DONE]``."""

    def __str__(self) -> str:
        return self.name

    def bodies(self, break_after: int | None = None) -> list[Body]:
        first = Body(sse_body(self.streams[0], done=self.done), break_after)
        return [first, Body(sse_body(self.streams[1], done=self.done))]


CONVERSATIONS = [
    Conversation(
        "openai-chat",
        openai_adapter,
        Tool[NoParams, str](name="llm_version", description="The version.", handler=version),
        (CHAT_TOOL_CALL, CHAT_ANSWER),
        lambda: CHAT_WHOLE,
        done=True,
    ),
    Conversation(
        "openai-responses",
        lambda api, asynchronous=False: openai_adapter(api, asynchronous, api="responses"),
        Tool[Multiply, int](name="multiply", description="Multiply.", handler=multiply),
        (RESPONSES_TOOL_CALL, RESPONSES_ANSWER),
        lambda: [
            _data(RESPONSES_TOOL_CALL, "response.completed")["response"],
            _data(RESPONSES_ANSWER, "response.completed")["response"],
        ],
    ),
    Conversation(
        "anthropic",
        anthropic_adapter,
        Tool[NoParams, str](
            name="pelican_name_generator", description="A name.", handler=pelican_name
        ),
        (ANTHROPIC_TOOL_CALLS, ANTHROPIC_ANSWER),
        lambda: [anthropic_whole(ANTHROPIC_TOOL_CALLS), anthropic_whole(ANTHROPIC_ANSWER)],
    ),
    Conversation(
        "gemini",
        gemini_adapter,
        Tool[MultiplyXY, int](name="multiply", description="Multiply.", handler=multiply_xy),
        (GEMINI_TOOL_CALL, GEMINI_ANSWER),
        lambda: GEMINI_WHOLE,
    ),
]


def _timeless(value: Any) -> Any:
    """``value`` with every timestamp of its events blanked."""
    if isinstance(value, datetime):
        return None
    if isinstance(value, tuple):
        return tuple(_timeless(item) for item in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {
            item.name: _timeless(getattr(value, item.name))
            for item in dataclasses.fields(value)
            if isinstance(getattr(value, item.name), datetime | tuple)
        }
        return dataclasses.replace(value, **changes)
    return value


def session_record(session: Session) -> list[Any]:
    return [
        _timeless(event)
        for kind in (PromptRendered, ToolInvoked, PromptExecuted)
        for event in session[kind].all()
    ]


def _without_stream_flags(body: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in body.items() if key not in ("stream", "stream_options")}


# --- every API: the stream, and the same record as the whole replies -------------------


@pytest.mark.parametrize("conversation", CONVERSATIONS, ids=str)
def test_a_streamed_conversation_records_what_the_whole_replies_record(
    conversation: Conversation,
) -> None:
    streamed_api = Api(*conversation.bodies())
    streamed_session = Session()
    events = list(
        conversation.adapter(streamed_api).stream(
            Prompt(_template(conversation.tool)), session=streamed_session
        )
    )
    whole_api = Api(*conversation.whole())
    whole_session = Session()
    response = conversation.adapter(whole_api).evaluate(
        Prompt(_template(conversation.tool)), session=whole_session
    )

    final = events[-1]
    assert isinstance(final, EvaluationFinished)
    assert _timeless(final.response) == _timeless(response)
    assert session_record(streamed_session) == session_record(whole_session)
    assert [_without_stream_flags(body) for body in streamed_api.bodies] == whole_api.bodies


@pytest.mark.parametrize("conversation", CONVERSATIONS, ids=str)
def test_the_stream_yields_turns_deltas_ready_calls_and_results_in_order(
    conversation: Conversation,
) -> None:
    api = Api(*conversation.bodies())
    events = list(
        conversation.adapter(api).stream(Prompt(_template(conversation.tool)), session=Session())
    )
    kinds = [type(event).__name__ for event in events]
    first_end = kinds.index("TurnEnded")
    assert kinds[0] == "TurnStarted"
    assert kinds[first_end + 1 :].count("TurnStarted") == 1
    started = [event for event in events if isinstance(event, ToolCallStarted)]
    assert [event.name for event in started] == [conversation.tool.name] * len(started)
    ready = [event.call for event in events if isinstance(event, ToolCallReady)]
    invoked = [event for event in events if isinstance(event, ToolInvoked)]
    assert [call.call_id for call in ready] == [event.call_id for event in invoked]
    # Every call is ready before any runs, and only after its reply is whole.
    assert kinds.index("ToolCallReady") > first_end
    assert kinds.index("ToolInvoked") > max(i for i, k in enumerate(kinds) if k == "ToolCallReady")
    text = "".join(event.text for event in events[first_end:] if isinstance(event, TextDelta))
    final = events[-1]
    assert isinstance(final, EvaluationFinished)
    assert text == final.response.text


def test_chat_tool_call_deltas_keep_one_id_and_name_when_a_server_repeats_them() -> None:
    conversation = CONVERSATIONS[0]
    api = Api(*conversation.bodies())
    events = list(
        conversation.adapter(api).stream(Prompt(_template(conversation.tool)), session=Session())
    )
    calls = [event for event in events if isinstance(event, ToolCallStarted | ToolCallDelta)]
    assert calls == [ToolCallStarted(0, "0", "llm_version"), ToolCallDelta(0, "{}")]


def test_anthropic_thinking_streams_as_reasoning_and_its_signature_is_echoed() -> None:
    api = Api(Body(sse_body(ANTHROPIC_THINKING)))
    template = PromptTemplate(
        ns="tests/streaming", key="names", sections=[MarkdownSection(title="A", template="Go.")]
    )
    events = list(anthropic_adapter(api).stream(Prompt(template), session=Session()))
    reasoning = "".join(event.text for event in events if isinstance(event, ReasoningDelta))
    whole = anthropic_whole(ANTHROPIC_THINKING)
    assert reasoning == whole["content"][0]["thinking"]
    final = events[-1]
    assert isinstance(final, EvaluationFinished)
    assert final.response.text == "- Captain\n- Scoop"
    echoed = final.response.messages[-1]["content"]
    assert echoed[0]["signature"] == whole["content"][0]["signature"]
    assert echoed[0]["signature"].startswith("EvoCCkYICxgCKkCY593")


@pytest.mark.parametrize("conversation", CONVERSATIONS, ids=str)
def test_astream_gives_what_stream_gives(conversation: Conversation) -> None:
    async def collect() -> list[Any]:
        api = Api(*conversation.bodies())
        adapter = conversation.adapter(api, True)
        session = Session()
        return [
            event
            async for event in adapter.astream(
                Prompt(_template(conversation.tool)), session=session
            )
        ]

    streamed = asyncio.run(collect())
    api = Api(*conversation.bodies())
    expected = list(
        conversation.adapter(api).stream(Prompt(_template(conversation.tool)), session=Session())
    )
    assert [_timeless(event) for event in streamed[:-1]] == [
        _timeless(event) for event in expected[:-1]
    ]
    final = streamed[-1]
    assert isinstance(final, EvaluationFinished)
    assert final.response.text == expected[-1].response.text


# --- a stream that breaks, and a consumer that stops ------------------------------------


@pytest.mark.parametrize("conversation", CONVERSATIONS, ids=str)
def test_a_stream_cut_mid_reply_is_a_response_error_and_no_tool_runs(
    conversation: Conversation,
) -> None:
    bodies = conversation.bodies(break_after=1)
    api = Api(*bodies)
    session = Session()
    with pytest.raises(PromptEvaluationError) as raised:
        list(
            conversation.adapter(api).stream(Prompt(_template(conversation.tool)), session=session)
        )
    assert raised.value.phase == "response"
    assert "response 1 from " in str(raised.value)
    assert "broke off after chunk 1: " in str(raised.value)
    assert session[ToolInvoked].all() == ()
    (executed,) = session[PromptExecuted].all()
    assert (executed.phase, executed.turns) == ("response", 1)
    assert bodies[0].closed
    assert len(api.bodies) == 1  # never retried once a chunk was read


@pytest.mark.parametrize("conversation", CONVERSATIONS, ids=str)
def test_stopping_early_closes_the_http_stream_and_records_the_evaluation_as_stopped(
    conversation: Conversation,
) -> None:
    bodies = conversation.bodies()
    session = Session()
    stream = conversation.adapter(Api(*bodies)).stream(
        Prompt(_template(conversation.tool)), session=session
    )
    with stream:
        for event in stream:
            if isinstance(event, TurnStarted):
                break
        next(stream)  # the first chunk: the HTTP stream is open
    assert bodies[0].closed
    assert session[ToolInvoked].all() == ()
    (executed,) = session[PromptExecuted].all()
    assert executed.error == "the stream was closed before the evaluation finished"


def test_a_malformed_chunk_is_a_response_error_naming_the_chunk() -> None:
    broken = [*ANTHROPIC_ANSWER[:3], ("content_block_delta", '{"type":"content_block_delta"}')]
    api = Api(Body(sse_body(broken)))
    session = Session()
    with pytest.raises(PromptEvaluationError) as raised:
        list(
            anthropic_adapter(api).stream(Prompt(_template(CONVERSATIONS[2].tool)), session=session)
        )
    assert raised.value.phase == "response"
    assert str(raised.value).startswith(
        "prompt 'ask': response 1 from anthropic: chunk 3 of the stream cannot be read: "
    )


def test_a_stream_ending_before_the_message_is_whole_is_a_response_error() -> None:
    api = Api(Body(sse_body(ANTHROPIC_ANSWER[:-1])))  # no message_stop
    with pytest.raises(PromptEvaluationError) as raised:
        list(
            anthropic_adapter(api).stream(
                Prompt(_template(CONVERSATIONS[2].tool)), session=Session()
            )
        )
    assert str(raised.value) == (
        "prompt 'ask': response 1 from anthropic: the stream ended before message_stop "
        "(after chunk 8)"
    )


# --- stop rules and structured output -------------------------------------------------


def test_a_streamed_answer_cut_by_the_token_limit_is_refused_as_a_whole_one_is() -> None:
    cut = [
        (event, data.replace('"stop_reason":"end_turn"', '"stop_reason":"max_tokens"'))
        for event, data in ANTHROPIC_ANSWER
    ]
    api = Api(Body(sse_body(cut)))
    with pytest.raises(PromptEvaluationError) as raised:
        list(
            anthropic_adapter(api).stream(
                Prompt(_template(CONVERSATIONS[2].tool)), session=Session()
            )
        )
    assert raised.value.phase == "response"
    assert "the answer was cut by the token limit (stop reason 'max_tokens')" in str(raised.value)


class Names(BaseModel):
    names: list[str]


def test_structured_output_streams_its_json_and_the_final_event_carries_it_parsed() -> None:
    template = PromptTemplate[Names](
        ns="tests/streaming", key="names", sections=[MarkdownSection(title="A", template="Go.")]
    )
    adapter = ScriptedAdapter(['{"names": ["Charles", "Sammy"]}'])
    events = list(adapter.stream(Prompt(template), session=Session()))
    text = "".join(event.text for event in events if isinstance(event, TextDelta))
    final = events[-1]
    assert isinstance(final, EvaluationFinished)
    assert text == '{"names": ["Charles", "Sammy"]}'
    assert final.response.output == Names(names=["Charles", "Sammy"])


def test_the_scripted_adapter_streams_text_word_by_word_and_calls_whole() -> None:
    tool = Tool[Multiply, int](name="multiply", description="Multiply.", handler=multiply)
    adapter = ScriptedAdapter([call("multiply", {"a": 2, "b": 3}, "c1"), "It is 6."])
    events = list(adapter.stream(Prompt(_template(tool)), session=Session()))
    assert [type(event).__name__ for event in events] == [
        "TurnStarted",
        "ToolCallStarted",
        "ToolCallDelta",
        "TurnEnded",
        "ToolCallReady",
        "ToolInvoked",
        "TurnStarted",
        "TextDelta",
        "TextDelta",
        "TextDelta",
        "TurnEnded",
        "EvaluationFinished",
    ]
    assert [event.text for event in events if isinstance(event, TextDelta)] == ["It ", "is ", "6."]
    ended = [event for event in events if isinstance(event, TurnEnded)]
    assert [event.stop_reason for event in ended] == ["end", "end"]


def test_a_long_anthropic_request_evaluate_streams_when_the_sdk_demands_it() -> None:
    body = Body(sse_body(ANTHROPIC_THINKING))
    api = Api(body)
    template = PromptTemplate(
        ns="tests/streaming", key="names", sections=[MarkdownSection(title="A", template="Go.")]
    )
    adapter = anthropic_adapter(api, max_tokens=128_000)
    response = adapter.evaluate(Prompt(template), session=Session())
    assert response.text == "- Captain\n- Scoop"
    assert api.bodies[0]["stream"] is True
    assert api.bodies[0]["max_tokens"] == 128_000
    assert body.closed
