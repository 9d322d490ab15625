"""GitWorkspace: snapshots as git trees that undo every change, however it was made."""

from __future__ import annotations

import os
import shlex
import socket
import stat
import subprocess
from pathlib import Path

import pytest

from wink import (
    Filesystem,
    MarkdownSection,
    Prompt,
    PromptTemplate,
    Session,
    Tool,
    ToolContext,
    ToolResult,
)
from wink.resources import FilesystemError, GitWorkspace, GitWorkspaceError
from wink.runtime import ToolCall, ToolExecutor


def tree_of(root: Path) -> dict[str, str]:
    """Every file (text) and symlink (-> target) under ``root``, and empty directories."""
    found: dict[str, str] = {}
    for directory, subdirectories, files in os.walk(root):
        here = Path(directory)
        for name in subdirectories + files:
            path = here / name
            relative = path.relative_to(root).as_posix()
            if path.is_symlink():
                found[relative] = "-> " + os.readlink(path)
            elif path.is_file():
                mode = "x " if os.access(path, os.X_OK) else ""
                found[relative] = mode + path.read_text()
            elif not any(path.iterdir()):
                found[relative + "/"] = ""
    return found


@pytest.fixture
def root(tmp_path: Path) -> Path:
    workspace = tmp_path / "workspace"
    (workspace / "src").mkdir(parents=True)
    (workspace / "src" / "app.py").write_text("print('v1')\n")
    (workspace / "README.md").write_text("# Demo\n")
    (workspace / ".gitignore").write_text("*.log\nbuild/\n")
    (workspace / "debug.log").write_text("ignored but kept\n")
    return workspace


def shell(root: Path, script: str) -> None:
    subprocess.run(["sh", "-c", script], cwd=root, check=True)


def test_restore_undoes_changes_made_by_a_shell_command(root: Path) -> None:
    before = tree_of(root)
    with GitWorkspace(root) as workspace:
        token = workspace.snapshot()
        shell(
            root,
            "echo 'print(2)' > src/app.py; rm README.md debug.log; mkdir -p build/out; "
            "echo x > build/out/a.o; echo new > notes.txt; chmod +x notes.txt",
        )
        assert tree_of(root) != before
        workspace.restore(token)
        assert tree_of(root) == before


def test_any_snapshot_can_be_restored_any_number_of_times_in_any_order(root: Path) -> None:
    with GitWorkspace(root) as workspace:
        first = workspace.snapshot()
        state_one = tree_of(root)
        shell(root, "echo two > src/app.py; echo b > b.txt")
        second = workspace.snapshot()
        state_two = tree_of(root)
        shell(root, "rm -r src")
        workspace.restore(first)
        assert tree_of(root) == state_one
        workspace.restore(second)
        assert tree_of(root) == state_two
        workspace.restore(second)
        assert tree_of(root) == state_two
        workspace.restore(first)
        assert tree_of(root) == state_one


