"""File tools: reading, writing, editing, listing and deleting through the executor."""

from __future__ import annotations

import json
import typing
from dataclasses import dataclass
from typing import Any

import pytest

from wink import (
    Filesystem,
    InMemoryFilesystem,
    PolicyDecision,
    Prompt,
    PromptTemplate,
    ReadBeforeWritePolicy,
    ResourceRegistry,
    Session,
    Tool,
    ToolContext,
    ToolResult,
)
from wink.contrib.vfs import (
    DirectoryListing,
    FileContent,
    FileDeleted,
    FileEdited,
    FileWritten,
    VfsToolsSection,
    edit_file_tool,
)
from wink.prompt import Enabled, MarkdownSection
from wink.providers import openai
from wink.runtime import ToolCall, ToolExecutor

DENIED = (
    "File 'notes/a.txt' already exists and has not been read: call read_file on it before "
    "overwriting it (policy 'read_before_write')."
)


def workspace(
    files: dict[str, str] | None = None, section: VfsToolsSection | None = None
) -> tuple[InMemoryFilesystem, ToolExecutor]:
    filesystem = InMemoryFilesystem(
        files={"notes/a.txt": "one\ntwo\nthree\n"} if files is None else files
    )
    template = PromptTemplate(ns="tests", key="vfs", sections=[section or VfsToolsSection()])
    prompt = Prompt(template).bind(resources={Filesystem: filesystem})
    return filesystem, ToolExecutor(prompt=prompt, session=Session())


def run(executor: ToolExecutor, name: str, **arguments: Any) -> ToolResult[Any]:
    return executor.execute(ToolCall(name, json.dumps(arguments), call_id="call_1"))


def model_text(result: ToolResult[Any]) -> str:
    """What the model reads for ``result``."""
    return str(openai.tool_message(ToolCall("any", None, "call_1"), result)["content"])


def test_read_file_returns_the_text_under_its_normalised_path() -> None:
    _, executor = workspace()
    result = run(executor, "read_file", path="./notes/../notes/a.txt")
    assert result.value == FileContent("notes/a.txt", "one\ntwo\nthree\n")
    assert model_text(result) == "Content of notes/a.txt (3 lines):\n\none\ntwo\nthree\n"


def test_read_file_accepts_an_absolute_path_under_the_mount_point() -> None:
    _, executor = workspace()
    result = run(executor, "read_file", path="/mnt/notes/a.txt")
    assert result.value == FileContent("notes/a.txt", "one\ntwo\nthree\n")


def test_read_of_a_missing_file_fails_naming_the_path() -> None:
    _, executor = workspace()
    result = run(executor, "read_file", path="nope.txt")
    assert (result.success, result.message) == (
        False,
        "read_file failed: no such file: 'nope.txt'.",
    )


def test_write_file_creates_a_new_file_without_reading_it_first() -> None:
    filesystem, executor = workspace()
    result = run(executor, "write_file", path="drafts/b.txt", content="hi\nthere")
    assert result.value == FileWritten("drafts/b.txt", created=True, lines=2)
    assert model_text(result) == "File written.\n\ndrafts/b.txt: created, 2 lines"
    assert filesystem.read("drafts/b.txt") == "hi\nthere"


def test_write_to_an_existing_file_not_read_is_denied_and_changes_nothing() -> None:
    filesystem, executor = workspace()
    result = run(executor, "write_file", path="notes/a.txt", content="new")
    assert (result.success, result.message) == (False, DENIED)
    assert filesystem.read("notes/a.txt") == "one\ntwo\nthree\n"


def test_write_after_reading_replaces_the_file() -> None:
    filesystem, executor = workspace()
    run(executor, "read_file", path="notes/a.txt")
    result = run(executor, "write_file", path="/mnt/notes/a.txt", content="new")
    assert result.value == FileWritten("notes/a.txt", created=False, lines=1)
    assert filesystem.read("notes/a.txt") == "new"


def test_edit_file_replaces_the_one_occurrence_and_reports_its_line() -> None:
    filesystem, executor = workspace()
    run(executor, "read_file", path="notes/a.txt")
    result = run(executor, "edit_file", path="notes/a.txt", old_text="two\n", new_text="2\n2b\n")
    assert result.value == FileEdited("notes/a.txt", line=2, lines=4)
    assert model_text(result) == "File edited.\n\nnotes/a.txt: text replaced at line 2, now 4 lines"
    assert filesystem.read("notes/a.txt") == "one\n2\n2b\nthree\n"


def test_edit_of_a_file_not_read_is_denied() -> None:
    filesystem, executor = workspace()
    result = run(executor, "edit_file", path="notes/a.txt", old_text="two", new_text="2")
    assert (result.success, result.message) == (False, DENIED)
    assert filesystem.read("notes/a.txt") == "one\ntwo\nthree\n"


