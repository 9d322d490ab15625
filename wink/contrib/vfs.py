"""File tools over the prompt's ``Filesystem``: read, write, edit, list and delete.

The tools work on ``context.filesystem``, the ``Filesystem`` bound to the prompt
(``prompt.bind(resources={Filesystem: HostFilesystem(root)})``). A prompt that binds
no filesystem gets the section's default: a lazily built ``InMemoryFilesystem``,
one per session like every lazily built singleton (each session its own files and
snapshots); ``prompt.resources.for_session(session).filesystem`` reaches it.
Paths are relative to the filesystem's root, or absolute under its mount point; a
path that leaves the root or a missing file is a failed result the model can act
on. The executor snapshots the filesystem before each call, so a failed call leaves
no change behind.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import Field

from wink.policy import ReadBeforeWritePolicy
from wink.prompt import Enabled, MarkdownSection
from wink.resources import Binding, Filesystem, FilesystemError, InMemoryFilesystem
from wink.tools import Tool, ToolContext, ToolResult

__all__ = [
    "DeleteFile",
    "DirectoryListing",
    "EditFile",
    "FileContent",
    "FileDeleted",
    "FileEdited",
    "FileWritten",
    "ListDirectory",
    "ReadFile",
    "VfsToolsSection",
    "WriteFile",
    "delete_file_tool",
    "edit_file_tool",
    "list_directory_tool",
    "read_file_tool",
    "write_file_tool",
]

# No ``minLength`` on text fields: it would keep OpenAI's strict mode off for these
# tools, and the handlers refuse empty paths and empty ``old_text`` themselves.
_FilePath = Annotated[str, Field(description="File path, relative to the workspace root")]


@dataclass(frozen=True, slots=True)
class ReadFile:
    """The file to read."""

    path: _FilePath


@dataclass(frozen=True, slots=True)
class WriteFile:
    """The file to create or replace, and its whole new content."""

    path: _FilePath
    content: Annotated[str, Field(description="The complete new content of the file")]


@dataclass(frozen=True, slots=True)
class EditFile:
    """One exact replacement of text in a file."""

    path: _FilePath
    old_text: Annotated[
        str,
        Field(
            description="Text to replace, copied exactly from the file (spaces and line "
            "breaks included); it must occur exactly once",
        ),
    ]
    new_text: Annotated[str, Field(description="Text to put in its place")]


@dataclass(frozen=True, slots=True)
class ListDirectory:
    """The directory to list."""

    path: Annotated[
        str,
        Field(description='Directory path, relative to the workspace root; "." is the root'),
    ] = "."


@dataclass(frozen=True, slots=True)
class DeleteFile:
    """The file to delete."""

    path: _FilePath


@dataclass(frozen=True, slots=True)
class FileContent:
    """The text of a file."""

    path: str
    """The file's path, relative to the root."""
    content: str
    """Its whole text."""

    def render(self) -> str:
        """The text itself."""
        return self.content


@dataclass(frozen=True, slots=True)
class FileWritten:
    """A file created or replaced."""

    path: str
    """The file's path, relative to the root."""
    created: bool
    """``True`` when the file did not exist before."""
    lines: int
    """Lines in the new content."""

    def render(self) -> str:
        """One line: the path, what happened and the new size."""
        action = "created" if self.created else "replaced"
        return f"{self.path}: {action}, {_lines(self.lines)}"


@dataclass(frozen=True, slots=True)
class FileEdited:
    """A file in which one piece of text was replaced."""

    path: str
    """The file's path, relative to the root."""
    line: int
    """The line at which the replaced text started (from 1)."""
    lines: int
    """Lines in the file after the edit."""

    def render(self) -> str:
        """One line: the path, where the text changed and the new size."""
        return f"{self.path}: text replaced at line {self.line}, now {_lines(self.lines)}"


