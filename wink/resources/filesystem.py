"""The ``Filesystem`` protocol and its two implementations: in memory and on the host.

Both implementations are ``Snapshotable``: the executor snapshots them before a tool
call and restores them when the call fails, so neither may copy its whole state to do so.
"""

from __future__ import annotations

import builtins
import os
import shutil
import threading
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol, TypeAlias, runtime_checkable

from wink.errors import WinkError

__all__ = [
    "FileNotFoundInFilesystemError",
    "Filesystem",
    "FilesystemError",
    "HostFilesystem",
    "InMemoryFilesystem",
]


class FilesystemError(WinkError):
    """A filesystem operation was refused or failed; the message names the path."""


class FileNotFoundInFilesystemError(FilesystemError, FileNotFoundError):
    """The path names no file (also a builtin ``FileNotFoundError``)."""


@runtime_checkable
class Filesystem(Protocol):
    """A filesystem confined to one root, addressed by POSIX paths.

    Relative paths are taken from the root; absolute paths must lie under
    ``mount_point``. No path may escape the root.
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


@dataclass(frozen=True, slots=True)
class _Mount:
    """Lexical path rules shared by both filesystems."""

    point: str
    parts: tuple[str, ...]

    @classmethod
    def at(cls, point: str) -> _Mount:
        if not point.startswith("/"):
            raise FilesystemError(f"mount point must be an absolute path: {point!r}")
        parts = _resolve_segments(point, point)
        return cls("/" + "/".join(parts), parts)

    def relative(self, path: str) -> tuple[str, ...]:
        """The segments of ``path`` below the root; refuses paths that leave it."""
        if not path or "\x00" in path:
            raise FilesystemError(f"invalid path: {path!r}")
        parts = _resolve_segments(path, path)
        if not path.startswith("/"):
            return parts
        if parts[: len(self.parts)] != self.parts:
            raise FilesystemError(f"path {path!r} is outside the mount point {self.point!r}")
        return parts[len(self.parts) :]


def _resolve_segments(path: str, original: str) -> tuple[str, ...]:
    parts: list[str] = []
    for segment in path.split("/"):
        if segment in ("", "."):
            continue
        if segment != "..":
            parts.append(segment)
        elif parts:
            parts.pop()
        else:
            raise FilesystemError(f"path {original!r} escapes the filesystem root")
    return tuple(parts)


def _joined(parts: tuple[str, ...]) -> str:
    return "/".join(parts) or "."


# A directory maps names to files (their text) or to subdirectories. Directories
# are never mutated once built: a write copies only the directories on its path.
_Node: TypeAlias = "str | Mapping[str, _Node]"
_Directory: TypeAlias = Mapping[str, _Node]
_EMPTY: _Directory = {}


@dataclass(frozen=True, slots=True)
class _MemorySnapshot:
    root: _Directory


class InMemoryFilesystem:
    """A ``Filesystem`` held in memory as a persistent (immutable) directory tree.

    Every directory is an immutable mapping; a write or delete builds new copies of
    the directories on its path and shares every other directory and file with the
    previous tree. So ``snapshot()`` keeps the current root (O(1)) and ``restore()``
    swaps it back (O(1)), whatever the amount of state. A write costs O(depth plus
    the entries of the directories on its path); it never depends on other
    directories or on file sizes. Directories exist once a file is written in them
    and stay, empty, when their files are deleted, as on a host filesystem.
    """

    __slots__ = ("_lock", "_mount", "_root")

    def __init__(self, mount_point: str = "/mnt", files: Mapping[str, str] | None = None) -> None:
        """A filesystem mounted at ``mount_point`` holding ``files`` (path -> text)."""
        self._mount = _Mount.at(mount_point)
        self._root: _Directory = _EMPTY
        # Writers replace the root after reading it; the lock keeps them from losing
        # each other's updates. Readers need no lock: the root is swapped atomically.
        self._lock = threading.Lock()
        for path, content in (files or {}).items():
            self.write(path, content)

    @property
    def mount_point(self) -> str:
        """The absolute path at which the root appears."""
        return self._mount.point

    def normalize(self, path: str) -> str:
        """The canonical relative POSIX path of ``path`` (``"."`` for the root)."""
        return _joined(self._mount.relative(path))

    def read(self, path: str) -> str:
        """The text of the file at ``path``."""
        node = _lookup(self._root, self._mount.relative(path))
        if node is None:
            raise FileNotFoundInFilesystemError(f"no such file: {path!r}")
        if not isinstance(node, str):
            raise FilesystemError(f"is a directory, not a file: {path!r}")
        return node

    def write(self, path: str, content: str) -> None:
        """Create or replace the file at ``path``, creating missing parent directories."""
        parts = self._mount.relative(path)
        if not parts:
            raise FilesystemError(f"is a directory, not a file: {path!r}")
        with self._lock:
            self._root = _with_file(self._root, parts, content, path)

    def exists(self, path: str) -> bool:
        """Whether a file or directory exists at ``path``."""
        return _lookup(self._root, self._mount.relative(path)) is not None

    def delete(self, path: str) -> None:
        """Remove the file at ``path`` (directories are refused)."""
        parts = self._mount.relative(path)
        with self._lock:
            node = _lookup(self._root, parts)
            if node is None:
                raise FileNotFoundInFilesystemError(f"no such file: {path!r}")
            if not isinstance(node, str):
                raise FilesystemError(f"is a directory, not a file: {path!r}")
            self._root = _without_file(self._root, parts)

    def snapshot(self) -> object:
        """An O(1) token of the current state, for ``restore``."""
        return _MemorySnapshot(self._root)

    def restore(self, snapshot: object) -> None:
        """Return to the state of ``snapshot`` (any earlier snapshot, in any order)."""
        if not isinstance(snapshot, _MemorySnapshot):
            raise FilesystemError(f"not a snapshot of an InMemoryFilesystem: {snapshot!r}")
        with self._lock:
            self._root = snapshot.root

    def list(self, path: str = ".") -> builtins.list[str]:
        """Sorted names directly under the directory ``path``; directories end with ``/``."""
        node = _lookup(self._root, self._mount.relative(path))
        if node is None:
            raise FileNotFoundInFilesystemError(f"no such directory: {path!r}")
        if isinstance(node, str):
            raise FilesystemError(f"is a file, not a directory: {path!r}")
        return sorted(
            name if isinstance(child, str) else name + "/" for name, child in node.items()
        )


def _lookup(root: _Directory, parts: tuple[str, ...]) -> _Node | None:
    node: _Node = root
    for name in parts:
        if isinstance(node, str):
            return None
        found = node.get(name)
        if found is None:
            return None
        node = found
    return node


def _with_file(
    directory: _Directory, parts: tuple[str, ...], content: str, path: str
) -> _Directory:
    name, rest = parts[0], parts[1:]
    child = directory.get(name)
    if rest:
        if isinstance(child, str):
            raise FilesystemError(f"a parent of {path!r} is a file, not a directory")
        new_child: _Node = _with_file(child or _EMPTY, rest, content, path)
    elif child is not None and not isinstance(child, str):
        raise FilesystemError(f"is a directory, not a file: {path!r}")
    else:
        new_child = content
    return {**directory, name: new_child}


def _without_file(directory: _Directory, parts: tuple[str, ...]) -> _Directory:
    # The caller checked that ``parts`` names an existing file.
    name, rest = parts[0], parts[1:]
    if not rest:
        return {key: value for key, value in directory.items() if key != name}
    child = directory[name]
    assert not isinstance(child, str)  # a parent of an existing file is a directory
    return {**directory, name: _without_file(child, rest)}


# What a path held before its first change since a snapshot: the file's bytes, or
# ``None`` when nothing was there (a file we created, or a directory we created).
_Prior: TypeAlias = "bytes | None"


@dataclass(frozen=True, slots=True, weakref_slot=True)
class _HostSnapshot:
    owner: HostFilesystem
    position: int
    """Length of the owner's journal (counted from its start) when taken."""