def test_file_and_directory_swaps_and_outward_symlinks_are_undone_inside_the_root(
    root: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    before = tree_of(root)
    with GitWorkspace(root) as workspace:
        token = workspace.snapshot()
        shell(root, f"rm -r src && ln -s {outside} src && rm README.md && mkdir README.md")
        workspace.restore(token)
    assert tree_of(root) == before
    assert list(outside.iterdir()) == []  # nothing was written through the link


def test_the_executor_rolls_back_a_failed_call_that_ran_a_command(root: Path) -> None:
    def format_code(params: None, *, context: ToolContext) -> ToolResult[None]:
        shell(root, "echo 'print(\"formatted\")' > src/app.py; echo tmp > scratch.txt")
        raise RuntimeError("the formatter crashed half-way")

    tool = Tool[None, None](name="format_code", description="Format.", handler=format_code)
    template = PromptTemplate(
        ns="tests", key="git", sections=[MarkdownSection(title="Code", tools=[tool])]
    )
    before = tree_of(root)
    with GitWorkspace(root) as workspace:
        prompt = Prompt(template).bind(resources={Filesystem: workspace})
        result = ToolExecutor(prompt=prompt, session=Session()).execute(ToolCall("format_code"))
    assert (result.success, result.message) == (
        False,
        "Tool 'format_code' raised RuntimeError: the formatter crashed half-way",
    )
    assert tree_of(root) == before


def test_file_operations_are_confined_to_the_root(root: Path, tmp_path: Path) -> None:
    (root / "escape").symlink_to(tmp_path)
    with GitWorkspace(root) as workspace:
        workspace.write("src/new.py", "x = 1\n")
        assert workspace.read("src/new.py") == "x = 1\n"
        assert workspace.list("src") == ["app.py", "new.py"]
        assert workspace.normalize("/" + workspace.root.strip("/") + "/src/./new.py") == (
            "src/new.py"
        )
        for path in ("../outside.txt", "escape/outside.txt"):
            with pytest.raises(FilesystemError):
                workspace.write(path, "no")
    assert not (tmp_path / "outside.txt").exists()


def test_the_git_directory_lives_outside_the_root_and_close_removes_it(root: Path) -> None:
    workspace = GitWorkspace(root)
    git_dir = Path(workspace.git_dir)
    assert git_dir.is_dir() and not git_dir.is_relative_to(root)
    assert sorted(os.listdir(root)) == [".gitignore", "README.md", "debug.log", "src"]
    workspace.close()
    assert not git_dir.exists() and (root / "README.md").exists()


def test_a_git_directory_inside_the_root_is_refused(root: Path) -> None:
    with pytest.raises(GitWorkspaceError) as raised:
        GitWorkspace(root, git_dir=str(root / "src" / ".state"))
    assert str(raised.value) == (
        f"git_dir {str(root / 'src' / '.state')!r} lies inside the workspace root "
        f"{str(root)!r}; put it outside, so that snapshots never record it"
    )


def test_a_given_git_directory_is_used_and_kept_after_close(root: Path, tmp_path: Path) -> None:
    git_dir = tmp_path / "state"
    with GitWorkspace(root, git_dir=str(git_dir)) as workspace:
        assert workspace.git_dir == str(git_dir)
        workspace.snapshot()
    assert (git_dir / "HEAD").is_file() and (git_dir / "index").is_file()


def test_a_snapshot_of_another_workspace_is_refused(root: Path, tmp_path: Path) -> None:
    other_root = tmp_path / "other"
    other_root.mkdir()
    with GitWorkspace(root) as workspace, GitWorkspace(other_root) as other:
        token = other.snapshot()
        with pytest.raises(GitWorkspaceError) as raised:
            workspace.restore(token)
    assert str(raised.value).startswith("not a snapshot of this GitWorkspace: _TreeSnapshot(")


def test_a_root_that_is_a_repository_with_an_empty_nested_one_is_snapshotted(
    root: Path,
) -> None:
    shell(root, "git init -q . && mkdir vendor && cd vendor && git init -q && echo v > v.txt")
    git_entries = sorted(os.listdir(root / ".git"))
    with GitWorkspace(root) as workspace:
        token = workspace.snapshot()
        shell(root, "echo changed > README.md && echo new > new.txt")
        workspace.restore(token)
    assert (root / "README.md").read_text() == "# Demo\n"
    assert not (root / "new.txt").exists()
    assert sorted(os.listdir(root / ".git")) == git_entries  # the user's repository is untouched
    assert (root / "vendor" / "v.txt").read_text() == "v\n"  # left out, and left alone


def entries_of(root: Path) -> dict[bytes, str]:
    """Every entry under ``root`` but directories, of any kind, by path as bytes."""
    found: dict[bytes, str] = {}
    for directory, _, files in os.walk(os.fsencode(root)):
        for name in files:
            path = os.path.join(directory, name)
            relative = os.path.relpath(path, os.fsencode(root))
            mode = os.lstat(path).st_mode
            if stat.S_ISLNK(mode):
                found[relative] = "link " + os.fsdecode(os.readlink(path))
            elif stat.S_ISREG(mode):
                with open(path, "rb") as file:
                    found[relative] = f"file {mode & 0o111:o} {file.read()!r}"
            else:
                found[relative] = f"special {stat.S_IFMT(mode):o}"
    return found


def failing_tool(root: Path, script: str) -> Tool[None, None]:
    """A tool whose handler runs ``script`` in ``root``, then fails."""

    def change(params: None, *, context: ToolContext) -> ToolResult[None]:
        subprocess.run(["sh", "-c", script], cwd=root, check=True, capture_output=True)
        raise RuntimeError("planned failure")

    return Tool[None, None](name="change", description="Change.", handler=change)


def run_failing_call_then_a_working_one(root: Path, script: str) -> tuple[str, bool]:
    """The failed call's message, and whether a second call on the same workspace ran."""

    def noop(params: None, *, context: ToolContext) -> ToolResult[None]:
        return ToolResult(message="ran", value=None)

    tools = [
        failing_tool(root, script),
        Tool[None, None](name="noop", description="N.", handler=noop),
    ]
    template = PromptTemplate(
        ns="tests", key="git", sections=[MarkdownSection(title="Code", tools=tools)]
    )
    with GitWorkspace(root) as workspace:
        prompt = Prompt(template).bind(resources={Filesystem: workspace})
        executor = ToolExecutor(prompt=prompt, session=Session())
        failed = executor.execute(ToolCall("change"))
        later = executor.execute(ToolCall("noop"))
    return failed.message, later.success


@pytest.mark.parametrize(
    "directory", ["odd\nname", "odd\xffname", "-dash", ":(exclude)magic"], ids=repr
)
def test_a_nested_repository_with_any_name_made_by_a_failed_call_is_removed_and_later_calls_run(
    root: Path, directory: str
) -> None:
    before = entries_of(root)
    quoted = shlex.quote(directory)
    message, later_ran = run_failing_call_then_a_working_one(
        root,
        f"mkdir -p ./{quoted} && cd ./{quoted} && git init -q && echo x > f && "
        "git add f && git -c user.name=t -c user.email=t@t commit -qm c && echo y > README.md",
    )
    assert (message, later_ran) == ("Tool 'change' raised RuntimeError: planned failure", True)
    assert entries_of(root) == before


def test_files_with_any_byte_in_their_name_are_rolled_back(root: Path) -> None:
    names = [b"new\nline", b"latin\xff", b"tab\there", b"back\\slash", b".GIT-not", b"git~1"]
    for name in names:
        with open(os.fsencode(root / "src") + b"/" + name + b".old", "wb") as file:
            file.write(b"old " + name)
    before = entries_of(root)
    with GitWorkspace(root) as workspace:
        token = workspace.snapshot()
        for name in names:
            with open(os.fsencode(root / "src") + b"/" + name + b".old", "wb") as file:
                file.write(b"changed")
            with open(os.fsencode(root) + b"/" + name, "wb") as file:
                file.write(b"created")
        workspace.restore(token)
    assert entries_of(root) == before


def test_fifos_and_sockets_made_after_a_snapshot_are_removed_and_earlier_ones_kept(
    root: Path,
) -> None:
    os.mkfifo(root / "kept.fifo")
    before = entries_of(root)
    with GitWorkspace(root) as workspace:
        token = workspace.snapshot()
        os.mkfifo(root / "src" / "made.fifo")
        (root / "fresh").mkdir()
        os.mkfifo(root / "fresh" / "inner.fifo")
        with socket.socket(socket.AF_UNIX) as listener:
            listener.bind(str(root / "made.sock"))
        assert len(entries_of(root)) == len(before) + 3
        workspace.restore(token)
    assert entries_of(root) == before
    assert not (root / "fresh").exists()


def test_a_fifo_swapped_for_another_one_after_the_snapshot_is_removed(root: Path) -> None:
    os.mkfifo(root / "pipe")
    with GitWorkspace(root) as workspace:
        token = workspace.snapshot()
        os.unlink(root / "pipe")
        (root / "pipe").mkdir()
        os.mkfifo(root / "pipe" / "inner")
        workspace.restore(token)
    assert not (root / "pipe").exists()


def test_a_nested_repository_held_by_the_snapshot_keeps_its_git_directory_and_files_roll_back(
    root: Path,
) -> None:
    shell(
        root,
        "mkdir vendor && cd vendor && git init -q && echo v > v.txt && git add v.txt && "
        "git -c user.name=t -c user.email=t@t commit -qm c",
    )
    before = entries_of(root)
    with GitWorkspace(root) as workspace:
        token = workspace.snapshot()
        shell(root, "cd vendor && echo changed > v.txt && echo new > w.txt && git add w.txt")
        workspace.restore(token)
    after = entries_of(root)
    assert (root / "vendor" / "v.txt").read_text() == "v\n"
    assert not (root / "vendor" / "w.txt").exists()
    # The inside of the nested repository's .git is left as the call left it.
    changed = sorted(path for path in {*after, *before} if after.get(path) != before.get(path))
    assert changed == [
        b"vendor/.git/index",
        b"vendor/.git/objects/3e/757656cf36eca53338e520d134963a44f793f8",  # "new\n"
    ]


def test_a_git_file_pointing_outside_the_root_made_by_a_failed_call_is_removed(
    root: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shell(
        elsewhere,
        "git init -q && echo e > e.txt && git add e.txt && "
        "git -c user.name=t -c user.email=t@t commit -qm c",
    )
    outside_before = entries_of(elsewhere)
    before = entries_of(root)
    message, later_ran = run_failing_call_then_a_working_one(
        root,
        f"mkdir linked && echo 'gitdir: {elsewhere / '.git'}' > linked/.git && echo x > linked/f",
    )
    assert (message, later_ran) == ("Tool 'change' raised RuntimeError: planned failure", True)
    assert entries_of(root) == before
    assert entries_of(elsewhere) == outside_before


@pytest.mark.parametrize("path", [".git/config", "sub/.git/HEAD", "sub/.GIT/hooks/x", ".Git"])
def test_writing_or_deleting_a_git_entry_through_the_workspace_is_refused(
    root: Path, path: str
) -> None:
    expected = (
        f"{path!r} in {str(root)!r}: a '.git' entry is never recorded by a snapshot, so a "
        "restore could not undo it"
    )
    with GitWorkspace(root) as workspace:
        with pytest.raises(GitWorkspaceError) as written:
            workspace.write(path, "x")
        with pytest.raises(GitWorkspaceError) as deleted:
            workspace.delete(path)
    assert (str(written.value), str(deleted.value)) == (
        f"cannot write {expected}",
        f"cannot delete {expected}",
    )
    assert not (root / "sub").exists() and not (root / ".git").exists()


def test_a_tree_deeper_than_git_can_name_made_by_a_failed_call_is_removed(root: Path) -> None:
    # 45 levels of 100-byte names: a path of about 4,500 bytes, more than a system call
    # takes, made through descriptors as a program that changes directory would.
    def dig(params: None, *, context: ToolContext) -> ToolResult[None]:
        directory = os.open(root, os.O_RDONLY)
        for _ in range(45):
            os.mkdir("n" * 100, dir_fd=directory)
            inner = os.open("n" * 100, os.O_RDONLY, dir_fd=directory)
            os.close(directory)
            directory = inner
        os.mkfifo("p", dir_fd=directory)
        os.close(os.open("f", os.O_CREAT | os.O_WRONLY, dir_fd=directory))
        os.close(directory)
        raise RuntimeError("planned failure")

    template = PromptTemplate(
        ns="tests",
        key="git",
        sections=[
            MarkdownSection(
                title="Code", tools=[Tool[None, None](name="dig", description="D.", handler=dig)]
            )
        ],
    )
    before = entries_of(root)
    with GitWorkspace(root) as workspace:
        executor = ToolExecutor(
            prompt=Prompt(template).bind(resources={Filesystem: workspace}), session=Session()
        )
        results = [executor.execute(ToolCall("dig")) for _ in range(2)]
    assert [result.message for result in results] == [
        "Tool 'dig' raised RuntimeError: planned failure"
    ] * 2
    assert entries_of(root) == before
    assert not (root / ("n" * 100)).exists()


def test_symlinks_git_refuses_to_record_made_by_a_failed_call_are_removed(root: Path) -> None:
    before = entries_of(root)
    message, later_ran = run_failing_call_then_a_working_one(
        root,
        "ln -s README.md .gitmodules && mkdir -p m/.GITMODULES && ln -s x m/.GITMODULES/link "
        "&& ln -s /etc .GIT",
    )
    assert (message, later_ran) == ("Tool 'change' raised RuntimeError: planned failure", True)
    assert entries_of(root) == before
    assert not (root / "m").exists()
