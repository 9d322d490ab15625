"""``HostFilesystem`` stays in its root: symlinks, swaps, hard links, special files, rollback."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import stat
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from wink import (
    Filesystem,
    HostFilesystem,
    MarkdownSection,
    Prompt,
    PromptTemplate,
    Tool,
    ToolContext,
    ToolResult,
)
from wink.contrib.vfs import VfsToolsSection
from wink.resources import FilesystemError
from wink.runtime import Session, ToolCall, ToolExecutor, ToolInvoked

Tree = dict[str, "bytes | str | None"]


def disk_tree(top: Path) -> Tree:
    """Every entry under ``top``, never following links: file bytes, ``"-> target"``, or
    ``None`` for a directory."""
    found: Tree = {}
    for directory, names, files in os.walk(top):
        for name in sorted(names + files):
            path = Path(directory, name)
            key = str(path.relative_to(top))
            if path.is_symlink():
                found[key] = "-> " + os.readlink(path)
            elif path.is_dir():
                found[key] = None
            else:
                found[key] = path.read_bytes()
    return found


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path]:
    """A root and, beside it, an outside directory holding files a call must never touch."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    (outside / "sub").mkdir(parents=True)
    (outside / "a.txt").write_bytes(b"outside a")
    (outside / "sub" / "b.txt").write_bytes(b"outside b")
    return root, outside


OUTSIDE_TREE: Tree = {"a.txt": b"outside a", "sub": None, "sub/b.txt": b"outside b"}


def vfs_executor(
    filesystem: Filesystem, *extra: Tool[Any, Any], session: Session | None = None
) -> ToolExecutor:
    sections: list[Any] = [VfsToolsSection()]
    if extra:
        sections.append(MarkdownSection(title="Extra", tools=extra))
    template = PromptTemplate(ns="tests", key="confinement", sections=sections)
    prompt = Prompt(template).bind(resources={Filesystem: filesystem})
    return ToolExecutor(prompt=prompt, session=session or Session())


def call(executor: ToolExecutor, name: str, **arguments: Any) -> ToolResult[Any]:
    return executor.execute(ToolCall(name, json.dumps(arguments), call_id="c"))


# --- symlinks are never followed -----------------------------------------------------------


@pytest.mark.parametrize(
    ("operation", "message"),
    [
        ("read", "path 'work/a.txt' goes through the symlink 'work'; symlinks are never followed"),
        ("write", "path 'work/a.txt' goes through the symlink 'work'; symlinks are never followed"),
        (
            "delete",
            "path 'work/a.txt' goes through the symlink 'work'; symlinks are never followed",
        ),
        (
            "exists",
            "path 'work/a.txt' goes through the symlink 'work'; symlinks are never followed",
        ),
        ("list", "path 'work/a.txt' goes through the symlink 'work'; symlinks are never followed"),
    ],
)
def test_every_operation_through_a_symlinked_directory_is_refused_and_outside_is_unchanged(
    places: tuple[Path, Path], operation: str, message: str
) -> None:
    root, outside = places
    (root / "work").symlink_to(outside)
    filesystem = HostFilesystem(root)
    arguments = ("work/a.txt", "x") if operation == "write" else ("work/a.txt",)
    with pytest.raises(FilesystemError) as raised:
        getattr(filesystem, operation)(*arguments)
    assert str(raised.value) == message
    assert disk_tree(outside) == OUTSIDE_TREE
    assert disk_tree(root) == {"work": f"-> {outside}"}


def test_reading_or_writing_a_symlinked_file_is_refused_and_the_target_is_unchanged(
    places: tuple[Path, Path],
) -> None:
    root, outside = places
    (root / "link.txt").symlink_to(outside / "a.txt")
    filesystem = HostFilesystem(root)
    for attempt in (lambda: filesystem.read("link.txt"), lambda: filesystem.write("link.txt", "x")):
        with pytest.raises(FilesystemError) as raised:
            attempt()
        assert str(raised.value) == "is a symlink; symlinks are never followed: 'link.txt'"
    assert disk_tree(outside) == OUTSIDE_TREE


