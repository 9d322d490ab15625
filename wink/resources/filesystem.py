"""The ``Filesystem`` protocol and its two implementations: in memory and on the host.

Both implementations are ``Snapshotable``: the executor snapshots them before a tool
call and restores them when the call fails, so neither may copy its whole state to do so.

What ``HostFilesystem`` confines, and how:

- Every operation, ``restore`` included, starts from a descriptor of the root opened
  at construction and opens one name at a time relative to the previous directory
  (``dir_fd``, ``O_DIRECTORY``, ``O_NOFOLLOW``). No symlink is ever followed, in a
  path or at its end, wherever it points; ``..`` is resolved lexically and may not
  climb above the root (with no link followed, the text of a path is its place).
  A directory swapped for a symlink during a call, by anyone, is refused, never
  entered.
- A write goes to a new file in the target's directory, renamed over the target
  within that directory: atomic for readers, and a hard link to an outside file
  keeps the outside bytes. Permission bits are kept; owner, ACLs, extended
  attributes and other links of the replaced file are not; nothing is fsynced.
- FIFOs, sockets and devices are opened without blocking and refused after
  ``fstat``; they are never read or written. ``delete`` removes a symlink itself.
- ``restore`` undoes only this filesystem's changes since the snapshot: it removes
  or replaces an entry only if it is one this filesystem made (by device and inode;
  for a file or link also size and modification time) and puts back what the journal
  holds (bytes and mode, a link's target). Entries others made or changed meanwhile
  are kept. It works in the directories it changed, kept open (up to
  ``_MAX_HELD_DIRECTORIES``; beyond, reached through the directory it just worked in,
  whose ``..`` a deep write's journal meets next, or found by path, and checked by
  identity), after checking once per restore that each is still below the root;
  what it cannot undo is named in a ``FilesystemError`` raised after undoing
  everything else.

Costs: every path meets the limits of ``wink.resources._filesystem_paths``
(``MAX_PATH_BYTES``, ``MAX_NAME_BYTES``, ``MAX_PATH_DEPTH``) before any work, and
each operation then costs time linear in its path: one descriptor per level, one
copy of the walked path in the journal whatever the number of directories it made,
and a rollback that reaches each directory once.

Not confined: other processes (or handlers) using the disk directly; one operation
whose open directory someone else moves out of the root meanwhile completes in it
(``restore`` checks first; the window is between that check and the undo, which
for a directory is its first use in that restore); between
checking an entry and replacing or removing it, a concurrent writer inside the root
can swap it; an entry someone else makes on a freed inode number with the same size
and modification time (to the timestamp's granularity) may be taken for this
filesystem's, and a file of this filesystem's that someone else changed counts as
theirs. Platforms without ``dir_fd`` support cannot build a ``HostFilesystem``.
"""

from __future__ import annotations

import builtins
import contextlib
import errno
import os
import stat
import threading
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypeAlias

from wink.resources._filesystem_paths import (
    MAX_NAME_BYTES,
    MAX_PATH_BYTES,
    MAX_PATH_DEPTH,
    Mount,
    shown,
)
from wink.resources._filesystem_paths import joined as _joined
from wink.resources._filesystem_protocol import (
    FileNotFoundInFilesystemError,
    Filesystem,
    FilesystemError,
)

__all__ = [
    "MAX_NAME_BYTES",
    "MAX_PATH_BYTES",
    "MAX_PATH_DEPTH",
    "FileNotFoundInFilesystemError",
    "Filesystem",
    "FilesystemError",
    "HostFilesystem",
    "InMemoryFilesystem",
]


# A directory maps names to files (their text) or to subdirectories. Directories
# are never mutated once built: a write copies only the directories on its path.
_Node: TypeAlias = "str | Mapping[str, _Node]"
_Directory: TypeAlias = Mapping[str, _Node]
_EMPTY: _Directory = {}


@dataclass(frozen=True, slots=True)
class _MemorySnapshot:
    """One version of an ``InMemoryFilesystem``'s tree: what ``snapshot()`` hands out.

    The filesystem holds its current tree in one of these and builds a new one only
    when the tree changes, so ``snapshot()`` returns the one it holds: no allocation.
    """

    root: _Directory


