"""The evaluation loop's own cost per turn, next to the mocked SDK round trip it wraps.

A two-turn evaluation (one tool call, then the final text) runs through each
adapter and its real SDK client, whose HTTP goes to a mock transport answering
with canned JSON. One evaluation is recorded first: the keyword arguments the
loop passed to the SDK and the SDK objects it got back. Then, in the same run:

- SDK round trip (the floor): the bare SDK client making those same calls
  (``create(**kwargs)``: request building, the mock HTTP exchange, response
  parsing), per turn;
- loop overhead: ``adapter.evaluate`` with the SDK call replaced by handing back
  the recorded SDK objects, per turn: everything the adapter and the executor
  add (rendering, request building, reading the reply, the transactional tool
  call, tool messages, events, usage), excluding the SDK and building the
  ``Session`` (one per adapter, as an agent keeps one);
- the provider-free loop: ``wink.testing.FunctionAdapter`` running the same
  evaluation, per turn.

Then the cost of one turn late in a long evaluation against one early in it: an
evaluation of 1,020 requests, each answered with a tool call (the last with the
text), timed between consecutive requests (everything from handing one request
to the model to having the next one built). The cost at turn 10 and at turn
1,000 is the median of the 20 turns from there, best of ``REPEAT`` evaluations;
their ratio says whether a turn's cost grows with the conversation. It is shown
for the scripted adapter, next to the floor of a turn (its tool call alone,
``ToolExecutor.execute``, the 10th and the 1,000th on one session), and for each
provider adapter with the SDK call replaced by handing back its recorded reply
(whose late turns add the copy of the message list each request hands the SDK,
timed on its own below them).
"""

from __future__ import annotations

import functools
import itertools
import json
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx2

from benchmarks import timing
from benchmarks.timing import per_call_us
from wink import MarkdownSection, Prompt, PromptTemplate, Session, Tool, ToolContext, ToolResult
from wink.adapters import LoopAdapter, ModelRequest
from wink.runtime.executor import ToolExecutor
from wink.testing import FunctionAdapter, ModelInput, ScriptedAdapter, ToolMessage, call

NUMBER = 150
REPEAT = 7
EARLY_TURN = 10
LATE_TURN = 1_000
WINDOW = 20
"""Turns from ``EARLY_TURN`` and from ``LATE_TURN`` whose median is the cost there."""
LONG_TURNS = LATE_TURN + WINDOW
"""Requests of the long evaluation: tool-call turns, then the answer."""


@dataclass
class LookupParams:
    entity_id: str = field(metadata={"description": "Global identifier to fetch"})
    include_related: bool = False


@dataclass
class LookupResult:
    entity_id: str
    document_url: str


def lookup(params: LookupParams, *, context: ToolContext) -> ToolResult[LookupResult]:
    return ToolResult.ok(LookupResult(params.entity_id, "https://example.com"), message="Fetched.")


template = PromptTemplate(
    ns="bench",
    key="lookup",
    sections=[
        MarkdownSection(
            title="Guidance",
            template="Fetch entity-42 and say where its document is.",
            tools=[
                Tool[LookupParams, LookupResult](
                    name="lookup_entity", description="Fetch an entity by id.", handler=lookup
                )
            ],
        )
    ],
)
ARGUMENTS = {"entity_id": "entity-42", "include_related": True}


class Replies:
    """A mock transport answering with canned replies in turn (tool call, then text)."""

    def __init__(self, *replies: dict[str, Any]) -> None:
        self._replies = [json.dumps(reply).encode() for reply in replies]
        self._next = 0

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        content = self._replies[self._next % len(self._replies)]
        self._next += 1
        return httpx2.Response(200, content=content, headers={"content-type": "application/json"})

    def client(self) -> httpx2.Client:
        return httpx2.Client(transport=httpx2.MockTransport(self.handle))


