"""The provider dialects against the real SDKs, offline: specs go out in a request
unchanged, the SDK's parsed reply gives wink's tool calls, and wink's tool messages
go out in the follow-up request as the provider expects them."""

from __future__ import annotations

import datetime
import json
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pytest
from pydantic import AnyUrl, BaseModel, Field

pytest.importorskip("httpx2")
openai_sdk = pytest.importorskip("openai")
anthropic_sdk = pytest.importorskip("anthropic")
genai = pytest.importorskip("google.genai")
mcp_sdk = pytest.importorskip("mcp")

import anyio  # noqa: E402  # after the skips: anyio comes with the SDKs
import mcp.types as mcp_types  # noqa: E402
from google.genai import types as genai_types  # noqa: E402
from mcp.server import Server  # noqa: E402
from provider_corpus import (  # noqa: E402
    CORPUS,
    RECURSIVE,
    STRICT_IMPOSSIBLE,
    Address,
    Dog,
    Formats,
    Listing,
    Point,
    TitleProperty,
    TreeNode,
)
from sdk_mocks import Endpoint, RecordingTransport  # noqa: E402

from wink import (  # noqa: E402
    MarkdownSection,
    Prompt,
    PromptTemplate,
    Session,
    Tool,
    ToolContext,
    ToolExecutor,
    ToolResult,
)
from wink.providers import anthropic, gemini, mcp, openai  # noqa: E402
from wink.runtime.call import ToolCall  # noqa: E402

NOTES = {1: "milk", 2: "bread", 3: "eggs"}


class Search(BaseModel):
    query: str = Field(description="Text the note titles contain")
    limit: int = Field(default=2, description="Most titles to return")


class GetNote(BaseModel):
    id: int


class Note(BaseModel):
    id: int
    title: str


class CountNotes(BaseModel):
    contains: str = Field(default="", description="Text the titles contain")


def search_notes(params: Search, *, context: ToolContext) -> ToolResult[list[str]]:
    hits = [title for title in NOTES.values() if params.query in title][: params.limit]
    return ToolResult.ok(hits, message=f"{len(hits)} hits.")


def get_note(params: GetNote, *, context: ToolContext) -> ToolResult[Note]:
    if params.id not in NOTES:
        return ToolResult.error(f"No note {params.id}.")
    return ToolResult.ok(Note(id=params.id, title=NOTES[params.id]), message="Found.")


def count_notes(params: CountNotes, *, context: ToolContext) -> ToolResult[int]:
    count = sum(params.contains in title for title in NOTES.values())
    return ToolResult.ok(count, message=f"{count} notes.")


search_tool = Tool[Search, list[str]](
    name="search", description="Find note titles.", handler=search_notes
)
note_tool = Tool[GetNote, Note](name="get_note", description="Read one note.", handler=get_note)
count_tool = Tool[CountNotes, int](
    name="count_notes", description="Count notes.", handler=count_notes
)
TOOLS = {tool.name: tool for tool in (search_tool, note_tool, count_tool)}

template = PromptTemplate(
    ns="tests/sdk",
    key="notes",
    sections=[
        MarkdownSection(title="Notes", template="Answer from the notes.", tools=[*TOOLS.values()])
    ],
)

# The calls every mocked model makes: a strict-mode null for a defaulted field,
# arguments of the wrong type, and a call the handler itself fails.
MODEL_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("search", {"query": "e", "limit": None}),
    ("get_note", {"id": "one"}),
    ("get_note", {"id": 7}),
]
SEARCH_OK = '2 hits.\n\n["bread","eggs"]'
INVALID_ID = (
    "Invalid arguments for tool 'get_note':\nid: input should be a valid integer (got \"one\")"
)
NO_NOTE = "No note 7."
EXPECTED_TEXTS = [SEARCH_OK, INVALID_ID, NO_NOTE]
EXPECTED_SUCCESS = [True, False, False]


