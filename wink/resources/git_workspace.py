"""``GitWorkspace``: a host directory whose snapshots are git trees, so a restore undoes
every change, however it was made.

``HostFilesystem`` journals the writes made through its own methods; a handler that
runs a formatter or a shell command in the root leaves changes it never saw.
``GitWorkspace`` snapshots the directory itself: ``snapshot()`` stages the whole
tree in a private git index (untracked and ignored files included) and writes it as
a tree object; ``restore(token)`` puts the directory back to that tree: files
changed are rewritten, files deleted come back, files created are removed (with
the directories they leave empty). Both cost about what changed since the last
snapshot or restore: git re-hashes only files whose stat data changed, plus one
``lstat`` per file.

The git directory lives outside the root (a private temporary directory unless
``git_dir`` is given), so the workspace's files never see it and a ``.gitignore`` in
the root changes nothing. The ``git`` command does the work (``git`` must be on
``PATH``); user, system and repository configuration, hooks and filters are not
read.

What a snapshot does not cover:

- empty directories (git records files, not directories): one created after a
  snapshot stays after a restore, one removed is not recreated;
- the contents of a ``.git`` directory or of a nested repository inside the root
  (git never records them; a nested repository without a commit is left out
  entirely);
- ownership, timestamps and permission bits other than the executable bit.

Every version of a file seen by a snapshot or a restore stays in the object store
until ``close()`` deletes it (git's garbage collection is off, so that no snapshot
ever loses its tree); a long session that rewrites large files grows it.

File operations (``read``, ``write``, ``list``...) are those of ``HostFilesystem``:
confined to the root, refusing any path that leaves it, through ``..`` or a symlink.
git itself never writes through a symlink when it restores.
"""

from __future__ import annotations

import builtins
import os
import re
import threading
from dataclasses import dataclass
from types import TracebackType

from wink.resources.filesystem import FilesystemError, HostFilesystem

__all__ = ["GitWorkspace", "GitWorkspaceError"]


class GitWorkspaceError(FilesystemError):
    """A git command failed, or the workspace cannot be set up; names the command."""


_NO_COMMIT = re.compile(r"error: '(.+?)/?' does not have a commit checked out")


@dataclass(frozen=True, slots=True)
class _TreeSnapshot:
    owner: GitWorkspace
    tree: str
    """The id of the tree object holding the directory as it was."""


# Read no configuration but ours: a user's or system's hooks, filters, fsmonitor or
# autocrlf must not change what is recorded or restored.
_ISOLATION = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_OPTIONAL_LOCKS": "0",
    "LC_ALL": "C",
}
_CONFIG = (
    ("core.autocrlf", "false"),
    ("core.symlinks", "true"),
    ("core.filemode", "true"),
    ("core.fsmonitor", "false"),
    ("core.hooksPath", os.devnull),
    ("core.untrackedCache", "true"),
    ("core.checkStat", "default"),
    ("gc.auto", "0"),
)


class GitWorkspace:
    """A ``Filesystem`` over the directory ``root`` whose snapshots are git trees.

    ``snapshot()`` and ``restore()`` act on everything under the root, whoever
    changed it (a tool through this object, a subprocess, another library). Any
    snapshot may be restored, any number of times, in any order. ``close()`` (or
    ``with``) deletes the private git directory; the files under the root stay.
    """

    __slots__ = ("_env", "_files", "_git_dir", "_left_out", "_lock", "_owns_git_dir")

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
        if shutil.which("git") is None:
            raise GitWorkspaceError("GitWorkspace needs the git command, and none is on PATH")
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
        self._left_out: set[str] = set()  # nested repositories without a commit
        self._env = {
            **os.environ,
            **_ISOLATION,
            "GIT_DIR": resolved,
            "GIT_WORK_TREE": root_path,
            "GIT_INDEX_FILE": os.path.join(resolved, "index"),
        }
        for name in ("GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE"):
            self._env.pop(name, None)
        if not os.path.exists(os.path.join(resolved, "HEAD")):
            self._git("init", "--quiet")
        for key, value in _CONFIG:
            self._git("config", key, value)

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
        """Create or replace the file at ``path``, creating missing parent directories."""
        self._files.write(path, content)

    def exists(self, path: str) -> bool:
        """Whether a file or directory exists at ``path``."""
        return self._files.exists(path)

    def delete(self, path: str) -> None:
        """Remove the file at ``path`` (directories are refused)."""
        self._files.delete(path)

    def list(self, path: str = ".") -> builtins.list[str]:
        """Sorted names directly under the directory ``path``; directories end with ``/``."""
        return self._files.list(path)

    # Snapshotable.

    def snapshot(self) -> object:
        """Record the whole directory as a git tree; costs about what changed since."""
        with self._lock:
            self._stage_everything()
            tree = self._git("write-tree").strip()
            return _TreeSnapshot(self, tree)

    def restore(self, snapshot: object) -> None:
        """Put the directory back to ``snapshot``: every change since is undone."""
        if not isinstance(snapshot, _TreeSnapshot) or snapshot.owner is not self:
            raise GitWorkspaceError(f"not a snapshot of this GitWorkspace: {snapshot!r}")
        with self._lock:
            # Staged first, so that files created since are in the index and removed.
            self._stage_everything()
            self._git("read-tree", "--reset", "-u", snapshot.tree)

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

    def _stage_everything(self) -> None:
        # --force: ignored files are part of the workspace too. A nested repository
        # without a commit cannot be recorded at all: it is left out, as git leaves
        # out the inside of the ones it records.
        while True:
            excluded = [f":(exclude,literal){path}" for path in sorted(self._left_out)]
            try:
                self._git("add", "--all", "--force", "--", ".", *excluded)
                return
            except GitWorkspaceError as error:
                found = set(_NO_COMMIT.findall(str(error))) - self._left_out
                if not found:
                    raise
                self._left_out |= found

    def _git(self, *arguments: str) -> str:
        import subprocess

        command = ["git", *arguments]
        try:
            completed = subprocess.run(
                command,
                cwd=self.root,
                env=self._env,
                capture_output=True,
                text=True,
                check=False,
            )
        except OSError as error:
            raise GitWorkspaceError(f"cannot run {' '.join(command)}: {error}") from None
        if completed.returncode != 0:
            detail = completed.stderr.strip() or completed.stdout.strip()
            raise GitWorkspaceError(
                f"{' '.join(command)} failed in {self.root!r} (exit {completed.returncode}): "
                f"{detail}"
            )
        return completed.stdout