class InMemoryFilesystem:
    """A ``Filesystem`` held in memory as a persistent (immutable) directory tree.

    Every directory is an immutable mapping; a write or delete builds new copies of
    the directories on its path and shares every other directory and file with the
    previous tree. The current tree is held in an immutable version token, replaced
    on every change: ``snapshot()`` returns that token (O(1), no allocation) and
    ``restore()`` swaps it back (O(1)), whatever the amount of state. A write costs
    O(depth plus the entries of the directories on its path); it never depends on
    other directories or on file sizes. Directories exist once a file is written in them
    and stay, empty, when their files are deleted, as on a host filesystem.
    """

    __slots__ = ("_lock", "_mount", "_version")

    def __init__(self, mount_point: str = "/mnt", files: Mapping[str, str] | None = None) -> None:
        """A filesystem mounted at ``mount_point`` holding ``files`` (path -> text)."""
        self._mount = Mount.at(mount_point)
        self._version = _MemorySnapshot(_EMPTY)
        # Writers replace the version after reading it; the lock keeps them from losing
        # each other's updates. Readers need no lock: the version is swapped atomically.
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
        node = _lookup(self._version.root, self._mount.relative(path))
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
            self._version = _MemorySnapshot(_with_file(self._version.root, parts, content, path))

    def exists(self, path: str) -> bool:
        """Whether a file or directory exists at ``path``."""
        return _lookup(self._version.root, self._mount.relative(path)) is not None

    def delete(self, path: str) -> None:
        """Remove the file at ``path`` (directories are refused)."""
        parts = self._mount.relative(path)
        with self._lock:
            root = self._version.root
            node = _lookup(root, parts)
            if node is None:
                raise FileNotFoundInFilesystemError(f"no such file: {path!r}")
            if not isinstance(node, str):
                raise FilesystemError(f"is a directory, not a file: {path!r}")
            self._version = _MemorySnapshot(_without_file(root, parts, path))

    def snapshot(self) -> object:
        """An O(1) token of the current state, for ``restore``; the same token until the
        files change."""
        return self._version

    def restore(self, snapshot: object) -> None:
        """Return to the state of ``snapshot`` (any earlier snapshot, in any order)."""
        if not isinstance(snapshot, _MemorySnapshot):
            raise FilesystemError(f"not a snapshot of an InMemoryFilesystem: {snapshot!r}")
        with self._lock:
            self._version = snapshot

    def list(self, path: str = ".") -> builtins.list[str]:
        """Sorted names directly under the directory ``path``; directories end with ``/``."""
        node = _lookup(self._version.root, self._mount.relative(path))
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


def _with_file(root: _Directory, parts: tuple[str, ...], content: str, path: str) -> _Directory:
    directories = _directories_on(root, parts, path)
    last = directories[-1].get(parts[-1])
    if last is not None and not isinstance(last, str):
        raise FilesystemError(f"is a directory, not a file: {path!r}")
    return _rebuilt(directories, parts, {**directories[-1], parts[-1]: content})


def _without_file(root: _Directory, parts: tuple[str, ...], path: str) -> _Directory:
    # The caller checked that ``parts`` names an existing file.
    directories = _directories_on(root, parts, path)
    name = parts[-1]
    changed = {key: value for key, value in directories[-1].items() if key != name}
    return _rebuilt(directories, parts, changed)


def _directories_on(root: _Directory, parts: tuple[str, ...], path: str) -> list[_Directory]:
    """The directories from ``root`` to the parent of ``parts``; missing ones are empty."""
    directories = [root]
    for name in parts[:-1]:
        child = directories[-1].get(name, _EMPTY)
        if isinstance(child, str):
            raise FilesystemError(f"a parent of {path!r} is a file, not a directory")
        directories.append(child)
    return directories


def _rebuilt(directories: list[_Directory], parts: tuple[str, ...], last: _Directory) -> _Directory:
    """The new root once the last of ``directories`` becomes ``last``: a loop, not a
    recursion, so a deep path needs no deep stack; every other directory is shared."""
    changed = last
    for depth in range(len(directories) - 2, -1, -1):
        changed = {**directories[depth], parts[depth]: changed}
    return changed


# --- on the host ----------------------------------------------------------------------------

# Every name is opened relative to an open directory, never followed if it is a
# symlink, and files are opened without blocking (a FIFO would wait for a writer).
# Flags a platform lacks are 0 here (so that importing works everywhere); such a
# platform cannot build a ``HostFilesystem`` (see ``_NEEDED_FLAGS``).
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIRECTORY_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | _CLOEXEC
_FILE_FLAGS = (
    os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | _CLOEXEC
)
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC
_NEEDED = (os.open, os.stat, os.mkdir, os.unlink, os.rmdir, os.rename, os.symlink, os.readlink)
_NEEDED_FLAGS = ("O_DIRECTORY", "O_NOFOLLOW", "O_NONBLOCK")
_MAX_HELD_DIRECTORIES = 64
"""Directories a journal keeps open to undo its changes wherever they were moved."""
_MAX_CLIMB = 4096
"""Parents followed to check a directory is below the root: deeper than any path the
kernel resolves, so a directory moved this deep anywhere counts as outside."""

_Identity: TypeAlias = tuple[int, ...]
"""What an entry is, whatever name it has now: ``(st_dev, st_ino)`` for a directory;
for a file or link, also its size and modification time (never changed once this
filesystem made it), so that an inode number freed and reused is not taken for it."""


@dataclass(frozen=True, slots=True)
class _PriorFile:
    data: bytes
    mode: int
    made: int | None
    """When this filesystem made the file (its clock), or ``None``: someone else did."""


@dataclass(frozen=True, slots=True)
class _PriorLink:
    target: str
    made: int | None


# What an entry was before its first change since a snapshot; ``None``: no entry.
_Prior: TypeAlias = "_PriorFile | _PriorLink | None"