def test_listing_a_symlink_is_refused_and_a_listing_shows_links_by_name(
    places: tuple[Path, Path],
) -> None:
    root, outside = places
    (root / "work").symlink_to(outside)
    (root / "real").mkdir()
    filesystem = HostFilesystem(root)
    with pytest.raises(FilesystemError) as raised:
        filesystem.list("work")
    assert str(raised.value) == "is a symlink; symlinks are never followed: 'work'"
    assert filesystem.list() == ["real/", "work"]
    assert filesystem.exists("work") is True


def test_a_handler_swapping_a_directory_for_an_outside_symlink_cannot_make_rollback_act_outside(
    places: tuple[Path, Path],
) -> None:
    root, outside = places
    (root / "work" / "sub").mkdir(parents=True)
    (root / "work" / "a.txt").write_bytes(b"inside a")
    filesystem = HostFilesystem(root)

    def swap_then_fail(params: Empty, *, context: ToolContext) -> ToolResult[None]:
        context.filesystem.write("work/a.txt", "changed a")
        context.filesystem.write("work/sub/b.txt", "new b")
        context.filesystem.write("work/new/c.txt", "new c")
        (root / "work").rename(root / "moved")
        (root / "work").symlink_to(outside)
        raise RuntimeError("failed after the swap")

    executor = vfs_executor(filesystem, tool("swap_then_fail", swap_then_fail))
    result = call(executor, "swap_then_fail")
    assert result.message == "Tool 'swap_then_fail' raised RuntimeError: failed after the swap"
    assert disk_tree(outside) == OUTSIDE_TREE
    # Undone in the directory the changes were made in, wherever it is now; the
    # symlink the handler made is not the filesystem's to remove.
    assert disk_tree(root) == {
        "moved": None,
        "moved/a.txt": b"inside a",
        "moved/sub": None,
        "work": f"-> {outside}",
    }


def test_restore_refuses_to_undo_in_a_directory_moved_out_of_the_root(
    places: tuple[Path, Path], tmp_path: Path
) -> None:
    root, outside = places
    (root / "work").mkdir()
    filesystem = HostFilesystem(root)
    token = filesystem.snapshot()
    filesystem.write("work/a.txt", "inside")
    (root / "work").rename(tmp_path / "escaped")
    with pytest.raises(FilesystemError) as raised:
        filesystem.restore(token)
    assert str(raised.value) == (
        f"restore of HostFilesystem {filesystem.root!r} could not undo: 'work/a.txt' (its "
        "directory was moved out of the root)"
    )
    assert disk_tree(tmp_path / "escaped") == {"a.txt": b"inside"}
    assert disk_tree(outside) == OUTSIDE_TREE


def test_threads_racing_directory_symlink_swaps_never_reach_outside(
    places: tuple[Path, Path],
) -> None:
    root, outside = places
    (root / "work").mkdir()
    filesystem = HostFilesystem(root)
    stop = threading.Event()
    unexpected: list[BaseException] = []

    def swap() -> None:
        steps = [
            lambda: (root / "work").rename(root / "parked"),
            lambda: (root / "work").symlink_to(outside),
            lambda: (root / "work").unlink(),
            lambda: (root / "parked").rename(root / "work"),
        ]
        while not stop.is_set():
            for step in steps:
                with contextlib.suppress(OSError):  # e.g. a write made "work" meanwhile
                    step()
                time.sleep(0.0001)  # let the calls run between steps, even on a busy machine

    racer = threading.Thread(target=swap)
    racer.start()
    started = time.monotonic()
    calls = through_symlink = 0
    try:
        # At least 0.3 s and 30 calls, at most 5 s.
        while (calls < 30 or time.monotonic() - started < 0.3) and time.monotonic() - started < 5:
            calls += 1
            token = filesystem.snapshot()
            for operation in (
                lambda: filesystem.write("work/a.txt", "inside"),
                lambda: filesystem.write("work/sub/b.txt", "inside"),
                lambda: filesystem.read("work/a.txt"),
                lambda: filesystem.delete("work/a.txt"),
                lambda: filesystem.list("work/sub"),
            ):
                try:
                    operation()
                except FilesystemError as error:  # refused or missing: the expected outcomes
                    through_symlink += "goes through the symlink 'work'" in str(error)
                except BaseException as error:  # anything else is a defect
                    unexpected.append(error)
            filesystem.restore(token)
            del token
    finally:
        stop.set()
        racer.join(5)
    assert calls >= 30
    assert through_symlink > 0  # the race happened: some operations met the symlink
    assert unexpected == []
    assert disk_tree(outside) == OUTSIDE_TREE
    # Every call was undone: nothing is left but the racer's names ("work" and "parked";
    # the racer may have renamed a directory wink made over its own, then wink removed it).
    leftover = disk_tree(root)
    assert set(leftover) <= {"work", "parked"}
    assert all(value is None or value == f"-> {outside}" for value in leftover.values())


