"""End to end: a strict OpenAI spec, a model's call with nulls, and the handler's defaults.

Strict mode makes every property required and the optional ones nullable, so a
model sends ``null`` to mean "the default". The executor parses with the tool's
contract, which hands the handler the declared defaults, never ``None``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import jsonschema
from pydantic import BaseModel

from wink import MarkdownSection, Prompt, PromptTemplate, Tool, ToolContext, ToolResult
from wink.providers import openai
from wink.runtime import Session, ToolExecutor


class Paging(BaseModel):
    size: int = 20
    cursor: str | None = None


class Query(BaseModel):
    text: str
    limit: int = 5
    tags: list[str] = ["all"]
    paging: Paging = Paging()


@dataclass
class Move:
    target: str
    speed: float = 1.5
    via: list[str] = field(default_factory=lambda: ["road"])


received: list[Any] = []


def remember(params: Any, *, context: ToolContext) -> ToolResult[None]:
    received.append(params)
    return ToolResult(message="ok")


query_tool = Tool[Query, None](name="query", description="Query.", handler=remember)
move_tool = Tool[Move, None](name="move", description="Move.", handler=remember)


def executor() -> ToolExecutor:
    section = MarkdownSection(title="Tools", template="Use them.", tools=[query_tool, move_tool])
    template = PromptTemplate(ns="tests", key="nulls", name="nulls", sections=[section])
    return ToolExecutor(prompt=Prompt(template), session=Session())


def strict_call(tool_name: str, arguments: dict[str, Any]) -> Any:
    """Check ``arguments`` fit the strict spec, run the call, return what the handler got."""
    functions = {
        spec["function"]["name"]: spec["function"]
        for spec in openai.tool_specs([query_tool, move_tool], strict=True)
    }
    function = functions[tool_name]
    assert function["strict"] is True
    assert sorted(function["parameters"]["required"]) == sorted(arguments)
    jsonschema.validate(arguments, function["parameters"])
    completion_message = {
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": tool_name, "arguments": json.dumps(arguments)},
            }
        ]
    }
    (call,) = openai.parse_tool_calls(completion_message)
    received.clear()
    result = executor().execute(call)
    assert result.success, result.message
    return received[0]


def test_nulls_from_a_strict_call_give_the_handler_the_declared_defaults() -> None:
    params = strict_call("query", {"text": "x", "limit": None, "tags": None, "paging": None})
    assert params == Query(text="x", limit=5, tags=["all"], paging=Paging(size=20, cursor=None))


def test_nulls_inside_a_nested_model_give_its_defaults() -> None:
    arguments = {"text": "x", "limit": 3, "tags": [], "paging": {"size": None, "cursor": None}}
    params = strict_call("query", arguments)
    assert params == Query(text="x", limit=3, tags=[], paging=Paging(size=20, cursor=None))


def test_a_null_for_a_default_factory_field_calls_the_factory() -> None:
    params = strict_call("move", {"target": "home", "speed": None, "via": None})
    assert params == Move(target="home", speed=1.5, via=["road"])


def test_values_sent_in_a_strict_call_reach_the_handler_unchanged() -> None:
    params = strict_call("move", {"target": "home", "speed": 3.0, "via": ["rail"]})
    assert params == Move(target="home", speed=3.0, via=["rail"])


def test_a_mutable_default_is_not_shared_between_calls() -> None:
    first = strict_call("query", {"text": "x", "limit": None, "tags": None, "paging": None})
    first.tags.append("changed")
    second = strict_call("query", {"text": "y", "limit": None, "tags": None, "paging": None})
    assert second.tags == ["all"]
