"""Several filesystems bound at once: each under its own key, all rolled back together.

``context.filesystem`` is the one bound under ``Filesystem``, or the only one bound;
with several and none under ``Filesystem`` it is ambiguous, and asking says so.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Protocol

import pytest

from wink import (
    Binding,
    Filesystem,
    HostFilesystem,
    InMemoryFilesystem,
    MarkdownSection,
    Prompt,
    PromptTemplate,
    ResourceRegistry,
    Scope,
    Tool,
    ToolContext,
    ToolResult,
)
from wink.contrib.vfs import VfsToolsSection
from wink.resources import AmbiguousResourceError, BindingError
from wink.runtime import Session, ToolCall, ToolExecutor

AMBIGUOUS_MEMORY_AND_HOST = (
    "Filesystem (context.filesystem) is ambiguous: 2 bound filesystems could answer, under "
    "InMemoryFilesystem and HostFilesystem, and none is bound under Filesystem itself; ask "
    "for one by its key, as in context.resources.get(InMemoryFilesystem), or bind the one "
    "meant under Filesystem"
)


class ReferenceDocs(InMemoryFilesystem):
    """A user's key for a read-only reference tree, next to the workspace."""


class Notes(InMemoryFilesystem):
    """Another user's key for a filesystem of its own."""


class ReferenceTree(Filesystem, Protocol):
    """A protocol-typed key: any filesystem, bound as the reference tree."""


def executor_of(*tools: Tool[Any, Any], resources: Any) -> ToolExecutor:
    template = PromptTemplate(
        ns="tests", key="several-fs", sections=[MarkdownSection(title="Tools", tools=tools)]
    )
    return ToolExecutor(prompt=Prompt(template, resources=resources), session=Session())


def run(executor: ToolExecutor, name: str, **arguments: Any) -> ToolResult[Any]:
    return executor.execute(ToolCall(name, json.dumps(arguments)))


# --- binding and reaching each filesystem ------------------------------------------------


def read_both(params: None, *, context: ToolContext) -> ToolResult[None]:
    reference = context.resources.get(ReferenceDocs).read("guide.md")
    workspace = context.require_filesystem().read("draft.md")
    return ToolResult(message=f"{reference} / {workspace}")


def test_a_reference_tree_binds_next_to_the_workspace_and_each_answers_its_key() -> None:
    workspace = InMemoryFilesystem(files={"draft.md": "draft"})
    reference = ReferenceDocs(files={"guide.md": "guide"})
    tool = Tool[None, None](name="read_both", description="R.", handler=read_both)
    executor = executor_of(tool, resources={Filesystem: workspace, ReferenceDocs: reference})
    assert run(executor, "read_both") == ToolResult(message="guide / draft")


def test_filesystem_is_the_one_bound_under_filesystem_when_several_are_bound() -> None:
    workspace, reference = InMemoryFilesystem(), ReferenceDocs()
    registry = ResourceRegistry.from_mapping({ReferenceDocs: reference, Filesystem: workspace})
    assert registry.filesystem is workspace
    assert registry.get(Filesystem) is workspace
    assert registry.get(ReferenceDocs) is reference
    assert registry.filesystem_choices == (Filesystem,)


def test_a_protocol_typed_key_holds_its_own_filesystem(tmp_path: Path) -> None:
    workspace, reference = InMemoryFilesystem(), HostFilesystem(tmp_path)
    registry = ResourceRegistry.of(
        Binding.instance(Filesystem, workspace), Binding.instance(ReferenceTree, reference)
    )
    assert registry.get(ReferenceTree) is reference
    assert registry.filesystem is workspace
    # A class that only one of them belongs to reaches that one.
    assert registry.get(HostFilesystem) is reference
    assert registry.get(InMemoryFilesystem) is workspace


def test_two_distinct_classes_bind_each_reached_by_its_class(tmp_path: Path) -> None:
    memory, host = InMemoryFilesystem(), HostFilesystem(tmp_path)
    registry = ResourceRegistry.from_mapping({InMemoryFilesystem: memory, HostFilesystem: host})
    assert registry.get(InMemoryFilesystem) is memory
    assert registry.get(HostFilesystem) is host
    assert registry.filesystem_choices == (InMemoryFilesystem, HostFilesystem)