def test_reading_a_directory_is_refused_and_every_descriptor_is_closed(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    filesystem = HostFilesystem(tmp_path)
    opened = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else 0
    for _ in range(3):
        with pytest.raises(FilesystemError) as raised:
            filesystem.read("d")
        assert str(raised.value) == "is a directory, not a file: 'd'"
    if opened:
        assert len(os.listdir("/proc/self/fd")) == opened


# --- rollback undoes only what the call did -------------------------------------------------


def test_failed_write_under_a_symlink_loop_keeps_the_link(tmp_path: Path) -> None:
    (tmp_path / "loop").symlink_to("loop")
    executor = vfs_executor(HostFilesystem(tmp_path))
    result = call(executor, "write_file", path="loop/x.txt", content="x")
    assert result.message == (
        "Policy 'read_before_write' failed on tool 'write_file': FilesystemError: path "
        "'loop/x.txt' goes through the symlink 'loop'; symlinks are never followed"
    )
    assert disk_tree(tmp_path) == {"loop": "-> loop"}


def test_rollback_of_a_call_that_met_a_symlink_loop_keeps_the_link(tmp_path: Path) -> None:
    (tmp_path / "loop").symlink_to("loop")
    refusals: list[str] = []

    def write_then_fail(params: Empty, *, context: ToolContext) -> ToolResult[None]:
        context.filesystem.write("a.txt", "undone")
        for path in ("loop/x.txt", "loop/deeper/x.txt", "loop"):
            try:
                context.filesystem.write(path, "never written")
            except FilesystemError as error:
                refusals.append(str(error))
        raise RuntimeError("boom")

    executor = vfs_executor(HostFilesystem(tmp_path), tool("write_then_fail", write_then_fail))
    assert call(executor, "write_then_fail").message == (
        "Tool 'write_then_fail' raised RuntimeError: boom"
    )
    assert refusals == [
        "path 'loop/x.txt' goes through the symlink 'loop'; symlinks are never followed",
        "path 'loop/deeper/x.txt' goes through the symlink 'loop'; symlinks are never followed",
        "is a symlink; symlinks are never followed: 'loop'",
    ]
    assert disk_tree(tmp_path) == {"loop": "-> loop"}


def test_rollback_keeps_entries_others_made_during_the_call(tmp_path: Path) -> None:
    (tmp_path / "kept.txt").write_bytes(b"kept")
    filesystem = HostFilesystem(tmp_path)

    def write_then_fail(params: Empty, *, context: ToolContext) -> ToolResult[None]:
        context.filesystem.write("d/mine.txt", "mine")
        (tmp_path / "d" / "theirs.txt").write_bytes(b"theirs")  # outside wink's API
        (tmp_path / "other.txt").write_bytes(b"other")
        context.filesystem.write("kept.txt", "changed")
        raise RuntimeError("boom")

    executor = vfs_executor(filesystem, tool("write_then_fail", write_then_fail))
    assert call(executor, "write_then_fail").message == (
        "Tool 'write_then_fail' raised RuntimeError: boom"
    )
    # "d" stays: it holds a file wink did not make, which is not wink's to remove.
    assert disk_tree(tmp_path) == {
        "d": None,
        "d/theirs.txt": b"theirs",
        "kept.txt": b"kept",
        "other.txt": b"other",
    }


def test_rollback_keeps_a_directory_someone_else_made_just_before_a_write_needed_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_mkdir = os.mkdir

    def made_by_someone_else_first(
        name: str, mode: int = 0o777, *, dir_fd: int | None = None
    ) -> None:
        real_mkdir(name, mode, dir_fd=dir_fd)
        raise FileExistsError(17, "File exists")

    filesystem = HostFilesystem(tmp_path)
    token = filesystem.snapshot()
    monkeypatch.setattr(os, "mkdir", made_by_someone_else_first)
    filesystem.write("d/a.txt", "undone")
    monkeypatch.undo()
    filesystem.restore(token)
    assert disk_tree(tmp_path) == {"d": None}


def test_rollback_keeps_an_entry_another_writer_put_in_place_of_a_written_file(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.txt").write_bytes(b"before")
    filesystem = HostFilesystem(tmp_path)
    token = filesystem.snapshot()
    filesystem.write("a.txt", "by wink")
    (tmp_path / "a.txt").unlink()
    (tmp_path / "a.txt").write_bytes(b"by someone else")
    filesystem.restore(token)
    # As if the undone write had never happened: the other writer's file stays.
    assert disk_tree(tmp_path) == {"a.txt": b"by someone else"}


# --- hard links and atomic writes ------------------------------------------------------------


def test_writing_a_file_hard_linked_outside_leaves_the_outside_file_unchanged(
    places: tuple[Path, Path],
) -> None:
    root, outside = places
    os.link(outside / "a.txt", root / "linked.txt")
    filesystem = HostFilesystem(root)
    filesystem.write("linked.txt", "replaced inside")
    assert disk_tree(root) == {"linked.txt": b"replaced inside"}
    assert disk_tree(outside) == OUTSIDE_TREE
    assert os.stat(outside / "a.txt").st_nlink == 1


def test_rolled_back_write_of_a_hard_linked_file_restores_its_bytes_not_the_outside_file(
    places: tuple[Path, Path],
) -> None:
    root, outside = places
    os.link(outside / "a.txt", root / "linked.txt")

    def write_then_fail(params: Empty, *, context: ToolContext) -> ToolResult[None]:
        context.filesystem.write("linked.txt", "replaced inside")
        raise RuntimeError("boom")

    executor = vfs_executor(HostFilesystem(root), tool("write_then_fail", write_then_fail))
    assert call(executor, "write_then_fail").message == (
        "Tool 'write_then_fail' raised RuntimeError: boom"
    )
    assert disk_tree(root) == {"linked.txt": b"outside a"}
    assert disk_tree(outside) == OUTSIDE_TREE


def test_write_keeps_the_permission_bits_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    (tmp_path / "a.sh").write_bytes(b"old")
    os.chmod(tmp_path / "a.sh", 0o750)
    HostFilesystem(tmp_path).write("a.sh", "new")
    assert stat.S_IMODE(os.stat(tmp_path / "a.sh").st_mode) == 0o750
    assert disk_tree(tmp_path) == {"a.sh": b"new"}


def test_restore_puts_back_the_permission_bits_of_a_deleted_file(tmp_path: Path) -> None:
    (tmp_path / "a.sh").write_bytes(b"script")
    os.chmod(tmp_path / "a.sh", 0o700)
    filesystem = HostFilesystem(tmp_path)
    token = filesystem.snapshot()
    filesystem.delete("a.sh")
    filesystem.restore(token)
    assert stat.S_IMODE(os.stat(tmp_path / "a.sh").st_mode) == 0o700
    assert disk_tree(tmp_path) == {"a.sh": b"script"}


# --- deleting a symlink ----------------------------------------------------------------------


def test_delete_file_on_a_symlink_removes_the_link_and_keeps_its_target(
    places: tuple[Path, Path],
) -> None:
    root, outside = places
    (root / "inside.txt").write_bytes(b"inside")
    (root / "to_outside").symlink_to(outside / "a.txt")
    (root / "to_inside").symlink_to("inside.txt")
    executor = vfs_executor(HostFilesystem(root))
    results = [call(executor, "delete_file", path=p) for p in ("to_outside", "to_inside")]
    assert [r.message for r in results] == ["File deleted.", "File deleted."]
    assert disk_tree(root) == {"inside.txt": b"inside"}
    assert disk_tree(outside) == OUTSIDE_TREE


def test_rollback_of_a_deleted_symlink_puts_the_same_link_back(places: tuple[Path, Path]) -> None:
    root, outside = places
    (root / "to_outside").symlink_to(outside / "a.txt")
    filesystem = HostFilesystem(root)
    token = filesystem.snapshot()
    filesystem.delete("to_outside")
    filesystem.restore(token)
    assert disk_tree(root) == {"to_outside": f"-> {outside / 'a.txt'}"}
    assert disk_tree(outside) == OUTSIDE_TREE


# --- FIFOs, sockets, devices -----------------------------------------------------------------


@pytest.fixture
def special_files(tmp_path: Path) -> Iterator[Path]:
    os.mkfifo(tmp_path / "pipe")
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(tmp_path / "sock"))
    try:
        yield tmp_path
    finally:
        listener.close()


@pytest.mark.parametrize(
    ("name", "kind"), [("pipe", "a FIFO"), ("sock", "a socket")], ids=["fifo", "socket"]
)
@pytest.mark.parametrize("operation", ["read", "write", "delete"])
def test_special_files_are_refused_at_once_naming_the_path(
    special_files: Path, name: str, kind: str, operation: str
) -> None:
    filesystem = HostFilesystem(special_files)
    arguments = (name, "x") if operation == "write" else (name,)
    outcome: list[str] = []

    def attempt() -> None:
        try:
            getattr(filesystem, operation)(*arguments)
        except FilesystemError as error:
            outcome.append(str(error))

    worker = threading.Thread(target=attempt, daemon=True)  # a blocked open never returns
    worker.start()
    worker.join(2)
    assert outcome == [f"is {kind}, not a regular file: {name!r}"]
    assert sorted(os.listdir(special_files)) == ["pipe", "sock"]


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="mknod needs root")
def test_a_device_is_refused_naming_the_path(tmp_path: Path) -> None:
    os.mknod(tmp_path / "zero", 0o600 | stat.S_IFCHR, os.makedev(1, 5))
    with pytest.raises(FilesystemError) as raised:
        HostFilesystem(tmp_path).read("zero")
    assert str(raised.value) == "is a character device, not a regular file: 'zero'"


