"""``wink validate``: recorded tool calls checked against contracts and JSON Schemas."""

from __future__ import annotations

import io
import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from wink.cli import main
from wink.cli.validate import CallChecker, validate_lines

SHOP = Path(__file__).parent / "test_cli_fixtures" / "shop.py"
TOOLS = f"{SHOP}:tools"


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("WINK_PROVIDER", "WINK_STRICT", "WINK_SCHEMA_DIR", "WINK_TARGETS"):
        monkeypatch.delenv(name, raising=False)


def write_calls(path: Path, *documents: object) -> str:
    lines = [d if isinstance(d, str) else json.dumps(d) for d in documents]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def test_valid_calls_pass_with_a_summary_and_no_findings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = write_calls(
        tmp_path / "calls.jsonl",
        {"name": "search", "arguments": {"query": "tea"}},
        {"name": "catalog", "arguments": {"filters": {"kind": "book"}, "tags": ["x"]}},
    )
    assert main(["validate", TOOLS, calls]) == 0
    captured = capsys.readouterr()
    assert captured.out == (
        "checked 2 tool calls in 1 file: 0 invalid, 0 unknown tools, 0 malformed lines\n"
    )
    assert captured.err == ""


def test_bad_payload_is_reported_with_file_line_tool_and_field_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = write_calls(
        tmp_path / "calls.jsonl",
        {"name": "search", "arguments": {"query": "tea"}},
        {"name": "catalog", "arguments": {"filters": {"kind": "poem"}}},
    )
    assert main(["validate", TOOLS, calls]) == 1
    assert capsys.readouterr().err == (
        f"{calls}:2: catalog: filters.kind: input should be 'book' or 'film' (got \"poem\")\n"
    )


def test_a_line_with_several_calls_names_the_bad_call_by_its_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    message = {
        "role": "assistant",
        "tool_calls": [
            {"id": f"call_{n}", "type": "function", "function": {"name": "search", "arguments": a}}
            for n, a in enumerate(['{"query": "tea"}', '{"query": 3}', '{"q": "x"}'])
        ],
    }
    calls = write_calls(tmp_path / "calls.jsonl", message)
    assert main(["validate", TOOLS, calls]) == 1
    assert capsys.readouterr().err.splitlines() == [
        f"{calls}:1: search (call call_1): query: input should be a valid string (got 3)",
        f"{calls}:1: search (call call_2): query: required field is missing",
        f"{calls}:1: search (call call_2): q: unknown field (allowed: query, limit)",
    ]


def test_a_line_with_several_calls_without_ids_names_the_bad_call_by_its_position(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    content = {
        "parts": [
            {"functionCall": {"name": "search", "args": {"query": "tea"}}},
            {"functionCall": {"name": "serch", "args": {}}},
        ]
    }
    calls = write_calls(tmp_path / "calls.jsonl", content)
    assert main(["validate", TOOLS, calls]) == 1
    assert capsys.readouterr().err == (
        f"{calls}:1: serch (call #2): unknown tool (known: catalog, search)\n"
    )


def test_arguments_given_as_json_text_are_parsed_from_the_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = write_calls(
        tmp_path / "calls.jsonl", {"name": "search", "arguments": '{"query": "tea", "limit": "5"}'}
    )
    assert main(["validate", TOOLS, calls]) == 1
    assert capsys.readouterr().err == (
        f'{calls}:1: search: limit: input should be a valid integer (got "5")\n'
    )


def test_every_problem_of_a_payload_gets_its_own_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = write_calls(
        tmp_path / "calls.jsonl", {"name": "search", "arguments": {"limit": 1, "page": 2}}
    )
    assert main(["validate", TOOLS, calls]) == 1
    assert capsys.readouterr().err.splitlines() == [
        f"{calls}:1: search: query: required field is missing",
        f"{calls}:1: search: page: unknown field (allowed: query, limit)",
    ]


def test_null_for_a_field_with_a_default_is_accepted_as_strict_tools_send_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = write_calls(
        tmp_path / "calls.jsonl",
        {"name": "search", "arguments": {"query": "tea", "limit": None}},
        {"name": "catalog", "arguments": {"filters": {"kind": "film", "year": None}, "tags": None}},
    )
    assert main(["validate", TOOLS, calls]) == 0
    assert capsys.readouterr().err == ""


NESTED = """
from dataclasses import dataclass, field

from pydantic import BaseModel

from wink import Tool


class Inner(BaseModel):
    a: int = 5


class Outer(BaseModel):
    inner: Inner
    maybe: Inner | None = None


@dataclass
class Route:
    via: list[str] = field(default_factory=lambda: ["road"])


tools = [
    Tool[Outer, None](name="outer", description="Nested."),
    Tool[Route, None](name="route", description="Route."),
]
"""


def test_null_for_a_default_inside_a_nullable_model_is_accepted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "nested.py").write_text(NESTED, encoding="utf-8")
    calls = write_calls(
        tmp_path / "calls.jsonl",
        {"name": "outer", "arguments": {"inner": {"a": None}, "maybe": {"a": None}}},
        {"name": "route", "arguments": {"via": None}},
    )
    assert main(["validate", f"{tmp_path / 'nested.py'}:tools", calls]) == 0
    assert capsys.readouterr().err == ""


