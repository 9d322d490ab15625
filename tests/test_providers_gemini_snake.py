"""Gemini's ``case="snake"`` form: the google-genai SDK's dict keys, and the same request."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from pydantic import BaseModel, Field

from wink import Tool, ToolResult
from wink.providers import gemini
from wink.runtime.call import ToolCall


class Filter(BaseModel):
    maxLength: Annotated[str, Field(max_length=8, description="A property named like a keyword")]
    tags: Annotated[list[str], Field(min_length=1, max_length=3)]
    limit: int | str


FILTER = Tool[Filter, None](name="filter", description="Filter notes.")
OK: tuple[ToolCall, ToolResult[Any]] = (
    ToolCall("filter", {}, "fc1"),
    ToolResult.ok(["a"], message="1 hit."),
)
FAILED: tuple[ToolCall, ToolResult[Any]] = (ToolCall("filter", {}), ToolResult.error("Locked."))


def test_snake_case_declarations_rename_the_schema_key_and_keep_the_schema() -> None:
    assert gemini.tool_specs([FILTER], case="snake") == [
        {
            "name": "filter",
            "description": "Filter notes.",
            "parameters_json_schema": FILTER.params_schema,
        }
    ]


def test_snake_case_openapi_schema_renames_keywords_and_keeps_property_names() -> None:
    [spec] = gemini.tool_specs([FILTER], form="openapi", case="snake")
    assert spec["parameters"] == {
        "properties": {
            "maxLength": {
                "description": "A property named like a keyword",
                "max_length": 8,
                "type": "STRING",
            },
            "tags": {"items": {"type": "STRING"}, "max_items": 3, "min_items": 1, "type": "ARRAY"},
            "limit": {"any_of": [{"type": "INTEGER"}, {"type": "STRING"}]},
        },
        "required": ["maxLength", "tags", "limit"],
        "type": "OBJECT",
    }


def test_snake_case_specs_are_cached_read_only_and_the_camel_ones_unchanged() -> None:
    first = gemini.tool_specs([FILTER], form="openapi", case="snake")
    assert gemini.tool_specs([FILTER], form="openapi", case="snake")[0] is first[0]
    with pytest.raises(TypeError):
        first[0]["name"] = "other"  # type: ignore[typeddict-readonly-mutated, unused-ignore]  # proving it is read-only
    camel = gemini.tool_specs([FILTER], form="openapi")[0]
    assert sorted(camel) == ["description", "name", "parameters"]
    assert camel["parameters"]["properties"]["tags"]["maxItems"] == 3


def test_snake_case_tool_messages_carry_function_response_parts() -> None:
    assert gemini.tool_message(*OK, case="snake") == {
        "role": "user",
        "parts": [
            {
                "function_response": {
                    "name": "filter",
                    "response": {"output": '1 hit.\n\n["a"]'},
                    "id": "fc1",
                }
            }
        ],
    }
    assert gemini.function_response_part(*FAILED, case="snake") == {
        "function_response": {"name": "filter", "response": {"error": "Locked."}}
    }
    assert gemini.tool_results_message([OK, FAILED], case="snake") == {
        "role": "user",
        "parts": [
            gemini.function_response_part(*OK, case="snake"),
            gemini.function_response_part(*FAILED, case="snake"),
        ],
    }


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: gemini.tool_specs([FILTER], case="kebab"),  # type: ignore[call-overload]  # the wrong value under test
            "gemini.tool_specs: case must be 'camel' or 'snake', got 'kebab'",
        ),
        (
            lambda: gemini.tool_message(*OK, case="Snake"),  # type: ignore[call-overload]  # the wrong value under test
            "gemini.tool_message: case must be 'camel' or 'snake', got 'Snake'",
        ),
        (
            lambda: gemini.tool_results_message([OK], case=""),  # type: ignore[call-overload]  # the wrong value under test
            "gemini.tool_results_message: case must be 'camel' or 'snake', got ''",
        ),
        (
            lambda: gemini.function_response_part(*OK, case=None),  # type: ignore[call-overload]  # the wrong value under test
            "gemini.function_response_part: case must be 'camel' or 'snake', got None",
        ),
    ],
)
def test_an_unknown_case_is_refused_with_the_choices(call: Any, message: str) -> None:
    with pytest.raises(ValueError) as raised:
        call()
    assert str(raised.value) == message


@pytest.mark.parametrize("form", ["json_schema", "openapi"])
def test_the_sdk_accepts_the_snake_form_and_sends_the_same_request_as_the_camel_form(
    form: gemini.Form,
) -> None:
    genai = pytest.importorskip("google.genai")
    from sdk_mocks import Endpoint

    reply = {"candidates": [{"content": {"role": "model", "parts": [{"text": "Done."}]}}]}
    endpoint = Endpoint(reply, reply)
    options = genai.types.HttpOptions(
        base_url="http://gemini.test", httpx_client=endpoint.http_client()
    )
    client = genai.Client(api_key="test-key", http_options=options)
    question = {"role": "user", "parts": [{"text": "Filter."}]}
    answer = client.models.generate_content(
        model="gemini-test",
        contents=[question, gemini.tool_results_message([OK, FAILED], case="snake")],
        config={
            "tools": [
                {"function_declarations": gemini.tool_specs([FILTER], form=form, case="snake")}
            ]
        },
    )
    client.models.generate_content(
        model="gemini-test",
        contents=[question, gemini.tool_results_message([OK, FAILED])],
        config={"tools": [{"functionDeclarations": gemini.tool_specs([FILTER], form=form)}]},
    )
    assert answer.text == "Done."
    snake_body, camel_body = endpoint.bodies
    assert snake_body == camel_body
    assert snake_body["contents"][1] == {
        "role": "user",
        "parts": [
            {
                "functionResponse": {
                    "id": "fc1",
                    "name": "filter",
                    "response": {"output": '1 hit.\n\n["a"]'},
                }
            },
            {"functionResponse": {"name": "filter", "response": {"error": "Locked."}}},
        ],
    }
    # The SDK writes the declaration as its model dumps it: snake_case keys, the
    # schema's content as given (its property names untouched).
    [declaration] = snake_body["tools"][0]["functionDeclarations"]
    expected = gemini.tool_specs([FILTER], form=form, case="snake")[0]
    assert declaration == expected