def openai_case(api: str) -> tuple[LoopAdapter, Callable[[dict[str, Any]], object], Replies]:
    import openai as sdk

    from wink.providers.openai import OpenAIAdapter

    usage = {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60}
    if api == "chat":
        tool_call = {
            "id": "call_1",
            "type": "function",
            "function": {"name": "lookup_entity", "arguments": json.dumps(ARGUMENTS)},
        }

        def reply(message: dict[str, Any]) -> dict[str, Any]:
            return {
                "id": "c",
                "object": "chat.completion",
                "created": 0,
                "model": "m",
                "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
                "usage": usage,
            }

        replies = Replies(
            reply({"role": "assistant", "content": None, "tool_calls": [tool_call]}),
            reply({"role": "assistant", "content": "At https://example.com."}),
        )
    else:
        responses_usage = {
            "input_tokens": 50,
            "output_tokens": 10,
            "total_tokens": 60,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        }

        def reply_items(output: list[dict[str, Any]]) -> dict[str, Any]:
            return {
                "id": "r",
                "object": "response",
                "created_at": 0,
                "model": "m",
                "status": "completed",
                "output": output,
                "parallel_tool_calls": True,
                "tool_choice": "auto",
                "tools": [],
                "usage": responses_usage,
            }

        replies = Replies(
            reply_items(
                [
                    {
                        "type": "function_call",
                        "id": "fc_1",
                        "call_id": "call_1",
                        "name": "lookup_entity",
                        "arguments": json.dumps(ARGUMENTS),
                        "status": "completed",
                    }
                ]
            ),
            reply_items(
                [
                    {
                        "type": "message",
                        "id": "m1",
                        "role": "assistant",
                        "status": "completed",
                        "content": [{"type": "output_text", "text": "At it.", "annotations": []}],
                    }
                ]
            ),
        )
    client = sdk.OpenAI(
        api_key="k", base_url="http://bench.test/v1", max_retries=0, http_client=replies.client()
    )
    adapter = OpenAIAdapter(client, model="m", api=api)  # type: ignore[arg-type]
    create = client.chat.completions.create if api == "chat" else client.responses.create
    return adapter, lambda body: create(**body), replies


def anthropic_case() -> tuple[LoopAdapter, Callable[[dict[str, Any]], object], Replies]:
    import anthropic as sdk

    from wink.providers.anthropic import AnthropicAdapter

    def reply(content: list[dict[str, Any]], stop: str) -> dict[str, Any]:
        return {
            "id": "m",
            "type": "message",
            "role": "assistant",
            "model": "c",
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 50, "output_tokens": 10},
        }

    replies = Replies(
        reply(
            [{"type": "tool_use", "id": "t1", "name": "lookup_entity", "input": ARGUMENTS}],
            "tool_use",
        ),
        reply([{"type": "text", "text": "At https://example.com."}], "end_turn"),
    )
    client = sdk.Anthropic(
        api_key="k", base_url="http://bench.test", max_retries=0, http_client=replies.client()
    )
    adapter = AnthropicAdapter(client, model="c", max_tokens=256)
    return adapter, lambda body: client.messages.create(**body), replies


def gemini_case() -> tuple[LoopAdapter, Callable[[dict[str, Any]], object], Replies]:
    from google import genai
    from google.genai import types

    from wink.providers.gemini import GeminiAdapter

    def reply(parts: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP"}],
            "usageMetadata": {"promptTokenCount": 50, "candidatesTokenCount": 10},
        }

    replies = Replies(
        reply([{"functionCall": {"id": "f1", "name": "lookup_entity", "args": ARGUMENTS}}]),
        reply([{"text": "At https://example.com."}]),
    )
    options = types.HttpOptions(
        base_url="http://bench.test",
        httpx_client=replies.client(),
        retry_options=types.HttpRetryOptions(attempts=1),
    )
    client = genai.Client(api_key="k", http_options=options)
    adapter = GeminiAdapter(client, model="g")
    return adapter, lambda body: client.models.generate_content(**body), replies


def scripted(model_input: ModelInput) -> object:
    if isinstance(model_input.last, ToolMessage):
        return "At https://example.com."
    return call("lookup_entity", ARGUMENTS, "call_1")


def record(adapter: LoopAdapter, prompt: Prompt[None]) -> list[tuple[dict[str, Any], Any]]:
    """The SDK calls of one evaluation: keyword arguments and the SDK object returned."""
    exchanges: list[tuple[dict[str, Any], Any]] = []
    send = adapter.send

    def recording(request: ModelRequest) -> Any:
        reply = send(request)
        exchanges.append((dict(request.body), reply))
        return reply

    adapter.send = recording  # type: ignore[method-assign]
    adapter.evaluate(prompt, session=Session())
    adapter.send = send  # type: ignore[method-assign]
    return exchanges