@dataclass(frozen=True, slots=True)
class _Change:
    """The first change, since a snapshot, of the entry ``name`` of one directory."""

    names: tuple[str, ...]
    """The path the operation walked, from the root; one tuple shared by every change the
    operation journals, so a deep walk keeps one path, not one per directory it made."""
    level: int
    """Where the entry's name is in ``names``: its directory is ``names[:level]``."""
    directory: _Identity
    prior: _Prior

    @property
    def name(self) -> str:
        """The changed entry's name in its directory."""
        return self.names[self.level]

    @property
    def parent(self) -> tuple[str, ...]:
        """The directory's path from the root when the change was made."""
        return self.names[: self.level]


@dataclass(frozen=True, slots=True, weakref_slot=True)
class _HostSnapshot:
    owner: HostFilesystem
    position: int
    """Length of the owner's journal (counted from its start) when taken."""
    epoch: int
    """The owner's clock when taken: entries it made later are ``epoch`` greater."""


class _Rollback:
    """What one ``restore`` learns on its way, so that it reaches each directory once."""

    __slots__ = ("inside", "last", "last_identity", "owned")

    def __init__(self, inside: dict[_Identity, bool]) -> None:
        self.inside = inside
        """Directories found below the root (``True``) or not, by identity."""
        self.last: int | None = None
        """The directory the latest change was undone in: below the root, checked."""
        self.last_identity: _Identity | None = None
        self.owned = False
        """Whether ``last`` is this rollback's to close (not one the journal holds)."""

    def reached(self, directory: int, owned: bool, identity: _Identity) -> None:
        """Keep ``directory`` (below the root) as the latest, taking it over if ``owned``."""
        if directory == self.last:
            return
        self.close()
        self.last, self.owned, self.last_identity = directory, owned, identity

    def nearby(self, identity: _Identity, root: _Identity) -> int | None:
        """A new descriptor of the directory ``identity`` if it is the latest one or its
        parent, else ``None``; the caller still checks it is below the root.

        The identity check makes sure it is the journal's directory, whatever was
        renamed meanwhile.
        """
        if self.last is None or self.last_identity is None:
            return None
        try:
            if identity == self.last_identity:
                return os.dup(self.last)
            if self.last_identity == root:
                return None
            parent = os.open("..", _DIRECTORY_FLAGS, dir_fd=self.last)
        except OSError:
            return None
        try:
            if _identity(os.fstat(parent)) == identity:
                return parent
        except OSError:
            pass
        os.close(parent)
        return None

    def close(self) -> None:
        """Close the latest directory if it is this rollback's own."""
        if self.last is not None and self.owned:
            with contextlib.suppress(OSError):
                os.close(self.last)
        self.last, self.owned, self.last_identity = None, False, None


class _NotDirectory(FilesystemError):
    """A name on the path is a file, not a directory."""