def test_a_call_reading_a_fifo_fails_fast_and_the_next_call_runs(special_files: Path) -> None:
    (special_files / "a.txt").write_bytes(b"hello")
    session = Session()
    executor = vfs_executor(HostFilesystem(special_files), session=session)
    started = time.monotonic()
    results = [call(executor, "read_file", path=p) for p in ("pipe", "a.txt")]
    assert time.monotonic() - started < 2
    assert [r.message for r in results] == [
        "read_file failed: is a FIFO, not a regular file: 'pipe'.",
        "Content of a.txt (1 line):",
    ]
    assert len(session[ToolInvoked].all()) == 2


# --- helpers -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Empty:
    pass


def tool(name: str, handler: Any) -> Tool[Empty, None]:
    return Tool[Empty, None](name=name, description=f"{name}.", handler=handler)


# --- the journal's open directories, descriptors, platforms ----------------------------------


def test_restore_beyond_the_held_directories_finds_each_by_path_and_identity(
    tmp_path: Path,
) -> None:
    filesystem = HostFilesystem(tmp_path)
    token = filesystem.snapshot()
    for number in range(70):
        filesystem.write(f"d{number:02}/f.txt", "new")
    (tmp_path / "d69").rename(tmp_path / "away")  # not held: the 64 held are the first ones
    (tmp_path / "d69").mkdir()
    with pytest.raises(FilesystemError) as raised:
        filesystem.restore(token)
    assert str(raised.value) == (
        f"restore of HostFilesystem {filesystem.root!r} could not undo: 'd69/f.txt' (its "
        "directory was replaced)"
    )
    # Everything else is undone; the directory put in place of d69 is not wink's.
    assert disk_tree(tmp_path) == {"away": None, "away/f.txt": b"new", "d69": None}