def turn_costs_us(adapter: LoopAdapter, prompt: Prompt[None]) -> tuple[float, float]:
    """One ``LONG_TURNS``-request evaluation: its per-turn cost at ``EARLY_TURN`` and at
    ``LATE_TURN``, in microseconds (the median of ``WINDOW`` turns from each)."""
    stamps: list[float] = []
    send = adapter.send

    def timed(request: ModelRequest) -> Any:
        stamps.append(time.perf_counter())
        return send(request)

    adapter.send = timed  # type: ignore[method-assign]
    adapter.evaluate(prompt, session=Session(), max_turns=LONG_TURNS)
    # Turn k's cost: from sending request k (stamps[k - 1]) to sending request k + 1.
    costs = [later - earlier for earlier, later in itertools.pairwise(stamps)]

    def at(turn: int) -> float:
        return statistics.median(costs[turn - 1 : turn - 1 + WINDOW]) * 1e6

    return at(EARLY_TURN), at(LATE_TURN)


def best_turn_costs_us(
    build: Callable[[], LoopAdapter], prompt: Prompt[None]
) -> tuple[float, float]:
    """``turn_costs_us`` of a fresh adapter, best of ``REPEAT`` evaluations."""
    early = late = float("inf")
    for _ in range(1 if timing.QUICK else REPEAT):
        early_us, late_us = turn_costs_us(build(), prompt)
        early, late = min(early, early_us), min(late, late_us)
    return early, late


def call_costs_us(prompt: Prompt[None]) -> tuple[float, float]:
    """The floor of a turn: ``LONG_TURNS`` tool calls through one executor and session,
    each timed; the cost of call ``EARLY_TURN`` and call ``LATE_TURN`` as in
    ``turn_costs_us``."""
    executor = ToolExecutor(prompt=prompt, session=Session())
    lookup_call = call("lookup_entity", ARGUMENTS, "call_1")
    costs: list[float] = []
    for _ in range(LONG_TURNS):
        start = time.perf_counter()
        executor.execute(lookup_call)
        costs.append(time.perf_counter() - start)

    def at(turn: int) -> float:
        return statistics.median(costs[turn - 1 : turn - 1 + WINDOW]) * 1e6

    return at(EARLY_TURN), at(LATE_TURN)


def best_call_costs_us(prompt: Prompt[None]) -> tuple[float, float]:
    """``call_costs_us``, best of ``REPEAT`` runs."""
    early = late = float("inf")
    for _ in range(1 if timing.QUICK else REPEAT):
        early_us, late_us = call_costs_us(prompt)
        early, late = min(early, early_us), min(late, late_us)
    return early, late


def long_script() -> ScriptedAdapter:
    """A tool call for every request but the last, which answers."""
    lookup_call = call("lookup_entity", ARGUMENTS, "call_1")
    return ScriptedAdapter([*[lookup_call] * (LONG_TURNS - 1), "At https://example.com."])


def replaying(adapter: LoopAdapter, tool_reply: Any, final_reply: Any) -> LoopAdapter:
    """``adapter`` with its SDK call replaced: ``tool_reply`` until the last request."""

    def send(request: ModelRequest) -> Any:
        return final_reply if request.turn >= LONG_TURNS else tool_reply

    adapter.send = send  # type: ignore[method-assign]
    return adapter


