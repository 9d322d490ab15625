"""Where policies may be attached, and that their names are unique within a prompt."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from wink import (
    MarkdownSection,
    Prompt,
    PromptTemplate,
    PromptValidationError,
    Tool,
    ToolContext,
    ToolResult,
)
from wink.policy import PolicyDecision, ReadBeforeWritePolicy, SequentialDependencyPolicy
from wink.runtime import Session, ToolCall, ToolExecutor


def step(params: None, *, context: ToolContext) -> ToolResult[None]:
    return ToolResult(message="Done.")


def step_tool(name: str) -> Tool[None, None]:
    return Tool[None, None](name=name, description=f"The {name} step.", handler=step)


LINT, BUILD, TEST, DEPLOY = (step_tool(name) for name in ("lint", "build", "test", "deploy"))


def test_prerequisite_in_a_sibling_section_is_refused_saying_where_to_attach() -> None:
    policy = SequentialDependencyPolicy(dependencies={"deploy": frozenset({"test", "build"})})
    template = PromptTemplate(
        ns="tests",
        key="siblings",
        sections=[
            MarkdownSection(title="Checks", tools=[TEST, BUILD]),
            MarkdownSection(title="Release", tools=[DEPLOY], policies=[policy]),
        ],
    )
    with pytest.raises(PromptValidationError) as raised:
        ToolExecutor(prompt=Prompt(template), session=Session())
    assert str(raised.value) == (
        "prompt 'siblings', policy attached to section release: SequentialDependencyPolicy "
        "'sequential_dependency' would never see 'build', 'test' succeed, so 'deploy' could "
        "never run: a policy records only the tools of the section it is attached to and of "
        "that section's children (it governs deploy); attach it to a section holding build, "
        "deploy and test (a parent of their sections), or to the prompt"
    )


def test_prerequisite_recorded_when_the_policy_sits_on_a_common_parent() -> None:
    policy = SequentialDependencyPolicy(dependencies={"deploy": frozenset({"test"})})
    template = PromptTemplate(
        ns="tests",
        key="parent",
        sections=[
            MarkdownSection(
                title="Work",
                policies=[policy],
                children=[
                    MarkdownSection(title="Checks", tools=[TEST]),
                    MarkdownSection(title="Release", tools=[DEPLOY]),
                ],
            )
        ],
    )
    executor = ToolExecutor(prompt=Prompt(template), session=Session())
    assert executor.execute(ToolCall("deploy")).message == (
        "Tool 'deploy' cannot run yet: call test successfully first "
        "(policy 'sequential_dependency')."
    )
    assert executor.execute(ToolCall("test")).success
    assert executor.execute(ToolCall("deploy")).success


def test_two_different_policies_with_one_name_are_refused_naming_both_places() -> None:
    first = SequentialDependencyPolicy(dependencies={"build": frozenset({"lint"})})
    second = SequentialDependencyPolicy(dependencies={"deploy": frozenset({"test"})})
    with pytest.raises(PromptValidationError) as raised:
        PromptTemplate(
            ns="tests",
            key="names",
            sections=[
                MarkdownSection(title="Build", tools=[LINT, BUILD], policies=[first]),
                MarkdownSection(title="Ship", tools=[TEST, DEPLOY], policies=[second]),
            ],
        )
    assert str(raised.value) == (
        "two different policies are named 'sequential_dependency' "
        "(SequentialDependencyPolicy attached to section build, SequentialDependencyPolicy "
        "attached to section ship); a policy's name keys its state in the session, so give "
        "each a distinct name"
    )


@dataclass(frozen=True)
class Named:
    name: str

    def check(self, tool: Any, params: Any, *, context: Any) -> PolicyDecision:
        return PolicyDecision.allow()

    def on_result(self, *args: Any, **kwargs: Any) -> None:
        pass


def test_a_section_policy_and_a_prompt_policy_with_one_name_are_refused() -> None:
    with pytest.raises(PromptValidationError) as raised:
        PromptTemplate(
            ns="tests",
            key="names",
            sections=[MarkdownSection(title="Tools", tools=[LINT], policies=[Named("audit")])],
            policies=[ReadBeforeWritePolicy(name="audit")],
        )
    assert str(raised.value) == (
        "two different policies are named 'audit' (Named attached to section tools, "
        "ReadBeforeWritePolicy attached to the prompt); a policy's name keys its state in "
        "the session, so give each a distinct name"
    )


def test_one_policy_attached_twice_or_equal_policies_share_a_name_freely() -> None:
    shared = ReadBeforeWritePolicy()
    template = PromptTemplate(
        ns="tests",
        key="shared",
        sections=[
            MarkdownSection(title="A", tools=[LINT], policies=[shared]),
            MarkdownSection(title="B", tools=[BUILD], policies=[shared]),
            MarkdownSection(title="C", tools=[TEST], policies=[ReadBeforeWritePolicy()]),
        ],
    )
    assert [tool.name for tool in template.tools] == ["lint", "build", "test"]


def test_distinct_names_keep_two_sequential_policies_apart() -> None:
    template = PromptTemplate(
        ns="tests",
        key="names",
        sections=[
            MarkdownSection(
                title="Build",
                tools=[LINT, BUILD],
                policies=[
                    SequentialDependencyPolicy(
                        dependencies={"build": frozenset({"lint"})}, name="build_order"
                    )
                ],
            ),
            MarkdownSection(
                title="Ship",
                tools=[TEST, DEPLOY],
                policies=[
                    SequentialDependencyPolicy(
                        dependencies={"deploy": frozenset({"test"})}, name="ship_order"
                    )
                ],
            ),
        ],
    )
    executor = ToolExecutor(prompt=Prompt(template), session=Session())
    assert executor.execute(ToolCall("test")).success
    assert executor.execute(ToolCall("deploy")).success
    assert not executor.execute(ToolCall("build")).success
