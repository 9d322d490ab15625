"""GitWorkspace against hostile git content planted in its tree.

Each input builds a small tree (some files with CRLF endings, ``$Id$`` or non-UTF-8
bytes, a FIFO, sometimes a repository of its own at the root) and binds it as a
``GitWorkspace``. Sometimes a first call succeeds after planting hostile content, so
that it stays; then a call plants more and fails; then a plain call must still run.
What is planted, at random: nested repositories (made with ``git init`` or written file
by file) whose configuration sets a key that runs a program, with hooks; ``.git``
files pointing at a repository outside the root whose configuration does the same;
``.gitattributes`` asking for conversions, filters and encodings; files and
directories whose names hold a newline or the byte 0xff; FIFOs and sockets; and writes
through the workspace to ``.git`` paths. Every planted program creates a marker file.

- ``escapes``: a marker exists, or the repository outside the root changed;
- ``state_leaks``: the tree after the failed call differs from before it (bytes, kinds,
  names), or the workspace refused the plain call after it;
- ``uncaught``: an exception out of ``execute``.
"""

from __future__ import annotations

import contextlib
import os
import random
import socket
import stat
import subprocess
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
from wink.resources import FilesystemError
from wink.runtime import ToolCall, ToolExecutor

QUICK_INPUTS = 4

# Keys whose value git runs as a program; ``{command}`` creates a marker.
_KEYS = (
    ("core", "fsmonitor", "{command}"),
    ("core", "pager", "{command}"),
    ("core", "sshCommand", "{command}"),
    ("core", "editor", "{command}"),
    ("core", "askPass", "{command}"),
    ("core", "alternateRefsCommand", "{command}"),
    ("core", "hooksPath", "{hooks}"),
    ("uploadpack", "packObjectsHook", "{command}"),
    ("diff", "external", "{command}"),
    ('diff "evil"', "textconv", "{command}"),
    ('filter "evil"', "clean", "{command}"),
    ('filter "evil"', "smudge", "{command}"),
    ('filter "evil"', "process", "{command}"),
    ('filter "evil"', "required", "true"),
    ("credential", "helper", "!{command}"),
    ("gpg", "program", "{command}"),
)
_HOOKS = ("post-checkout", "post-index-change", "pre-commit", "reference-transaction")
_ATTRIBUTES = (
    "* text\n",
    "*.txt text eol=crlf\n",
    "* ident\n",
    "* filter=evil diff=evil merge=evil\n",
    "* working-tree-encoding=UTF-16\n",
    "[attr]evil text eol=lf ident\n* evil\n",
)
_ODD_NAMES = ("plain", "new\nline", "latin\xff", "-dash", " space", ".GIT-ish", "a\\b")
_CONTENTS = (b"one\r\ntwo\r\n", b"$Id$\n", b"\xff\xfe\x00bytes", b"lf\n", b"")
_GIT_ENV = {
    "PATH": os.environ.get("PATH", os.defpath),
    "HOME": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}


def _entries(root: Path) -> dict[bytes, str]:
    """Every entry under ``root`` but directories, whatever its kind, by path."""
    found: dict[bytes, str] = {}
    base = os.fsencode(root)
    for directory, _, names in os.walk(base):
        for name in names:
            path = os.path.join(directory, name)
            mode = os.lstat(path).st_mode
            if stat.S_ISLNK(mode):
                description = "link " + repr(os.readlink(path))
            elif stat.S_ISREG(mode):
                with open(path, "rb") as file:
                    description = f"file {mode & 0o111:o} {file.read().hex()}"
            else:
                description = f"special {stat.S_IFMT(mode):o}"
            found[os.path.relpath(path, base)] = description
    return found


def _git(where: Path, *arguments: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=s", "-c", "user.email=s@s", *arguments],
        cwd=where,
        env=_GIT_ENV,
        capture_output=True,
        check=True,
    )


def _config(rng: random.Random, markers: Path, hooks: Path) -> str:
    lines = []
    for section, key, template in rng.sample(_KEYS, rng.randint(1, 4)):
        command = f"touch {markers}/{key}-{rng.randint(0, 999)} #"
        lines.append(f'[{section}]\n\t{key} = "{template.format(command=command, hooks=hooks)}"\n')
    return "".join(lines)


def _plant_hooks(hooks: Path, markers: Path) -> None:
    hooks.mkdir(parents=True, exist_ok=True)
    for hook in _HOOKS:
        (hooks / hook).write_text(f"#!/bin/sh\ntouch {markers}/hook-{hook}\n")
        (hooks / hook).chmod(0o755)


def _written_repository(git_dir: Path, config: str, markers: Path) -> None:
    """A repository made file by file, as a model with only ``write_file`` could."""
    for name, text in {
        "HEAD": "ab" * 20 + "\n",
        "refs/heads/.keep": "",
        "objects/.keep": "",
        "config": config,
    }.items():
        (git_dir / name).parent.mkdir(parents=True, exist_ok=True)
        (git_dir / name).write_text(text)
    _plant_hooks(git_dir / "hooks", markers)