@dataclass(frozen=True)
class Round:
    """One tool-call round: what the SDK sent and returned, what wink parsed and what the
    tools returned."""

    endpoint: Endpoint
    reply: Any
    calls: list[ToolCall]
    results: list[ToolResult[Any]]

    @property
    def first(self) -> dict[str, Any]:
        """The body of the request carrying the tool specs."""
        return self.endpoint.bodies[0]

    @property
    def follow_up(self) -> dict[str, Any]:
        """The body of the request carrying the tool messages."""
        return self.endpoint.bodies[1]


def new_executor() -> ToolExecutor:
    return ToolExecutor(prompt=Prompt(template), session=Session())


def execute(executor: ToolExecutor, calls: Iterable[ToolCall]) -> list[ToolResult[Any]]:
    return [executor.execute(call) for call in calls]


def openai_client(endpoint: Endpoint) -> Any:
    return openai_sdk.OpenAI(
        api_key="test-key",
        base_url="http://openai.test/v1",
        max_retries=0,
        http_client=endpoint.http_client(),
    )


def anthropic_client(endpoint: Endpoint) -> Any:
    return anthropic_sdk.Anthropic(
        api_key="test-key",
        base_url="http://anthropic.test",
        max_retries=0,
        http_client=endpoint.http_client(),
    )


def genai_client(endpoint: Endpoint) -> Any:
    options = genai_types.HttpOptions(
        base_url="http://gemini.test",
        httpx_client=endpoint.http_client(),
        retry_options=genai_types.HttpRetryOptions(attempts=1),
    )
    return genai.Client(api_key="test-key", http_options=options)


def corpus_tools(exclude: frozenset[str] = frozenset()) -> list[Tool[Any, Any]]:
    return [tool for name, tool in CORPUS.items() if name not in exclude]


def json_arguments(arguments: dict[str, Any]) -> str:
    return json.dumps(arguments)


# --- OpenAI Chat Completions ----------------------------------------------------------


def chat_completion(calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    tool_calls = [
        {
            "id": f"call_{index}",
            "type": "function",
            "function": {"name": name, "arguments": json_arguments(arguments)},
        }
        for index, (name, arguments) in enumerate(calls)
    ]
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "gpt-test",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {"role": "assistant", "content": None, "tool_calls": tool_calls},
            }
        ],
    }


def chat_text(text: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-2",
        "object": "chat.completion",
        "created": 0,
        "model": "gpt-test",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": text},
            }
        ],
    }


@pytest.fixture(scope="module")
def chat_round() -> Round:
    endpoint = Endpoint(chat_completion(MODEL_CALLS), chat_text("Done."))
    client = openai_client(endpoint)
    executor = new_executor()
    question = {"role": "user", "content": "Which notes mention e?"}
    completion = client.chat.completions.create(
        model="gpt-test",
        messages=[question],
        tools=openai.tool_specs(executor.rendered_prompt),
    )
    calls = openai.parse_tool_calls(completion)
    results = execute(executor, calls)
    client.chat.completions.create(
        model="gpt-test",
        messages=[
            question,
            completion.choices[0].message,
            *(
                openai.tool_message(call, result)
                for call, result in zip(calls, results, strict=True)
            ),
        ],
        tools=openai.tool_specs(executor.rendered_prompt),
    )
    return Round(endpoint, completion, calls, results)


def test_openai_chat_request_carries_the_specs_unchanged(chat_round: Round) -> None:
    assert chat_round.first["tools"] == openai.tool_specs(Prompt(template).render())
    assert [tool["function"]["strict"] for tool in chat_round.first["tools"]] == [True] * 3


def test_openai_chat_completion_object_parses_into_calls_with_ids(chat_round: Round) -> None:
    assert chat_round.calls == [
        ToolCall("search", '{"query": "e", "limit": null}', "call_0"),
        ToolCall("get_note", '{"id": "one"}', "call_1"),
        ToolCall("get_note", '{"id": 7}', "call_2"),
    ]


def test_openai_chat_message_and_its_tool_call_list_parse_like_the_completion(
    chat_round: Round,
) -> None:
    message = chat_round.reply.choices[0].message
    assert openai.parse_tool_calls(message) == chat_round.calls
    assert openai.parse_tool_calls(message.tool_calls) == chat_round.calls