def print_long_evaluations(
    prompt: Prompt[None], recorded: dict[str, tuple[LoopAdapter, Any, Any]]
) -> None:
    """Per-turn cost at ``EARLY_TURN`` and ``LATE_TURN``: the scripted adapter next to a
    turn's floor, then each provider adapter replaying its recorded replies."""
    floor_early_us, floor_late_us = best_call_costs_us(prompt)
    early_us, late_us = best_turn_costs_us(long_script, prompt)
    print()
    print(
        f"{LONG_TURNS}-request evaluation, a tool call per turn: the cost of turn {EARLY_TURN} "
        f"and of turn {LATE_TURN:,}"
    )
    header = f"turn {EARLY_TURN} us"
    print(f"{'adapter':18} {header:>12} {f'turn {LATE_TURN:,} us':>15} {'ratio':>7}")
    print(
        f"{'floor: tool call':18} {floor_early_us:12.1f} {floor_late_us:15.1f} "
        f"{floor_late_us / floor_early_us:6.2f}x  (ToolExecutor.execute alone, one session)"
    )
    print(
        f"{'scripted':18} {early_us:12.1f} {late_us:15.1f} {late_us / early_us:6.2f}x"
        "  (target: within 1.20x)"
    )
    for name, (adapter, tool_reply, final_reply) in recorded.items():
        replay = functools.partial(replaying, adapter, tool_reply, final_reply)
        early_us, late_us = best_turn_costs_us(replay, prompt)
        print(f"{name:18} {early_us:12.1f} {late_us:15.1f} {late_us / early_us:6.2f}x")
    # What a provider turn adds late in the evaluation: the request's own copy of the
    # message list it hands the SDK (references only; no message is converted again).
    early_copy_us, late_copy_us = (
        per_call_us(functools.partial(list, [{} for _ in range(2 * turn - 1)]), repeat=REPEAT)
        for turn in (EARLY_TURN, LATE_TURN)
    )
    print(
        f"each provider request hands the SDK its own copy of the message list: "
        f"{early_copy_us:.1f} us at turn {EARLY_TURN}, {late_copy_us:.1f} us at turn "
        f"{LATE_TURN:,} ({2 * EARLY_TURN - 1} and {2 * LATE_TURN - 1:,} messages)"
    )


def main() -> None:
    """Print, per adapter, the SDK round trip, the loop's overhead and their ratio; then
    the per-turn cost early and late in a long evaluation."""
    prompt = Prompt(template)
    function_adapter = FunctionAdapter(scripted)

    # One session per adapter, as an agent keeps one: building a Session is not the loop's.
    free_session = Session()

    def provider_free() -> object:
        return function_adapter.evaluate(prompt, session=free_session)

    free_us = per_call_us(provider_free, number=NUMBER * 4, repeat=REPEAT) / 2
    print("two-turn evaluation (one tool call, then the answer); figures per turn")
    print(f"provider-free loop (FunctionAdapter: loop + executor, no SDK): {free_us:7.1f} us")
    print(f"{'adapter':18} {'SDK round trip us':>18} {'loop overhead us':>17} {'overhead':>9}")
    cases = {
        "openai chat": lambda: openai_case("chat"),
        "openai responses": lambda: openai_case("responses"),
        "anthropic": anthropic_case,
        "gemini": gemini_case,
    }
    recorded: dict[str, tuple[LoopAdapter, Any, Any]] = {}
    for name, build in cases.items():
        adapter, create, _ = build()
        exchanges = record(adapter, prompt)
        recorded[name] = (adapter, exchanges[0][1], exchanges[1][1])

        def bare(exchanges: list[Any] = exchanges, create: Any = create) -> object:
            return [create(body) for body, _ in exchanges]

        replies = itertools.cycle([reply for _, reply in exchanges])
        adapter.send = lambda request, replies=replies: next(replies)  # type: ignore[method-assign]

        session = Session()

        def evaluate(adapter: LoopAdapter = adapter, session: Session = session) -> object:
            return adapter.evaluate(prompt, session=session)

        # Interleaved, best of each: both see the same machine load.
        sdk_us = loop_us = float("inf")
        for _ in range(REPEAT):
            sdk_us = min(sdk_us, per_call_us(bare, number=NUMBER, repeat=1) / 2)
            loop_us = min(loop_us, per_call_us(evaluate, number=NUMBER * 4, repeat=1) / 2)
        print(f"{name:18} {sdk_us:18.1f} {loop_us:17.1f} {loop_us / sdk_us:8.1%}")
    print_long_evaluations(prompt, recorded)
    print_streaming(prompt)


SHORT_ANSWER = 200
LONG_ANSWER = 2_000
"""Text deltas of the two streamed answers timed by ``print_streaming``: the cost per
chunk is the slope between them, so what is paid once per answer cancels out."""
STREAM_NUMBER = 5
"""Streamed evaluations of the long answer per timing (ten times as many of the short)."""


