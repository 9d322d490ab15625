"""``GitWorkspace``: a host directory whose snapshots are git trees, so a restore undoes
every change, however it was made.

``HostFilesystem`` journals the writes made through its own methods; a handler that
runs a formatter or a shell command in the root leaves changes it never saw.
``GitWorkspace`` snapshots the directory itself: ``snapshot()`` walks the tree, stages
every regular file and symlink in a private git index and writes it as a tree object;
``restore(token)`` puts the directory back to that tree: files changed are rewritten
byte for byte, files deleted come back, files created are removed (with the
directories they leave empty). Both cost one ``lstat``-like directory walk plus about
what changed since the last snapshot or restore: git re-hashes only files whose stat
data changed.

What git is never given:

- the tree's git content: git runs with its git directory outside the root (a private
  temporary directory unless ``git_dir`` is given), with an environment built from
  scratch (``PATH``, ``HOME=/dev/null``, ``LC_ALL=C`` and its own variables; no
  ``GIT_*`` variable of the caller), no system or user configuration, and settings on
  every command line that turn off hooks, fsmonitor and line-ending conversion;
- any ``.git`` entry below the root (a nested repository, a ``.git`` file pointing
  elsewhere, the root's own repository): the walk never enters one and names only
  regular files and symlinks to git, so git never sees a repository other than its own
  and never reads another's configuration, hooks or objects;
- attributes: the git directory's ``info/attributes``, which overrides every
  ``.gitattributes`` in the tree, turns off text conversion, ``ident``, filters and
  ``working-tree-encoding`` for every path, so bytes are recorded and restored as they
  are.

What git cannot record, the walk keeps apart, with each entry's file type:
``.git`` entries, FIFOs, sockets and devices, symlinks git refuses (a path holding a
``.gitmodules`` component), and entries deeper than ``_MAX_DEPTH`` names or longer than
``_MAX_PATH_BYTES`` bytes. A restore removes each such entry that the snapshot did not
hold at that path with that file type (a nested repository created since, a FIFO, a
deep tree), with the directories this leaves empty, never following a link, and leaves
the others as they are.
``write`` and ``delete`` refuse paths with a ``.git`` component: a change inside a
``.git`` directory the snapshot held could not be undone.

What a snapshot does not cover:

- empty directories (git records files, not directories): one created after a
  snapshot stays after a restore, one removed is not recreated;
- the inside of a ``.git`` entry, a FIFO, socket or device, and an entry too deep or
  too long, that the snapshot held: left as they are, not put back if changed or
  removed;
- ownership, timestamps and permission bits other than the executable bit;
- changes made while a snapshot or restore runs (a process the call started and left
  running may change the tree after the restore);
- a file or directory this process cannot read: snapshot and restore fail, naming it.

Every version of a file seen by a snapshot or a restore stays in the object store
until ``close()`` deletes it (git's garbage collection is off, so that no snapshot
ever loses its tree); a long session that rewrites large files grows it.

File operations (``read``, ``write``, ``list``...) are those of ``HostFilesystem``:
confined to the root, refusing any path that leaves it, through ``..`` or a symlink.
git itself never writes through a symlink when it restores.
"""

from __future__ import annotations

import builtins
import errno
import os
import stat
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import TracebackType

from wink.resources.filesystem import FilesystemError, HostFilesystem

__all__ = ["GitWorkspace", "GitWorkspaceError"]


class GitWorkspaceError(FilesystemError):
    """A git command failed, or the workspace cannot be set up; names the command."""


#: Deepest entry recorded, in names below the root. The walk holds one descriptor per
#: level, so this also bounds the descriptors it holds.
_MAX_DEPTH = 256
#: Longest path recorded, in bytes: git names each file by its path from the root, and
#: the system refuses paths of 4096 bytes or more.
_MAX_PATH_BYTES = 4000
#: How much of a git error or of a caller's path a message quotes.
_SHOWN_CHARACTERS = 600

