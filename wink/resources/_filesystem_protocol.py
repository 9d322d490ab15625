"""The ``Filesystem`` protocol and the errors filesystems raise.

They live apart from the two implementations (``wink.resources.filesystem``, which
re-exports them) so that code which only recognises a filesystem, like the
resource registry, does not load the implementations.
"""

from __future__ import annotations

import builtins
from typing import Protocol, runtime_checkable

from wink.errors import WinkError

__all__ = ["FileNotFoundInFilesystemError", "Filesystem", "FilesystemError"]


class FilesystemError(WinkError):
    """A filesystem operation was refused or failed; the message names the path."""

    link: str | None = None
    """When ``HostFilesystem`` refused a symlink: its path from the root (the path
    itself or a directory on it)."""


class FileNotFoundInFilesystemError(FilesystemError, FileNotFoundError):
    """The path names no file (also a builtin ``FileNotFoundError``)."""


@runtime_checkable
class Filesystem(Protocol):
    """A filesystem confined to one root, addressed by POSIX paths.

    Relative paths are taken from the root; absolute paths must lie under
    ``mount_point``. No path may escape the root. wink's implementations also refuse
    paths beyond ``MAX_PATH_BYTES``, ``MAX_NAME_BYTES`` and ``MAX_PATH_DEPTH`` (in
    ``wink.resources.filesystem``) alike, so that a tool behaves the same on each.
    """

    @property
    def mount_point(self) -> str:
        """The absolute POSIX path at which the root appears to the model."""
        ...

    def read(self, path: str) -> str:
        """The text of the file at ``path``."""
        ...

    def write(self, path: str, content: str) -> None:
        """Create or replace the file at ``path``, creating missing parent directories."""
        ...

    def exists(self, path: str) -> bool:
        """Whether a file or directory exists at ``path``."""
        ...

    def delete(self, path: str) -> None:
        """Remove the file at ``path`` (directories are refused)."""
        ...

    def normalize(self, path: str) -> str:
        """The canonical relative POSIX path of ``path`` (``"."`` for the root)."""
        ...

    # Declared last: once defined, ``list`` in this class body names the method.
    def list(self, path: str = ".") -> builtins.list[str]:
        """Sorted names directly under the directory ``path``; directories end with ``/``."""
        ...


# Named by their public module, where they lived before: tracebacks, reprs and pickles
# show ``wink.resources.filesystem.FilesystemError``, not this private module.
FilesystemError.__module__ = "wink.resources.filesystem"
FileNotFoundInFilesystemError.__module__ = "wink.resources.filesystem"
Filesystem.__module__ = "wink.resources.filesystem"