def test_edit_with_missing_old_text_fails_and_changes_nothing() -> None:
    filesystem, executor = workspace()
    run(executor, "read_file", path="notes/a.txt")
    result = run(executor, "edit_file", path="notes/a.txt", old_text="Two", new_text="2")
    assert (result.success, result.message) == (
        False,
        "edit_file failed: old_text does not occur in notes/a.txt; read the file and copy the "
        "text exactly, spaces and line breaks included.",
    )
    assert filesystem.read("notes/a.txt") == "one\ntwo\nthree\n"


def test_edit_with_ambiguous_old_text_fails_and_changes_nothing() -> None:
    filesystem, executor = workspace()
    run(executor, "read_file", path="notes/a.txt")
    result = run(executor, "edit_file", path="notes/a.txt", old_text="o", new_text="0")
    assert (result.success, result.message) == (
        False,
        "edit_file failed: old_text occurs 2 times in notes/a.txt; include more of the "
        "surrounding text so that it occurs exactly once.",
    )
    assert filesystem.read("notes/a.txt") == "one\ntwo\nthree\n"


def test_edit_with_old_text_occurring_overlapped_fails_and_changes_nothing() -> None:
    filesystem, executor = workspace({"a.txt": "aaa"})
    run(executor, "read_file", path="a.txt")
    result = run(executor, "edit_file", path="a.txt", old_text="aa", new_text="b")
    assert (result.success, result.message) == (
        False,
        "edit_file failed: old_text occurs 2 times in a.txt; include more of the "
        "surrounding text so that it occurs exactly once.",
    )
    assert filesystem.read("a.txt") == "aaa"


def test_write_to_a_directory_fails_saying_it_is_a_directory() -> None:
    _, executor = workspace()
    result = run(executor, "write_file", path="notes", content="x")
    assert (result.success, result.message) == (
        False,
        "write_file failed: is a directory, not a file: 'notes'.",
    )


def test_edit_with_empty_old_text_fails() -> None:
    _, executor = workspace()
    run(executor, "read_file", path="notes/a.txt")
    result = run(executor, "edit_file", path="notes/a.txt", old_text="", new_text="x")
    assert (result.success, result.message) == (
        False,
        "edit_file failed: old_text is empty; give the exact text to replace.",
    )


def test_edit_of_a_missing_file_fails() -> None:
    _, executor = workspace()
    result = run(executor, "edit_file", path="nope.txt", old_text="a", new_text="b")
    assert result.message == "edit_file failed: no such file: 'nope.txt'."


def test_list_directory_lists_the_root_by_default_with_directories_marked() -> None:
    _, executor = workspace({"b.txt": "", "notes/a.txt": ""})
    result = run(executor, "list_directory")
    assert result.value == DirectoryListing(".", ("b.txt", "notes/"))
    assert model_text(result) == "Entries of . (2):\n\nb.txt\nnotes/"


def test_list_directory_lists_a_subdirectory() -> None:
    _, executor = workspace()
    result = run(executor, "list_directory", path="/mnt/notes/")
    assert result.value == DirectoryListing("notes", ("a.txt",))


def test_list_of_an_empty_directory_says_so() -> None:
    _, executor = workspace()
    run(executor, "read_file", path="notes/a.txt")
    run(executor, "delete_file", path="notes/a.txt")
    result = run(executor, "list_directory", path="notes")
    assert model_text(result) == "Directory notes is empty."


def test_list_of_a_file_fails() -> None:
    _, executor = workspace()
    result = run(executor, "list_directory", path="notes/a.txt")
    assert result.message == "list_directory failed: is a file, not a directory: 'notes/a.txt'."


def test_delete_file_removes_the_file() -> None:
    filesystem, executor = workspace()
    result = run(executor, "delete_file", path="notes/a.txt")
    assert result.value == FileDeleted("notes/a.txt")
    assert model_text(result) == "File deleted.\n\nnotes/a.txt: deleted"
    assert not filesystem.exists("notes/a.txt")


def test_delete_of_a_directory_fails_and_keeps_it() -> None:
    filesystem, executor = workspace()
    result = run(executor, "delete_file", path="notes")
    assert result.message == "delete_file failed: is a directory, not a file: 'notes'."
    assert filesystem.list() == ["notes/"]


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("../secret.txt", "path '../secret.txt' escapes the filesystem root"),
        ("/etc/passwd", "path '/etc/passwd' is outside the mount point '/mnt'"),
    ],
)
def test_path_leaving_the_root_is_a_failed_result(path: str, reason: str) -> None:
    filesystem, executor = workspace()
    result = run(executor, "write_file", path=path, content="x")
    assert (result.success, result.message) == (False, f"write_file failed: {reason}.")
    assert filesystem.list() == ["notes/"]


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("read_file", {"path": "a.txt"}),
        ("write_file", {"path": "a.txt", "content": ""}),
        ("edit_file", {"path": "a.txt", "old_text": "a", "new_text": "b"}),
        ("list_directory", {}),
        ("delete_file", {"path": "a.txt"}),
    ],
)
def test_every_tool_fails_clearly_when_a_given_registry_has_no_filesystem(
    name: str, arguments: Any
) -> None:
    template = PromptTemplate(ns="tests", key="vfs", sections=[VfsToolsSection()])
    # A registry passed in is used as it is: the section's default is not added to it.
    prompt = Prompt(template).bind(resources=ResourceRegistry.of())
    executor = ToolExecutor(prompt=prompt, session=Session())
    result = run(executor, name, **arguments)
    assert (result.success, result.message) == (
        False,
        f"{name} failed: no Filesystem is bound to the prompt; bind one with "
        "prompt.bind(resources={Filesystem: InMemoryFilesystem()}).",
    )