_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# An entry that vanished or was swapped for something else while being looked at.
_GONE = (errno.ENOENT, errno.ENOTDIR, errno.ELOOP)

# Settings given on every command line: they outrank any configuration file git might
# read, so that neither git's defaults nor a reused git directory change what is
# recorded or run.
_SETTINGS = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", os.devnull),
    ("core.attributesFile", os.devnull),
    ("core.excludesFile", os.devnull),
    ("core.autocrlf", "false"),
    ("core.safecrlf", "false"),
    ("core.symlinks", "true"),
    ("core.filemode", "true"),
    ("core.ignoreCase", "false"),
    ("core.precomposeUnicode", "false"),
    # With these on, git refuses paths that are only special on Windows or macOS
    # (``git~1``, ``a\\.git``); the walk's list of what git cannot record assumes off.
    ("core.protectNTFS", "false"),
    ("core.protectHFS", "false"),
    ("core.sparseCheckout", "false"),
    ("core.splitIndex", "false"),
    ("core.untrackedCache", "false"),
    ("core.checkStat", "default"),
    ("checkout.workers", "1"),
    ("submodule.recurse", "false"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
)
# Highest-precedence attributes: every path is data, whatever ``.gitattributes`` say.
# ``!`` (unspecified) where git rejects a false value.
_ATTRIBUTES = "* -text -crlf !eol -ident !filter !working-tree-encoding -diff -merge\n"


@dataclass(frozen=True, slots=True)
class _TreeSnapshot:
    owner: GitWorkspace
    tree: str
    """The id of the tree object holding the directory as it was."""
    unrecorded: Mapping[bytes, int] = field(repr=False)
    """Entries git cannot record, by path: their file type (``stat.S_IFMT``)."""


@dataclass(slots=True)
class _Scan:
    """What one walk of the root found."""

    recorded: builtins.list[bytes] = field(default_factory=builtins.list)
    """Regular files and symlinks git records, as paths from the root."""
    unrecorded: dict[bytes, int] = field(default_factory=dict)
    """Everything else that is not a walked directory, by path: its file type."""


