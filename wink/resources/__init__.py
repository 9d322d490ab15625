"""Resources for tool handlers: a typed, scoped registry and confined filesystems.

Each name is imported on first use, so that a program that binds no filesystem
does not load the filesystems (nor ``GitWorkspace``, nor what they import).
"""

from typing import TYPE_CHECKING, Any

from wink._lazy_exports import exported

if TYPE_CHECKING:
    from wink.resources.filesystem import (
        FileNotFoundInFilesystemError,
        Filesystem,
        FilesystemError,
        HostFilesystem,
        InMemoryFilesystem,
    )
    from wink.resources.git_workspace import GitWorkspace, GitWorkspaceError
    from wink.resources.registry import (
        AmbiguousResourceError,
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
    "AmbiguousResourceError",
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

# Where each public name lives; read by ``__getattr__`` on first access.
_HOMES: dict[str, str] = {
    "FileNotFoundInFilesystemError": "wink.resources._filesystem_protocol",
    "Filesystem": "wink.resources._filesystem_protocol",
    "FilesystemError": "wink.resources._filesystem_protocol",
    "HostFilesystem": "wink.resources.filesystem",
    "InMemoryFilesystem": "wink.resources.filesystem",
    "GitWorkspace": "wink.resources.git_workspace",
    "GitWorkspaceError": "wink.resources.git_workspace",
    "AmbiguousResourceError": "wink.resources.registry",
    "Binding": "wink.resources.registry",
    "BindingError": "wink.resources.registry",
    "CircularDependencyError": "wink.resources.registry",
    "ResourceBuildError": "wink.resources.registry",
    "ResourceRegistry": "wink.resources.registry",
    "ResourceResolver": "wink.resources.registry",
    "ResourceScopeError": "wink.resources.registry",
    "Scope": "wink.resources.registry",
    "Snapshotable": "wink.resources.registry",
    "ToolCallScope": "wink.resources.registry",
    "UnboundResourceError": "wink.resources.registry",
}


def __getattr__(name: str) -> Any:
    return exported(__name__, globals(), _HOMES, name)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
