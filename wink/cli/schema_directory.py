"""``SchemaDirectory``: the files of a schema directory, through a ``HostFilesystem``.

``wink schemas export`` writes and removes files under the directory and
``wink schemas check`` reads them, all through a ``HostFilesystem`` rooted at the
directory, which does the confining: no symbolic link inside the directory is
followed, files are replaced whole by rename (so a hard link to an outside file
is never written through), and a FIFO or device is refused without blocking.
A link it refuses stops the command with one line naming it, before anything is
written, read or removed through it. The directory itself is the user's explicit
choice, so a link there is followed.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from wink.cli.failure import CliError
from wink.resources import FileNotFoundInFilesystemError, FilesystemError, HostFilesystem

__all__ = ["SchemaDirectory"]


class SchemaDirectory:
    """Read, write and remove files under ``path``, never through a link inside it."""

    def __init__(self, path: Path) -> None:
        """The schema directory at ``path`` (which may not exist yet)."""
        self.path = path
        self._files: HostFilesystem | None = None

    def read(self, relative: str) -> str | None:
        """The text of the file at ``relative``, or ``None`` when it does not exist."""
        files = self._open()
        if files is None:
            return None
        try:
            data = files.read_bytes(relative)
        except FileNotFoundInFilesystemError:
            return None
        except FilesystemError as error:
            raise self._refusal(files, error, relative, "read") from None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as error:
            reason = f"not valid UTF-8 (at byte {error.start})"
            raise CliError(f"cannot read {self.path / relative}: {reason}") from None

    def write(self, relative: str, text: str) -> None:
        """Write ``text`` to ``relative``, creating its folders; the old file is replaced whole."""
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            shown = self.path / relative
            raise CliError(f"cannot write {shown}: {error.strerror or error}") from None
        files = self._open()
        assert files is not None  # created
        try:
            files.write(relative, text)
        except FilesystemError as error:
            raise self._refusal(files, error, relative, "write") from None

    def remove(self, relative: str) -> None:
        """Remove the file at ``relative`` (if there) and its folder if that is left empty."""
        files = self._open()
        if files is None or self._entry(files, relative, link_stops=True) is None:
            return
        try:
            files.delete(relative)
        except FileNotFoundInFilesystemError:
            pass
        except FilesystemError as error:
            raise self._refusal(files, error, relative, "remove stale") from None
        folder = files.normalize(f"{relative}/..")
        try:
            if folder != "." and not files.list(folder):
                files.remove_directory(folder)
        except FilesystemError as error:
            raise self._refusal(files, error, folder) from None

    def is_file(self, relative: str) -> bool:
        """Whether ``relative`` is a regular file (not a link to one)."""
        files = self._open()
        status = None if files is None else self._entry(files, relative, link_stops=False)
        return status is not None and stat.S_ISREG(status.st_mode)

    def json_files(self, folder: str) -> set[str]:
        """The ``.json`` files anywhere under ``folder``, as relative POSIX paths."""
        found: set[str] = set()
        files = self._open()
        if files is not None and self._entry(files, folder, link_stops=True) is not None:
            self._collect(files, folder, found)
        return found

    def _collect(self, files: HostFilesystem, relative: str, found: set[str]) -> None:
        try:
            names = files.list(relative)
        except FilesystemError as error:
            raise self._refusal(files, error, relative) from None
        for name in names:
            path = f"{relative}/{name.removesuffix('/')}"
            if name.endswith("/"):
                self._collect(files, path, found)
                continue
            status = self._entry(files, path, link_stops=True)
            if status is not None and stat.S_ISREG(status.st_mode) and name.endswith(".json"):
                found.add(path)

    def _open(self) -> HostFilesystem | None:
        """The directory's filesystem, or ``None`` while the directory does not exist."""
        if self._files is None and self.path.exists():
            try:
                self._files = HostFilesystem(self.path)
            except FilesystemError as error:
                raise CliError(f"schema directory {self.path}: {error}") from None
        return self._files

    def _entry(
        self, files: HostFilesystem, relative: str, *, link_stops: bool
    ) -> os.stat_result | None:
        """The entry at ``relative`` itself (``None``: absent); a link on the way stops the
        command, and so does one at ``relative`` if ``link_stops``."""
        try:
            status = files.lstat(relative)
        except FilesystemError as error:
            raise self._refusal(files, error, relative) from None
        if link_stops and status is not None and stat.S_ISLNK(status.st_mode):
            raise CliError(_link_message(self.path / files.normalize(relative)))
        return status

    def _refusal(
        self, files: HostFilesystem, error: FilesystemError, relative: str, doing: str = ""
    ) -> CliError:
        """``error`` in the command's words: a link is named as such, and so is anything
        but a regular file where a file was being done something to (``doing``)."""
        if error.link is not None:
            return CliError(_link_message(self.path / error.link))
        try:
            status = files.lstat(relative) if doing else None
        except FilesystemError:
            status = None
        if status is not None and not stat.S_ISREG(status.st_mode):
            return CliError(f"cannot {doing} {self.path / relative}: not a regular file")
        return CliError(f"schema directory {self.path}: {error}")


def _link_message(path: Path) -> str:
    return (
        f"{path} is a symbolic link; wink does not read, write or remove files through "
        "links inside the schema directory (replace it with a real folder or file)"
    )