class GitWorkspace:
    """A ``Filesystem`` over the directory ``root`` whose snapshots are git trees.

    ``snapshot()`` and ``restore()`` act on everything under the root, whoever
    changed it (a tool through this object, a subprocess, another library). Any
    snapshot may be restored, any number of times, in any order. ``close()`` (or
    ``with``) deletes the private git directory; the files under the root stay.
    """

    __slots__ = ("_env", "_files", "_git_dir", "_git_path", "_lock", "_owns_git_dir", "_staged")

    def __init__(self, root: str | os.PathLike[str], *, git_dir: str | None = None) -> None:
        """A workspace over the existing directory ``root``; its git data in ``git_dir``.

        ``git_dir`` must lie outside ``root``; by default a temporary directory is
        created, and deleted by ``close()``.
        """
        # shutil, tempfile and subprocess load with the first workspace, not with wink.
        import shutil
        import tempfile

        self._files = HostFilesystem(root)
        root_path = self._files.root
        git_path = shutil.which("git")
        if git_path is None:
            raise GitWorkspaceError("GitWorkspace needs the git command, and none is on PATH")
        self._git_path = git_path
        self._owns_git_dir = git_dir is None
        chosen = tempfile.mkdtemp(prefix="wink-git-") if git_dir is None else git_dir
        resolved = os.path.realpath(chosen)
        if os.path.commonpath((root_path, resolved)) == root_path:
            raise GitWorkspaceError(
                f"git_dir {chosen!r} lies inside the workspace root {root_path!r}; put it "
                "outside, so that snapshots never record it"
            )
        self._git_dir = resolved
        self._lock = threading.RLock()
        # The paths in the index; None when unknown (read from git when next needed).
        self._staged: frozenset[bytes] | None = None
        # Built from nothing: a variable of the caller (GIT_DIR, GIT_CONFIG_PARAMETERS,
        # GIT_EXEC_PATH, GIT_TRACE...) must not change what git reads, runs or writes.
        self._env = {
            "PATH": os.environ.get("PATH", os.defpath),
            "HOME": os.devnull,
            "LC_ALL": "C",
            "GIT_DIR": resolved,
            "GIT_WORK_TREE": root_path,
            "GIT_INDEX_FILE": os.path.join(resolved, "index"),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_ATTR_NOSYSTEM": "1",
            "GIT_NO_REPLACE_OBJECTS": "1",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_OPTIONAL_LOCKS": "0",
        }
        if not os.path.exists(os.path.join(resolved, "HEAD")):
            self._git("init", "--quiet", "--template=")
        info = os.path.join(resolved, "info")
        os.makedirs(info, exist_ok=True)
        with open(os.path.join(info, "attributes"), "w", encoding="ascii") as attributes:
            attributes.write(_ATTRIBUTES)

    # Filesystem: delegated to a HostFilesystem over the same root.

    @property
    def mount_point(self) -> str:
        """The resolved root directory."""
        return self._files.mount_point

    @property
    def root(self) -> str:
        """The resolved root directory on the host."""
        return self._files.root

    @property
    def git_dir(self) -> str:
        """Where the workspace keeps its git objects and index."""
        return self._git_dir

    def normalize(self, path: str) -> str:
        """The canonical relative POSIX path of ``path`` (``"."`` for the root)."""
        return self._files.normalize(path)

    def read(self, path: str) -> str:
        """The text (UTF-8) of the file at ``path``."""
        return self._files.read(path)

    def write(self, path: str, content: str) -> None:
        """Create or replace the file at ``path``, creating missing parent directories.

        Refused for a path with a ``.git`` component, which a snapshot never records.
        """
        self._refuse_unrecordable(path, "write")
        self._files.write(path, content)

    def exists(self, path: str) -> bool:
        """Whether a file or directory exists at ``path``."""
        return self._files.exists(path)

    def delete(self, path: str) -> None:
        """Remove the file at ``path`` (directories are refused), as ``write`` allows."""
        self._refuse_unrecordable(path, "delete")
        self._files.delete(path)

    def list(self, path: str = ".") -> builtins.list[str]:
        """Sorted names directly under the directory ``path``; directories end with ``/``."""
        return self._files.list(path)

    # Snapshotable.

    def snapshot(self) -> object:
        """Record the whole directory as a git tree; costs a walk plus what changed since."""
        with self._lock:
            scan = self._scan()
            self._stage(scan.recorded)
            tree = self._git("write-tree").decode("ascii").strip()
            return _TreeSnapshot(self, tree, scan.unrecorded)

    def restore(self, snapshot: object) -> None:
        """Put the directory back to ``snapshot``: every change since is undone.

        Entries git cannot record that the snapshot did not hold are removed first;
        if some cannot be, the rest is still restored and the error names them.
        """
        if not isinstance(snapshot, _TreeSnapshot) or snapshot.owner is not self:
            raise GitWorkspaceError(
                f"not a snapshot of this GitWorkspace: {_shown(repr(snapshot))}"
            )
        with self._lock:
            scan = self._scan()
            failures = []
            for path, kind in scan.unrecorded.items():
                if snapshot.unrecorded.get(path) != kind:
                    try:
                        _remove(self.root, path)
                    except OSError as error:
                        failures.append(f"{_shown(os.fsdecode(path))}: {error.strerror}")
            # Staged first, so that files created since are in the index and removed.
            self._stage(scan.recorded)
            self._staged = None  # the index becomes the snapshot's tree: read when needed
            self._git("read-tree", "--reset", "-u", snapshot.tree)
            if failures:
                raise GitWorkspaceError(
                    f"restored {self.root!r} but could not remove {len(failures)} entries "
                    f"made since the snapshot: {_shown('; '.join(failures))}"
                )

    def close(self) -> None:
        """Delete the git directory if the workspace created it; the files stay."""
        import shutil

        with self._lock:
            if self._owns_git_dir and os.path.isdir(self._git_dir):
                shutil.rmtree(self._git_dir)

    def __enter__(self) -> GitWorkspace:
        """The workspace itself; ``close()`` runs on exit."""
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Delete the git directory the workspace created."""
        self.close()

    def __repr__(self) -> str:
        return f"GitWorkspace(root={self.root!r}, git_dir={self._git_dir!r})"

    def _refuse_unrecordable(self, path: str, verb: str) -> None:
        # A new .git entry would be removed by a restore, but a change inside one that
        # the snapshot held (the root's own repository) would stay.
        if any(part.lower() == ".git" for part in self.normalize(path).split("/")):
            raise GitWorkspaceError(
                f"cannot {verb} {_shown(path)!r} in {self.root!r}: a '.git' entry is never "
                "recorded by a snapshot, so a restore could not undo it"
            )

    def _scan(self) -> _Scan:
        scan = _Scan()
        try:
            root = os.open(self.root, _DIRECTORY_FLAGS)
        except OSError as error:
            raise GitWorkspaceError(
                f"cannot open the workspace root {self.root!r}: {error.strerror}"
            ) from None
        try:
            _walk(root, b"", 0, False, scan)
        except OSError as error:
            where = _shown(os.fsdecode(error.filename or ""))
            raise GitWorkspaceError(
                f"cannot walk {self.root!r} at {where!r}: {error.strerror}"
            ) from None
        finally:
            os.close(root)
        return scan

    def _stage(self, recorded: builtins.list[bytes]) -> None:
        # update-index re-hashes only paths whose stat data changed. Paths gone since
        # the last staging are removed first, by name only: whatever stands there now
        # (a directory, a FIFO, a link above it) is not git's to look at.
        staged = self._staged
        self._staged = None  # unknown until the commands below succeed
        if staged is None:
            staged = frozenset(self._git("ls-files", "-z").split(b"\0")) - {b""}
        current = frozenset(recorded)
        gone = staged - current
        if gone:
            self._git("update-index", "-z", "--force-remove", "--stdin", input=_nul_list(gone))
        if current:
            self._git(
                "update-index", "-z", "--add", "--remove", "--replace", "--stdin",
                input=_nul_list(current),
            )  # fmt: skip
        self._staged = current

    def _git(self, *arguments: str, input: bytes | None = None) -> bytes:
        import subprocess

        command = [self._git_path]
        for key, value in _SETTINGS:
            command += ["-c", f"{key}={value}"]
        command += arguments
        name = f"git {arguments[0]}"
        try:
            completed = subprocess.run(
                command,
                cwd=self.root,
                env=self._env,
                input=input,
                capture_output=True,
                check=False,
            )
        except OSError as error:
            raise GitWorkspaceError(f"cannot run {name}: {error}") from None
        if completed.returncode != 0:
            detail = (completed.stderr.strip() or completed.stdout.strip()).decode(
                "utf-8", "backslashreplace"
            )
            raise GitWorkspaceError(
                f"{name} failed in {self.root!r} (exit {completed.returncode}): {_shown(detail)}"
            )
        return completed.stdout


def _walk(directory: int, prefix: bytes, depth: int, gitmodules: bool, scan: _Scan) -> None:
    """Sort the entries below ``directory`` (at ``prefix``, ``depth`` names deep) into
    ``scan``, entering subdirectories through descriptors and never following a link."""
    with os.scandir(directory) as entries:
        listed = builtins.list(entries)
    for entry in listed:
        name = os.fsencode(entry.name)
        path = prefix + name
        lowered = name.lower()
        if lowered == b".git":
            _keep_apart(entry, path, scan)
        elif entry.is_dir(follow_symlinks=False):
            if depth + 1 >= _MAX_DEPTH or len(path) >= _MAX_PATH_BYTES:
                _keep_apart(entry, path, scan)
                continue
            try:
                child = os.open(entry.name, _DIRECTORY_FLAGS, dir_fd=directory)
            except OSError as error:
                if error.errno in _GONE:
                    continue
                raise
            try:
                inner_gitmodules = gitmodules or lowered == b".gitmodules"
                _walk(child, path + b"/", depth + 1, inner_gitmodules, scan)
            finally:
                os.close(child)
        elif len(path) > _MAX_PATH_BYTES:
            _keep_apart(entry, path, scan)
        elif entry.is_symlink():
            # git refuses a symlink with a ``.gitmodules`` component in its path.
            if gitmodules or lowered == b".gitmodules":
                _keep_apart(entry, path, scan)
            else:
                scan.recorded.append(path)
        elif entry.is_file(follow_symlinks=False):
            scan.recorded.append(path)
        else:
            _keep_apart(entry, path, scan)


def _keep_apart(entry: os.DirEntry[str], path: bytes, scan: _Scan) -> None:
    try:
        status = entry.stat(follow_symlinks=False)
    except OSError as error:
        if error.errno in _GONE:
            return
        raise
    scan.unrecorded[path] = stat.S_IFMT(status.st_mode)


def _remove(root: str, path: bytes) -> None:
    """Remove the entry at ``path`` below ``root``, whatever it is, and the directories
    this leaves empty, as git does for files, never following a link; nothing happens
    if a directory on the way is gone or is no longer a directory."""
    *parents, name = path.split(b"/")
    chain = [os.open(root, _DIRECTORY_FLAGS)]  # the root, then each parent, open
    try:
        for part in parents:
            try:
                chain.append(os.open(part, _DIRECTORY_FLAGS, dir_fd=chain[-1]))
            except OSError as error:
                if error.errno in _GONE:
                    return
                raise
        try:
            status = os.stat(name, dir_fd=chain[-1], follow_symlinks=False)
        except FileNotFoundError:
            return
        if stat.S_ISDIR(status.st_mode):
            _remove_directory(chain[-1], name)
        else:
            os.unlink(name, dir_fd=chain[-1])
        for depth in range(len(parents), 0, -1):
            try:
                os.rmdir(parents[depth - 1], dir_fd=chain[depth - 1])
            except OSError:
                return  # not empty (or not ours to remove): the directories above are not
    finally:
        for directory in chain:
            os.close(directory)


def _remove_directory(parent: int, name: bytes) -> None:
    """Remove the directory ``name`` in ``parent`` and everything in it.

    Directories found below are moved up into the top one and emptied one at a time, so
    two descriptors suffice however deep the tree is.
    """
    top = os.open(name, _DIRECTORY_FLAGS, dir_fd=parent)
    try:
        taken = set(os.listdir(top))
        waiting: builtins.list[str | None] = [None]
        moved = 0
        while waiting:
            current = waiting.pop()
            directory = top if current is None else os.open(current, _DIRECTORY_FLAGS, dir_fd=top)
            try:
                with os.scandir(directory) as entries:
                    listed = builtins.list(entries)
                for entry in listed:
                    if not entry.is_dir(follow_symlinks=False):
                        os.unlink(entry.name, dir_fd=directory)
                    elif current is None:
                        waiting.append(entry.name)
                    else:
                        while (fresh := f".removing-{moved}") in taken:
                            moved += 1
                        os.rename(entry.name, fresh, src_dir_fd=directory, dst_dir_fd=top)
                        taken.add(fresh)
                        waiting.append(fresh)
            finally:
                if current is not None:
                    os.close(directory)
            if current is not None:
                os.rmdir(current, dir_fd=top)
    finally:
        os.close(top)
    os.rmdir(name, dir_fd=parent)


def _nul_list(paths: frozenset[bytes]) -> bytes:
    return b"".join(path + b"\0" for path in paths)


def _shown(text: str) -> str:
    """``text``, cut to a length a message can carry."""
    if len(text) <= _SHOWN_CHARACTERS:
        return text
    return f"{text[:_SHOWN_CHARACTERS]}... ({len(text)} characters)"