class HostFilesystem:
    """A ``Filesystem`` confined to the directory ``root`` on the host.

    ``root`` is opened once, at construction; every operation then opens each name
    of its path relative to the directory opened before it, refusing symlinks: a path
    that goes through or ends at a symlink is refused, whether the link points
    inside or outside the root. Writes go to a new file in the target's directory
    that replaces the target atomically, so a hard link to an outside file is
    never written through. FIFOs, sockets and devices are refused without being
    waited on. ``mount_point`` is the resolved ``root``. See the module docstring
    for what is and is not confined.

    Snapshots are copy-on-write: ``snapshot()`` only records the journal's length.
    While a snapshot is alive, the first change of an entry since the most recent
    snapshot appends the entry's prior content (a file's bytes and mode, a link's
    target, or its absence) to the journal, with the identity of its directory.
    ``restore(token)`` undoes the journal backwards to the token: it removes or
    replaces only entries this filesystem made since the token (by inode), so
    what others created meanwhile is kept. Nested snapshots share one journal. A
    snapshot taken after ``token`` is invalid once ``token`` is restored. When no
    snapshot is referenced any more, the journal is dropped (tokens are held weakly).
    """

    __slots__ = (
        "__weakref__",
        "_clock",
        "_held",
        "_journal",
        "_journal_start",
        "_lock",
        "_mount",
        "_ours",
        "_root",
        "_root_fd",
        "_root_identity",
        "_snapshots",
        "_touched",
    )

    def __init__(self, root: str | os.PathLike[str]) -> None:
        """A filesystem confined to the existing directory ``root``."""
        calls = [function.__name__ for function in _NEEDED if function not in os.supports_dir_fd]
        flags = [flag for flag in _NEEDED_FLAGS if not hasattr(os, flag)]
        if calls or flags:
            lacks = ([f"dir_fd support in {', '.join(calls)}"] if calls else []) + (
                [f"the flags {', '.join(flags)}"] if flags else []
            )
            raise FilesystemError(
                "HostFilesystem cannot confine paths on this platform: it lacks "
                + " and ".join(lacks)
            )
        resolved = os.path.realpath(root)
        try:
            self._root_fd = os.open(resolved, _DIRECTORY_FLAGS)
        except OSError:
            raise FilesystemError(f"root is not a directory: {os.fspath(root)!r}") from None
        self._root = resolved
        self._root_identity = _identity(os.fstat(self._root_fd))
        self._mount = Mount.at(resolved)
        self._lock = threading.RLock()
        self._journal: builtins.list[_Change] = []
        self._journal_start = 0
        self._snapshots: builtins.list[weakref.ref[_HostSnapshot]] = []
        self._touched: set[tuple[_Identity, str]] = set()
        self._clock = 0
        # Entries this filesystem made (files written, directories created, entries
        # put back by a restore), with the clock when made: what a restore may remove.
        self._ours: dict[_Identity, int] = {}
        # Directories the journal's changes were made in, kept open so that a restore
        # finds them even if they were renamed or a symlink took their place.
        self._held: dict[_Identity, int] = {}
        weakref.finalize(self, _close_descriptors, self._root_fd, self._held)

    @property
    def mount_point(self) -> str:
        """The resolved root directory."""
        return self._mount.point

    @property
    def root(self) -> str:
        """The resolved root directory on the host."""
        return self._root

    def normalize(self, path: str) -> str:
        """The canonical relative POSIX path of ``path`` (lexical: no symlink is ever followed)."""
        return _joined(self._mount.relative(path))

    def read(self, path: str) -> str:
        """The text (UTF-8) of the file at ``path``."""
        data = self.read_bytes(path)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise FilesystemError(f"not a UTF-8 text file: {path!r}") from None

    def read_bytes(self, path: str) -> bytes:
        """The bytes of the file at ``path``."""
        parts = self._mount.relative(path)
        if not parts:
            raise FilesystemError(f"is a directory, not a file: {path!r}")
        directory = self._open_parent(parts, path, "read")
        try:
            data, _ = _read_regular(directory, parts, path, "read")
        finally:
            os.close(directory)
        return data

    def write(self, path: str, content: str) -> None:
        """Create or replace the file at ``path``, creating missing parent directories.

        The content goes to a new file in the same directory, which then replaces
        the target in one step: readers see the old or the new content, never part
        of it; a replaced file keeps its permission bits, not its other links.
        """
        parts = self._mount.relative(path)
        if not parts:
            raise FilesystemError(f"is a directory, not a file: {path!r}")
        # Encoded before anything is touched: a failure must leave the file untouched.
        try:
            data = content.encode("utf-8")
        except UnicodeEncodeError as error:
            raise FilesystemError(
                f"cannot write {path!r}: the content is not valid text ({error.reason} at "
                f"character {error.start})"
            ) from None
        with self._lock:
            journaling = self._journaling()
            directory = self._walk(parts[:-1], path, "write", create=True)
            try:
                self._write_in(directory, parts, path, data, journaling)
            finally:
                os.close(directory)

    def exists(self, path: str) -> bool:
        """Whether an entry (file, directory, or a symlink, not followed) exists at ``path``."""
        return self.lstat(path) is not None

    def lstat(self, path: str) -> os.stat_result | None:
        """The status of the entry at ``path`` itself (a symlink is not followed), or
        ``None`` when there is none."""
        parts = self._mount.relative(path)
        if not parts:
            return os.fstat(self._root_fd)
        try:
            directory = self._open_parent(parts, path, "check")
        except (FileNotFoundInFilesystemError, _NotDirectory):
            return None
        try:
            return _lstat(directory, parts[-1], path, "check")
        finally:
            os.close(directory)

    def delete(self, path: str) -> None:
        """Remove the file at ``path`` (directories are refused; a symlink itself is removed)."""
        parts = self._mount.relative(path)
        if not parts:
            raise FilesystemError(f"is a directory, not a file: {path!r}")
        with self._lock:
            journaling = self._journaling()
            directory = self._open_parent(parts, path, "delete")
            try:
                self._delete_in(directory, parts, path, journaling)
            finally:
                os.close(directory)

    def remove_directory(self, path: str) -> None:
        """Remove the empty directory at ``path`` (a symlink is refused, not removed).

        Refused while a snapshot is alive: ``restore`` does not put directories back.
        """
        parts = self._mount.relative(path)
        if not parts:
            raise FilesystemError(f"cannot remove the root directory: {path!r}")
        with self._lock:
            if self._journaling():
                raise FilesystemError(
                    f"cannot remove the directory {path!r} while a snapshot is alive: "
                    "restore does not put directories back"
                )
            parent = self._open_parent(parts, path, "remove")
            try:
                os.rmdir(parts[-1], dir_fd=parent)  # a symlink is never followed: ENOTDIR
            except FileNotFoundError:
                raise FileNotFoundInFilesystemError(f"no such directory: {path!r}") from None
            except OSError as error:
                raise _refusal(parent, parts, path, "remove", error, target=True) from None
            finally:
                os.close(parent)

    def snapshot(self) -> object:
        """An O(1) token of the current state, for ``restore``."""
        with self._lock:
            self._forget_released_snapshots()
            self._clock += 1
            token = _HostSnapshot(self, self._journal_start + len(self._journal), self._clock)
            self._snapshots.append(weakref.ref(token))
            self._touched = set()
            return token

    def restore(self, snapshot: object) -> None:
        """Undo every change this filesystem made since ``snapshot`` was taken.

        Entries others made or changed meanwhile are kept, as if the undone change
        had never been made. Raises ``FilesystemError`` naming the changes it could
        not undo (their directory left the root or was removed, or the host refused),
        after undoing all the others.
        """
        if not isinstance(snapshot, _HostSnapshot) or snapshot.owner is not self:
            raise FilesystemError(f"not a snapshot of this HostFilesystem: {snapshot!r}")
        with self._lock:
            index = self._snapshot_index(snapshot)
            del self._snapshots[index + 1 :]
            keep = snapshot.position - self._journal_start
            ours = {entry for entry, made in self._ours.items() if made > snapshot.epoch}
            put_back: dict[_Identity, int] = {}
            problems: builtins.list[str] = []
            rollback = _Rollback({self._root_identity: True})
            try:
                for change in reversed(self._journal[keep:]):
                    problem = self._undo(change, ours, snapshot.epoch, put_back, rollback)
                    if problem is not None:
                        problems.append(problem)
            finally:
                rollback.close()
            del self._journal[keep:]
            self._ours = {
                entry: made for entry, made in self._ours.items() if made <= snapshot.epoch
            }
            # An entry put back stands for the one it replaces, made when that one was.
            self._ours.update(
                (entry, made) for entry, made in put_back.items() if made <= snapshot.epoch
            )
            self._touched = set()
            if problems:
                raise FilesystemError(
                    f"restore of HostFilesystem {self._root!r} could not undo: "
                    + "; ".join(problems)
                )

    def list(self, path: str = ".") -> builtins.list[str]:
        """Sorted names directly under the directory ``path``; directories end with ``/``.

        A symlink is listed by its name alone, whatever it points to.
        """
        parts = self._mount.relative(path)
        try:
            directory = self._walk(parts, path, "list", create=False, listing=True)
        except FileNotFoundInFilesystemError:
            raise FileNotFoundInFilesystemError(f"no such directory: {path!r}") from None
        try:
            with os.scandir(directory) as entries:
                return sorted(_listed_name(entry) for entry in entries)
        except OSError as error:
            raise FilesystemError(f"cannot list {path!r}: {error.strerror}") from None
        finally:
            os.close(directory)

    # --- walking ------------------------------------------------------------------------

    def _open_parent(self, parts: tuple[str, ...], path: str, verb: str) -> int:
        """The directory holding the last name of ``parts``; missing: no such file."""
        try:
            return self._walk(parts[:-1], path, verb, create=False)
        except FileNotFoundInFilesystemError:
            raise FileNotFoundInFilesystemError(f"no such file: {path!r}") from None

    def _walk(
        self, parts: tuple[str, ...], path: str, verb: str, *, create: bool, listing: bool = False
    ) -> int:
        """A new descriptor of the directory ``parts``, opened one name at a time.

        With ``create``, missing directories are made (and journaled); the walk never
        follows a symlink, so it never leaves the root, whatever is swapped meanwhile.
        With ``listing``, ``path`` names the directory itself, not a file in it.
        """
        try:
            directory = os.dup(self._root_fd)
        except OSError as error:  # out of descriptors, say
            raise FilesystemError(f"cannot {verb} {path!r}: {error.strerror}") from None
        try:
            for level in range(len(parts)):
                target = listing and level == len(parts) - 1
                child = self._open_child(directory, parts, level, path, verb, create, target)
                os.close(directory)
                directory = child
        except BaseException:
            os.close(directory)
            raise
        return directory

    def _open_child(
        self,
        directory: int,
        parts: tuple[str, ...],
        level: int,
        path: str,
        verb: str,
        create: bool,
        target: bool,
    ) -> int:
        """A new descriptor of the directory ``parts[level]`` of ``directory``."""
        name = parts[level]
        try:
            return os.open(name, _DIRECTORY_FLAGS, dir_fd=directory)
        except FileNotFoundError:
            if not create:
                raise FileNotFoundInFilesystemError(f"no such file: {path!r}") from None
        except OSError as error:
            raise _refusal(directory, parts[: level + 1], path, verb, error, target) from None
        made = False
        try:
            os.mkdir(name, dir_fd=directory)
            made = True
        except FileExistsError:
            pass  # made meanwhile by someone else: opened below like any directory
        except OSError as error:
            raise FilesystemError(f"cannot {verb} {path!r}: {error.strerror}") from None
        if made:
            self._journal_change(parts, level, directory, _identity(os.fstat(directory)), None)
        try:
            child = os.open(name, _DIRECTORY_FLAGS, dir_fd=directory)
        except OSError as error:
            raise _refusal(directory, parts[: level + 1], path, verb, error, target) from None
        if made:
            # Unless someone swapped another directory in between: then that one is
            # taken for this filesystem's (a window of two system calls, inside the root).
            self._made(os.fstat(child))
        return child

    # --- changes ------------------------------------------------------------------------

    def _write_in(
        self, directory: int, parts: tuple[str, ...], path: str, data: bytes, journaling: bool
    ) -> None:
        name = parts[-1]
        occupant = _lstat(directory, name, path, "write")
        if occupant is not None:
            _refuse_unless_regular(occupant, parts, path)
        if journaling:
            self._journal_first_change(parts, directory, path, "write")
        temporary = f".wink-{os.urandom(8).hex()}.tmp"
        try:
            descriptor = os.open(temporary, _CREATE_FLAGS, 0o666, dir_fd=directory)
        except OSError as error:
            raise FilesystemError(f"cannot write {path!r}: {error.strerror}") from None
        try:
            try:
                with os.fdopen(descriptor, "wb") as file:
                    if occupant is not None:
                        os.fchmod(file.fileno(), stat.S_IMODE(occupant.st_mode))
                    file.write(data)
                    file.flush()
                    written = os.fstat(file.fileno())
                if journaling:
                    self._made(written)
                os.replace(temporary, name, src_dir_fd=directory, dst_dir_fd=directory)
            except BaseException:
                _unlink_quietly(directory, temporary)
                raise
        except OSError as error:
            raise FilesystemError(f"cannot write {path!r}: {error.strerror}") from None
        if occupant is not None:
            self._ours.pop(_identity(occupant), None)

    def _delete_in(
        self, directory: int, parts: tuple[str, ...], path: str, journaling: bool
    ) -> None:
        name = parts[-1]
        occupant = _lstat(directory, name, path, "delete")
        if occupant is None:
            raise FileNotFoundInFilesystemError(f"no such file: {path!r}")
        if not stat.S_ISLNK(occupant.st_mode):
            _refuse_unless_regular(occupant, parts, path)
        if journaling:
            self._journal_first_change(parts, directory, path, "delete")
        try:
            os.unlink(name, dir_fd=directory)
        except FileNotFoundError:
            raise FileNotFoundInFilesystemError(f"no such file: {path!r}") from None
        except OSError as error:
            raise FilesystemError(f"cannot delete {path!r}: {error.strerror}") from None
        self._ours.pop(_identity(occupant), None)

    # --- the journal --------------------------------------------------------------------

    def _journaling(self) -> bool:
        """Whether a snapshot is alive, so that changes must be journaled."""
        self._forget_released_snapshots()
        return bool(self._snapshots)

    def _journal_first_change(
        self, parts: tuple[str, ...], directory: int, path: str, verb: str
    ) -> None:
        """Journal what the last name of ``parts`` holds now, in ``directory``, if this is
        its first change since a snapshot."""
        identity = _identity(os.fstat(directory))
        if (identity, parts[-1]) in self._touched:
            return
        prior = _prior(directory, parts, path, verb, self._ours)
        self._journal_change(parts, len(parts) - 1, directory, identity, prior)

    def _journal_change(
        self, names: tuple[str, ...], level: int, directory: int, identity: _Identity, prior: _Prior
    ) -> None:
        if not self._snapshots:
            return
        self._touched.add((identity, names[level]))
        if identity not in self._held and len(self._held) < _MAX_HELD_DIRECTORIES:
            with contextlib.suppress(OSError):  # not held: a restore finds it by path
                self._held[identity] = os.dup(directory)
        self._journal.append(_Change(names, level, identity, prior))

    def _made(self, status: os.stat_result) -> None:
        if self._snapshots:
            self._clock += 1
            self._ours[_identity(status)] = self._clock

    def _undo(
        self,
        change: _Change,
        ours: set[_Identity],
        since: int,
        put_back: dict[_Identity, int],
        rollback: _Rollback,
    ) -> str | None:
        """Undo ``change`` if what is there now is this filesystem's; or say why not."""
        try:
            located = self._locate(change, rollback)
        except OSError as error:
            return f"{_shown_change(change)} ({error.strerror})"
        if located is None:
            # Removed, so empty: an entry made in it is gone; one it held cannot come back.
            if change.prior is None:
                return None
            return f"{_shown_change(change)} (its directory was removed)"
        if isinstance(located, str):
            return f"{_shown_change(change)} ({located})"
        directory, owned = located
        rollback.reached(directory, owned, change.directory)
        try:
            _undo_in(directory, change, ours, since, put_back)
        except OSError as error:
            return f"{_shown_change(change)} ({error.strerror})"
        return None

    def _locate(self, change: _Change, rollback: _Rollback) -> tuple[int, bool] | str | None:
        """The change's directory (and whether to close it), why it cannot be reached, or
        ``None`` if it was removed."""
        held = self._held.get(change.directory)
        if held is not None:
            if os.fstat(held).st_nlink == 0:
                return None
            if self._is_inside_root(held, rollback.inside):
                return held, False
            return "its directory was moved out of the root"
        # The journal is undone backwards, so the directories a deep write made are met
        # deepest first: each is the parent of the one before, reached by its ``..``
        # rather than by a walk from the root that would make a rollback quadratic. Its
        # first check climbs to the root once; later ones find their parent noted.
        near = rollback.nearby(change.directory, self._root_identity)
        if near is not None:
            if self._is_inside_root(near, rollback.inside):
                return near, True
            os.close(near)
            return "its directory was moved out of the root"
        try:
            directory = self._walk(change.parent, _joined(change.parent), "restore", create=False)
        except FilesystemError:
            return "its directory is gone or no longer reachable"
        if _identity(os.fstat(directory)) != change.directory:
            os.close(directory)
            return "its directory was replaced"
        return directory, True

    def _is_inside_root(self, directory: int, inside: dict[_Identity, bool]) -> bool:
        """Whether the open ``directory`` is (still) the root or below it, by its parents.

        Every directory passed on the way up is noted in ``inside`` with the answer, and a
        climb stops at one already noted: one rollback climbs each level at most once.
        """
        passed: builtins.list[_Identity] = []
        answer = False
        current = os.dup(directory)
        try:
            below = _identity(os.fstat(current))
            for _ in range(_MAX_CLIMB):
                known = inside.get(below)
                if known is not None:
                    answer = known
                    break
                passed.append(below)
                parent = os.open("..", _DIRECTORY_FLAGS, dir_fd=current)
                os.close(current)
                current = parent
                above = _identity(os.fstat(current))
                if above == below:  # the filesystem's root: the parent of itself
                    break
                below = above
        except OSError:
            answer = False  # removed meanwhile: it is no longer below the root
        finally:
            os.close(current)
        for identity in passed:
            inside[identity] = answer
        return answer

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
        if not live:
            self._journal_start += len(self._journal)
            self._journal.clear()
            self._ours.clear()
            _close_descriptors(None, self._held)
            return
        oldest = live[0][1]
        drop = oldest.position - self._journal_start
        del self._journal[:drop]
        self._journal_start += drop
        if drop:
            self._ours = {entry: made for entry, made in self._ours.items() if made > oldest.epoch}