def _plant(root: Path, outside: Path, markers: Path, rng: random.Random, tag: str) -> None:
    """Hostile content in fresh places under ``root`` (``tag`` keeps them apart)."""
    for index in range(rng.randint(2, 6)):
        place = root / f"{rng.choice(_ODD_NAMES)}-{tag}{index}"
        action = rng.choice(["init", "written", "gitfile", "attributes", "odd", "fifo", "socket"])
        if action == "init":
            place.mkdir()
            (place / "f.txt").write_bytes(rng.choice(_CONTENTS))
            _git(place, "init", "-q")
            _git(place, "add", "--all")
            _git(place, "commit", "-qm", "planted")
            with (place / ".git" / "config").open("a") as config:
                config.write(_config(rng, markers, place / "hooks"))
            _plant_hooks(place / ".git" / "hooks", markers)
            _plant_hooks(place / "hooks", markers)
        elif action == "written":
            _written_repository(place / ".git", _config(rng, markers, place / "h"), markers)
            (place / "f.txt").write_bytes(rng.choice(_CONTENTS))
        elif action == "gitfile":
            place.mkdir()
            (place / ".git").write_text(f"gitdir: {outside / '.git'}\n")
            (place / "f.txt").write_bytes(rng.choice(_CONTENTS))
        elif action == "attributes":
            place.mkdir()
            (place / ".gitattributes").write_text(rng.choice(_ATTRIBUTES))
            (place / "f.txt").write_bytes(rng.choice(_CONTENTS))
        elif action == "odd":
            place.mkdir()
            (place / rng.choice(_ODD_NAMES)).write_bytes(rng.choice(_CONTENTS))
        elif action == "fifo":
            os.mkfifo(place)
        else:
            with socket.socket(socket.AF_UNIX) as listener:
                listener.bind(str(root / f"s{tag}{index}"))


def _change_files(root: Path, rng: random.Random) -> None:
    files = sorted(path for path in root.glob("*.txt") if path.is_file())
    for path in rng.sample(files, min(len(files), rng.randint(0, 3))):
        path.write_bytes(rng.choice(_CONTENTS) + b"changed")
    if rng.random() < 0.5:
        (root / ".gitattributes").write_text(rng.choice(_ATTRIBUTES))


def _populate(root: Path, outside: Path, markers: Path, rng: random.Random) -> None:
    for index in range(rng.randint(2, 6)):
        (root / f"f{index}.txt").write_bytes(rng.choice(_CONTENTS))
    if rng.random() < 0.5:
        (root / ".gitattributes").write_text(rng.choice(_ATTRIBUTES))
    if rng.random() < 0.5:
        os.mkfifo(root / "kept.fifo")
    if rng.random() < 0.3:
        _written_repository(root / ".git", _config(rng, markers, root / "h"), markers)
    outside.mkdir()
    (outside / "o.txt").write_text("outside\n")
    _git(outside, "init", "-q")
    _git(outside, "add", "--all")
    _git(outside, "commit", "-qm", "outside")
    with (outside / ".git" / "config").open("a") as config:
        config.write(_config(rng, markers, outside / "hooks"))
    _plant_hooks(outside / ".git" / "hooks", markers)


def _template(root: Path, outside: Path, markers: Path, rng: random.Random) -> PromptTemplate:
    def plant(params: None, *, context: ToolContext) -> ToolResult[None]:
        _plant(root, outside, markers, rng, "kept")
        return ToolResult(message="planted", value=None)

    def hostile(params: None, *, context: ToolContext) -> ToolResult[None]:
        workspace = context.require_filesystem()
        for path in (".git/config", "sub/.git/config", "x/.GIT/HEAD"):
            # Refused; were it not, the change would show as a leak.
            with contextlib.suppress(FilesystemError):
                workspace.write(path, "[core]\n\tfsmonitor = touch planted\n")
        workspace.write(f"via-write-{rng.randint(0, 99)}.txt", "written\n")
        _change_files(root, rng)
        _plant(root, outside, markers, rng, "failed")
        raise RuntimeError("planned failure")

    def plain(params: None, *, context: ToolContext) -> ToolResult[None]:
        return ToolResult(message="ran", value=None)

    tools = [
        Tool[None, None](name=name, description="Stress.", handler=handler)
        for name, handler in (("plant", plant), ("hostile", hostile), ("plain", plain))
    ]
    return PromptTemplate(
        ns="stress", key="git_config", sections=[MarkdownSection(title="T", tools=tools)]
    )


def run(scale: float) -> FamilyReport:
    """Run ``QUICK_INPUTS * scale`` hostile trees through a failed call each."""
    report = FamilyReport("git_config")
    rng = random.Random(23)
    for _ in range(max(1, int(QUICK_INPUTS * scale))):
        with report.measure(), tempfile.TemporaryDirectory(prefix="wink-stress-") as scratch:
            root, outside, markers = (Path(scratch) / name for name in ("r", "o", "m"))
            root.mkdir()
            markers.mkdir()
            _populate(root, outside, markers, rng)
            outside_before = _entries(outside)
            template = _template(root, outside, markers, rng)
            with GitWorkspace(root, git_dir=str(Path(scratch) / "git")) as workspace:
                prompt = Prompt(template).bind(resources={Filesystem: workspace})
                executor = ToolExecutor(prompt=prompt, session=Session())
                try:
                    if rng.random() < 0.5:
                        executor.execute(ToolCall("plant"))
                    before = _entries(root)
                    executor.execute(ToolCall("hostile"))
                    after = _entries(root)
                    plain = executor.execute(ToolCall("plain"))
                except Exception as error:
                    report.note("uncaught", f"{type(error).__name__}: {error}")
                    continue
            if after != before:
                changed = sorted(set(after.items()) ^ set(before.items()))[:3]
                report.note("state_leaks", f"tree differs after rollback: {changed}")
            if not plain.success:
                report.note("state_leaks", f"a later call failed: {plain.message[:300]}")
            if os.listdir(markers):
                report.note("escapes", f"planted programs ran: {sorted(os.listdir(markers))}")
            if _entries(outside) != outside_before:
                report.note("escapes", "the repository outside the root changed")
    return report
