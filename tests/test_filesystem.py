"""Specification of ``wink.resources.filesystem``: paths, operations, confinement, snapshots."""

from __future__ import annotations

import gc
import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wink.resources import (
    FileNotFoundInFilesystemError,
    Filesystem,
    FilesystemError,
    HostFilesystem,
    InMemoryFilesystem,
)


def tree(filesystem: Filesystem, directory: str = ".") -> dict[str, str | None]:
    """Every path under ``directory``: a file's text, or ``None`` for a directory."""
    found: dict[str, str | None] = {}
    for name in filesystem.list(directory):
        path = name if directory == "." else f"{directory}/{name}"
        if path.endswith("/"):
            found[path] = None
            found.update(tree(filesystem, path.rstrip("/")))
        else:
            found[path] = filesystem.read(path)
    return found


# --- in memory: paths ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("a.txt", "a.txt"),
        ("./a.txt", "a.txt"),
        ("/mnt/a.txt", "a.txt"),
        ("d//e/./f.txt", "d/e/f.txt"),
        ("d/../a.txt", "a.txt"),
        ("/mnt/../mnt/d/", "d"),
        ("/mnt", "."),
        (".", "."),
    ],
)
def test_normalize_gives_one_canonical_relative_path(path: str, expected: str) -> None:
    assert InMemoryFilesystem().normalize(path) == expected


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("../a.txt", "path '../a.txt' escapes the filesystem root"),
        ("d/../../a.txt", "path 'd/../../a.txt' escapes the filesystem root"),
        ("/etc/passwd", "path '/etc/passwd' is outside the mount point '/mnt'"),
        ("/mnt/../etc", "path '/mnt/../etc' is outside the mount point '/mnt'"),
        ("/mntx/a.txt", "path '/mntx/a.txt' is outside the mount point '/mnt'"),
        ("", "invalid path: ''"),
    ],
)
def test_paths_leaving_the_root_are_refused_with_their_name(path: str, message: str) -> None:
    with pytest.raises(FilesystemError) as raised:
        InMemoryFilesystem().read(path)
    assert str(raised.value) == message


def test_mount_point_is_normalized() -> None:
    assert InMemoryFilesystem(mount_point="/work//space/").mount_point == "/work/space"


def test_relative_mount_point_is_refused() -> None:
    with pytest.raises(FilesystemError) as raised:
        InMemoryFilesystem(mount_point="mnt")
    assert str(raised.value) == "mount point must be an absolute path: 'mnt'"


# --- in memory: operations ----------------------------------------------------------------


def test_written_file_reads_back_under_every_spelling_of_its_path() -> None:
    filesystem = InMemoryFilesystem()
    filesystem.write("./a.txt", "hello")
    assert [filesystem.read(p) for p in ("a.txt", "/mnt/a.txt")] == ["hello", "hello"]


def test_initial_files_are_present() -> None:
    filesystem = InMemoryFilesystem(files={"a.txt": "1", "d/b.txt": "2"})
    assert tree(filesystem) == {"a.txt": "1", "d/": None, "d/b.txt": "2"}


def test_reading_a_missing_file_raises_file_not_found_naming_it() -> None:
    with pytest.raises(FileNotFoundError) as raised:
        InMemoryFilesystem().read("missing.txt")
    assert isinstance(raised.value, FileNotFoundInFilesystemError)
    assert str(raised.value) == "no such file: 'missing.txt'"


def test_reading_a_directory_is_refused() -> None:
    filesystem = InMemoryFilesystem(files={"d/a.txt": "x"})
    with pytest.raises(FilesystemError) as raised:
        filesystem.read("d")
    assert str(raised.value) == "is a directory, not a file: 'd'"


def test_list_gives_sorted_names_with_directories_suffixed() -> None:
    filesystem = InMemoryFilesystem(files={"b.txt": "", "a/x.txt": "", "c/d/y.txt": ""})
    assert filesystem.list() == ["a/", "b.txt", "c/"]
    assert filesystem.list("/mnt/c") == ["d/"]


def test_listing_a_missing_directory_raises_file_not_found() -> None:
    with pytest.raises(FileNotFoundInFilesystemError) as raised:
        InMemoryFilesystem().list("nowhere")
    assert str(raised.value) == "no such directory: 'nowhere'"


def test_listing_a_file_is_refused() -> None:
    with pytest.raises(FilesystemError) as raised:
        InMemoryFilesystem(files={"a.txt": ""}).list("a.txt")
    assert str(raised.value) == "is a file, not a directory: 'a.txt'"