class HostFilesystem:
    """A ``Filesystem`` confined to the directory ``root`` on the host.

    Any path that escapes ``root`` lexically (``..``, an absolute path elsewhere) or
    through a symlink is refused; symlinks that stay inside ``root`` are followed.
    ``mount_point`` is the resolved ``root``.

    Snapshots are copy-on-write: ``snapshot()`` only records the journal's length.
    While a snapshot is alive, the first write or delete of a path since the most
    recent snapshot appends the path's prior bytes (or its absence) to the journal;
    ``restore(token)`` replays the journal backwards to the token, so it costs only
    the paths touched since. Nested snapshots share one journal. A snapshot taken
    after ``token`` is invalid once ``token`` is restored. When no snapshot is
    referenced any more, the journal is dropped (tokens are held weakly).
    """

    __slots__ = ("_journal", "_journal_start", "_lock", "_mount", "_root", "_snapshots", "_touched")

    def __init__(self, root: str | os.PathLike[str]) -> None:
        """A filesystem confined to the existing directory ``root``."""
        resolved = os.path.realpath(root)
        if not os.path.isdir(resolved):
            raise FilesystemError(f"root is not a directory: {os.fspath(root)!r}")
        self._root = resolved
        self._mount = _Mount.at(resolved)
        self._lock = threading.RLock()
        self._journal: builtins.list[tuple[str, _Prior]] = []
        self._journal_start = 0
        self._snapshots: builtins.list[weakref.ref[_HostSnapshot]] = []
        self._touched: set[str] = set()

    @property
    def mount_point(self) -> str:
        """The resolved root directory."""
        return self._mount.point

    @property
    def root(self) -> str:
        """The resolved root directory on the host."""
        return self._root

    def normalize(self, path: str) -> str:
        """The canonical relative POSIX path of ``path`` (lexical: symlinks are not read)."""
        return _joined(self._mount.relative(path))

    def read(self, path: str) -> str:
        """The text (UTF-8) of the file at ``path``."""
        host_path = self._host_path(path)
        try:
            with open(host_path, encoding="utf-8", newline="") as file:
                return file.read()
        except FileNotFoundError:
            raise FileNotFoundInFilesystemError(f"no such file: {path!r}") from None
        except UnicodeDecodeError:
            raise FilesystemError(f"not a UTF-8 text file: {path!r}") from None
        except OSError as error:
            raise FilesystemError(f"cannot read {path!r}: {error.strerror}") from None

    def write(self, path: str, content: str) -> None:
        """Create or replace the file at ``path``, creating missing parent directories."""
        host_path = self._host_path(path)
        # Encoded before the file is opened: a failure must leave the file untouched.
        try:
            data = content.encode("utf-8")
        except UnicodeEncodeError as error:
            raise FilesystemError(
                f"cannot write {path!r}: the content is not valid text ({error.reason} at "
                f"character {error.start})"
            ) from None
        with self._lock:
            if os.path.isdir(host_path):
                raise FilesystemError(f"is a directory, not a file: {path!r}")
            self._record_missing_parents(host_path)
            self._record(host_path)
            try:
                os.makedirs(os.path.dirname(host_path), exist_ok=True)
                with open(host_path, "wb") as file:
                    file.write(data)
            except OSError as error:
                raise FilesystemError(f"cannot write {path!r}: {error.strerror}") from None

    def exists(self, path: str) -> bool:
        """Whether a file or directory exists at ``path``."""
        return os.path.exists(self._host_path(path))

    def delete(self, path: str) -> None:
        """Remove the file at ``path`` (directories are refused)."""
        host_path = self._host_path(path)
        with self._lock:
            if os.path.isdir(host_path):
                raise FilesystemError(f"is a directory, not a file: {path!r}")
            if not os.path.exists(host_path):
                raise FileNotFoundInFilesystemError(f"no such file: {path!r}")
            self._record(host_path)
            try:
                os.remove(host_path)
            except OSError as error:
                raise FilesystemError(f"cannot delete {path!r}: {error.strerror}") from None

    def snapshot(self) -> object:
        """An O(1) token of the current state, for ``restore``."""
        with self._lock:
            self._forget_released_snapshots()
            token = _HostSnapshot(self, self._journal_start + len(self._journal))
            self._snapshots.append(weakref.ref(token))
            self._touched = set()
            return token

    def restore(self, snapshot: object) -> None:
        """Put back every path touched since ``snapshot`` was taken."""
        if not isinstance(snapshot, _HostSnapshot) or snapshot.owner is not self:
            raise FilesystemError(f"not a snapshot of this HostFilesystem: {snapshot!r}")
        with self._lock:
            index = self._snapshot_index(snapshot)
            del self._snapshots[index + 1 :]
            keep = snapshot.position - self._journal_start
            for relative, prior in reversed(self._journal[keep:]):
                self._put_back(relative, prior)
            del self._journal[keep:]
            self._touched = set()

    def list(self, path: str = ".") -> builtins.list[str]:
        """Sorted names directly under the directory ``path``; directories end with ``/``."""
        host_path = self._host_path(path)
        try:
            with os.scandir(host_path) as entries:
                return sorted(_listed_name(entry) for entry in entries)
        except FileNotFoundError:
            raise FileNotFoundInFilesystemError(f"no such directory: {path!r}") from None
        except NotADirectoryError:
            raise FilesystemError(f"is a file, not a directory: {path!r}") from None

    def _host_path(self, path: str) -> str:
        lexical = os.path.join(self._root, *self._mount.relative(path))
        resolved = os.path.realpath(lexical)
        # Not a prefix test on ``root + os.sep``: for the root "/" that is "//".
        if os.path.commonpath((self._root, resolved)) != self._root:
            raise FilesystemError(f"path {path!r} resolves outside the root through a symlink")
        return resolved

    def _snapshot_index(self, snapshot: _HostSnapshot) -> int:
        for index, reference in enumerate(self._snapshots):
            if reference() is snapshot:
                return index
        raise FilesystemError(
            f"snapshot of HostFilesystem {self._root!r} is no longer valid: an earlier "
            "snapshot was restored"
        )

    def _forget_released_snapshots(self) -> None:
        # Hold the live tokens strongly while deciding, so none dies half-way.
        live = [(ref, token) for ref in self._snapshots if (token := ref()) is not None]
        self._snapshots = [ref for ref, _ in live]
        end = self._journal_start + len(self._journal)
        drop = (live[0][1].position if live else end) - self._journal_start
        del self._journal[:drop]
        self._journal_start += drop

    def _record_missing_parents(self, host_path: str) -> None:
        missing: builtins.list[str] = []
        parent = os.path.dirname(host_path)
        while not os.path.exists(parent):
            missing.append(parent)
            parent = os.path.dirname(parent)
        for directory in reversed(missing):  # outermost first, so restore removes it last
            self._record(directory)

    def _record(self, host_path: str) -> None:
        """Journal the prior state of ``host_path`` if it is its first change since a snapshot."""
        relative = os.path.relpath(host_path, self._root)
        if relative in self._touched:
            return
        self._forget_released_snapshots()
        if not self._snapshots:
            return
        self._journal.append((relative, _read_prior(host_path)))
        self._touched.add(relative)

    def _put_back(self, relative: str, prior: _Prior) -> None:
        host_path = os.path.join(self._root, relative)
        if os.path.isdir(host_path) and not os.path.islink(host_path):
            # Journaled paths were never directories at the snapshot (only files, or
            # missing), so this directory and everything in it came later.
            shutil.rmtree(host_path)
        elif prior is None and os.path.lexists(host_path):
            os.remove(host_path)
        if prior is not None:
            # Entries are put back newest first; a parent removed above may hold this file.
            os.makedirs(os.path.dirname(host_path), exist_ok=True)
            with open(host_path, "wb") as file:
                file.write(prior)


def _read_prior(host_path: str) -> _Prior:
    if not os.path.isfile(host_path):
        return None
    with open(host_path, "rb") as file:
        return file.read()


def _listed_name(entry: os.DirEntry[str]) -> str:
    return entry.name + "/" if entry.is_dir() else entry.name