# A concurrent change by someone else got there first: theirs is kept, as if the
# undone change had never been made.
_RACED = (errno.ENOENT, errno.EEXIST, errno.ENOTEMPTY, errno.EISDIR, errno.ENOTDIR)


def _undo_in(
    directory: int,
    change: _Change,
    ours: set[_Identity],
    since: int,
    put_back: dict[_Identity, int],
) -> None:
    """Undo ``change`` in ``directory``; an ``OSError`` says why it could not be."""
    name, prior = change.name, change.prior
    try:
        occupant: os.stat_result | None = os.stat(name, dir_fd=directory, follow_symlinks=False)
    except FileNotFoundError:
        occupant = None
    try:
        if occupant is not None:
            if _identity(occupant) not in ours:
                return  # not made by this filesystem since the snapshot: kept
            if stat.S_ISDIR(occupant.st_mode):
                os.rmdir(name, dir_fd=directory)  # empty unless others made entries in it
            elif not isinstance(prior, _PriorFile):
                os.unlink(name, dir_fd=directory)
        if isinstance(prior, _PriorLink):
            os.symlink(prior.target, name, dir_fd=directory)
            status = os.stat(name, dir_fd=directory, follow_symlinks=False)
            _put_back(status, prior, ours, since, put_back)
        elif isinstance(prior, _PriorFile):
            _put_back_file(directory, name, prior, replace=occupant is not None)
            status = os.stat(name, dir_fd=directory, follow_symlinks=False)
            _put_back(status, prior, ours, since, put_back)
    except OSError as error:
        if error.errno not in _RACED:
            raise