def test_one_instance_under_two_keys_is_one_filesystem() -> None:
    shared = ReferenceDocs()
    registry = ResourceRegistry.from_mapping({InMemoryFilesystem: shared, ReferenceDocs: shared})
    assert registry.filesystem_choices == (InMemoryFilesystem,)
    assert registry.filesystem is shared


# --- context.filesystem with one bound: as before ----------------------------------------


def describe_filesystem(params: None, *, context: ToolContext) -> ToolResult[None]:
    filesystem = context.require_filesystem()
    assert context.filesystem is filesystem
    return ToolResult(message=f"{type(filesystem).__name__} at {filesystem.mount_point}")


@pytest.mark.parametrize(
    "resources",
    [
        {Filesystem: InMemoryFilesystem("/one")},
        {InMemoryFilesystem: InMemoryFilesystem("/one")},
        {ReferenceDocs: ReferenceDocs("/one")},
    ],
    ids=["under Filesystem", "under its class", "under a user's key"],
)
def test_with_one_filesystem_bound_context_filesystem_is_it(resources: Any) -> None:
    tool = Tool[None, None](name="describe", description="D.", handler=describe_filesystem)
    name = type(next(iter(resources.values()))).__name__
    assert run(executor_of(tool, resources=resources), "describe") == ToolResult(
        message=f"{name} at /one"
    )


# --- context.filesystem with several and none under Filesystem: ambiguous ----------------


def ask_filesystem(params: None, *, context: ToolContext) -> ToolResult[None]:
    context.filesystem  # noqa: B018 - asking is what raises
    return ToolResult(message="answered")


def ask_required(params: None, *, context: ToolContext) -> ToolResult[None]:
    context.require_filesystem()
    return ToolResult(message="answered")


@pytest.mark.parametrize("handler", [ask_filesystem, ask_required])
def test_context_filesystem_with_two_bound_and_none_under_filesystem_names_the_keys(
    tmp_path: Path, handler: Any
) -> None:
    tool = Tool[None, None](name="ask", description="A.", handler=handler)
    resources = {InMemoryFilesystem: InMemoryFilesystem(), HostFilesystem: HostFilesystem(tmp_path)}
    result = run(executor_of(tool, resources=resources), "ask")
    assert (result.success, result.message) == (
        False,
        f"Tool 'ask' raised AmbiguousResourceError: {AMBIGUOUS_MEMORY_AND_HOST}",
    )


def test_ambiguity_is_raised_only_when_the_filesystem_is_asked_for(tmp_path: Path) -> None:
    registry = ResourceRegistry.from_mapping(
        {InMemoryFilesystem: InMemoryFilesystem(), HostFilesystem: HostFilesystem(tmp_path)}
    )
    for ask in (
        lambda: registry.filesystem,
        lambda: registry.get(Filesystem),
        lambda: registry.get_optional(Filesystem),
    ):
        with pytest.raises(AmbiguousResourceError) as raised:
            ask()
        assert str(raised.value) == AMBIGUOUS_MEMORY_AND_HOST


def test_a_class_that_two_bound_filesystems_belong_to_is_ambiguous() -> None:
    registry = ResourceRegistry.from_mapping(
        {Filesystem: ReferenceDocs(), ReferenceDocs: ReferenceDocs(), Notes: Notes()}
    )
    with pytest.raises(AmbiguousResourceError) as raised:
        registry.get(InMemoryFilesystem)
    assert str(raised.value) == (
        "InMemoryFilesystem is ambiguous: 3 bound filesystems could answer, under Filesystem, "
        "ReferenceDocs and Notes, and none is bound under InMemoryFilesystem itself; ask for "
        "one by its key, as in context.resources.get(Filesystem), or bind the one meant under "
        "InMemoryFilesystem"
    )


def test_the_ambiguity_message_names_at_most_four_keys() -> None:
    keys = [type(f"Tree{index}", (InMemoryFilesystem,), {}) for index in range(6)]
    registry = ResourceRegistry.of(*(Binding(key, lambda _, key=key: key()) for key in keys))
    with pytest.raises(AmbiguousResourceError) as raised:
        registry.get(Filesystem)
    assert str(raised.value).startswith(
        "Filesystem (context.filesystem) is ambiguous: 6 bound filesystems could answer, under "
        "Tree0, Tree1, Tree2, Tree3 and 2 more, and none is bound under Filesystem itself; "
    )