def test_openai_chat_results_follow_the_calls(chat_round: Round) -> None:
    assert [r.success for r in chat_round.results] == EXPECTED_SUCCESS


def test_openai_chat_follow_up_carries_one_tool_message_per_call(chat_round: Round) -> None:
    assert chat_round.follow_up["messages"][2:] == [
        {"role": "tool", "tool_call_id": f"call_{index}", "content": text}
        for index, text in enumerate(EXPECTED_TEXTS)
    ]


def test_openai_chat_follow_up_echoes_the_assistant_tool_calls(chat_round: Round) -> None:
    echoed = chat_round.follow_up["messages"][1]["tool_calls"]
    assert [(c["id"], c["function"]["name"]) for c in echoed] == [
        ("call_0", "search"),
        ("call_1", "get_note"),
        ("call_2", "get_note"),
    ]


@pytest.mark.parametrize("strict", ["auto", False])
def test_openai_chat_request_carries_every_corpus_spec_unchanged(strict: Any) -> None:
    endpoint = Endpoint(chat_text("ok"))
    specs = openai.tool_specs(corpus_tools(), strict=strict)
    openai_client(endpoint).chat.completions.create(
        model="gpt-test", messages=[{"role": "user", "content": "hi"}], tools=specs
    )
    assert endpoint.bodies[0]["tools"] == specs


def test_openai_chat_request_carries_strict_corpus_specs_unchanged() -> None:
    endpoint = Endpoint(chat_text("ok"))
    specs = openai.tool_specs(corpus_tools(frozenset(STRICT_IMPOSSIBLE)), strict=True)
    openai_client(endpoint).chat.completions.create(
        model="gpt-test", messages=[{"role": "user", "content": "hi"}], tools=specs
    )
    assert endpoint.bodies[0]["tools"] == specs


# --- OpenAI Responses API -------------------------------------------------------------


def response_with_calls(calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    output: list[dict[str, Any]] = [
        {
            "type": "reasoning",
            "id": "rs_0",
            "summary": [],
        },
        *(
            {
                "type": "function_call",
                "id": f"fc_{index}",
                "call_id": f"call_{index}",
                "name": name,
                "arguments": json_arguments(arguments),
                "status": "completed",
            }
            for index, (name, arguments) in enumerate(calls)
        ),
    ]
    return responses_reply("resp_1", output)


def responses_text(text: str) -> dict[str, Any]:
    message = {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }
    return responses_reply("resp_2", [message])


def responses_reply(response_id: str, output: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": response_id,
        "object": "response",
        "created_at": 0,
        "model": "gpt-test",
        "status": "completed",
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
    }


@pytest.fixture(scope="module")
def responses_round() -> Round:
    endpoint = Endpoint(response_with_calls(MODEL_CALLS), responses_text("Done."))
    client = openai_client(endpoint)
    executor = new_executor()
    specs = openai.tool_specs(executor.rendered_prompt, api="responses")
    question = {"role": "user", "content": "Which notes mention e?"}
    response = client.responses.create(model="gpt-test", input=[question], tools=specs)
    calls = openai.parse_tool_calls(response)
    results = execute(executor, calls)
    outputs = [
        openai.tool_message(call, result, api="responses")
        for call, result in zip(calls, results, strict=True)
    ]
    client.responses.create(
        model="gpt-test", input=[question, *response.output, *outputs], tools=specs
    )
    return Round(endpoint, response, calls, results)


def test_openai_responses_request_carries_the_flat_specs_unchanged(
    responses_round: Round,
) -> None:
    specs = openai.tool_specs(Prompt(template).render(), api="responses")
    assert responses_round.first["tools"] == specs
    assert [tool["name"] for tool in responses_round.first["tools"]] == [*TOOLS]


def test_openai_response_object_parses_into_calls_skipping_reasoning(
    responses_round: Round,
) -> None:
    assert [(c.name, c.call_id) for c in responses_round.calls] == [
        ("search", "call_0"),
        ("get_note", "call_1"),
        ("get_note", "call_2"),
    ]
    assert [r.success for r in responses_round.results] == EXPECTED_SUCCESS


def test_openai_responses_follow_up_carries_function_call_outputs(
    responses_round: Round,
) -> None:
    assert responses_round.follow_up["input"][-3:] == [
        {"type": "function_call_output", "call_id": f"call_{index}", "output": text}
        for index, text in enumerate(EXPECTED_TEXTS)
    ]


def test_openai_responses_request_carries_every_corpus_spec_unchanged() -> None:
    endpoint = Endpoint(responses_text("ok"))
    specs = openai.tool_specs(corpus_tools(), api="responses")
    openai_client(endpoint).responses.create(model="gpt-test", input="hi", tools=specs)
    assert endpoint.bodies[0]["tools"] == specs


# --- Anthropic Messages ---------------------------------------------------------------


def anthropic_message(content: list[dict[str, Any]], stop_reason: str) -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }


def anthropic_tool_use(calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    blocks = [
        {"type": "tool_use", "id": f"toolu_{index}", "name": name, "input": arguments}
        for index, (name, arguments) in enumerate(calls)
    ]
    return anthropic_message([{"type": "text", "text": "Looking."}, *blocks], "tool_use")


def anthropic_text(text: str) -> dict[str, Any]:
    return anthropic_message([{"type": "text", "text": text}], "end_turn")


@pytest.fixture(scope="module")
def anthropic_round() -> Round:
    endpoint = Endpoint(anthropic_tool_use(MODEL_CALLS), anthropic_text("Done."))
    client = anthropic_client(endpoint)
    executor = new_executor()
    specs = anthropic.tool_specs(executor.rendered_prompt, strict={"get_note": True})
    question = {"role": "user", "content": "Which notes mention e?"}
    message = client.messages.create(
        model="claude-test", max_tokens=100, messages=[question], tools=specs
    )
    calls = anthropic.parse_tool_calls(message)
    results = execute(executor, calls)
    client.messages.create(
        model="claude-test",
        max_tokens=100,
        messages=[
            question,
            {"role": "assistant", "content": message.content},
            anthropic.tool_results_message(zip(calls, results, strict=True)),
        ],
        tools=specs,
    )
    return Round(endpoint, message, calls, results)


def test_anthropic_request_carries_the_specs_unchanged(anthropic_round: Round) -> None:
    specs = anthropic.tool_specs(Prompt(template).render(), strict={"get_note": True})
    assert anthropic_round.first["tools"] == specs
    assert [tool.get("strict") for tool in anthropic_round.first["tools"]] == [None, True, None]


def test_anthropic_message_object_parses_tool_use_blocks(anthropic_round: Round) -> None:
    assert anthropic_round.calls == [
        ToolCall("search", {"query": "e", "limit": None}, "toolu_0"),
        ToolCall("get_note", {"id": "one"}, "toolu_1"),
        ToolCall("get_note", {"id": 7}, "toolu_2"),
    ]
    assert [r.success for r in anthropic_round.results] == EXPECTED_SUCCESS


def test_anthropic_follow_up_carries_tool_results_flagging_failures(
    anthropic_round: Round,
) -> None:
    assert anthropic_round.follow_up["messages"][2] == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "toolu_0", "content": SEARCH_OK},
            {
                "type": "tool_result",
                "tool_use_id": "toolu_1",
                "content": INVALID_ID,
                "is_error": True,
            },
            {"type": "tool_result", "tool_use_id": "toolu_2", "content": NO_NOTE, "is_error": True},
        ],
    }


def test_anthropic_follow_up_echoes_the_tool_use_blocks(anthropic_round: Round) -> None:
    content = anthropic_round.follow_up["messages"][1]["content"]
    assert [(block["type"], block.get("id")) for block in content] == [
        ("text", None),
        ("tool_use", "toolu_0"),
        ("tool_use", "toolu_1"),
        ("tool_use", "toolu_2"),
    ]


def test_anthropic_request_carries_every_corpus_spec_unchanged() -> None:
    endpoint = Endpoint(anthropic_text("ok"))
    specs = anthropic.tool_specs(corpus_tools())
    anthropic_client(endpoint).messages.create(
        model="claude-test",
        max_tokens=10,
        messages=[{"role": "user", "content": "hi"}],
        tools=specs,
    )
    assert endpoint.bodies[0]["tools"] == specs


