"""GitWorkspace under random changes made behind its back: a failed call undoes them all.

Each input builds a small random tree, binds it as a ``GitWorkspace``, and runs a
tool whose handler changes the directory directly (``os`` calls, as a shell
command would): it writes, deletes and renames files, swaps files and
directories, flips the executable bit, and plants symlinks, some pointing outside
the root, and then fails. Afterwards:

- ``state_leaks``: the tree differs from what it was before the call;
- ``escapes``: anything appeared in the directory beside the root;
- ``uncaught``: an exception out of ``execute``.
"""

from __future__ import annotations

import os
import random
import shutil
import tempfile
from pathlib import Path

from stress.report import FamilyReport
from wink import (
    Filesystem,
    GitWorkspace,
    MarkdownSection,
    Prompt,
    PromptTemplate,
    Session,
    Tool,
    ToolContext,
    ToolResult,
)
from wink.runtime import ToolCall, ToolExecutor

QUICK_INPUTS = 4


def _tree(root: Path) -> dict[str, str]:
    found: dict[str, str] = {}
    for directory, _, files in os.walk(root):
        for name in files:
            path = Path(directory) / name
            relative = path.relative_to(root).as_posix()
            if path.is_symlink():
                found[relative] = "-> " + os.readlink(path)
            else:
                executable = "x" if os.access(path, os.X_OK) else "-"
                found[relative] = executable + path.read_bytes().hex()
    return found


def _populate(root: Path, rng: random.Random) -> None:
    for index in range(rng.randint(3, 12)):
        directory = root / rng.choice(["", "a", "a/b", "c"])
        directory.mkdir(parents=True, exist_ok=True)
        (directory / f"f{index}.txt").write_bytes(rng.randbytes(rng.randint(0, 64)))


def _mutate(root: Path, outside: Path, rng: random.Random) -> None:
    files = sorted(path for path in root.rglob("*") if path.is_file() and not path.is_symlink())
    for _ in range(rng.randint(1, 8)):
        action = rng.choice(
            ["write", "delete", "create", "rename", "swap", "swaplink", "chmod", "link"]
        )
        target = rng.choice(files) if files else None
        if action == "write" and target is not None and target.exists():
            target.write_bytes(rng.randbytes(16))
        elif action == "delete" and target is not None and target.exists():
            target.unlink()
        elif action == "create":
            new = root / rng.choice(["new", "a/new", "d/e"]) / f"n{rng.randint(0, 99)}.bin"
            if _through_a_link(root, new):
                # The handler's own raw writes through a link it planted land outside
                # whatever wink does; only what wink's rollback does is measured here.
                continue
            new.parent.mkdir(parents=True, exist_ok=True)
            new.write_bytes(b"created")
        elif action == "rename" and target is not None and target.exists():
            target.rename(target.with_suffix(".moved"))
        elif action == "swap" and (root / "a").is_dir() and not (root / "a").is_symlink():
            shutil.rmtree(root / "a")
            (root / "a").write_text("now a file")
        elif action == "swaplink" and (root / "a").is_dir() and not (root / "a").is_symlink():
            shutil.rmtree(root / "a")  # a restore must rebuild a/, not write through the link
            (root / "a").symlink_to(outside)
        elif action == "chmod" and target is not None and target.exists():
            target.chmod(0o755)
        elif action == "link":
            link = root / f"link{rng.randint(0, 9)}"
            if not os.path.lexists(link):
                link.symlink_to(rng.choice([outside, Path("a"), outside / "planted.txt"]))


def _through_a_link(root: Path, path: Path) -> bool:
    """Whether a folder between ``root`` and ``path`` is a symlink (or not a folder)."""
    folder = root
    for part in path.relative_to(root).parts[:-1]:
        folder = folder / part
        if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
            return True
    return False


def _changing_tool(root: Path, outside: Path, rng: random.Random) -> Tool[None, None]:
    def change(params: None, *, context: ToolContext) -> ToolResult[None]:
        _mutate(root, outside, rng)
        raise RuntimeError("planned failure")

    return Tool[None, None](name="change", description="Change files.", handler=change)


def run(scale: float) -> FamilyReport:
    """Run ``QUICK_INPUTS * scale`` random rollbacks."""
    report = FamilyReport("git_workspace")
    rng = random.Random(11)
    for _ in range(max(1, int(QUICK_INPUTS * scale))):
        with report.measure(), tempfile.TemporaryDirectory(prefix="wink-stress-") as scratch:
            root = Path(scratch) / "root"
            outside = Path(scratch) / "outside"
            root.mkdir()
            outside.mkdir()
            _populate(root, rng)
            before = _tree(root)

            template = PromptTemplate(
                ns="stress",
                key="git",
                sections=[MarkdownSection(title="T", tools=[_changing_tool(root, outside, rng)])],
            )
            with GitWorkspace(root, git_dir=str(Path(scratch) / "git")) as workspace:
                prompt = Prompt(template).bind(resources={Filesystem: workspace})
                try:
                    ToolExecutor(prompt=prompt, session=Session()).execute(ToolCall("change"))
                except Exception as error:
                    report.note("uncaught", f"{type(error).__name__}: {error}")
            after = _tree(root)
            if after != before:
                changed = sorted(set(after.items()) ^ set(before.items()))[:3]
                report.note("state_leaks", f"tree differs after rollback: {changed}")
            if list(outside.iterdir()):
                report.note("escapes", f"outside holds {sorted(os.listdir(outside))}")
    return report
