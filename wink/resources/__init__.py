"""Resources for tool handlers: a typed, scoped registry and confined filesystems."""

from wink.resources.filesystem import (
    FileNotFoundInFilesystemError,
    Filesystem,
    FilesystemError,
    HostFilesystem,
    InMemoryFilesystem,
)
from wink.resources.git_workspace import GitWorkspace, GitWorkspaceError
from wink.resources.registry import (
    Binding,
    BindingError,
    CircularDependencyError,
    ResourceBuildError,
    ResourceRegistry,
    ResourceResolver,
    ResourceScopeError,
    Scope,
    Snapshotable,
    ToolCallScope,
    UnboundResourceError,
)

__all__ = [
    "Binding",
    "BindingError",
    "CircularDependencyError",
    "FileNotFoundInFilesystemError",
    "Filesystem",
    "FilesystemError",
    "GitWorkspace",
    "GitWorkspaceError",
    "HostFilesystem",
    "InMemoryFilesystem",
    "ResourceBuildError",
    "ResourceRegistry",
    "ResourceResolver",
    "ResourceScopeError",
    "Scope",
    "Snapshotable",
    "ToolCallScope",
    "UnboundResourceError",
]