def test_writing_below_a_file_is_refused() -> None:
    filesystem = InMemoryFilesystem(files={"a.txt": "x"})
    with pytest.raises(FilesystemError) as raised:
        filesystem.write("a.txt/b.txt", "y")
    assert str(raised.value) == "a parent of 'a.txt/b.txt' is a file, not a directory"
    assert tree(filesystem) == {"a.txt": "x"}


def test_writing_over_a_directory_is_refused() -> None:
    filesystem = InMemoryFilesystem(files={"d/a.txt": "x"})
    with pytest.raises(FilesystemError) as raised:
        filesystem.write("d", "y")
    assert str(raised.value) == "is a directory, not a file: 'd'"


def test_exists_reports_files_and_directories() -> None:
    filesystem = InMemoryFilesystem(files={"d/a.txt": "x"})
    assert [filesystem.exists(p) for p in ("d", "d/a.txt", "d/b.txt", ".")] == [
        True,
        True,
        False,
        True,
    ]


def test_delete_removes_the_file_and_keeps_its_directory() -> None:
    filesystem = InMemoryFilesystem(files={"d/a.txt": "x", "d/b.txt": "y"})
    filesystem.delete("d/a.txt")
    filesystem.delete("d/b.txt")
    assert tree(filesystem) == {"d/": None}


def test_deleting_a_missing_file_raises_file_not_found() -> None:
    with pytest.raises(FileNotFoundInFilesystemError) as raised:
        InMemoryFilesystem().delete("a.txt")
    assert str(raised.value) == "no such file: 'a.txt'"


def test_deleting_a_directory_is_refused() -> None:
    filesystem = InMemoryFilesystem(files={"d/a.txt": "x"})
    with pytest.raises(FilesystemError) as raised:
        filesystem.delete("d")
    assert str(raised.value) == "is a directory, not a file: 'd'"


# --- in memory: snapshots -----------------------------------------------------------------


def test_restore_returns_to_the_snapshot_state() -> None:
    filesystem = InMemoryFilesystem(files={"a.txt": "1", "b.txt": "2"})
    snapshot = filesystem.snapshot()
    filesystem.write("a.txt", "changed")
    filesystem.delete("b.txt")
    filesystem.write("d/new.txt", "new")
    filesystem.restore(snapshot)
    assert tree(filesystem) == {"a.txt": "1", "b.txt": "2"}


def test_nested_snapshots_restore_innermost_then_outermost() -> None:
    filesystem = InMemoryFilesystem(files={"a.txt": "0"})
    outer = filesystem.snapshot()
    filesystem.write("a.txt", "1")
    inner = filesystem.snapshot()
    filesystem.write("a.txt", "2")
    filesystem.restore(inner)
    assert filesystem.read("a.txt") == "1"
    filesystem.restore(outer)
    assert filesystem.read("a.txt") == "0"


def test_snapshot_without_changes_since_is_the_same_token() -> None:
    filesystem = InMemoryFilesystem(files={"a.txt": "1"})
    first = filesystem.snapshot()
    assert filesystem.read("a.txt") == "1"
    assert filesystem.exists("a.txt")
    assert filesystem.list() == ["a.txt"]
    assert filesystem.snapshot() is first


@pytest.mark.parametrize(
    "change",
    [
        lambda filesystem: filesystem.write("a.txt", "2"),
        lambda filesystem: filesystem.write("a.txt", "1"),  # the same text: still a change
        lambda filesystem: filesystem.write("d/b.txt", "new"),
        lambda filesystem: filesystem.delete("a.txt"),
    ],
    ids=["overwrite", "same-text", "new-file", "delete"],
)
def test_every_change_gives_a_new_token_and_the_old_one_still_restores(
    change: Callable[[InMemoryFilesystem], None],
) -> None:
    filesystem = InMemoryFilesystem(files={"a.txt": "1"})
    before = filesystem.snapshot()
    change(filesystem)
    after = filesystem.snapshot()
    assert after is not before
    filesystem.restore(before)
    assert tree(filesystem) == {"a.txt": "1"}
    assert filesystem.snapshot() is before
    filesystem.restore(after)
    assert filesystem.snapshot() is after


