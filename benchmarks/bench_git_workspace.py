"""GitWorkspace snapshot and restore cost against tree size and against what changed.

For trees of 1,000 and 10,000 files (1 KB each), K files are changed by a plain
write (as a shell command would), then the workspace is snapshotted; K files are
changed again and the first snapshot is restored. Each figure is the best of 5.
Both include the workspace's own walk of the tree (one ``scandir`` per directory),
which decides what git is shown, and the staging of every path it found.

Floors, measured in the same run on the same tree:
- ``write-tree``: one ``git write-tree`` of the already staged index, the least a
  git-backed snapshot can cost (one process, no file read);
- ``copy K``: copying the K changed files' bytes, the least any rollback of
  those files costs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from wink.resources import GitWorkspace

TREE_SIZES = (1_000, 10_000)
CHANGED = (1, 100)
REPEAT = 5
FILE_BYTES = 1024


def _make_tree(root: Path, files: int) -> list[Path]:
    paths = []
    for index in range(files):
        directory = root / f"pkg{index // 100:03d}"
        directory.mkdir(exist_ok=True)
        path = directory / f"module{index % 100:02d}.py"
        path.write_bytes(b"x" * FILE_BYTES)
        paths.append(path)
    return paths


def _change(paths: list[Path], count: int, round_number: int) -> None:
    for path in paths[:count]:
        path.write_bytes(f"round {round_number}\n".encode() * 64)


def _best_ms(prepare: Callable[[int], None], measured: Callable[[], object]) -> float:
    best = float("inf")
    for round_number in range(REPEAT):
        prepare(round_number)
        start = time.perf_counter()
        measured()
        best = min(best, time.perf_counter() - start)
    return best * 1e3


def _row(
    workspace: GitWorkspace, paths: list[Path], changed: int, copies: Path
) -> tuple[float, float, float, float]:
    """Snapshot, restore and the two floors, in milliseconds, for ``changed`` files."""
    base = workspace.snapshot()
    counter = iter(range(10**6))

    def change(_: int) -> None:
        _change(paths, changed, next(counter))

    env = {
        **os.environ,
        "GIT_DIR": workspace.git_dir,
        "GIT_WORK_TREE": workspace.root,
        "GIT_CONFIG_NOSYSTEM": "1",
    }

    def write_tree() -> None:
        subprocess.run(["git", "write-tree"], env=env, capture_output=True, check=True)

    def copy_changed() -> None:
        for index, path in enumerate(paths[:changed]):
            shutil.copyfile(path, copies / f"{index}")

    snapshot_ms = _best_ms(change, workspace.snapshot)
    restore_ms = _best_ms(change, lambda: workspace.restore(base))
    write_tree_ms = _best_ms(lambda _: None, write_tree)
    copy_ms = _best_ms(lambda _: None, copy_changed)
    return snapshot_ms, restore_ms, write_tree_ms, copy_ms


def main() -> None:
    """Print snapshot and restore times per tree size and change size, with the floors."""
    print(
        f"{'files':>7} {'changed':>7} {'snapshot ms':>12} {'restore ms':>11} "
        f"{'floor write-tree ms':>20} {'floor copy K ms':>16}"
    )
    for files in TREE_SIZES:
        with tempfile.TemporaryDirectory(prefix="wink-bench-") as scratch:
            root = Path(scratch) / "tree"
            root.mkdir()
            paths = _make_tree(root, files)
            copies = Path(scratch) / "copies"
            copies.mkdir()
            with GitWorkspace(root, git_dir=os.path.join(scratch, "git")) as workspace:
                for changed in CHANGED:
                    snapshot_ms, restore_ms, write_tree_ms, copy_ms = _row(
                        workspace, paths, changed, copies
                    )
                    print(
                        f"{files:>7} {changed:>7} {snapshot_ms:>12.1f} {restore_ms:>11.1f} "
                        f"{write_tree_ms:>20.1f} {copy_ms:>16.2f}"
                    )


if __name__ == "__main__":
    main()