@pytest.mark.parametrize("name", sorted(set(CORPUS) - set(STRICT_IMPOSSIBLE) - RECURSIVE))
def test_anthropic_request_carries_a_strict_corpus_spec_unchanged(name: str) -> None:
    endpoint = Endpoint(anthropic_text("ok"))
    specs = anthropic.tool_specs(CORPUS[name], strict=True)
    anthropic_client(endpoint).messages.create(
        model="claude-test",
        max_tokens=10,
        messages=[{"role": "user", "content": "hi"}],
        tools=specs,
    )
    assert endpoint.bodies[0]["tools"] == specs


# --- Gemini ---------------------------------------------------------------------------


def gemini_reply(parts: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP"}],
        "modelVersion": "gemini-test",
    }


def gemini_calls(calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    parts = [
        {"functionCall": {"id": f"fc_{index}", "name": name, "args": arguments}}
        for index, (name, arguments) in enumerate(calls)
    ]
    return gemini_reply([{"text": "Looking."}, *parts])


def from_genai_wire(declaration: dict[str, Any]) -> dict[str, Any]:
    """A declaration as the SDK sent it, with field names spelled as wink spells them.

    The SDK serializes its models by field name (``parameters_json_schema``,
    ``any_of``, ``max_items``), which the API reads as well as the camelCase
    spelling; a JSON Schema in ``parametersJsonSchema`` goes out untouched.
    """
    return {
        camel(key): openapi_from_wire(value) if key == "parameters" else value
        for key, value in declaration.items()
    }


def openapi_from_wire(node: dict[str, Any]) -> dict[str, Any]:
    renamed: dict[str, Any] = {}
    for key, value in node.items():
        name = camel(key)
        if name == "properties":
            value = {prop: openapi_from_wire(schema) for prop, schema in value.items()}
        elif name == "items":
            value = openapi_from_wire(value)
        elif name == "anyOf":
            value = [openapi_from_wire(schema) for schema in value]
        renamed[name] = value
    return renamed


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word.title() for word in rest)


def sent_declarations(body: dict[str, Any]) -> list[dict[str, Any]]:
    (tool,) = body["tools"]
    return [from_genai_wire(declaration) for declaration in tool["functionDeclarations"]]


@pytest.fixture(scope="module")
def gemini_round() -> Round:
    endpoint = Endpoint(gemini_calls(MODEL_CALLS), gemini_reply([{"text": "Done."}]))
    client = genai_client(endpoint)
    executor = new_executor()
    config = {"tools": [{"functionDeclarations": gemini.tool_specs(executor.rendered_prompt)}]}
    question = {"role": "user", "parts": [{"text": "Which notes mention e?"}]}
    response = client.models.generate_content(
        model="gemini-test", contents=[question], config=config
    )
    calls = gemini.parse_tool_calls(response)
    results = execute(executor, calls)
    client.models.generate_content(
        model="gemini-test",
        contents=[
            question,
            response.candidates[0].content,
            gemini.tool_results_message(zip(calls, results, strict=True)),
        ],
        config=config,
    )
    return Round(endpoint, response, calls, results)


def test_gemini_request_carries_the_declarations(gemini_round: Round) -> None:
    specs = gemini.tool_specs(Prompt(template).render())
    assert sent_declarations(gemini_round.first) == specs


def test_gemini_response_object_parses_function_calls(gemini_round: Round) -> None:
    assert gemini_round.calls == [
        ToolCall("search", {"query": "e", "limit": None}, "fc_0"),
        ToolCall("get_note", {"id": "one"}, "fc_1"),
        ToolCall("get_note", {"id": 7}, "fc_2"),
    ]
    assert [r.success for r in gemini_round.results] == EXPECTED_SUCCESS


def test_gemini_sdk_function_calls_list_parses_like_the_response(gemini_round: Round) -> None:
    assert gemini.parse_tool_calls(gemini_round.reply.function_calls) == gemini_round.calls


