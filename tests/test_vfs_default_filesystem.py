"""The VFS section installs a filesystem of its own: one per session, rolled back per call."""

from __future__ import annotations

import json
from typing import Any

import pytest

from wink import (
    Binding,
    Filesystem,
    InMemoryFilesystem,
    MarkdownSection,
    Prompt,
    PromptTemplate,
    Session,
    Tool,
    ToolContext,
    ToolResult,
)
from wink.contrib.vfs import VfsToolsSection
from wink.runtime import ToolCall, ToolExecutor


def scribble(params: None, *, context: ToolContext) -> ToolResult[None]:
    context.require_filesystem().write("scratch.txt", "half-done")
    raise RuntimeError("crashed after writing")


SCRIBBLE = Tool[None, None](name="scribble", description="Write, then fail.", handler=scribble)
TEMPLATE = PromptTemplate(
    ns="tests",
    key="vfs-default",
    sections=[VfsToolsSection(), MarkdownSection(title="Other", tools=[SCRIBBLE])],
)


def run(executor: ToolExecutor, name: str, **arguments: Any) -> ToolResult[Any]:
    return executor.execute(ToolCall(name, json.dumps(arguments)))


def test_without_a_bound_filesystem_the_tools_work_on_the_sections_own() -> None:
    session = Session()
    prompt = Prompt(TEMPLATE)
    executor = ToolExecutor(prompt=prompt, session=session)
    assert run(executor, "write_file", path="notes.md", content="hello").success
    assert run(executor, "read_file", path="notes.md").render() == "hello"
    default = prompt.resources.for_session(session).get(Filesystem)
    assert isinstance(default, InMemoryFilesystem)
    assert default.read("notes.md") == "hello"


def test_sessions_sharing_a_prompt_have_their_own_files() -> None:
    prompt = Prompt(TEMPLATE)
    first, second = Session(), Session()
    run(ToolExecutor(prompt=prompt, session=first), "write_file", path="a.txt", content="1")
    other = ToolExecutor(prompt=prompt, session=second)
    assert run(other, "read_file", path="a.txt").message == (
        "read_file failed: no such file: 'a.txt'."
    )
    assert run(other, "write_file", path="a.txt", content="2").success
    assert [
        prompt.resources.for_session(session).get(Filesystem).read("a.txt")
        for session in (first, second)
    ] == ["1", "2"]


def test_a_failed_call_rolls_back_only_its_own_sessions_files() -> None:
    prompt = Prompt(TEMPLATE)
    first, second = Session(), Session()
    run(
        ToolExecutor(prompt=prompt, session=second),
        "write_file",
        path="scratch.txt",
        content="kept",
    )
    failed = ToolExecutor(prompt=prompt, session=first).execute(ToolCall("scribble"))
    assert failed.message == "Tool 'scribble' raised RuntimeError: crashed after writing"
    assert prompt.resources.for_session(first).get(Filesystem).list() == []
    assert prompt.resources.for_session(second).get(Filesystem).read("scratch.txt") == "kept"


def test_read_before_write_governs_the_default_filesystem() -> None:
    policy_session = Session()
    shared = Prompt(TEMPLATE)
    ToolExecutor(prompt=shared, session=policy_session)
    shared.resources.for_session(policy_session).get(Filesystem).write("config.yaml", "a: 1")
    guarded = ToolExecutor(prompt=shared, session=policy_session)
    assert run(guarded, "write_file", path="config.yaml", content="b").message == (
        "File 'config.yaml' already exists and has not been read: call read_file on it "
        "before overwriting it (policy 'read_before_write')."
    )


@pytest.mark.parametrize(
    "resources",
    [
        {InMemoryFilesystem: InMemoryFilesystem(files={"mine.txt": "x"})},
        {Filesystem: InMemoryFilesystem(files={"mine.txt": "x"})},
        {
            InMemoryFilesystem: Binding(
                InMemoryFilesystem, lambda _: InMemoryFilesystem(files={"mine.txt": "x"})
            )
        },
    ],
)
def test_a_filesystem_bound_under_any_key_replaces_the_default(resources: Any) -> None:
    prompt = Prompt(TEMPLATE).bind(resources=resources)
    assert len(prompt.resources.bound_types) == 1  # the default was not added
    executor = ToolExecutor(prompt=prompt, session=Session())
    assert run(executor, "read_file", path="mine.txt").render() == "x"