def test_a_dropped_host_filesystem_closes_its_descriptors(tmp_path: Path) -> None:
    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("needs /proc/self/fd to count descriptors")
    opened = len(os.listdir("/proc/self/fd"))
    for _ in range(5):
        filesystem = HostFilesystem(tmp_path)
        token = filesystem.snapshot()
        filesystem.write("d/a.txt", "x")
        filesystem.restore(token)
        del filesystem, token
    assert len(os.listdir("/proc/self/fd")) == opened


def test_a_platform_without_directory_relative_calls_cannot_build_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "supports_dir_fd", {os.stat})
    monkeypatch.delattr(os, "O_NOFOLLOW")
    with pytest.raises(FilesystemError) as raised:
        HostFilesystem(tmp_path)
    assert str(raised.value) == (
        "HostFilesystem cannot confine paths on this platform: it lacks dir_fd support in "
        "open, mkdir, unlink, rmdir, rename, symlink, readlink and the flags O_NOFOLLOW"
    )


# --- entries, bytes and empty directories -----------------------------------------------------


def test_a_refused_symlink_is_named_on_the_error_by_its_path_from_the_root(
    places: tuple[Path, Path],
) -> None:
    root, outside = places
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "work").symlink_to(outside)
    (root / "a" / "file.txt").symlink_to(outside / "a.txt")
    filesystem = HostFilesystem(root)
    refusals = {
        "./a//b/work/sub/b.txt": lambda path: filesystem.read(path),
        "a/b/work": lambda path: filesystem.list(path),
        "a/./file.txt": lambda path: filesystem.write(path, "x"),
    }
    links = []
    for path, attempt in refusals.items():
        with pytest.raises(FilesystemError) as raised:
            attempt(path)
        links.append(raised.value.link)
    assert links == ["a/b/work", "a/b/work", "a/file.txt"]
    with pytest.raises(FilesystemError) as missing:
        filesystem.read("a/none.txt")
    assert missing.value.link is None
    assert disk_tree(outside) == OUTSIDE_TREE


