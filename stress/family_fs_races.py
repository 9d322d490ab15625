"""Filesystem races: tool calls on a ``HostFilesystem`` while its directories are swapped.

Calls go through the real ``ToolExecutor`` (the file tools of ``VfsToolsSection`` and a
tool that makes a few changes and then fails or succeeds). Meanwhile a thread keeps
renaming the directory ``work`` away and putting a symlink to an outside directory in
its place. The root also holds hard links to outside files, FIFOs and a symlink loop.

Counted: escapes (any entry created, changed or deleted outside the root, compared
byte for byte with the outside tree before the campaign, and any result showing an
outside file's content or name: they all hold ``SECRET``), calls that raised out of
``execute``, calls that left other than one ``ToolInvoked``, and state leaks (a
failed call whose writes or deletions inside the root survived its rollback).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import random
import stat
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from stress.report import FamilyReport
from wink import (
    Filesystem,
    HostFilesystem,
    MarkdownSection,
    Prompt,
    PromptTemplate,
    Session,
    Tool,
    ToolCall,
    ToolContext,
    ToolExecutor,
    ToolInvoked,
    ToolResult,
)
from wink.contrib.vfs import VfsToolsSection
from wink.resources import FilesystemError

QUICK_CALLS = 150
"""Calls at scale 1 (a fraction of a second to a second or two on one core)."""

KEEP = b"keep: only failing calls delete this file"

Tree = dict[str, "bytes | str | None"]


@dataclass(frozen=True)
class Change:
    """One operation of a ``scribble`` call."""

    operation: str
    """``write`` or ``delete``."""
    path: str


@dataclass(frozen=True)
class ScribbleParams:
    """Changes to make, then fail (after the changes) or succeed."""

    changes: list[Change] = field(default_factory=list)
    marker: str = ""
    """Written in every file this call writes, so that a leak can be found."""
    fail: bool = False


def scribble(params: ScribbleParams, *, context: ToolContext) -> ToolResult[None]:
    """Make the changes (refusals are expected and ignored), then fail if asked."""
    filesystem = context.filesystem
    assert filesystem is not None
    for change in params.changes:
        with contextlib.suppress(FilesystemError):
            if change.operation == "write":
                filesystem.write(change.path, params.marker)
            else:
                filesystem.delete(change.path)
    if params.fail:
        raise RuntimeError("failing after its changes, as asked")
    return ToolResult(message="done")


def disk_tree(top: Path) -> Tree:
    """Every entry under ``top``, links not followed: bytes, ``"-> target"`` or ``None``."""
    found: Tree = {}
    for directory, names, files in os.walk(top):
        for name in names + files:
            path = Path(directory, name)
            key = str(path.relative_to(top))
            if path.is_symlink():
                found[key] = "-> " + os.readlink(path)
            elif path.is_dir():
                found[key] = None
            elif path.is_file():
                with contextlib.suppress(OSError):
                    found[key] = path.read_bytes()
            else:
                found[key] = "special"
    return found


def differences(before: Tree, after: Tree) -> list[str]:
    """The entries created, deleted or changed between two trees."""
    return sorted(key for key in before.keys() | after.keys() if before.get(key) != after.get(key))


def build(top: Path) -> tuple[Path, Path]:
    """A root and an outside directory with the traps the campaign races through."""
    root, outside = top / "root", top / "outside"
    (outside / "sub").mkdir(parents=True)
    (outside / "a.txt").write_bytes(b"SECRET outside a")
    (outside / "sub" / "b.txt").write_bytes(b"SECRET outside b")
    (outside / "SECRET.txt").write_bytes(b"SECRET: only outside")
    (outside / "hard.txt").write_bytes(b"SECRET outside, hard-linked from the root")
    (root / "work" / "sub").mkdir(parents=True)
    (root / "stable").mkdir()
    (root / "work" / "a.txt").write_bytes(b"inside a")
    (root / "work" / "keep.txt").write_bytes(KEEP)
    (root / "stable" / "keep.txt").write_bytes(KEEP)
    os.link(outside / "hard.txt", root / "hard.txt")
    os.link(outside / "a.txt", root / "work" / "hard.txt")
    os.mkfifo(root / "pipe")
    os.mkfifo(root / "work" / "pipe")
    (root / "loop").symlink_to("loop")
    return root, outside


class Swapper:
    """A thread that keeps swapping ``root/work`` for a symlink to ``outside``."""

    def __init__(self, root: Path, outside: Path) -> None:
        self._root, self._outside = root, outside
        self.quiet = threading.Lock()
        """Held around each step: hold it to look at the root between two steps."""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="fs-races-swapper", daemon=True)

    def _run(self) -> None:
        work, parked = self._root / "work", self._root / "parked"
        while not self._stop.is_set():
            for step in range(4):
                # A call may have made or moved an entry meanwhile: the step then fails.
                with self.quiet, contextlib.suppress(OSError):
                    if step == 0:
                        work.rename(parked)
                    elif step == 1:
                        work.symlink_to(self._outside)
                    elif step == 2:
                        work.unlink()
                    else:
                        parked.rename(work)
                time.sleep(0.0001)  # let a waiting checker take ``quiet`` (locks are not fair)

    def __enter__(self) -> Swapper:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join(10)


def random_call(rng: random.Random, number: int) -> ToolCall:
    """A file-tool call, or a ``scribble`` call that fails six times in ten."""
    marker = f"call-{number}-marker"
    paths = [
        "work/a.txt",
        "work/sub/b.txt",
        f"work/new-{number}/x.txt",
        "work/hard.txt",
        "work/pipe",
        "hard.txt",
        "pipe",
        "loop/x.txt",
        "parked/a.txt",
        "stable/a.txt",
        f"stable/new-{number}/y.txt",
    ]
    traps = ["pipe", "work/pipe", "hard.txt", "work/hard.txt", "loop", "loop/x.txt", "work"]
    kind = rng.randrange(6)
    arguments: dict[str, object]
    if kind == 0:
        arguments = {"path": rng.choice(traps if rng.random() < 0.5 else [*paths, "stable"])}
        name = rng.choice(["read_file", "list_directory"])
    elif kind == 1:
        arguments = {"path": rng.choice(traps if rng.random() < 0.3 else paths), "content": marker}
        name = "write_file"
    elif kind == 2:
        arguments = {"path": rng.choice(paths), "old_text": "a", "new_text": marker}
        name = "edit_file"
    else:
        fail = rng.random() < 0.6
        deletable = [*paths, "work/keep.txt", "stable/keep.txt"] if fail else paths
        changes = [
            {"operation": "write", "path": rng.choice(paths)}
            if rng.random() < 0.7
            else {"operation": "delete", "path": rng.choice(deletable)}
            for _ in range(rng.randint(1, 4))
        ]
        arguments = {"changes": changes, "marker": marker, "fail": fail}
        name = "scribble"
    return ToolCall(name, json.dumps(arguments), call_id=f"c{number}")


def leaks(root: Path, call: ToolCall, number: int) -> list[str]:
    """What a failed call left where it wrote: its marker or new directories, or a lost
    keep file (under ``work`` or wherever the swapper parked it)."""
    arguments = json.loads(str(call.arguments))
    paths = [change["path"] for change in arguments.get("changes", [])] + [
        arguments.get("path", "")
    ]
    candidates = {f"{place}/new-{number}" for place in ("work", "parked", "stable")}
    for path in paths:
        candidates.add(path)
        for old, new in (("work/", "parked/"), ("parked/", "work/")):
            if path.startswith(old):
                candidates.add(new + path.removeprefix(old))
    marker = f"call-{number}-marker".encode()
    found = []
    for candidate in sorted(candidates):
        held = entry(root, candidate)
        if (
            held == "directory"
            if "new-" in candidate
            else isinstance(held, bytes) and marker in held
        ):
            found.append(candidate)
    kept = [
        name
        for name in ("stable/keep.txt", "work/keep.txt", "parked/keep.txt")
        if entry(root, name) == KEEP
    ]
    if len(kept) != 2:
        found.append(f"keep files left: {kept}")
    return found


def entry(root: Path, path: str) -> bytes | str | None:
    """A file's bytes, ``"directory"``, or ``None`` (missing, special, or behind a symlink)."""
    current = root
    for name in path.split("/"):
        current = current / name
        try:
            status = current.lstat()
        except OSError:
            return None
        if stat.S_ISLNK(status.st_mode):
            return None
    if stat.S_ISDIR(status.st_mode):
        return "directory"
    if stat.S_ISREG(status.st_mode):
        with contextlib.suppress(OSError):
            return current.read_bytes()
    return None


