"""Deep, long and odd paths through tool calls, on ``HostFilesystem`` and ``InMemoryFilesystem``.

Calls go through the real ``ToolExecutor``: the file tools of ``VfsToolsSection`` and a
tool that writes and deletes several paths and then fails or succeeds. Paths are
random: hundreds of levels deep (under and over ``MAX_PATH_DEPTH``), names around
``MAX_NAME_BYTES`` (ASCII and two-byte letters), totals around ``MAX_PATH_BYTES``, up
to a hundred thousand ``./``, ``../`` or ``/`` segments, 20,000 levels at once, NUL
bytes, lone surrogates, absolute paths under the mount point and outside it. Each
filesystem is used for a round of calls and then replaced, so that comparing whole
trees stays cheap.

Counted:

- ``escapes``: any change beside the host root (the directory ``outside`` is compared
  with its first state after every round), a result showing an outside file's content
  (they hold ``SECRET``), or a successful result naming a path outside the root;
- ``state_leaks``: a failed call after which the tree is not exactly what it was before
  (read independently of wink: ``os.fwalk`` on the host, ``list``/``read`` in memory);
  and cost defects, counted here too: a call slower than ``SLOWEST_SECONDS``, one whose
  peak traced memory passed ``MOST_BYTES``, or a result message longer than
  ``LONGEST_MESSAGE`` characters;
- ``uncaught``: an exception out of ``execute``;
- ``lost_events``: a call that left other than one ``ToolInvoked``.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import random
import shutil
import stat
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from stress.report import FamilyReport
from wink import (
    Filesystem,
    HostFilesystem,
    InMemoryFilesystem,
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
from wink.resources.filesystem import MAX_NAME_BYTES, MAX_PATH_BYTES, MAX_PATH_DEPTH

QUICK_INPUTS = 48
"""Calls at scale 1, half on each filesystem (about two seconds on one core)."""

ROUND = 12
"""Calls on one filesystem before it is replaced by a fresh one."""

SLOWEST_SECONDS = 5.0
MOST_BYTES = 64 * 1024 * 1024
LONGEST_MESSAGE = 16 * 1024

Tree = dict[str, "bytes | None"]


@dataclass(frozen=True)
class Change:
    """One operation of a ``deep_scribble`` call."""

    operation: str
    """``write`` or ``delete``."""
    path: str


@dataclass(frozen=True)
class ScribbleParams:
    """Changes to make, then fail (after the changes) or succeed."""

    changes: list[Change] = field(default_factory=list)
    marker: str = ""
    fail: bool = False


def deep_scribble(params: ScribbleParams, *, context: ToolContext) -> ToolResult[None]:
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


def _names(rng: random.Random, depth: int) -> str:
    letter = rng.choice(["d", "é", "dir"])
    return "".join(f"{letter}{level % 7}/" for level in range(depth))


def random_path(rng: random.Random, mount: str, written: list[str]) -> str:
    """A path from one of the odd families this campaign tries."""
    kind = rng.randrange(10)
    if kind < 3:  # deep: mostly shallow, often near the limit, sometimes over it
        shallow = rng.randint(1, 30)
        near = rng.randint(MAX_PATH_DEPTH - 40, MAX_PATH_DEPTH - 1)
        over = rng.randint(MAX_PATH_DEPTH, MAX_PATH_DEPTH + 60)
        depth = rng.choice([shallow, shallow, near, over])
        return _names(rng, depth) + f"f{rng.randrange(5)}.txt"
    if kind == 3:  # one long name, in bytes around the limit
        size = rng.choice([MAX_NAME_BYTES - 1, MAX_NAME_BYTES, MAX_NAME_BYTES + 1, 1000])
        name = "n" * size if rng.random() < 0.5 else "é" * (size // 2)
        return rng.choice(["", "long/"]) + name
    if kind == 4:  # a total length around the limit, in names of 254 bytes
        tail = MAX_PATH_BYTES - 16 * (MAX_NAME_BYTES - 1 + 1) + rng.randint(-2, 2)
        return ("m" * (MAX_NAME_BYTES - 1) + "/") * 16 + "t" * tail
    if kind == 5:  # many ``.``, ``..`` or ``/`` segments
        segment = rng.choice(["./", "../", "/", "a/../", "b//"])
        count = rng.choice([10, 1000, 1365, 2000, 100_000])
        return rng.choice(["", "x/"]) + segment * count + "y.txt"
    if kind == 6:
        return "a/" * 20_000 + "x"
    if kind == 7:  # absolute, inside and outside the mount point
        return rng.choice(
            [
                f"{mount}/{_names(rng, rng.randint(1, 50))}abs.txt",
                f"{mount}/../outside/secret.txt",
                f"{mount}/{'../' * 300}outside/secret.txt",
                "/etc/passwd",
                "/" + "/" * rng.randint(0, 5000),
            ]
        )
    if kind == 8:  # text a filesystem must refuse, or carry as it is
        return rng.choice(["a\x00b", "nul/\x00", "a\ud800b", "z/\udcff.txt", "", ".", "a/.."])
    return rng.choice(written) if written else "plain.txt"


def random_call(rng: random.Random, number: int, mount: str, written: list[str]) -> ToolCall:
    """A file-tool call, or a ``deep_scribble`` call that fails six times in ten."""
    marker = f"call-{number}-marker"
    path = random_path(rng, mount, written)
    kind = rng.randrange(5)
    arguments: dict[str, object]
    if kind == 0:
        name, arguments = rng.choice(["read_file", "list_directory", "delete_file"]), {"path": path}
    elif kind == 1:
        name, arguments = "write_file", {"path": path, "content": marker}
    else:
        paths = [path, *(random_path(rng, mount, written) for _ in range(rng.randint(0, 3)))]
        changes = [
            {"operation": "write" if rng.random() < 0.7 else "delete", "path": one} for one in paths
        ]
        name, arguments = (
            "deep_scribble",
            {
                "changes": changes,
                "marker": marker,
                "fail": rng.random() < 0.6,
            },
        )
    # Lone surrogates cannot travel as JSON text; such a path is refused by the
    # argument parser, which is fine: it must still be recorded and contained.
    text = json.dumps(arguments, ensure_ascii=True)
    return ToolCall(name, text, call_id=f"c{number}")


def host_tree(root: Path) -> Tree:
    """Every entry under ``root``, by descriptors (no path length limit), links not followed."""
    found: Tree = {}
    for directory, names, files, directory_fd in os.fwalk(root, follow_symlinks=False):
        relative = os.path.relpath(directory, root)
        prefix = "" if relative == "." else relative + "/"
        for name in names:
            found[prefix + name] = None
        for name in files:
            found[prefix + name] = _file_bytes(name, directory_fd)
    return found


def _file_bytes(name: str, directory_fd: int) -> bytes | None:
    try:
        status = os.stat(name, dir_fd=directory_fd, follow_symlinks=False)
        if not stat.S_ISREG(status.st_mode):
            return b"special"
        descriptor = os.open(name, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=directory_fd)
    except OSError:
        return b"unreadable"
    with os.fdopen(descriptor, "rb") as file:
        return file.read()


def memory_tree(filesystem: InMemoryFilesystem, directory: str = ".") -> Tree:
    """Every entry of ``filesystem``, read with its public methods."""
    found: Tree = {}
    pending = [directory]
    while pending:
        current = pending.pop()
        for name in filesystem.list(current):
            path = name if current == "." else f"{current}/{name}"
            if path.endswith("/"):
                found[path[:-1]] = None
                pending.append(path[:-1])
            else:
                found[path] = filesystem.read(path).encode("utf-8", "surrogateescape")
    return found


def differences(before: Tree, after: Tree) -> list[str]:
    """The entries created, deleted or changed between two trees."""
    return sorted(key for key in before.keys() | after.keys() if before.get(key) != after.get(key))


def _short(text: str) -> str:
    return text if len(text) <= 160 else text[:120] + f"... ({len(text)} characters)"


def run(scale: float) -> FamilyReport:
    """Run ``48 * scale`` calls with odd paths, half on each filesystem; count defects."""
    report = FamilyReport("deep_paths")
    calls = max(2, round(QUICK_INPUTS * scale))
    tool = Tool[ScribbleParams, None](
        name="deep_scribble", description="Make changes, then fail if asked.", handler=deep_scribble
    )
    template = PromptTemplate(
        ns="stress",
        key="deep_paths",
        sections=[VfsToolsSection(), MarkdownSection(title="Scribble", tools=[tool])],
    )
    wink_logger = logging.getLogger("wink")
    level = wink_logger.level
    wink_logger.setLevel(logging.ERROR)  # most calls fail on purpose
    try:
        with tempfile.TemporaryDirectory() as top:
            campaign(report, template, calls, Path(top))
    finally:
        wink_logger.setLevel(level)
    if report.worst_seconds > SLOWEST_SECONDS:
        report.note("state_leaks", f"a call took {report.worst_seconds:.1f} s")
    if report.worst_bytes > MOST_BYTES:
        report.note("state_leaks", f"a call peaked at {report.worst_bytes / 2**20:.0f} MiB")
    return report


def campaign(report: FamilyReport, template: PromptTemplate, calls: int, top: Path) -> None:
    """Run ``calls`` random calls, in rounds on fresh filesystems, and fill ``report``."""
    rng = random.Random(17)
    outside = top / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_bytes(b"SECRET: only outside")
    baseline = host_tree(outside)
    number = 0
    while number < calls:
        on_host = (number // ROUND) % 2 == 0
        root = top / f"root-{number}"
        root.mkdir()
        filesystem: Filesystem
        tree: Callable[[], Tree]
        if on_host:
            filesystem = HostFilesystem(root)
            tree = functools.partial(host_tree, root)
        else:
            memory = InMemoryFilesystem()
            filesystem = memory
            tree = functools.partial(memory_tree, memory)
        session = Session()
        executor = ToolExecutor(
            prompt=Prompt(template).bind(resources={Filesystem: filesystem}), session=session
        )
        written: list[str] = []
        for _ in range(min(ROUND, calls - number)):
            call = random_call(rng, number, filesystem.mount_point, written)
            number += 1
            one_call(report, executor, session, call, filesystem, tree, written)
        for key in differences(baseline, host_tree(outside)):
            report.note("escapes", f"outside/{key}")
        shutil.rmtree(root)  # by descriptors: deep trees are removed whatever their length


def one_call(
    report: FamilyReport,
    executor: ToolExecutor,
    session: Session,
    call: ToolCall,
    filesystem: Filesystem,
    tree: Callable[[], Tree],
    written: list[str],
) -> None:
    """Execute ``call`` and count what it did wrong."""
    described = f"{call.name} {_short(str(call.arguments))}"
    before = tree()
    recorded = len(session[ToolInvoked].all())
    with report.measure(memory=True):
        try:
            result = executor.execute(call)
        except BaseException as error:  # counted, whatever it is
            report.note("uncaught", f"{described}: {error!r}")
            return
    if len(session[ToolInvoked].all()) - recorded != 1:
        report.note("lost_events", described)
    text = result.message + repr(result.value)
    if "SECRET" in text:
        report.note("escapes", f"read outside: {described}")
    if len(result.message) > LONGEST_MESSAGE:
        report.note("state_leaks", f"a message of {len(result.message)} characters: {described}")
    if not result.success:
        for key in differences(before, tree())[:3]:
            report.note("state_leaks", f"{described} left {_short(key)}")
        return
    reported = getattr(result.value, "path", None)
    if isinstance(reported, str) and (reported.startswith(("/", "../")) or reported == ".."):
        report.note("escapes", f"{described} reported {_short(reported)}")
    arguments = json.loads(str(call.arguments))
    for path in [arguments.get("path")] + [c["path"] for c in arguments.get("changes", [])]:
        if isinstance(path, str):
            with contextlib.suppress(FilesystemError):
                if filesystem.exists(path) and len(written) < 50:
                    written.append(path)
