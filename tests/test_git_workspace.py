"""GitWorkspace: snapshots as git trees that undo every change, however it was made."""

from __future__ import annotations

import os
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