def test_a_tool_call_scope_sees_the_same_ambiguity() -> None:
    registry = ResourceRegistry.of(
        Binding(ReferenceDocs, lambda _: ReferenceDocs(), Scope.TOOL_CALL),
        Binding(Notes, lambda _: Notes()),
    )
    with registry.tool_call_scope() as call, pytest.raises(AmbiguousResourceError) as raised:
        call.filesystem  # noqa: B018 - asking is what raises
    assert str(raised.value).startswith(
        "Filesystem (context.filesystem) is ambiguous: 2 bound filesystems could answer, under "
        "ReferenceDocs and Notes, "
    )


# --- rollback covers every bound filesystem ----------------------------------------------


def write_both(params: dict[str, bool], *, context: ToolContext) -> ToolResult[None]:
    context.require_filesystem().write("draft.md", "changed")
    context.resources.get(HostFilesystem).write("log.txt", "changed")
    context.resources.get(Notes).write("todo.md", "changed")
    if params["fail"]:
        raise RuntimeError("failed after writing to every filesystem")
    return ToolResult(message="written")


def test_a_failed_call_rolls_back_its_writes_to_every_bound_filesystem(tmp_path: Path) -> None:
    (tmp_path / "log.txt").write_text("before")
    workspace = InMemoryFilesystem(files={"draft.md": "before"})
    tool = Tool[dict[str, bool], None](name="write_both", description="W.", handler=write_both)
    session = Session()
    template = PromptTemplate(
        ns="tests", key="rollback", sections=[MarkdownSection(title="T", tools=[tool])]
    )
    prompt = Prompt(template).bind(
        resources={
            Filesystem: workspace,
            HostFilesystem: HostFilesystem(tmp_path),
            # Lazily built: the failed call is the one that builds it.
            Notes: Binding(Notes, lambda _: Notes(files={"todo.md": "before"})),
        }
    )
    executor = ToolExecutor(prompt=prompt, session=session)
    failed = run(executor, "write_both", fail=True)
    assert failed.message == (
        "Tool 'write_both' raised RuntimeError: failed after writing to every filesystem"
    )
    notes = prompt.resources.for_session(session).get(Notes)
    assert [
        workspace.read("draft.md"),
        (tmp_path / "log.txt").read_text(),
        notes.read("todo.md"),
    ] == ["before", "before", "before"]
    assert run(executor, "write_both", fail=False).success
    assert [
        workspace.read("draft.md"),
        (tmp_path / "log.txt").read_text(),
        notes.read("todo.md"),
    ] == ["changed", "changed", "changed"]


# --- VfsToolsSection: refused at bind when its filesystem is ambiguous ---------------------


VFS_TEMPLATE = PromptTemplate(ns="tests", key="vfs-several", sections=[VfsToolsSection()])


def test_vfs_with_two_filesystems_and_none_under_filesystem_is_refused_at_bind(
    tmp_path: Path,
) -> None:
    resources = {InMemoryFilesystem: InMemoryFilesystem(), HostFilesystem: HostFilesystem(tmp_path)}
    expected = (
        "section 'vfs' works on context.filesystem, but 2 filesystems are bound, under "
        "InMemoryFilesystem and HostFilesystem, and none under Filesystem; bind the one its "
        "tools should use under Filesystem (resources={Filesystem: workspace, ...})"
    )
    with pytest.raises(BindingError) as raised:
        Prompt(VFS_TEMPLATE).bind(resources=resources)
    assert str(raised.value) == expected
    with pytest.raises(BindingError) as raised:
        Prompt(VFS_TEMPLATE, resources=ResourceRegistry.from_mapping(resources))
    assert str(raised.value) == expected


def test_vfs_tools_work_on_the_filesystem_bound_under_filesystem() -> None:
    workspace = InMemoryFilesystem()
    reference = ReferenceDocs(files={"guide.md": "guide"})
    prompt = Prompt(VFS_TEMPLATE).bind(resources={Filesystem: workspace, ReferenceDocs: reference})
    executor = ToolExecutor(prompt=prompt, session=Session())
    assert run(executor, "write_file", path="notes.md", content="hello").success
    assert (workspace.list(), reference.list()) == (["notes.md"], ["guide.md"])