def _put_back_file(directory: int, name: str, prior: _PriorFile, *, replace: bool) -> None:
    """Make ``name`` hold ``prior`` again: over this filesystem's file, or where none is."""
    temporary = f".wink-{os.urandom(8).hex()}.tmp"
    descriptor = os.open(temporary, _CREATE_FLAGS, 0o600, dir_fd=directory)
    try:
        with os.fdopen(descriptor, "wb") as file:
            os.fchmod(file.fileno(), prior.mode)
            file.write(prior.data)
        if replace:
            os.replace(temporary, name, src_dir_fd=directory, dst_dir_fd=directory)
            return
        try:
            # A link, unlike a rename, fails if someone else made ``name`` meanwhile.
            os.link(temporary, name, src_dir_fd=directory, dst_dir_fd=directory)
        except OSError as error:
            if error.errno == errno.EEXIST:
                raise
            os.replace(temporary, name, src_dir_fd=directory, dst_dir_fd=directory)
    finally:
        _unlink_quietly(directory, temporary)


def _refusal(
    directory: int, walked: tuple[str, ...], path: str, verb: str, error: OSError, target: bool
) -> FilesystemError:
    """Why the name ``walked[-1]`` of ``directory`` could not be opened (or removed) as a
    directory.

    ``target``: the name is the directory ``path`` itself, not one of its parents.
    """
    try:
        status = os.stat(walked[-1], dir_fd=directory, follow_symlinks=False)
    except OSError:
        return FilesystemError(f"cannot {verb} {path!r}: {error.strerror}")
    if stat.S_ISLNK(status.st_mode):
        if target:
            return _symlink_refused(
                f"is a symlink; symlinks are never followed: {path!r}", _joined(walked)
            )
        return _symlink_refused(
            f"path {path!r} goes through the symlink {_joined(walked)!r}; symlinks are never "
            "followed",
            _joined(walked),
        )
    if not stat.S_ISDIR(status.st_mode):
        if target:
            return _NotDirectory(f"is a file, not a directory: {path!r}")
        return _NotDirectory(f"a parent of {path!r} is a file, not a directory")
    return FilesystemError(f"cannot {verb} {path!r}: {error.strerror}")