@dataclass(frozen=True)
class FailsAfterWriting:
    """A policy whose bookkeeping fails after a write, so the executor rolls it back."""

    name: str = "fails_after_writing"

    def check(self, tool: Tool[Any, Any], params: Any, *, context: ToolContext) -> PolicyDecision:
        return PolicyDecision.allow()

    def on_result(
        self, tool: Tool[Any, Any], params: Any, result: ToolResult[Any], *, context: ToolContext
    ) -> None:
        raise RuntimeError("bookkeeping failed")


def test_write_of_a_call_that_fails_later_is_rolled_back() -> None:
    filesystem, executor = workspace(section=VfsToolsSection(policies=[FailsAfterWriting()]))
    result = run(executor, "write_file", path="notes/a.txt", content="new")
    assert result.success is False
    assert filesystem.read("notes/a.txt") == "one\ntwo\nthree\n"


def test_section_without_policies_lets_unread_files_be_overwritten() -> None:
    filesystem, executor = workspace(section=VfsToolsSection(policies=()))
    result = run(executor, "write_file", path="notes/a.txt", content="new")
    assert result.value == FileWritten("notes/a.txt", created=False, lines=1)
    assert filesystem.read("notes/a.txt") == "new"


def test_section_applies_read_before_write_by_default() -> None:
    assert VfsToolsSection().policies == (ReadBeforeWritePolicy(),)


def test_section_tells_the_model_to_read_first_only_when_that_is_enforced() -> None:
    rule = "- Read a file before you change it"
    assert rule in VfsToolsSection().render_body(None)
    assert rule not in VfsToolsSection(policies=()).render_body(None)


@dataclass(frozen=True)
class Mode:
    edits: bool


def test_section_enabled_may_be_a_predicate_over_the_inherited_params() -> None:
    section = VfsToolsSection(enabled=lambda mode: mode.edits)
    assert typing.get_type_hints(VfsToolsSection.__init__)["enabled"] == Enabled
    tree = PromptTemplate(
        ns="tests", key="mode", sections=[MarkdownSection[Mode](title="Work", children=[section])]
    )
    shown = Prompt(tree).bind(Mode(edits=True)).render()
    hidden = Prompt(tree).bind(Mode(edits=False)).render()
    assert [tool.name for tool in shown.tools] == [tool.name for tool in section.tools]
    assert (hidden.text, hidden.tools) == ("## Work", ())


def test_section_carries_the_five_file_tools_in_order() -> None:
    assert [tool.name for tool in VfsToolsSection().tools] == [
        "read_file",
        "write_file",
        "edit_file",
        "list_directory",
        "delete_file",
    ]


def test_edit_file_params_schema() -> None:
    assert edit_file_tool.params_schema == {
        "description": "One exact replacement of text in a file.",
        "properties": {
            "path": {"description": "File path, relative to the workspace root", "type": "string"},
            "old_text": {
                "description": "Text to replace, copied exactly from the file (spaces and line "
                "breaks included); it must occur exactly once",
                "type": "string",
            },
            "new_text": {"description": "Text to put in its place", "type": "string"},
        },
        "required": ["path", "old_text", "new_text"],
        "type": "object",
        "additionalProperties": False,
    }


def test_openai_auto_strict_specs_make_every_file_tool_strict() -> None:
    specs = openai.tool_specs(VfsToolsSection().tools, strict="auto")
    assert [(spec["function"]["name"], spec["function"]["strict"]) for spec in specs] == [
        ("read_file", True),
        ("write_file", True),
        ("edit_file", True),
        ("list_directory", True),
        ("delete_file", True),
    ]
    assert specs[3]["function"]["parameters"]["properties"]["path"] == {
        "anyOf": [{"type": "string"}, {"type": "null"}],
        "description": (
            'Directory path, relative to the workspace root; "." is the root\n\n'
            'Default: ".". null means the default.'
        ),
    }


def test_list_directory_called_with_null_path_lists_the_root() -> None:
    _, executor = workspace()
    result = run(executor, "list_directory", path=None)
    assert result.value == DirectoryListing(".", ("notes/",))