def _sse(events: list[tuple[str | None, dict[str, Any]]], done: bool = False) -> bytes:
    frames = [
        (f"event: {event}\n" if event else "") + f"data: {json.dumps(data)}\n\n"
        for event, data in events
    ]
    return ("".join(frames) + ("data: [DONE]\n\n" if done else "")).encode()


def _anthropic_stream(deltas: int) -> bytes:
    message = {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1},
    }  # fmt: skip
    events: list[tuple[str | None, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": message}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": {"type": "text", "text": ""}}),
    ]  # fmt: skip
    delta = {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "text_delta", "text": "word "},
    }
    events += [("content_block_delta", delta)] * deltas
    events += [
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                           "usage": {"output_tokens": deltas}}),
        ("message_stop", {"type": "message_stop"}),
    ]  # fmt: skip
    return _sse(events)


def _chat_stream(deltas: int) -> bytes:
    head = {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "gpt-test"}
    text = {**head, "choices": [{"index": 0, "delta": {"content": "word "}, "finish_reason": None}]}
    end = {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    usage = {**head, "choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": deltas,
                                              "total_tokens": 10 + deltas}}  # fmt: skip
    return _sse([(None, text)] * deltas + [(None, end), (None, usage)], done=True)


def _responses_stream(deltas: int) -> bytes:
    def response(status: str, output: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "id": "resp_1", "object": "response", "created_at": 0, "model": "gpt-test",
            "status": status, "output": output, "parallel_tool_calls": True,
            "tool_choice": "auto", "tools": [],
            "usage": None if status != "completed" else {
                "input_tokens": 10, "output_tokens": deltas, "total_tokens": 10 + deltas,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens_details": {"reasoning_tokens": 0},
            },
        }  # fmt: skip

    def message(status: str, text: str | None) -> dict[str, Any]:
        content = [] if text is None else [{"type": "output_text", "text": text, "annotations": []}]
        return {"type": "message", "id": "msg_1", "role": "assistant", "status": status,
                "content": content}  # fmt: skip

    text = "word " * deltas
    part = {"type": "output_text", "text": text, "annotations": []}
    where = {"item_id": "msg_1", "output_index": 0, "content_index": 0}
    delta = {"type": "response.output_text.delta", **where, "delta": "word ", "logprobs": []}
    events: list[tuple[str | None, dict[str, Any]]] = [
        ("response.created", {"type": "response.created",
                              "response": response("in_progress", [])}),
        ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0,
                                        "item": message("in_progress", None)}),
        ("response.content_part.added", {"type": "response.content_part.added", **where,
                                         "part": {**part, "text": ""}}),
    ]  # fmt: skip
    events += [("response.output_text.delta", delta)] * deltas
    events += [
        ("response.output_text.done", {"type": "response.output_text.done", **where,
                                       "text": text, "logprobs": []}),
        ("response.content_part.done", {"type": "response.content_part.done", **where,
                                        "part": part}),
        ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0,
                                       "item": message("completed", text)}),
        ("response.completed", {"type": "response.completed",
                                "response": response("completed", [message("completed", text)])}),
    ]  # fmt: skip
    for number, (_, data) in enumerate(events):
        events[number] = (events[number][0], {**data, "sequence_number": number})
    return _sse(events)