def _symlink_refused(message: str, link: str) -> FilesystemError:
    error = FilesystemError(message)
    error.link = link
    return error


def _lstat(directory: int, name: str, path: str, verb: str) -> os.stat_result | None:
    """The entry ``name`` of ``directory`` itself (a symlink is not followed), or ``None``."""
    try:
        return os.stat(name, dir_fd=directory, follow_symlinks=False)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise FilesystemError(f"cannot {verb} {path!r}: {error.strerror}") from None


def _refuse_unless_regular(status: os.stat_result, walked: tuple[str, ...], path: str) -> None:
    mode = status.st_mode
    if stat.S_ISREG(mode):
        return
    if stat.S_ISDIR(mode):
        raise FilesystemError(f"is a directory, not a file: {path!r}")
    if stat.S_ISLNK(mode):
        raise _symlink_refused(
            f"is a symlink; symlinks are never followed: {path!r}", _joined(walked)
        )
    raise FilesystemError(f"is {_kind(mode)}, not a regular file: {path!r}")


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    return "a special file"


def _read_regular(
    directory: int, walked: tuple[str, ...], path: str, verb: str
) -> tuple[bytes, os.stat_result]:
    """The bytes of the regular file ``walked[-1]`` of ``directory``; anything else is
    refused without blocking."""
    name = walked[-1]
    try:
        descriptor = os.open(name, _FILE_FLAGS, dir_fd=directory)
    except FileNotFoundError:
        raise FileNotFoundInFilesystemError(f"no such file: {path!r}") from None
    except OSError as error:
        # ELOOP for a symlink, ENXIO for a socket: say which from the entry itself.
        status = _lstat(directory, name, path, verb)
        if status is not None:
            _refuse_unless_regular(status, walked, path)
        raise FilesystemError(f"cannot {verb} {path!r}: {error.strerror}") from None
    try:
        status = os.fstat(descriptor)
        _refuse_unless_regular(status, walked, path)  # opened, not read: a FIFO is never waited on
    except BaseException:
        os.close(descriptor)
        raise
    with os.fdopen(descriptor, "rb") as file:
        try:
            return file.read(), status
        except OSError as error:
            raise FilesystemError(f"cannot {verb} {path!r}: {error.strerror}") from None