def test_gemini_follow_up_carries_function_responses_with_errors(gemini_round: Round) -> None:
    assert gemini_round.follow_up["contents"][2] == {
        "role": "user",
        "parts": [
            {
                "functionResponse": {
                    "id": "fc_0",
                    "name": "search",
                    "response": {"output": SEARCH_OK},
                }
            },
            {
                "functionResponse": {
                    "id": "fc_1",
                    "name": "get_note",
                    "response": {"error": INVALID_ID},
                }
            },
            {
                "functionResponse": {
                    "id": "fc_2",
                    "name": "get_note",
                    "response": {"error": NO_NOTE},
                }
            },
        ],
    }


def test_gemini_calls_without_ids_are_answered_without_ids() -> None:
    reply = gemini_reply([{"functionCall": {"name": "search", "args": {"query": "milk"}}}])
    endpoint = Endpoint(reply, gemini_reply([{"text": "Done."}]))
    client = genai_client(endpoint)
    executor = new_executor()
    response = client.models.generate_content(model="gemini-test", contents="Find milk.")
    calls = gemini.parse_tool_calls(response)
    results = execute(executor, calls)
    client.models.generate_content(
        model="gemini-test",
        contents=[response.candidates[0].content, gemini.tool_message(calls[0], results[0])],
    )
    assert endpoint.bodies[1]["contents"][1] == {
        "role": "user",
        "parts": [
            {
                "functionResponse": {
                    "name": "search",
                    "response": {"output": '1 hits.\n\n["milk"]'},
                }
            }
        ],
    }


def test_gemini_a_call_without_args_runs_with_the_defaults() -> None:
    reply = gemini_reply([{"functionCall": {"id": "fc_0", "name": "count_notes"}}])
    endpoint = Endpoint(reply, gemini_reply([{"text": "Done."}]))
    client = genai_client(endpoint)
    executor = new_executor()
    response = client.models.generate_content(model="gemini-test", contents="How many?")
    calls = gemini.parse_tool_calls(response)
    results = execute(executor, calls)
    client.models.generate_content(
        model="gemini-test",
        contents=[response.candidates[0].content, gemini.tool_message(calls[0], results[0])],
    )
    assert calls == [ToolCall("count_notes", {}, "fc_0")]
    assert endpoint.bodies[1]["contents"][1]["parts"] == [
        {
            "functionResponse": {
                "id": "fc_0",
                "name": "count_notes",
                "response": {"output": "3 notes.\n\n3"},
            }
        }
    ]


@pytest.mark.parametrize(
    ("form", "exclude"), [("json_schema", frozenset()), ("openapi", RECURSIVE)]
)
def test_gemini_request_carries_every_corpus_declaration(form: Any, exclude: Any) -> None:
    endpoint = Endpoint(gemini_reply([{"text": "ok"}]))
    specs = gemini.tool_specs(corpus_tools(exclude), form=form)
    genai_client(endpoint).models.generate_content(
        model="gemini-test",
        contents="hi",
        config={"tools": [{"functionDeclarations": specs}]},
    )
    assert sent_declarations(endpoint.bodies[0]) == specs


# --- MCP ------------------------------------------------------------------------------