def _gemini_stream(deltas: int) -> bytes:
    def chunk(text: str, done: bool) -> dict[str, Any]:
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": [{"text": text}]}}
        if done:
            candidate["finishReason"] = "STOP"
        return {
            "candidates": [{**candidate, "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": deltas,
                              "totalTokenCount": 10 + deltas},
            "modelVersion": "gemini-test", "responseId": "r1",
        }  # fmt: skip

    return _sse([(None, chunk("word ", False))] * deltas + [(None, chunk("", True))])


def _http(body: bytes) -> httpx2.Client:
    def answer(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    return httpx2.Client(transport=httpx2.MockTransport(answer))


def _stream_cases() -> dict[
    str, tuple[Callable[[int], bytes], Callable[[httpx2.Client], LoopAdapter], Callable[[Any], Any]]
]:
    """Per API: its stream body of n deltas, an adapter over an HTTP client, and the SDK's
    own streaming call through that adapter's client."""
    import anthropic
    import openai
    from google import genai

    from wink.providers.anthropic import AnthropicAdapter
    from wink.providers.gemini import GeminiAdapter
    from wink.providers.openai import OpenAIAdapter

    def openai_adapter(api: str) -> Callable[[httpx2.Client], LoopAdapter]:
        return lambda http: OpenAIAdapter(
            openai.OpenAI(api_key="k", base_url="http://o.test/v1", http_client=http),
            model="gpt-test",
            api=api,  # type: ignore[arg-type]
        )

    def gemini_adapter(http: httpx2.Client) -> LoopAdapter:
        options = {"base_url": "http://g.test", "httpx_client": http}
        return GeminiAdapter(
            genai.Client(api_key="k", http_options=options),  # type: ignore[arg-type]
            model="gemini-test",
        )

    return {
        "anthropic": (
            _anthropic_stream,
            lambda http: AnthropicAdapter(
                anthropic.Anthropic(api_key="k", base_url="http://a.test", http_client=http),
                model="claude-test",
                max_tokens=1024,
            ),
            lambda client: client.messages.create(
                model="claude-test", max_tokens=1024, messages=[], stream=True
            ),
        ),
        "openai chat": (
            _chat_stream,
            openai_adapter("chat"),
            lambda client: client.chat.completions.create(
                model="gpt-test", messages=[], stream=True
            ),
        ),
        "openai responses": (
            _responses_stream,
            openai_adapter("responses"),
            lambda client: client.responses.create(model="gpt-test", input="x", stream=True),
        ),
        "gemini": (
            _gemini_stream,
            gemini_adapter,
            lambda client: client.models.generate_content_stream(model="gemini-test", contents="x"),
        ),
    }


def print_streaming(prompt: Prompt[None]) -> None:
    """Per chunk of a streamed answer: iterating the SDK's own stream over mocked chunks
    (the floor), and ``adapter.stream`` over the same chunks. Each is the slope between a
    ``SHORT_ANSWER``- and a ``LONG_ANSWER``-delta answer, so that what is paid once per
    answer (rendering, the request, the session record, the whole reply rebuilt at the
    end; the SDK's request and response) cancels out."""
    print()
    print(
        f"a streamed answer of {SHORT_ANSWER} and of {LONG_ANSWER:,} text deltas: the cost per "
        "chunk (the slope between them)"
    )
    print(f"{'adapter':18} {'SDK us/chunk':>13} {'wink us/chunk':>14} {'ratio':>7}")
    span = LONG_ANSWER - SHORT_ANSWER
    for name, (stream_body, build, sdk_stream) in _stream_cases().items():
        timings: dict[str, Callable[[], object]] = {}
        for deltas in (SHORT_ANSWER, LONG_ANSWER):
            adapter = build(_http(stream_body(deltas)))
            client = adapter._client  # type: ignore[attr-defined]  # each adapter keeps its SDK client
            session = Session()

            def sdk(client: Any = client, sdk_stream: Any = sdk_stream) -> object:
                return sum(1 for _ in sdk_stream(client))

            def wink(adapter: LoopAdapter = adapter, session: Session = session) -> object:
                return sum(1 for _ in adapter.stream(prompt, session=session))

            timings[f"sdk {deltas}"] = sdk
            timings[f"wink {deltas}"] = wink
        best = dict.fromkeys(timings, float("inf"))
        for _ in range(REPEAT):  # interleaved, best of each
            for key, function in timings.items():
                number = STREAM_NUMBER * (10 if key.endswith(f" {SHORT_ANSWER}") else 1)
                best[key] = min(best[key], per_call_us(function, number=number, repeat=1))
        sdk_slope = (best[f"sdk {LONG_ANSWER}"] - best[f"sdk {SHORT_ANSWER}"]) / span
        wink_slope = (best[f"wink {LONG_ANSWER}"] - best[f"wink {SHORT_ANSWER}"]) / span
        print(f"{name:18} {sdk_slope:13.2f} {wink_slope:14.2f} {wink_slope / sdk_slope:6.2f}x")
    print("(target: wink within 1.10x of the SDK's own stream per chunk)")


if __name__ == "__main__":
    main()