def test_refused_change_keeps_the_token() -> None:
    filesystem = InMemoryFilesystem(files={"a.txt": "1", "d/b.txt": "2"})
    token = filesystem.snapshot()
    refusals = (
        lambda: filesystem.write("a.txt/c.txt", "x"),
        lambda: filesystem.write("d", "x"),
        lambda: filesystem.delete("d"),
        lambda: filesystem.delete("missing.txt"),
    )
    for refused in refusals:
        with pytest.raises(FilesystemError):
            refused()
    assert filesystem.snapshot() is token


def test_filesystems_never_share_a_token() -> None:
    first, second = InMemoryFilesystem(), InMemoryFilesystem()
    assert first.snapshot() is not second.snapshot()
    first.write("a.txt", "1")
    second.restore(first.snapshot())
    first.write("a.txt", "2")
    assert (first.read("a.txt"), second.read("a.txt")) == ("2", "1")


def test_restoring_a_foreign_token_is_refused() -> None:
    with pytest.raises(FilesystemError) as raised:
        InMemoryFilesystem().restore("token")
    assert str(raised.value) == "not a snapshot of an InMemoryFilesystem: 'token'"


# --- host: confinement --------------------------------------------------------------------


def test_host_write_lands_in_the_root_on_disk(tmp_path: Path) -> None:
    filesystem = HostFilesystem(tmp_path)
    filesystem.write("d/a.txt", "hello\r\n")
    assert (tmp_path / "d" / "a.txt").read_bytes() == b"hello\r\n"
    assert filesystem.read("d/a.txt") == "hello\r\n"


def test_host_mount_point_is_the_resolved_root(tmp_path: Path) -> None:
    assert HostFilesystem(tmp_path).mount_point == os.path.realpath(tmp_path)


def test_host_accepts_absolute_paths_inside_the_root(tmp_path: Path) -> None:
    filesystem = HostFilesystem(tmp_path)
    filesystem.write(str(tmp_path / "a.txt"), "x")
    assert filesystem.read("a.txt") == "x"
    assert filesystem.normalize(str(tmp_path / "a.txt")) == "a.txt"


def test_host_refuses_dot_dot_escape(tmp_path: Path) -> None:
    (tmp_path / "root").mkdir()
    filesystem = HostFilesystem(tmp_path / "root")
    with pytest.raises(FilesystemError) as raised:
        filesystem.write("../outside.txt", "x")
    assert str(raised.value) == "path '../outside.txt' escapes the filesystem root"
    assert not (tmp_path / "outside.txt").exists()


def test_host_refuses_absolute_path_outside_the_root(tmp_path: Path) -> None:
    (tmp_path / "root").mkdir()
    filesystem = HostFilesystem(tmp_path / "root")
    outside = str(tmp_path / "outside.txt")
    with pytest.raises(FilesystemError) as raised:
        filesystem.write(outside, "x")
    assert str(raised.value) == f"path {outside!r} is outside the mount point {filesystem.root!r}"


def test_host_refuses_symlink_leading_outside_the_root(tmp_path: Path) -> None:
    (tmp_path / "root").mkdir()
    (tmp_path / "secret").mkdir()
    (tmp_path / "secret" / "key.txt").write_text("k")
    (tmp_path / "root" / "link").symlink_to(tmp_path / "secret")
    filesystem = HostFilesystem(tmp_path / "root")
    with pytest.raises(FilesystemError) as raised:
        filesystem.read("link/key.txt")
    assert str(raised.value) == (
        "path 'link/key.txt' goes through the symlink 'link'; symlinks are never followed"
    )


def test_host_refuses_writing_through_a_symlinked_file_outside(tmp_path: Path) -> None:
    (tmp_path / "root").mkdir()
    (tmp_path / "target.txt").write_text("original")
    (tmp_path / "root" / "file").symlink_to(tmp_path / "target.txt")
    with pytest.raises(FilesystemError):
        HostFilesystem(tmp_path / "root").write("file", "overwritten")
    assert (tmp_path / "target.txt").read_text() == "original"


def test_host_refuses_symlinks_even_when_they_stay_inside_the_root(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "a.txt").write_text("inside")
    (tmp_path / "alias").symlink_to(tmp_path / "real")
    with pytest.raises(FilesystemError) as raised:
        HostFilesystem(tmp_path).read("alias/a.txt")
    assert str(raised.value) == (
        "path 'alias/a.txt' goes through the symlink 'alias'; symlinks are never followed"
    )


