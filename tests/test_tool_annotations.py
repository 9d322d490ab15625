"""Handler annotations that contradict ``Tool[Params, Result]`` are refused at construction."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import pytest

from wink import PromptValidationError, Tool, ToolContext, ToolResult


@dataclass(frozen=True)
class Params:
    query: str


@dataclass(frozen=True)
class SpecialParams(Params):
    strict: bool = False


@dataclass(frozen=True)
class OtherParams:
    text: str


@dataclass(frozen=True)
class Result:
    answer: str


@dataclass(frozen=True)
class SpecialResult(Result):
    score: float = 0.0


@dataclass(frozen=True)
class OtherResult:
    count: int


def mismatched_params(params: OtherParams, *, context: ToolContext) -> ToolResult[Result]:
    raise NotImplementedError


def mismatched_result(params: Params, *, context: ToolContext) -> ToolResult[OtherResult]:
    raise NotImplementedError


def not_a_tool_result(params: Params, *, context: ToolContext) -> Result:
    raise NotImplementedError


def takes_none(params: None, *, context: ToolContext) -> ToolResult[Result]:
    raise NotImplementedError


def takes_base(params: Params, *, context: ToolContext) -> ToolResult[SpecialResult]:
    raise NotImplementedError


def unannotated(params, *, context):  # type: ignore[no-untyped-def]  # unannotated on purpose
    raise NotImplementedError


def loosely_annotated(params: Any, *, context: ToolContext) -> ToolResult[Any]:
    raise NotImplementedError


def no_value(params: object, *, context: ToolContext) -> ToolResult[None]:
    raise NotImplementedError


def test_params_annotation_of_another_type_is_refused() -> None:
    with pytest.raises(PromptValidationError) as raised:
        Tool[Params, Result](name="search", description="Search.", handler=mismatched_params)
    assert str(raised.value) == (
        "tool 'search': handler 'mismatched_params' takes params: OtherParams, but the tool "
        "is Tool[Params, Result]; annotate it params: Params"
    )


def test_result_annotation_of_another_type_is_refused() -> None:
    with pytest.raises(PromptValidationError) as raised:
        Tool[Params, Result](name="search", description="Search.", handler=mismatched_result)
    assert str(raised.value) == (
        "tool 'search': handler 'mismatched_result' is annotated to return "
        "ToolResult[OtherResult], but the tool is Tool[Params, Result]; annotate it -> "
        "ToolResult[Result]"
    )


def test_return_annotation_that_is_not_a_tool_result_is_refused() -> None:
    with pytest.raises(PromptValidationError) as raised:
        Tool[Params, Result](name="search", description="Search.", handler=not_a_tool_result)
    assert str(raised.value) == (
        "tool 'search': handler 'not_a_tool_result' is annotated to return Result, but "
        "handlers return a ToolResult; annotate it -> ToolResult[Result]"
    )


def test_params_annotation_none_on_a_tool_with_params_is_refused() -> None:
    with pytest.raises(PromptValidationError) as raised:
        Tool[Params, Result](name="search", description="Search.", handler=takes_none)
    assert str(raised.value) == (
        "tool 'search': handler 'takes_none' takes params: None, but the tool is "
        "Tool[Params, Result]; annotate it params: Params"
    )


def test_params_of_a_tool_without_params_annotated_with_a_class_is_refused() -> None:
    with pytest.raises(PromptValidationError) as raised:
        Tool[None, Result](name="search", description="Search.", handler=takes_base)
    assert str(raised.value) == (
        "tool 'search': handler 'takes_base' takes params: Params, but the tool is "
        "Tool[None, Result]; annotate it params: None"
    )


def test_base_class_params_and_subclass_results_are_accepted() -> None:
    tool = Tool[SpecialParams, Result](name="search", description="Search.", handler=takes_base)
    assert tool.handler is takes_base


def test_missing_loose_and_valueless_annotations_are_accepted() -> None:
    for handler in (unannotated, loosely_annotated, no_value):
        tool = Tool[Params, Result](name="search", description="Search.", handler=handler)
        assert tool.handler is handler


def test_annotations_of_partials_and_bound_methods_are_checked() -> None:
    class Handlers:
        def search(self, params: OtherParams, *, context: ToolContext) -> ToolResult[Result]:
            raise NotImplementedError

    def configured(params: OtherParams, *, context: ToolContext, limit: int) -> ToolResult[Result]:
        raise NotImplementedError

    for handler in (Handlers().search, functools.partial(configured, limit=3)):
        with pytest.raises(PromptValidationError) as raised:
            Tool[Params, Result](name="search", description="Search.", handler=handler)
        assert "takes params: OtherParams, but the tool is Tool[Params, Result]" in str(
            raised.value
        )


def test_annotations_naming_types_that_cannot_be_resolved_are_left_unchecked() -> None:
    @dataclass(frozen=True)
    class Local:
        text: str

    def handler(params: Local, *, context: ToolContext) -> ToolResult[Local]:
        raise NotImplementedError

    tool = Tool[Params, Result](name="search", description="Search.", handler=handler)
    assert tool.handler is handler