@dataclass(frozen=True, slots=True)
class DirectoryListing:
    """The entries directly under a directory."""

    path: str
    """The directory's path, relative to the root (``.`` for the root)."""
    entries: tuple[str, ...]
    """Sorted names; those of subdirectories end with ``/``."""

    def render(self) -> str:
        """One entry per line."""
        return "\n".join(self.entries)


@dataclass(frozen=True, slots=True)
class FileDeleted:
    """A file removed."""

    path: str
    """The file's path, relative to the root."""

    def render(self) -> str:
        """The path."""
        return f"{self.path}: deleted"


def read_file(params: ReadFile, *, context: ToolContext) -> ToolResult[FileContent]:
    """Return the text of a file."""
    filesystem: Filesystem | None = context.filesystem
    if filesystem is None:
        return _unbound("read_file")
    try:
        path = filesystem.normalize(params.path)
        content = filesystem.read(params.path)
    except FilesystemError as error:
        return _failed("read_file", error)
    message = f"Content of {path} ({_lines(_count_lines(content))}):"
    return ToolResult.ok(FileContent(path, content), message=message)


def write_file(params: WriteFile, *, context: ToolContext) -> ToolResult[FileWritten]:
    """Create or replace a file."""
    filesystem: Filesystem | None = context.filesystem
    if filesystem is None:
        return _unbound("write_file")
    try:
        path = filesystem.normalize(params.path)
        created = not filesystem.exists(params.path)
        filesystem.write(params.path, params.content)
    except FilesystemError as error:
        return _failed("write_file", error)
    written = FileWritten(path, created, _count_lines(params.content))
    return ToolResult.ok(written, message="File written.")


def edit_file(params: EditFile, *, context: ToolContext) -> ToolResult[FileEdited]:
    """Replace the one occurrence of ``old_text`` in a file by ``new_text``."""
    filesystem: Filesystem | None = context.filesystem
    if filesystem is None:
        return _unbound("edit_file")
    try:
        path = filesystem.normalize(params.path)
        content = filesystem.read(params.path)
    except FilesystemError as error:
        return _failed("edit_file", error)
    occurrences = _occurrences(content, params.old_text)
    if occurrences != 1:
        return ToolResult.error(_not_unique(path, params.old_text, occurrences))
    start = content.index(params.old_text)
    edited = content[:start] + params.new_text + content[start + len(params.old_text) :]
    try:
        filesystem.write(params.path, edited)
    except FilesystemError as error:
        return _failed("edit_file", error)
    line = content.count("\n", 0, start) + 1
    return ToolResult.ok(FileEdited(path, line, _count_lines(edited)), message="File edited.")


def list_directory(params: ListDirectory, *, context: ToolContext) -> ToolResult[DirectoryListing]:
    """List the entries directly under a directory."""
    filesystem: Filesystem | None = context.filesystem
    if filesystem is None:
        return _unbound("list_directory")
    try:
        path = filesystem.normalize(params.path)
        entries = tuple(filesystem.list(params.path))
    except FilesystemError as error:
        return _failed("list_directory", error)
    if not entries:
        message = f"Directory {path} is empty."
    else:
        message = f"Entries of {path} ({len(entries)}):"
    return ToolResult.ok(DirectoryListing(path, entries), message=message)


def delete_file(params: DeleteFile, *, context: ToolContext) -> ToolResult[FileDeleted]:
    """Remove a file."""
    filesystem: Filesystem | None = context.filesystem
    if filesystem is None:
        return _unbound("delete_file")
    try:
        path = filesystem.normalize(params.path)
        filesystem.delete(params.path)
    except FilesystemError as error:
        return _failed("delete_file", error)
    return ToolResult.ok(FileDeleted(path), message="File deleted.")


def _unbound(tool_name: str) -> ToolResult[Any]:
    return ToolResult.error(
        f"{tool_name} failed: no Filesystem is bound to the prompt; bind one with "
        "prompt.bind(resources={Filesystem: InMemoryFilesystem()})."
    )