def test_host_rooted_at_slash_reaches_files_by_absolute_and_relative_paths(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.txt").write_text("hello")
    filesystem = HostFilesystem("/")
    relative = str(tmp_path.resolve() / "a.txt").removeprefix("/")
    assert (filesystem.read(str(tmp_path / "a.txt")), filesystem.read(relative)) == (
        "hello",
        "hello",
    )
    assert filesystem.list(str(tmp_path)) == ["a.txt"]


def test_host_root_must_be_an_existing_directory(tmp_path: Path) -> None:
    with pytest.raises(FilesystemError) as raised:
        HostFilesystem(tmp_path / "missing")
    assert str(raised.value) == f"root is not a directory: {str(tmp_path / 'missing')!r}"


# --- host: operations ---------------------------------------------------------------------


def test_host_list_gives_sorted_names_with_directories_suffixed(tmp_path: Path) -> None:
    filesystem = HostFilesystem(tmp_path)
    for path in ("b.txt", "a/x.txt", "c/d/y.txt"):
        filesystem.write(path, "")
    assert filesystem.list() == ["a/", "b.txt", "c/"]


def test_host_reading_a_missing_file_raises_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError) as raised:
        HostFilesystem(tmp_path).read("missing.txt")
    assert str(raised.value) == "no such file: 'missing.txt'"


def test_host_delete_removes_the_file(tmp_path: Path) -> None:
    filesystem = HostFilesystem(tmp_path)
    filesystem.write("a.txt", "x")
    filesystem.delete("a.txt")
    assert not filesystem.exists("a.txt")
    assert not (tmp_path / "a.txt").exists()


def test_host_deleting_a_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    with pytest.raises(FilesystemError) as raised:
        HostFilesystem(tmp_path).delete("d")
    assert str(raised.value) == "is a directory, not a file: 'd'"


def test_host_write_of_text_utf8_cannot_encode_is_refused_and_keeps_the_file(
    tmp_path: Path,
) -> None:
    filesystem = HostFilesystem(tmp_path)
    filesystem.write("a.txt", "before")
    with pytest.raises(FilesystemError) as raised:
        filesystem.write("a.txt", "ok \ud800")
    assert str(raised.value) == (
        "cannot write 'a.txt': the content is not valid text (surrogates not allowed at "
        "character 3)"
    )
    assert (tmp_path / "a.txt").read_text() == "before"


def test_host_refused_write_creates_no_file_or_directory(tmp_path: Path) -> None:
    with pytest.raises(FilesystemError):
        HostFilesystem(tmp_path).write("new/a.txt", "\udfff")
    assert list(tmp_path.iterdir()) == []


def test_host_write_keeps_line_endings_as_given(tmp_path: Path) -> None:
    HostFilesystem(tmp_path).write("a.txt", "one\r\ntwo\rthree\n\u00e9")
    assert (tmp_path / "a.txt").read_bytes() == "one\r\ntwo\rthree\n\u00e9".encode()


# --- host: snapshots ----------------------------------------------------------------------


