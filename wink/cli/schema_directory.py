"""``SchemaDirectory``: the files of a schema directory, reached only through its own handle.

``wink schemas export`` writes and removes files under the directory and
``wink schemas check`` reads them. Every path is walked one component at a time
from an open handle of the directory, and none of them follows a symbolic link:
a folder or file inside the directory that is a link (to ``/etc``, to a sibling
project) stops the command with one line naming it, before anything is written,
read or removed through it. Files are written to a temporary file in the same
folder and renamed over their name, so a hard link to an outside file is
replaced, never written through, and a file is either the old or the new text.
The directory itself is the user's explicit choice, so a link there is followed.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from pathlib import Path

from wink.cli.failure import CliError

__all__ = ["SchemaDirectory"]

_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class SchemaDirectory:
    """Read, write and remove files under ``path``, never through a link inside it."""

    def __init__(self, path: Path) -> None:
        """The schema directory at ``path`` (which may not exist yet)."""
        self.path = path

    def read(self, relative: str) -> str | None:
        """The text of the file at ``relative``, or ``None`` when it does not exist."""
        shown = self.path / relative
        *folders, name = Path(relative).parts
        with self._folders(folders, create=False) as chain:
            if chain is None:
                return None
            try:
                fd = os.open(name, _FILE, dir_fd=chain[-1])
            except FileNotFoundError:
                return None
            except OSError as error:
                raise self._refusal(chain[-1], name, shown, "read", error) from None
            try:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    raise CliError(f"cannot read {shown}: not a regular file")
                data = _read_all(fd)
            finally:
                os.close(fd)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as error:
            reason = f"not valid UTF-8 (at byte {error.start})"
            raise CliError(f"cannot read {shown}: {reason}") from None

    def write(self, relative: str, text: str) -> None:
        """Write ``text`` to ``relative``, creating its folders; the old file is replaced whole."""
        shown = self.path / relative
        *folders, name = Path(relative).parts
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise CliError(f"cannot write {shown}: {error.strerror or error}") from None
        with self._folders(folders, create=True) as chain:
            assert chain is not None  # created
            parent = chain[-1]
            if _is_link(parent, name):
                raise CliError(_link_message(shown))
            temporary = f".{name}.{secrets.token_hex(8)}.tmp"
            try:
                with open(os.open(temporary, _NEW, 0o666, dir_fd=parent), "wb") as file:
                    file.write(text.encode("utf-8"))
                os.replace(temporary, name, src_dir_fd=parent, dst_dir_fd=parent)
            except OSError as error:
                _discard(parent, temporary)
                raise CliError(f"cannot write {shown}: {error.strerror or error}") from None

    def remove(self, relative: str) -> None:
        """Remove the file at ``relative`` (if there) and its folder if that is left empty."""
        shown = self.path / relative
        *folders, name = Path(relative).parts
        with self._folders(folders, create=False) as chain:
            if chain is None:
                return
            parent = chain[-1]
            try:
                if _is_link(parent, name):
                    raise CliError(_link_message(shown))
                os.unlink(name, dir_fd=parent)
            except FileNotFoundError:
                pass
            except OSError as error:
                raise CliError(f"cannot remove stale {shown}: {error.strerror or error}") from None
            if folders and not os.listdir(parent):
                try:
                    os.rmdir(folders[-1], dir_fd=chain[-2])
                except OSError as error:
                    folder = shown.parent
                    raise CliError(
                        f"cannot remove stale {folder}: {error.strerror or error}"
                    ) from None

    def is_file(self, relative: str) -> bool:
        """Whether ``relative`` is a regular file (not a link to one)."""
        *folders, name = Path(relative).parts
        with self._folders(folders, create=False) as chain:
            if chain is None:
                return False
            try:
                return stat.S_ISREG(os.stat(name, dir_fd=chain[-1], follow_symlinks=False).st_mode)
            except OSError:
                return False

    def json_files(self, folder: str) -> set[str]:
        """The ``.json`` files anywhere under ``folder``, as relative POSIX paths."""
        found: set[str] = set()
        with self._folders([folder], create=False) as chain:
            if chain is not None:
                self._collect(chain[-1], folder, found)
        return found

    def _collect(self, fd: int, relative: str, found: set[str]) -> None:
        with os.scandir(fd) as entries:
            listed = sorted(
                (
                    entry.name,
                    entry.is_symlink(),
                    entry.is_dir(follow_symlinks=False),
                    entry.is_file(follow_symlinks=False),
                )
                for entry in entries
            )
        for name, is_link, is_folder, is_file in listed:
            path = f"{relative}/{name}"
            if is_link:
                raise CliError(_link_message(self.path / path))
            if is_folder:
                child = self._open_folder(fd, name, self.path / path)
                try:
                    self._collect(child, path, found)
                finally:
                    os.close(child)
            elif is_file and name.endswith(".json"):
                found.add(path)

    @contextmanager
    def _folders(self, folders: list[str], *, create: bool) -> Iterator[list[int] | None]:
        """Handles of the directory and each of ``folders`` below it, in order.

        ``None`` when one does not exist and ``create`` is false; a folder that is
        a link, or not a folder, stops the command.
        """
        with ExitStack() as stack:
            try:
                root = os.open(self.path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            except FileNotFoundError:
                yield None
                return
            except OSError as error:
                raise CliError(f"cannot open {self.path}: {error.strerror or error}") from None
            stack.callback(os.close, root)
            chain = [root]
            shown = self.path
            for name in folders:
                shown = shown / name
                if create:
                    try:
                        os.mkdir(name, dir_fd=chain[-1])
                    except FileExistsError:
                        pass
                    except OSError as error:
                        reason = error.strerror or error
                        raise CliError(f"cannot create {shown}: {reason}") from None
                elif not _exists(chain[-1], name):
                    yield None
                    return
                fd = self._open_folder(chain[-1], name, shown)
                stack.callback(os.close, fd)
                chain.append(fd)
            yield chain

    @staticmethod
    def _open_folder(parent: int, name: str, shown: Path) -> int:
        try:
            return os.open(name, _FOLDER, dir_fd=parent)
        except OSError as error:
            if _is_link(parent, name):
                raise CliError(_link_message(shown)) from None
            raise CliError(f"cannot open {shown}: {error.strerror or error}") from None

    def _refusal(self, parent: int, name: str, shown: Path, verb: str, error: OSError) -> CliError:
        if error.errno == errno.ELOOP or _is_link(parent, name):
            return CliError(_link_message(shown))
        return CliError(f"cannot {verb} {shown}: {error.strerror or error}")


def _link_message(path: Path) -> str:
    return (
        f"{path} is a symbolic link; wink does not read, write or remove files through "
        "links inside the schema directory (replace it with a real folder or file)"
    )


def _is_link(parent: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _exists(parent: int, name: str) -> bool:
    try:
        os.stat(name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        return False
    except OSError:  # there, but not to be looked at: opening it says why
        return True
    return True


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)


def _discard(parent: int, name: str) -> None:
    with suppress(OSError):
        os.unlink(name, dir_fd=parent)