def test_lstat_describes_the_entry_itself_and_is_none_when_absent(
    places: tuple[Path, Path],
) -> None:
    root, outside = places
    (root / "d").mkdir()
    (root / "d" / "f.txt").write_bytes(b"12345")
    (root / "d" / "link").symlink_to(outside / "a.txt")
    (root / "plain").write_bytes(b"")
    filesystem = HostFilesystem(root)
    kinds = {
        path: None if (status := filesystem.lstat(path)) is None else stat.S_IFMT(status.st_mode)
        for path in (".", "d", "d/f.txt", "d/link", "d/none", "none/f.txt", "plain/f.txt")
    }
    assert kinds == {
        ".": stat.S_IFDIR,
        "d": stat.S_IFDIR,
        "d/f.txt": stat.S_IFREG,
        "d/link": stat.S_IFLNK,
        "d/none": None,
        "none/f.txt": None,
        "plain/f.txt": None,
    }
    status = filesystem.lstat("d/f.txt")
    assert status is not None and status.st_size == 5
    with pytest.raises(FilesystemError) as raised:
        filesystem.lstat("d/link/x")
    assert (str(raised.value), raised.value.link) == (
        "path 'd/link/x' goes through the symlink 'd/link'; symlinks are never followed",
        "d/link",
    )