def test_host_restore_puts_back_overwritten_file(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("original")
    filesystem = HostFilesystem(tmp_path)
    snapshot = filesystem.snapshot()
    filesystem.write("a.txt", "first")
    filesystem.write("a.txt", "second")
    filesystem.restore(snapshot)
    assert (tmp_path / "a.txt").read_text() == "original"


def test_host_restore_puts_back_deleted_file(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"\x00binary\xff")
    filesystem = HostFilesystem(tmp_path)
    snapshot = filesystem.snapshot()
    filesystem.delete("a.txt")
    filesystem.restore(snapshot)
    assert (tmp_path / "a.txt").read_bytes() == b"\x00binary\xff"


def test_host_restore_removes_new_files_and_the_directories_made_for_them(tmp_path: Path) -> None:
    (tmp_path / "kept").mkdir()
    filesystem = HostFilesystem(tmp_path)
    snapshot = filesystem.snapshot()
    filesystem.write("new/deep/a.txt", "x")
    filesystem.write("kept/b.txt", "y")
    filesystem.restore(snapshot)
    assert sorted(os.listdir(tmp_path)) == ["kept"]
    assert os.listdir(tmp_path / "kept") == []


def test_host_restore_turns_a_directory_back_into_the_file_it_replaced(tmp_path: Path) -> None:
    (tmp_path / "x").write_text("file")
    filesystem = HostFilesystem(tmp_path)
    snapshot = filesystem.snapshot()
    filesystem.delete("x")
    filesystem.write("x/inner.txt", "nested")
    filesystem.restore(snapshot)
    assert (tmp_path / "x").read_text() == "file"


def test_host_nested_snapshots_restore_innermost_then_outermost(tmp_path: Path) -> None:
    filesystem = HostFilesystem(tmp_path)
    filesystem.write("a.txt", "0")
    outer = filesystem.snapshot()
    filesystem.write("a.txt", "1")
    inner = filesystem.snapshot()
    filesystem.write("a.txt", "2")
    filesystem.write("b.txt", "new")
    filesystem.restore(inner)
    assert tree(filesystem) == {"a.txt": "1"}
    filesystem.write("a.txt", "3")
    filesystem.restore(outer)
    assert tree(filesystem) == {"a.txt": "0"}


def test_host_snapshot_taken_after_a_restored_one_is_invalid(tmp_path: Path) -> None:
    filesystem = HostFilesystem(tmp_path)
    outer = filesystem.snapshot()
    filesystem.write("a.txt", "1")
    inner = filesystem.snapshot()
    filesystem.restore(outer)
    with pytest.raises(FilesystemError) as raised:
        filesystem.restore(inner)
    assert str(raised.value) == (
        f"snapshot of HostFilesystem {filesystem.root!r} is no longer valid: an earlier "
        "snapshot was restored"
    )


def test_host_restore_is_correct_after_earlier_snapshots_were_released(tmp_path: Path) -> None:
    filesystem = HostFilesystem(tmp_path)
    released = filesystem.snapshot()
    filesystem.write("a.txt", "kept")
    del released
    gc.collect()
    snapshot = filesystem.snapshot()
    filesystem.write("a.txt", "undone")
    filesystem.write("b.txt", "undone")
    filesystem.restore(snapshot)
    assert tree(filesystem) == {"a.txt": "kept"}


def test_host_restoring_another_filesystems_token_is_refused(tmp_path: Path) -> None:
    token = HostFilesystem(tmp_path).snapshot()
    with pytest.raises(FilesystemError) as raised:
        HostFilesystem(tmp_path).restore(token)
    assert str(raised.value).startswith("not a snapshot of this HostFilesystem")


# --- both: restore is exact, whatever happened since ---------------------------------------


SnapshotableFilesystem = InMemoryFilesystem | HostFilesystem


@contextmanager
def in_memory() -> Iterator[SnapshotableFilesystem]:
    yield InMemoryFilesystem()


@contextmanager
def on_host() -> Iterator[SnapshotableFilesystem]:
    # Not ``tmp_path``: hypothesis runs many examples in one test, each needs a fresh root.
    with tempfile.TemporaryDirectory() as root:
        yield HostFilesystem(root)


PATHS = ["a", "b", "d/a", "d/b", "d/e/a", "a/x"]
OPERATIONS = st.lists(
    st.one_of(
        st.tuples(st.just("write"), st.sampled_from(PATHS), st.text("xy\r\n", max_size=4)),
        st.tuples(st.just("delete"), st.sampled_from(PATHS), st.just("")),
        st.tuples(st.just("snapshot"), st.just(""), st.just("")),
    ),
    max_size=30,
)


@pytest.mark.parametrize("opened", [in_memory, on_host], ids=["in_memory", "host"])
@given(operations=OPERATIONS, data=st.data())
def test_restoring_any_snapshot_gives_back_exactly_its_state(
    opened: Callable[[], AbstractContextManager[SnapshotableFilesystem]],
    operations: list[tuple[str, str, str]],
    data: st.DataObject,
) -> None:
    with opened() as filesystem:
        snapshots = [(filesystem.snapshot(), tree(filesystem))]
        for operation, path, content in operations:
            try:
                if operation == "write":
                    filesystem.write(path, content)
                elif operation == "delete":
                    filesystem.delete(path)
                else:
                    snapshots.append((filesystem.snapshot(), tree(filesystem)))
            except FilesystemError:
                pass  # refused operations (a file in the way, nothing to delete) change nothing
        start = data.draw(st.integers(0, len(snapshots) - 1), label="first restored")
        for token, state in reversed(snapshots[: start + 1]):
            filesystem.restore(token)
            assert tree(filesystem) == state


def test_host_restore_undoes_a_file_replaced_by_a_directory(tmp_path: Path) -> None:
    fs = HostFilesystem(tmp_path)
    fs.write("a", "file")
    token = fs.snapshot()
    with pytest.raises(FilesystemError):
        fs.write("a/x", "under a file")
    fs.delete("a")
    fs.write("a/x", "now a directory")
    fs.restore(token)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a"]
    assert fs.read("a") == "file"
