"""Resources for tool handlers: a typed, scoped registry and confined filesystems.

Each name is imported on first use, so that a program that binds no filesystem
does not load the filesystems (nor ``GitWorkspace``, nor what they import).
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

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

# Where each public name lives; read by ``__getattr__`` on first access.
_HOMES: dict[str, str] = {
    "FileNotFoundInFilesystemError": "wink.resources._filesystem_protocol",
    "Filesystem": "wink.resources._filesystem_protocol",
    "FilesystemError": "wink.resources._filesystem_protocol",
    "HostFilesystem": "wink.resources.filesystem",
    "InMemoryFilesystem": "wink.resources.filesystem",
    "GitWorkspace": "wink.resources.git_workspace",
    "GitWorkspaceError": "wink.resources.git_workspace",
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
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'wink.resources' has no attribute {name!r}")
    value = getattr(import_module(home), name)
    globals()[name] = value  # later accesses skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