def test_read_bytes_returns_any_bytes_and_refuses_what_read_refuses(tmp_path: Path) -> None:
    (tmp_path / "bin.dat").write_bytes(b"\xff\x00text")
    (tmp_path / "dir").mkdir()
    os.mkfifo(tmp_path / "pipe")
    filesystem = HostFilesystem(tmp_path)
    assert filesystem.read_bytes("bin.dat") == b"\xff\x00text"
    messages = []
    for path in ("dir", "pipe", "none"):
        with pytest.raises(FilesystemError) as raised:
            filesystem.read_bytes(path)
        messages.append(str(raised.value))
    assert messages == [
        "is a directory, not a file: 'dir'",
        "is a FIFO, not a regular file: 'pipe'",
        "no such file: 'none'",
    ]


def test_remove_directory_removes_only_an_empty_real_directory(
    places: tuple[Path, Path],
) -> None:
    root, outside = places
    (root / "empty").mkdir()
    (root / "full").mkdir()
    (root / "full" / "f.txt").write_bytes(b"kept")
    (root / "file.txt").write_bytes(b"kept")
    (root / "work").symlink_to(outside / "sub")
    (outside / "empty").mkdir()
    (root / "to-empty").symlink_to(outside / "empty")
    filesystem = HostFilesystem(root)
    filesystem.remove_directory("empty")
    messages = []
    for path in ("full", "file.txt", "work", "to-empty", "none", "."):
        with pytest.raises(FilesystemError) as raised:
            filesystem.remove_directory(path)
        messages.append(str(raised.value))
    assert messages == [
        "cannot remove 'full': Directory not empty",
        "is a file, not a directory: 'file.txt'",
        "is a symlink; symlinks are never followed: 'work'",
        "is a symlink; symlinks are never followed: 'to-empty'",
        "no such directory: 'none'",
        "cannot remove the root directory: '.'",
    ]
    assert disk_tree(root) == {
        "file.txt": b"kept",
        "full": None,
        "full/f.txt": b"kept",
        "to-empty": f"-> {outside / 'empty'}",
        "work": f"-> {outside / 'sub'}",
    }
    assert (outside / "empty").is_dir()


def test_remove_directory_is_refused_while_a_snapshot_is_alive(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    filesystem = HostFilesystem(tmp_path)
    token = filesystem.snapshot()
    with pytest.raises(FilesystemError) as raised:
        filesystem.remove_directory("empty")
    assert str(raised.value) == (
        "cannot remove the directory 'empty' while a snapshot is alive: restore does not put "
        "directories back"
    )
    del token
    filesystem.remove_directory("empty")
    assert disk_tree(tmp_path) == {}


def test_writes_and_deletes_without_a_snapshot_journal_nothing(tmp_path: Path) -> None:
    filesystem = HostFilesystem(tmp_path)
    filesystem.write("d/a.txt", "a")
    filesystem.write("d/a.txt", "b")
    filesystem.delete("d/a.txt")
    filesystem.remove_directory("d")
    held = {name: getattr(filesystem, name) for name in ("_journal", "_ours", "_held", "_touched")}
    assert held == {"_journal": [], "_ours": {}, "_held": {}, "_touched": set()}


def test_rollback_of_a_deep_write_whose_middle_was_moved_out_touches_nothing_outside(
    places: tuple[Path, Path],
) -> None:
    root, outside = places
    filesystem = HostFilesystem(root)
    token = filesystem.snapshot()
    filesystem.write("a/" * 99 + "x.txt", "deep")
    # Level 80 is past the directories the journal keeps open: found by ``..`` and path.
    os.rename(root / ("a/" * 79 + "a"), outside / "moved")
    with pytest.raises(FilesystemError) as raised:
        filesystem.restore(token)
    message = str(raised.value)
    assert message.startswith(f"restore of HostFilesystem {filesystem.root!r} could not undo: ")
    assert message.count("(its directory is gone or no longer reachable)") == 20
    assert os.listdir(root) == []
    moved = disk_tree(outside / "moved")
    assert moved["a/" * 18 + "a/x.txt"] == b"deep"
    assert len(moved) == 20