def _put_back(
    status: os.stat_result,
    prior: _PriorFile | _PriorLink,
    ours: set[_Identity],
    since: int,
    put_back: dict[_Identity, int],
) -> None:
    """Note an entry a restore made in place of ``prior``: it is this filesystem's if that was."""
    if prior.made is None:
        return
    identity = _identity(status)
    put_back[identity] = prior.made
    if prior.made > since:
        ours.add(identity)  # an older change of the same name, undone next, removes it


def _prior(
    directory: int, walked: tuple[str, ...], path: str, verb: str, ours: Mapping[_Identity, int]
) -> _Prior:
    name = walked[-1]
    status = _lstat(directory, name, path, verb)
    if status is None:
        return None
    if stat.S_ISLNK(status.st_mode):
        try:
            target = os.readlink(name, dir_fd=directory)
        except OSError as error:
            raise FilesystemError(f"cannot {verb} {path!r}: {error.strerror}") from None
        return _PriorLink(target, ours.get(_identity(status)))
    data, status = _read_regular(directory, walked, path, verb)
    return _PriorFile(data, stat.S_IMODE(status.st_mode), ours.get(_identity(status)))


def _identity(status: os.stat_result) -> _Identity:
    if stat.S_ISDIR(status.st_mode):
        return status.st_dev, status.st_ino
    return status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns


def _shown_change(change: _Change) -> str:
    """The changed entry's path, quoted for a message (built only when one is needed)."""
    return shown(_joined(change.names[: change.level + 1]))


def _unlink_quietly(directory: int, name: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(name, dir_fd=directory)


def _close_descriptors(root: int | None, held: dict[_Identity, int]) -> None:
    for descriptor in held.values():
        with contextlib.suppress(OSError):
            os.close(descriptor)
    held.clear()
    if root is not None:
        with contextlib.suppress(OSError):
            os.close(root)


def _listed_name(entry: os.DirEntry[str]) -> str:
    return entry.name + "/" if entry.is_dir(follow_symlinks=False) else entry.name
