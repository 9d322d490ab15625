"""GitWorkspace runs git isolated from everything under its root and from the parent's
environment: no configuration, hook, attribute, filter or nested repository planted in
the tree, and no ``GIT_*`` variable of the caller, changes what git runs or records."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from wink.resources import GitWorkspace

# Every hook git 2.39 knows of; each planted one would create the marker.
HOOKS = (
    "applypatch-msg",
    "pre-applypatch",
    "post-applypatch",
    "pre-commit",
    "pre-merge-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "pre-rebase",
    "post-checkout",
    "post-merge",
    "pre-push",
    "pre-receive",
    "update",
    "proc-receive",
    "post-receive",
    "post-update",
    "reference-transaction",
    "push-to-checkout",
    "pre-auto-gc",
    "post-rewrite",
    "sendemail-validate",
    "fsmonitor-watchman",
    "post-index-change",
)

# Configuration keys whose value git runs as a program. ``{command}`` creates the marker
# (its trailing ``#`` turns the arguments git appends into a comment).
COMMAND_KEYS = (
    ("core.fsmonitor", "{command}"),
    ("core.sshCommand", "{command}"),
    ("core.pager", "{command}"),
    ("core.editor", "{command}"),
    ("sequence.editor", "{command}"),
    ("core.askPass", "{command}"),
    ("core.gitProxy", "{command}"),
    ("core.alternateRefsCommand", "{command}"),
    ("uploadpack.packObjectsHook", "{command}"),
    ("diff.external", "{command}"),
    ("credential.helper", "!{command}"),
    ("gpg.program", "{command}"),
    ("gpg.ssh.program", "{command}"),
    ("gpg.x509.program", "{command}"),
    ("filter.evil.clean", "{command}"),
    ("filter.evil.smudge", "{command}"),
    ("filter.evil.process", "{command}"),
    ("diff.evil.textconv", "{command}"),
    ("diff.evil.command", "{command}"),
    ("merge.evil.driver", "{command}"),
    ("pager.status", "{command}"),
    ("web.browser", "{command}"),
    ("core.hooksPath", "{hooks}"),
    ("include.path", "{included}"),
)

ISOLATED = {
    "PATH": os.environ.get("PATH", os.defpath),
    "HOME": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}


def git(where: Path, *arguments: str) -> str:
    """Run git in ``where`` as a user would, with no configuration of this machine."""
    completed = subprocess.run(
        ["git", *arguments], cwd=where, env=ISOLATED, capture_output=True, check=True
    )
    return completed.stdout.decode()


def make_repository(where: Path, files: dict[str, str]) -> None:
    """A repository with one commit holding ``files``, made before anything is planted."""
    where.mkdir(parents=True, exist_ok=True)
    git(where, "init", "-q", "--template=")
    for name, text in files.items():
        (where / name).write_text(text)
    git(where, "add", "--all")
    git(where, "commit", "-q", "-m", "planted")


def plant(git_dir: Path, key: str, value: str) -> None:
    """Append ``key = value`` to the configuration file of the git directory ``git_dir``."""
    section, _, name = key.rpartition(".")
    head, _, subsection = section.partition(".")
    header = f'[{head} "{subsection}"]' if subsection else f"[{head}]"
    with (git_dir / "config").open("a") as config:
        config.write(f'{header}\n\t{name} = "{value}"\n')
    hooks = git_dir / "hooks"
    hooks.mkdir(exist_ok=True)
    for hook in HOOKS:
        (hooks / hook).write_text(f"#!/bin/sh\n{value.lstrip('!')}\n")
        (hooks / hook).chmod(0o755)


@pytest.mark.parametrize(("key", "template"), COMMAND_KEYS, ids=[key for key, _ in COMMAND_KEYS])
def test_a_command_planted_in_any_git_configuration_under_or_above_the_root_never_runs(
    tmp_path: Path, key: str, template: str
) -> None:
    marker = tmp_path / "marker"
    command = f"touch {marker} #"
    outside = tmp_path / "outside"
    root = tmp_path / "parent" / "root"
    hooks = root / "planted-hooks"
    hooks.mkdir(parents=True)
    for hook in HOOKS:
        (hooks / hook).write_text(f"#!/bin/sh\n{command}\n")
        (hooks / hook).chmod(0o755)
    included = root / "included.cfg"
    included.write_text(f'[core]\n\tfsmonitor = "{command}"\n[diff]\n\texternal = "{command}"\n')
    value = template.format(command=command, hooks=hooks, included=included)

    # Where git could find configuration: a repository above the root, the root's own
    # repository, a nested repository with a commit, one written file by file (what a
    # model with only write_file can make), and a gitlink file pointing outside the root.
    make_repository(tmp_path / "parent", {"above.txt": "above\n"})
    make_repository(root, {"README.md": "# root\n", ".gitattributes": "* filter=evil diff=evil\n"})
    make_repository(root / "sub", {"f.txt": "sub\n", ".gitattributes": "* filter=evil\n"})
    make_repository(outside, {"o.txt": "outside\n"})
    written = root / "written" / ".git"
    for name, text in {
        "HEAD": "ab" * 20 + "\n",
        "refs/heads/.keep": "",
        "objects/.keep": "",
        "config": "",
    }.items():
        (written / name).parent.mkdir(parents=True, exist_ok=True)
        (written / name).write_text(text)
    (root / "written" / "f.txt").write_text("written\n")
    (root / "linked").mkdir()
    (root / "linked" / ".git").write_text(f"gitdir: {outside / '.git'}\n")
    (root / "linked" / "f.txt").write_text("linked\n")
    for git_dir in (tmp_path / "parent" / ".git", root / ".git", root / "sub" / ".git", written):
        plant(git_dir, key, value)
    plant(outside / ".git", key, value)
    for place in (tmp_path / "parent", root, root / "sub", root / "written", root / "linked"):
        assert git(place, "config", "--get", key).strip() == value  # git does read it there
    assert not marker.exists()

    with GitWorkspace(root) as workspace:
        first = workspace.snapshot()
        for folder in ("", "sub/", "written/", "linked/"):
            (root / f"{folder}f.txt").write_text("changed\n")
            (root / f"{folder}new.txt").write_text("new\n")
        second = workspace.snapshot()
        (root / "sub" / "f.txt").write_text("changed again\n")
        workspace.restore(first)
        workspace.restore(second)
        workspace.restore(first)

    assert not marker.exists()
    assert sorted(path.name for path in (tmp_path).iterdir()) == ["outside", "parent"]
    assert (root / "sub" / "f.txt").read_text() == "sub\n"
    assert (root / "linked" / "f.txt").read_text() == "linked\n"
    assert not (root / "written" / "new.txt").exists()


def test_git_variables_of_the_calling_process_do_not_reach_git(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / ".gitattributes").write_text("* filter=evil\n")
    (root / "a.txt").write_text("a\n")
    markers = [tmp_path / f"marker{index}" for index in range(4)]
    monkeypatch.setenv("GIT_TRACE", str(markers[0]))
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "filter.evil.clean")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", f"touch {markers[1]} #")
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", f"'filter.evil.smudge'='touch {markers[2]} #'")
    monkeypatch.setenv("GIT_TRACE_PERFORMANCE", str(markers[3]))
    with GitWorkspace(root) as workspace:
        token = workspace.snapshot()
        (root / "a.txt").write_text("changed\n")
        workspace.restore(token)
    assert [marker.exists() for marker in markers] == [False, False, False, False]
    assert (root / "a.txt").read_text() == "a\n"


@pytest.mark.parametrize(
    ("attributes", "content"),
    [
        ("*.txt text\n", b"one\r\ntwo\r\n"),
        ("*.txt text eol=crlf\n", b"one\ntwo\n"),
        ("* ident\n", b"$Id$\n"),
        ("[attr]evil text eol=crlf ident\n* evil\n", b"$Id$\nline\n"),
        ("* working-tree-encoding=UTF-16\n", b"plain \xff bytes\n"),
    ],
    ids=["text", "eol", "ident", "macro", "working-tree-encoding"],
)
def test_attributes_in_the_tree_never_change_the_bytes_a_restore_puts_back(
    tmp_path: Path, attributes: str, content: bytes
) -> None:
    root = tmp_path / "root"
    (root / "deep").mkdir(parents=True)
    (root / ".gitattributes").write_text(attributes)
    (root / "deep" / ".gitattributes").write_text(attributes)
    for name in ("a.txt", "deep/b.txt"):
        (root / name).write_bytes(content)
    with GitWorkspace(root) as workspace:
        token = workspace.snapshot()
        for name in ("a.txt", "deep/b.txt"):
            (root / name).write_bytes(b"changed")
        workspace.restore(token)
    assert [(root / name).read_bytes() for name in ("a.txt", "deep/b.txt")] == [content, content]