def run(scale: float) -> FamilyReport:
    """Race ``150 * scale`` calls against directory swaps; count what escaped or leaked."""
    report = FamilyReport("fs_races")
    calls = max(1, round(QUICK_CALLS * scale))
    tool = Tool[ScribbleParams, None](
        name="scribble", description="Make changes, then fail if asked.", handler=scribble
    )
    template = PromptTemplate(
        ns="stress",
        key="fs_races",
        sections=[VfsToolsSection(), MarkdownSection(title="Scribble", tools=[tool])],
    )
    # Most calls fail on purpose: their warnings would bury the tally.
    wink_logger = logging.getLogger("wink")
    level = wink_logger.level
    wink_logger.setLevel(logging.ERROR)
    try:
        return campaign(report, template, calls)
    finally:
        wink_logger.setLevel(level)


def campaign(report: FamilyReport, template: PromptTemplate, calls: int) -> FamilyReport:
    """Run ``calls`` random calls against a swapped directory and fill ``report``."""
    rng = random.Random(8)
    with tempfile.TemporaryDirectory() as top:
        root, outside = build(Path(top))
        baseline = disk_tree(outside)
        session = Session()
        prompt = Prompt(template).bind(resources={Filesystem: HostFilesystem(root)})
        executor = ToolExecutor(prompt=prompt, session=session)
        with Swapper(root, outside) as swapper:
            for number in range(calls):
                call = random_call(rng, number)
                recorded = len(session[ToolInvoked].all())
                with report.measure():
                    try:
                        result = executor.execute(call)
                    except BaseException as error:  # counted, whatever it is
                        report.note("uncaught", f"{call.name} {call.arguments!r}: {error!r}")
                        continue
                if "SECRET" in result.message + repr(result.value):
                    report.note("escapes", f"read outside: {call.name} {call.arguments!r}")
                if len(session[ToolInvoked].all()) - recorded != 1:
                    report.note("lost_events", f"{call.name} {call.arguments!r}")
                if not result.success:
                    with swapper.quiet:
                        found = leaks(root, call, number)
                    for leak in found:
                        report.note("state_leaks", f"{call.name} {call.arguments!r}: {leak}")
                if number % 10 == 9:
                    with swapper.quiet:
                        escaped = differences(baseline, disk_tree(outside))
                    for key in escaped:
                        report.note("escapes", f"outside/{key} after {call.arguments!r}")
                    baseline = disk_tree(outside)
        for key in differences(baseline, disk_tree(outside)):
            report.note("escapes", f"outside/{key}")
        if disk_tree(root).get("loop") != "-> loop":
            report.note("state_leaks", "the symlink loop was removed")
    return report