def _failed(tool_name: str, error: FilesystemError) -> ToolResult[Any]:
    return ToolResult.error(f"{tool_name} failed: {error}.")


def _not_unique(path: str, old_text: str, occurrences: int) -> str:
    if not old_text:
        return "edit_file failed: old_text is empty; give the exact text to replace."
    if occurrences == 0:
        return (
            f"edit_file failed: old_text does not occur in {path}; read the file and copy "
            "the text exactly, spaces and line breaks included."
        )
    return (
        f"edit_file failed: old_text occurs {occurrences} times in {path}; include more "
        "of the surrounding text so that it occurs exactly once."
    )


def _occurrences(text: str, part: str) -> int:
    """How often ``part`` occurs in ``text``, overlaps included ("aa" twice in "aaa")."""
    if not part:
        return 0
    count, start = 0, text.find(part)
    while start != -1:
        count += 1
        start = text.find(part, start + 1)
    return count


def _count_lines(text: str) -> int:
    return len(text.splitlines())


def _lines(count: int) -> str:
    return "1 line" if count == 1 else f"{count} lines"


read_file_tool = Tool[ReadFile, FileContent](
    name="read_file", description="Read the whole text of a file.", handler=read_file
)
write_file_tool = Tool[WriteFile, FileWritten](
    name="write_file",
    description="Create a file, or replace the whole content of an existing one.",
    handler=write_file,
)
edit_file_tool = Tool[EditFile, FileEdited](
    name="edit_file",
    description="Replace one exact piece of text in a file with new text.",
    handler=edit_file,
)
list_directory_tool = Tool[ListDirectory, DirectoryListing](
    name="list_directory",
    description="List the files and subdirectories directly under a directory.",
    handler=list_directory,
)
delete_file_tool = Tool[DeleteFile, FileDeleted](
    name="delete_file", description="Delete a file.", handler=delete_file
)


def _workspace(_: object) -> Filesystem:
    """The section's default filesystem; the registry builds one per session."""
    return InMemoryFilesystem()


_DEFAULT_POLICIES: tuple[object, ...] = (ReadBeforeWritePolicy(),)

_READ_FIRST = (
    "- Read a file before you change it: writing or editing an existing file that you "
    "have not read is refused."
)

_INSTRUCTIONS = """\
Use these tools to work with the files of the workspace. A failed call changes nothing.

- Paths are relative to the workspace root; no path may leave it.
- `read_file` shows the whole text of a file.
- `write_file` creates a file or replaces its whole content; missing directories are created.
- `edit_file` replaces one piece of text with another. Copy `old_text` exactly from the \
file, with enough of the surrounding text that it occurs only once.
- `list_directory` lists a directory; names of subdirectories end with `/`.
- `delete_file` removes a file."""


class VfsToolsSection(MarkdownSection[None]):
    """Instructions for the file tools, carrying them and (by default) ``ReadBeforeWritePolicy``."""

    def __init__(
        self,
        *,
        title: str = "Files",
        key: str = "vfs",
        policies: Sequence[object] = _DEFAULT_POLICIES,
        enabled: Enabled = True,
        accepts_overrides: bool = True,
    ) -> None:
        """A section titled ``title`` whose tools obey ``policies``.

        A prompt that binds no filesystem gets an empty ``InMemoryFilesystem`` per
        session, built on first use.
        """
        policies = tuple(policies)
        text = _INSTRUCTIONS
        if any(isinstance(policy, ReadBeforeWritePolicy) for policy in policies):
            text += "\n" + _READ_FIRST
        super().__init__(
            title=title,
            key=key,
            # The text is literal: escape any "$" from string.Template substitution.
            template=text.replace("$", "$$"),
            tools=(
                read_file_tool,
                write_file_tool,
                edit_file_tool,
                list_directory_tool,
                delete_file_tool,
            ),
            policies=policies,
            enabled=enabled,
            accepts_overrides=accepts_overrides,
            default_resources=(Binding(Filesystem, _workspace),),
        )
