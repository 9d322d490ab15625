"""``ReadBeforeWritePolicy``: an existing file must be read before it is overwritten."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from wink.policy.decision import PolicyDecision
from wink.policy.state import _StateReader
from wink.resources import Filesystem, FilesystemError
from wink.tools import Tool, ToolContext, ToolResult

__all__ = ["ReadBeforeWritePolicy"]

_ALLOW = PolicyDecision.allow()


@dataclass(frozen=True)
class ReadBeforeWritePolicy:
    """Writes to existing files are denied until the file was read in this session.

    New files may be created freely, and a write aimed at a directory is left to the
    tool to refuse. Paths are compared after the filesystem's normalisation, so
    ``./a.txt``, ``a.txt`` and ``/mnt/a.txt`` (under the mount point ``/mnt``) are one
    file. A file the session wrote itself counts as known, unless ``remember_writes``
    is off. Without a filesystem, or without a path field in the params, calls are
    allowed.
    """

    read_tools: frozenset[str] = frozenset({"read_file"})
    """Tools whose success marks their path as read."""
    write_tools: frozenset[str] = frozenset({"write_file", "edit_file"})
    """Tools that overwrite the file at their path."""
    path_fields: tuple[str, ...] = ("path", "file_path")
    """Params fields that may hold the path, tried in order."""
    remember_writes: bool = True
    """Whether a successful write also makes its file known."""
    name: str = "read_before_write"
    """Names the policy's ``PolicyState``."""
    _remembering: frozenset[str] = field(init=False, repr=False, compare=False)
    _state: _StateReader = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Computed once: ``check`` and ``on_result`` run on every call.
        remembering = (
            self.read_tools | self.write_tools if self.remember_writes else self.read_tools
        )
        object.__setattr__(self, "_remembering", frozenset(remembering))
        object.__setattr__(self, "_state", _StateReader(self.name))

    def check(self, tool: Tool[Any, Any], params: Any, *, context: ToolContext) -> PolicyDecision:
        """Deny a write to an existing file that was not read (or written) before."""
        if tool.name not in self.write_tools:
            return _ALLOW
        target = self._target(params, context.filesystem)
        if target is None:
            return _ALLOW
        path, key, filesystem = target
        if not filesystem.exists(path):
            return _ALLOW
        known = self._state.load(context.session).invoked_keys
        for name in self._remembering:
            if (name, key) in known:
                return _ALLOW
        if _is_directory(filesystem, path):
            return _ALLOW  # the tool's own "is a directory" error is clearer
        readers = " or ".join(sorted(self.read_tools)) or "a read tool"
        return PolicyDecision.deny(
            f"File {path!r} already exists and has not been read: call {readers} on it "
            f"before overwriting it (policy {self.name!r})."
        )

    def on_result(
        self, tool: Tool[Any, Any], params: Any, result: ToolResult[Any], *, context: ToolContext
    ) -> None:
        """Remember the path of a successful read (or write)."""
        if not result.success or tool.name not in self._remembering:
            return
        target = self._target(params, context.filesystem)
        if target is not None and context.session is not None:
            self._state.record(context.session, tool.name, key=target[1])

    def _target(
        self, params: Any, filesystem: Filesystem | None
    ) -> tuple[str, str, Filesystem] | None:
        """The path in ``params``, its normalised form and the filesystem, if all exist."""
        if filesystem is None:
            return None
        for field_name in self.path_fields:
            path = getattr(params, field_name, None)
            if isinstance(path, str):
                try:
                    return path, filesystem.normalize(path), filesystem
                except FilesystemError:
                    return None  # an invalid path: the tool itself will refuse it
        return None


def _is_directory(filesystem: Filesystem, path: str) -> bool:
    """Whether ``path`` names a directory (the protocol has no such query; listing tells)."""
    try:
        filesystem.list(path)
    except FilesystemError:
        return False
    return True