def test_null_for_a_required_field_is_still_rejected(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = write_calls(tmp_path / "calls.jsonl", {"name": "search", "arguments": {"query": None}})
    assert main(["validate", TOOLS, calls]) == 1
    assert capsys.readouterr().err == (
        f"{calls}:1: search: query: input should be a valid string (got null)\n"
    )


def test_a_payload_the_contract_accepts_but_the_schema_rejects_is_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = write_calls(tmp_path / "calls.jsonl", {"name": "note", "arguments": {"text": "abcd"}})
    assert main(["validate", f"{SHOP}:loose", calls]) == 1
    assert capsys.readouterr().err == (
        f"{calls}:1: note: text: the JSON Schema rejects it: 'abcd' is too long\n"
    )


def test_unknown_tool_name_is_reported_with_the_known_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = write_calls(tmp_path / "calls.jsonl", {"name": "serch", "arguments": {}})
    assert main(["validate", TOOLS, calls]) == 1
    captured = capsys.readouterr()
    assert captured.err == f"{calls}:1: serch: unknown tool (known: catalog, search)\n"
    assert captured.out == (
        "checked 1 tool calls in 1 file: 0 invalid, 1 unknown tool, 0 malformed lines\n"
    )


def test_malformed_line_is_reported_and_the_rest_still_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = write_calls(
        tmp_path / "calls.jsonl",
        '{"name": "search", "arguments": {',
        {"name": "search", "arguments": {"query": 3}},
    )
    assert main(["validate", TOOLS, calls]) == 1
    assert capsys.readouterr().err.splitlines() == [
        f"{calls}:1: malformed line: not valid JSON (Expecting property name enclosed in "
        "double quotes at column 34)",
        f"{calls}:2: search: query: input should be a valid string (got 3)",
    ]


@pytest.mark.parametrize("document", [{"name": "listing"}, {"name": "listing", "arguments": None}])
def test_a_call_without_arguments_is_rejected_as_the_executor_rejects_it(
    document: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = write_calls(tmp_path / "calls.jsonl", document)
    assert main(["validate", f"{SHOP}:all_optional", calls]) == 1
    assert capsys.readouterr().err == (
        f"{calls}:1: listing: <root>: input should be an object (got null)\n"
    )


def test_a_tool_that_takes_no_arguments_accepts_every_empty_payload(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = write_calls(
        tmp_path / "calls.jsonl",
        {"name": "ping"},
        {"name": "ping", "arguments": None},
        {"name": "ping", "arguments": ""},
        {"name": "ping", "arguments": {}},
    )
    assert main(["validate", f"{SHOP}:all_optional", calls]) == 0
    assert capsys.readouterr().out == (
        "checked 4 tool calls in 1 file: 0 invalid, 0 unknown tools, 0 malformed lines\n"
    )


def test_arguments_json_cannot_carry_are_that_call_s_problem_and_the_rest_still_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = write_calls(
        tmp_path / "calls.jsonl",
        '{"name": "search", "arguments": {"query": "\\ud800"}}',
        {"name": "search", "arguments": {"query": 3}},
    )
    assert main(["validate", TOOLS, calls]) == 1
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [
        f"{calls}:1: search: <root>: the arguments cannot be read: PydanticSerializationError: "
        "Error serializing to JSON: UnicodeEncodeError: 'utf-8' codec can't encode character "
        "'\\ud800' in position 0: surrogates not allowed",
        f"{calls}:2: search: query: input should be a valid string (got 3)",
    ]
    assert captured.out == (
        "checked 2 tool calls in 1 file: 2 invalid, 0 unknown tools, 0 malformed lines\n"
    )


def test_line_that_is_not_an_object_is_malformed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = write_calls(tmp_path / "calls.jsonl", "42")
    assert main(["validate", TOOLS, calls]) == 1
    assert capsys.readouterr().err == (
        f"{calls}:1: malformed line: expected a JSON object, got a number\n"
    )


def test_object_of_no_known_shape_is_malformed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = write_calls(tmp_path / "calls.jsonl", {"tool": "search"})
    assert main(["validate", TOOLS, calls]) == 1
    assert capsys.readouterr().err == (
        f"{calls}:1: malformed line: expected a tool call ({{name, arguments}}), an OpenAI, "
        "Anthropic or Gemini message, or a request/response body; got keys ['tool']\n"
    )


@pytest.mark.parametrize(
    ("document", "reason"),
    [
        ({"choices": [5]}, "choices[0]: expected an object, got a number"),
        (
            {"role": "assistant", "tool_calls": [{"type": "function", "function": {"name": ""}}]},
            "tool_calls[0].function: expected a non-empty string 'name', got ''",
        ),
        (
            {"role": "assistant", "tool_calls": [{"function": {"name": "search"}}, 5]},
            "tool_calls[1]: expected an object, got a number",
        ),
        ({"role": "assistant", "tool_calls": "x"}, "tool_calls: expected a list, got a string"),
        ({"choices": [{"message": "hi"}]}, "choices[0].message: expected an object, got a string"),
        ({"candidates": [5]}, "candidates[0]: expected an object, got a number"),
        (
            {"candidates": [{"content": "x"}]},
            "candidates[0].content: expected an object, got a string",
        ),
    ],
)
def test_a_provider_payload_of_the_wrong_shape_is_malformed_and_the_rest_still_checked(
    document: dict[str, Any], reason: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = write_calls(tmp_path / "calls.jsonl", document, {"name": "search", "arguments": {}})
    assert main(["validate", TOOLS, calls]) == 1
    assert capsys.readouterr().err.splitlines() == [
        f"{calls}:1: malformed line: {reason}",
        f"{calls}:2: search: query: required field is missing",
    ]


def test_invalid_utf8_line_is_malformed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "calls.jsonl"
    path.write_bytes(b'{"name": "search", "arguments": {"query": "\xff"}}\n')
    assert main(["validate", TOOLS, str(path)]) == 1
    assert capsys.readouterr().err.startswith(f"{path}:1: malformed line: not valid")


def test_blank_lines_are_skipped_but_counted_for_line_numbers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = write_calls(tmp_path / "calls.jsonl", "", "   ", {"name": "nope"})
    assert main(["validate", TOOLS, calls]) == 1
    assert capsys.readouterr().err == f"{calls}:3: nope: unknown tool (known: catalog, search)\n"


SEARCH_ARGS = '{"query": 1}'
SHAPES = {
    "openai-chat-message": {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "search", "arguments": SEARCH_ARGS},
            }
        ],
    },
    "openai-chat-completion": {
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "tool_calls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "search", "arguments": SEARCH_ARGS},
                        }
                    ],
                },
            }
        ],
    },
    "openai-chat-request": {
        "model": "m",
        "messages": [
            {"role": "user", "content": "find tea"},
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "search", "arguments": SEARCH_ARGS},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "[]"},
        ],
    },
    "openai-responses-item": {
        "type": "function_call",
        "call_id": "c1",
        "name": "search",
        "arguments": SEARCH_ARGS,
    },
    "openai-responses-response": {
        "object": "response",
        "output": [
            {"type": "reasoning", "summary": []},
            {"type": "function_call", "call_id": "c1", "name": "search", "arguments": SEARCH_ARGS},
        ],
    },
    "openai-responses-request": {
        "model": "m",
        "input": [
            {"role": "user", "content": "find tea"},
            {"type": "function_call", "call_id": "c1", "name": "search", "arguments": SEARCH_ARGS},
            {"type": "function_call_output", "call_id": "c1", "output": "[]"},
        ],
    },
    "anthropic-message": {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Searching."},
            {"type": "tool_use", "id": "t1", "name": "search", "input": {"query": 1}},
        ],
    },
    "anthropic-response": {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "t1", "name": "search", "input": {"query": 1}}],
        "stop_reason": "tool_use",
    },
    "anthropic-request": {
        "model": "m",
        "max_tokens": 10,
        "messages": [
            {"role": "user", "content": "find tea"},
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "t1", "name": "search", "input": {"query": 1}}
                ],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "[]"}],
            },
        ],
    },
    "gemini-response": {
        "candidates": [
            {
                "content": {
                    "role": "model",
                    "parts": [{"functionCall": {"name": "search", "args": {"query": 1}}}],
                }
            }
        ]
    },
    "gemini-request": {
        "contents": [
            {"role": "user", "parts": [{"text": "find tea"}]},
            {
                "role": "model",
                "parts": [{"functionCall": {"name": "search", "args": {"query": 1}}}],
            },
        ]
    },
    "mcp-tools-call": {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "search", "arguments": {"query": 1}},
    },
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_calls_are_found_in_each_recorded_log_shape(
    shape: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = write_calls(tmp_path / "calls.jsonl", SHAPES[shape])
    assert main(["validate", TOOLS, calls]) == 1
    captured = capsys.readouterr()
    assert captured.err == f"{calls}:1: search: query: input should be a valid string (got 1)\n"
    assert captured.out.startswith("checked 1 tool calls in 1 file: 1 invalid,")


def test_messages_without_calls_yield_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = write_calls(
        tmp_path / "calls.jsonl",
        {"role": "user", "content": "hello"},
        {"name": "search", "arguments": {"query": "tea"}},
    )
    assert main(["validate", TOOLS, calls]) == 0
    assert capsys.readouterr().out == (
        "checked 1 tool calls in 1 file: 0 invalid, 0 unknown tools, 0 malformed lines\n"
    )


NO_CALLS = {
    "openai-function-call-output": {"type": "function_call_output", "call_id": "c1", "output": "r"},
    "openai-reasoning-item": {"type": "reasoning", "id": "rs_1", "summary": []},
    "openai-output-text-part": {"type": "output_text", "text": "hi", "annotations": []},
    "openai-responses-request-with-text-input": {"model": "m", "input": "find tea"},
    "anthropic-tool-result-block": {"type": "tool_result", "tool_use_id": "t1", "content": "r"},
    "anthropic-text-block": {"type": "text", "text": "hi"},
    "gemini-function-response-part": {
        "functionResponse": {"name": "search", "response": {"output": "x"}}
    },
    "gemini-text-part": {"text": "hi"},
    "mcp-response": {"jsonrpc": "2.0", "id": 7, "result": {"content": [], "isError": False}},
    "mcp-notification": {"jsonrpc": "2.0", "method": "notifications/initialized"},
    "mcp-other-request": {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
}
NOT_FUNCTION_CALLS = {
    "openai-custom-tool-call": {
        "type": "custom_tool_call",
        "call_id": "c1",
        "name": "search",
        "input": "free text",
    },
    "openai-mcp-call": {
        "type": "mcp_call",
        "id": "mcp_1",
        "server_label": "shop",
        "name": "search",
        "arguments": '{"query": 1}',
    },
    "openai-web-search-call": {"type": "web_search_call", "id": "ws_1", "status": "completed"},
    "anthropic-server-tool-use": {
        "type": "server_tool_use",
        "id": "s1",
        "name": "web_search",
        "input": {"query": "tea"},
    },
}


@pytest.mark.parametrize("shape", sorted(NO_CALLS))
def test_items_without_calls_yield_nothing(
    shape: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = write_calls(
        tmp_path / "calls.jsonl", NO_CALLS[shape], {"name": "search", "arguments": {"query": "a"}}
    )
    assert main(["validate", TOOLS, calls]) == 0
    assert capsys.readouterr() == (
        "checked 1 tool calls in 1 file: 0 invalid, 0 unknown tools, 0 malformed lines\n",
        "",
    )


@pytest.mark.parametrize("shape", sorted(NOT_FUNCTION_CALLS))
def test_calls_no_wink_tool_answers_yield_nothing(
    shape: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = write_calls(
        tmp_path / "calls.jsonl",
        NOT_FUNCTION_CALLS[shape],
        {"name": "search", "arguments": {"query": "a"}},
    )
    assert main(["validate", TOOLS, calls]) == 0
    assert capsys.readouterr() == (
        "checked 1 tool calls in 1 file: 0 invalid, 0 unknown tools, 0 malformed lines\n",
        "",
    )


def test_a_typed_call_of_no_provider_shape_is_still_read_as_a_plain_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = write_calls(
        tmp_path / "calls.jsonl", {"type": "tool_call", "name": "search", "arguments": {}}
    )
    assert main(["validate", TOOLS, calls]) == 1
    assert capsys.readouterr().err == f"{calls}:1: search: query: required field is missing\n"


def test_a_stream_chunk_is_malformed_and_the_rest_still_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chunk = {
        "object": "chat.completion.chunk",
        "choices": [
            {
                "index": 0,
                "delta": {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "search", "arguments": '{"limit": 1}'},
                        }
                    ]
                },
            }
        ],
    }
    calls = write_calls(tmp_path / "calls.jsonl", chunk, {"name": "search", "arguments": {}})
    assert main(["validate", TOOLS, calls]) == 1
    assert capsys.readouterr().err.splitlines() == [
        f"{calls}:1: malformed line: choices[0]: a stream chunk (a delta, not a message): "
        "assemble the deltas first",
        f"{calls}:2: search: query: required field is missing",
    ]


def test_a_file_with_no_calls_passes_with_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = write_calls(tmp_path / "calls.jsonl", {"role": "user", "content": "hello"})
    assert main(["validate", TOOLS, calls]) == 0
    assert capsys.readouterr().err == "warning: no tool calls found\n"


def test_several_files_are_checked_and_summed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = write_calls(tmp_path / "a.jsonl", {"name": "search", "arguments": {"query": "a"}})
    second = write_calls(tmp_path / "b.jsonl", {"name": "search", "arguments": {}})
    assert main(["validate", TOOLS, first, second]) == 1
    captured = capsys.readouterr()
    assert captured.err == f"{second}:1: search: query: required field is missing\n"
    assert captured.out == (
        "checked 2 tool calls in 2 files: 1 invalid, 0 unknown tools, 0 malformed lines\n"
    )


def test_dash_reads_calls_from_stdin(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    stdin = io.TextIOWrapper(io.BytesIO(b'{"name": "search", "arguments": {}}\n'))
    monkeypatch.setattr("sys.stdin", stdin)
    assert main(["validate", TOOLS, "-"]) == 1
    assert capsys.readouterr().err == "-:1: search: query: required field is missing\n"


def test_missing_calls_file_is_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["validate", TOOLS, "nowhere.jsonl"]) == 1
    assert capsys.readouterr().err == "wink: calls file 'nowhere.jsonl' does not exist\n"


def test_a_directory_is_not_a_calls_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "logs").mkdir()
    assert main(["validate", TOOLS, "logs"]) == 1
    assert capsys.readouterr().err == "wink: calls file 'logs' is a directory\n"