def notes_server(executor: ToolExecutor) -> Server[Any]:
    """An MCP server for the notes prompt: wink lists its tools and answers the calls."""

    async def list_tools(
        ctx: Any, params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListToolsResult:
        specs = mcp.tool_specs(executor.rendered_prompt)
        return mcp_types.ListToolsResult(tools=[mcp_types.Tool(**spec) for spec in specs])

    async def call_tool(
        ctx: Any, params: mcp_types.CallToolRequestParams
    ) -> mcp_types.CallToolResult:
        call = mcp.parse_tool_call(params)
        result = executor.execute(call)
        payload = mcp.call_tool_result(result, tool=TOOLS[call.name])
        return mcp_types.CallToolResult.model_validate(payload)

    return Server("wink-notes", on_list_tools=list_tools, on_call_tool=call_tool)


@dataclass(frozen=True)
class McpRound:
    """A listing and some calls through an MCP client, with the wire messages."""

    transport: RecordingTransport
    listed: Any
    returned: list[Any]

    def response(self, request_id: int) -> dict[str, Any]:
        """The JSON-RPC result the client received for ``request_id``."""
        (found,) = [m for m in self.transport.received_json() if m.get("id") == request_id]
        result: dict[str, Any] = found["result"]
        return result

    def requests(self, method: str) -> list[dict[str, Any]]:
        """The JSON-RPC requests of ``method`` the client sent."""
        return [m for m in self.transport.sent_json() if m.get("method") == method]


def mcp_session(server: Server[Any], calls: Iterable[tuple[str, Any]]) -> McpRound:
    """List the tools, then make ``calls``; a result the client rejects is kept as its error."""
    transport = RecordingTransport(server)
    returned: list[Any] = []

    async def run() -> Any:
        async with mcp_sdk.Client(transport, mode="legacy") as client:
            listed = await client.list_tools()
            for name, arguments in calls:
                try:
                    returned.append(await client.call_tool(name, arguments))
                except RuntimeError as rejected:  # the client's output schema check
                    returned.append(rejected)
            return listed

    listed = anyio.run(run)
    return McpRound(transport, listed, returned)


@pytest.fixture(scope="module")
def mcp_round() -> McpRound:
    return mcp_session(notes_server(new_executor()), MODEL_CALLS)


def test_mcp_tools_list_carries_the_specs_unchanged(mcp_round: McpRound) -> None:
    (listing,) = mcp_round.requests("tools/list")
    specs = mcp.tool_specs(Prompt(template).render())
    assert mcp_round.response(listing["id"])["tools"] == specs


def test_mcp_client_reads_input_and_output_schemas(mcp_round: McpRound) -> None:
    specs = mcp.tool_specs(Prompt(template).render())
    assert [
        (tool.name, tool.input_schema, tool.output_schema) for tool in mcp_round.listed.tools
    ] == [(spec["name"], spec["inputSchema"], spec["outputSchema"]) for spec in specs]


def test_mcp_tools_call_requests_parse_into_calls_with_ids(mcp_round: McpRound) -> None:
    requests = mcp_round.requests("tools/call")
    assert [mcp.parse_tool_call(request) for request in requests] == [
        ToolCall(name, arguments, str(request["id"]))
        for (name, arguments), request in zip(MODEL_CALLS, requests, strict=True)
    ]


def test_mcp_call_results_go_over_the_wire_as_built(mcp_round: McpRound) -> None:
    requests = mcp_round.requests("tools/call")
    assert [mcp_round.response(request["id"]) for request in requests] == [
        {
            "content": [{"type": "text", "text": SEARCH_OK}],
            "isError": False,
            "structuredContent": {"result": ["bread", "eggs"]},
        },
        {"content": [{"type": "text", "text": INVALID_ID}], "isError": True},
        {"content": [{"type": "text", "text": NO_NOTE}], "isError": True},
    ]


def test_mcp_client_accepts_the_structured_content_and_sees_failures(
    mcp_round: McpRound,
) -> None:
    assert [(r.is_error, r.structured_content) for r in mcp_round.returned] == [
        (False, {"result": ["bread", "eggs"]}),
        (True, None),
        (True, None),
    ]


def test_mcp_object_result_passes_the_client_output_schema_check() -> None:
    session = mcp_session(notes_server(new_executor()), [("get_note", {"id": 2})])
    (returned,) = session.returned
    assert (returned.is_error, returned.structured_content) == (
        False,
        {"id": 2, "title": "bread"},
    )


def test_mcp_a_call_without_arguments_runs_with_the_defaults() -> None:
    session = mcp_session(notes_server(new_executor()), [("count_notes", None)])
    (request,) = session.requests("tools/call")
    (returned,) = session.returned
    assert request["params"] == {"name": "count_notes"}
    assert (returned.is_error, returned.structured_content) == (False, {"result": 3})


CORPUS_RESULTS: dict[str, Any] = {
    "optional_field": Listing(names=["a"]),
    "non_none_default": ["a", "b"],
    "nested_described": Address(street="Main St 1", city="Springfield"),
    "discriminated_union": Dog(kind="dog", good=True),
    "recursive_model": TreeNode(value=1, children=[TreeNode(value=2)]),
    "same_model_twice": Point(x=1.5, y=-2),
    "free_form_dict": {"a": 1},
    "bare_list": "text",
    "decimal": Decimal("1.25"),
    "literal_ints": 3,
    "tuple": (1, "a"),
    "formats": Formats(
        when=datetime.datetime(2025, 1, 2, 3, 4, 5, tzinfo=datetime.UTC),
        ident=uuid.UUID(int=1),
        link=AnyUrl("https://example.org/a"),
    ),
    "empty_params": Listing(names=[]),
    "no_params": True,
    "title_property": TitleProperty(title="T", body="B"),
    "dataclass_params": Listing(names=["z"]),
}
"""A value of each corpus tool's result type (tools returning nothing are left out)."""


def corpus_server() -> Server[Any]:
    """An MCP server listing the corpus and answering each call with its sample result."""

    async def list_tools(
        ctx: Any, params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListToolsResult:
        specs = mcp.tool_specs(corpus_tools())
        return mcp_types.ListToolsResult(tools=[mcp_types.Tool(**spec) for spec in specs])

    async def call_tool(
        ctx: Any, params: mcp_types.CallToolRequestParams
    ) -> mcp_types.CallToolResult:
        result = ToolResult.ok(CORPUS_RESULTS[params.name])
        payload = mcp.call_tool_result(result, tool=CORPUS[params.name])
        return mcp_types.CallToolResult.model_validate(payload)

    return Server("wink-corpus", on_list_tools=list_tools, on_call_tool=call_tool)


@pytest.fixture(scope="module")
def corpus_returned() -> dict[str, Any]:
    session = mcp_session(corpus_server(), [(name, None) for name in CORPUS_RESULTS])
    return dict(zip(CORPUS_RESULTS, session.returned, strict=True))


@pytest.mark.parametrize("name", sorted(CORPUS_RESULTS))
def test_mcp_client_accepts_each_corpus_result_against_its_output_schema(
    name: str, corpus_returned: dict[str, Any]
) -> None:
    returned = corpus_returned[name]
    expected = mcp.call_tool_result(ToolResult.ok(CORPUS_RESULTS[name]), tool=CORPUS[name])
    assert not isinstance(returned, Exception), str(returned)
    assert (returned.is_error, returned.structured_content) == (
        False,
        expected["structuredContent"],
    )


class Secret(BaseModel):
    token: str


HIDDEN = Tool[Listing, Secret](name="hidden", description="Store a secret.")
MAYBE = Tool[Listing, Secret | None](name="maybe", description="Find a secret, if any.")
EDGE_RESULTS: dict[str, tuple[Tool[Any, Any], ToolResult[Any]]] = {
    "hidden": (
        HIDDEN,
        ToolResult(message="Stored.", value=Secret(token="s"), exclude_value_from_context=True),
    ),
    "maybe": (MAYBE, ToolResult(message="Nothing found.", value=None)),
}


def edge_server() -> Server[Any]:
    """An MCP server answering with an excluded value and with no value of an optional type."""

    async def list_tools(
        ctx: Any, params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListToolsResult:
        specs = mcp.tool_specs([HIDDEN, MAYBE])
        return mcp_types.ListToolsResult(tools=[mcp_types.Tool(**spec) for spec in specs])

    async def call_tool(
        ctx: Any, params: mcp_types.CallToolRequestParams
    ) -> mcp_types.CallToolResult:
        tool, result = EDGE_RESULTS[params.name]
        payload = mcp.call_tool_result(result, tool=tool)
        return mcp_types.CallToolResult.model_validate(payload)

    return Server("wink-edges", on_list_tools=list_tools, on_call_tool=call_tool)


def test_mcp_client_accepts_an_excluded_value_and_a_missing_optional_value() -> None:
    session = mcp_session(edge_server(), [("hidden", {"names": []}), ("maybe", {"names": []})])
    assert [
        (r.is_error, r.structured_content, [block.text for block in r.content])
        for r in session.returned
    ] == [
        (False, {"token": "s"}, ["Stored."]),
        (False, {"result": None}, ["Nothing found."]),
    ]