def test_calls_are_read_from_a_named_pipe(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pipe = tmp_path / "calls.pipe"
    os.mkfifo(pipe)

    def feed() -> None:
        with open(pipe, "wb") as writer:
            writer.write(b'{"name": "search", "arguments": {"query": "tea"}}\n')

    feeder = threading.Thread(target=feed)
    feeder.start()
    try:
        assert main(["validate", TOOLS, str(pipe)]) == 0
    finally:
        # Had the pipe not been read, the writer would wait for a reader forever.
        os.close(os.open(pipe, os.O_RDONLY | os.O_NONBLOCK))
        feeder.join()
    assert capsys.readouterr().out.startswith("checked 1 tool calls in 1 file: 0 invalid,")


def test_an_unreadable_calls_file_is_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = write_calls(tmp_path / "calls.jsonl", {"name": "search"})
    os.chmod(calls, 0)
    if os.access(calls, os.R_OK):
        pytest.skip("this user reads files whatever their mode (root)")
    assert main(["validate", TOOLS, calls]) == 1
    assert capsys.readouterr().err == (
        f"wink: cannot read calls file {calls!r}: Permission denied\n"
    )


def test_validate_needs_a_calls_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", TOOLS]) == 2
    assert capsys.readouterr().err == "wink: the following arguments are required: CALLS\n"


def test_bad_target_is_one_line_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    calls = write_calls(tmp_path / "calls.jsonl", {"name": "search"})
    assert main(["validate", f"{SHOP}:number", calls]) == 1
    assert capsys.readouterr().err == (
        f"wink: target '{SHOP}:number' is a int; expected a PromptTemplate, Prompt, "
        "RenderedPrompt, Section, Tool or a sequence of tools\n"
    )


def test_lines_are_checked_as_they_are_read() -> None:
    from wink.cli.targets import load_target, tools_of

    checker = CallChecker(tools_of(load_target(TOOLS), TOOLS))
    reported: list[str] = []

    def lines() -> Iterator[bytes]:
        yield b'{"name": "nope"}\n'
        # The first line's finding is out before the second line is even read.
        assert reported == ["calls:1: nope: unknown tool (known: catalog, search)"]
        yield b'{"name": "search", "arguments": {"query": "tea"}}\n'

    tally = validate_lines(lines(), "calls", checker, reported.append)
    assert (tally.calls, tally.unknown, tally.invalid) == (2, 1, 0)


def test_the_location_of_a_call_is_spelled_out_only_for_calls_with_a_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from wink.cli import validate as validate_module

    labels: list[str] = []
    original = validate_module._call_label

    def counting(call: Any, position: int, count: int) -> str:
        labels.append(original(call, position, count))
        return labels[-1]

    monkeypatch.setattr(validate_module, "_call_label", counting)
    calls = write_calls(
        tmp_path / "calls.jsonl",
        {"name": "search", "arguments": {"query": "a"}},
        {"name": "search", "arguments": {"query": 3}},
        {"name": "search", "arguments": '{"query": "b"}'},
    )
    assert main(["validate", TOOLS, calls]) == 1
    assert labels == ["search"]
    assert capsys.readouterr().err == (
        f"{calls}:2: search: query: input should be a valid string (got 3)\n"
    )


@pytest.mark.parametrize(
    "line",
    [
        b'{"a": [1.0000000000000002, 1e400, -0.0, 5e-324, NaN]}',
        b'{"a": 1, "a": 2}',
        b'"\\ud800"',
        b"\xef\xbb\xbf{}",
        b"[" * 300 + b"]" * 300,
        b'{"big": 123456789012345678901234567890}',
    ],
    ids=["floats", "repeated key", "lone surrogate", "bom", "deep", "big int"],
)
def test_lines_are_read_exactly_as_json_loads_reads_them(line: bytes) -> None:
    from wink.cli.validate import _read_json

    assert repr(_read_json(line)) == repr(json.loads(line))


@pytest.mark.parametrize("line", [b'{"a": 1,}', b'"\xff"', b'"a\x01"', b"01"])
def test_an_unreadable_line_fails_with_json_loads_own_error(line: bytes) -> None:
    from wink.cli.validate import _read_json

    with pytest.raises(ValueError) as expected:
        json.loads(line)
    with pytest.raises(ValueError) as raised:
        _read_json(line)
    assert type(raised.value) is type(expected.value)
    assert str(raised.value) == str(expected.value)
