"""Paths of any length cost linear time and bounded memory, the same on every ``Filesystem``.

A path is refused beyond ``MAX_PATH_BYTES`` (the text as given, below the mount
point), a name beyond ``MAX_NAME_BYTES`` and a resolved depth beyond
``MAX_PATH_DEPTH``; messages show a bounded prefix of what was given.
"""

from __future__ import annotations

import json
import os
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from wink import Prompt, PromptTemplate
from wink.contrib.vfs import VfsToolsSection
from wink.resources import Filesystem, FilesystemError, HostFilesystem, InMemoryFilesystem
from wink.resources.filesystem import MAX_NAME_BYTES, MAX_PATH_BYTES, MAX_PATH_DEPTH
from wink.runtime import Session, ToolCall, ToolExecutor

DEEP = "a/" * 20000 + "x"
"""20,000 levels: 40,001 bytes, well under a tool argument's size limit."""

DEEP_SHOWN = "'" + "a/" * 30 + "'... (40001 characters)"


@pytest.fixture(params=["memory", "host"])
def filesystem(request: pytest.FixtureRequest, tmp_path: Path) -> Filesystem:
    """Each implementation, so that every limit is shown to hold on both alike."""
    if request.param == "memory":
        return InMemoryFilesystem()
    return HostFilesystem(tmp_path)


def refusal(attempt: Callable[[], object]) -> str:
    """The message of the ``FilesystemError`` that ``attempt`` raises."""
    with pytest.raises(FilesystemError) as raised:
        attempt()
    return str(raised.value)


def test_limits_are_the_platform_path_and_name_maxima_and_a_depth() -> None:
    assert (MAX_PATH_BYTES, MAX_NAME_BYTES, MAX_PATH_DEPTH) == (4096, 255, 256)


def test_write_twenty_thousand_levels_deep_is_refused_quickly_in_bounded_memory(
    filesystem: Filesystem,
) -> None:
    tracemalloc.start()
    started = time.perf_counter()
    try:
        message = refusal(lambda: filesystem.write(DEEP, "x"))
        elapsed = time.perf_counter() - started
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert message == (
        f"path too long: 40001 bytes, at most 4096 allowed (MAX_PATH_BYTES): {DEEP_SHOWN}"
    )
    assert elapsed < 1.0
    assert peak < 256 * 1024
    assert filesystem.list(".") == []


@pytest.mark.parametrize(
    "operation",
    [
        lambda filesystem, path: filesystem.read(path),
        lambda filesystem, path: filesystem.exists(path),
        lambda filesystem, path: filesystem.list(path),
        lambda filesystem, path: filesystem.delete(path),
        lambda filesystem, path: filesystem.normalize(path),
    ],
    ids=["read", "exists", "list", "delete", "normalize"],
)
def test_every_operation_refuses_a_path_too_long_with_the_same_message(
    filesystem: Filesystem, operation: Callable[[Filesystem, str], Any]
) -> None:
    assert refusal(lambda: operation(filesystem, DEEP)) == (
        f"path too long: 40001 bytes, at most 4096 allowed (MAX_PATH_BYTES): {DEEP_SHOWN}"
    )


@pytest.mark.parametrize("segment", ["./", "../", "/"], ids=["dots", "dot-dots", "slashes"])
def test_a_hundred_thousand_odd_segments_are_refused_by_length_before_any_work(
    filesystem: Filesystem, segment: str
) -> None:
    path = "d/" + segment * 100_000 + "x"
    tracemalloc.start()
    started = time.perf_counter()
    try:
        message = refusal(lambda: filesystem.normalize(path))
        elapsed = time.perf_counter() - started
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert message == (
        f"path too long: {len(path)} bytes, at most 4096 allowed (MAX_PATH_BYTES): "
        f"{path[:60]!r}... ({len(path)} characters)"
    )
    assert elapsed < 1.0
    assert peak < 64 * 1024


def test_path_of_exactly_max_bytes_is_written_and_read_back(filesystem: Filesystem) -> None:
    # Sixteen names of 254 bytes and a last one of 16: 16 * 255 + 16 = 4096 bytes.
    path = ("n" * 254 + "/") * 16 + "f" * 16
    assert len(path) == MAX_PATH_BYTES
    filesystem.write(path, "at the limit")
    assert filesystem.read(path) == "at the limit"
    assert refusal(lambda: filesystem.write(path + "g", "x")) == (
        "path too long: 4097 bytes, at most 4096 allowed (MAX_PATH_BYTES): "
        f"{'n' * 60!r}... (4097 characters)"
    )


def test_bytes_not_characters_are_counted(filesystem: Filesystem) -> None:
    path = "é" * 2049  # 4,098 bytes in UTF-8; also one name of 4,098 bytes
    assert refusal(lambda: filesystem.write(path, "x")) == (
        f"path too long: 4098 bytes, at most 4096 allowed (MAX_PATH_BYTES): "
        f"{'é' * 60!r}... (2049 characters)"
    )


def test_absolute_path_counts_only_what_follows_the_mount_point() -> None:
    filesystem = InMemoryFilesystem(mount_point="/mnt")
    path = "/mnt/" + "b/" * 2047 + "c"  # 4,095 bytes below the mount point
    filesystem.write(path.replace("b/" * 2047, "b/" * 10), "x")
    assert refusal(lambda: filesystem.write(path, "x")) == (
        f"path too deep: 2048 names below the root, at most 256 allowed (MAX_PATH_DEPTH): "
        f"{path[:60]!r}... (4100 characters)"
    )
    longer = path + "c/"  # 4,097 bytes below it
    assert refusal(lambda: filesystem.write(longer, "x")) == (
        "path too long: 4097 bytes after the mount point '/mnt', at most 4096 allowed "
        f"(MAX_PATH_BYTES): {longer[:60]!r}... (4102 characters)"
    )


def test_name_of_max_bytes_is_accepted_and_one_more_byte_refused(filesystem: Filesystem) -> None:
    filesystem.write("d/" + "n" * 255, "longest name")
    assert filesystem.read("d/" + "n" * 255) == "longest name"
    assert refusal(lambda: filesystem.write("d/" + "n" * 256, "x")) == (
        f"name too long: 256 bytes, at most 255 allowed (MAX_NAME_BYTES): {'n' * 60!r}... "
        "(256 characters)"
    )


def test_name_too_long_is_refused_in_utf8_bytes_even_when_dot_dot_follows(
    filesystem: Filesystem,
) -> None:
    name = "é" * 128  # 256 bytes
    assert refusal(lambda: filesystem.exists(f"{name}/../x")) == (
        f"name too long: 256 bytes, at most 255 allowed (MAX_NAME_BYTES): {'é' * 60!r}... "
        "(128 characters)"
    )


def test_depth_is_counted_after_resolution(filesystem: Filesystem) -> None:
    at_limit = "a/" * (MAX_PATH_DEPTH - 1) + "x"
    filesystem.write(at_limit, "deepest")
    assert filesystem.read("a/" * 300 + "../" * 45 + "x") == "deepest"
    too_deep = "a/" * MAX_PATH_DEPTH + "x"
    assert refusal(lambda: filesystem.write(too_deep, "x")) == (
        f"path too deep: 257 names below the root, at most 256 allowed (MAX_PATH_DEPTH): "
        f"{too_deep[:60]!r}... (513 characters)"
    )
    assert refusal(lambda: filesystem.read("a/" * 300 + "../" * 43 + "x")) == (
        f"path too deep: 258 names below the root, at most 256 allowed (MAX_PATH_DEPTH): "
        f"{('a/' * 30)!r}... (730 characters)"
    )


def test_nul_in_a_long_path_is_refused_with_a_bounded_message(filesystem: Filesystem) -> None:
    path = "a" * 3000 + "\x00"
    assert refusal(lambda: filesystem.write(path, "x")) == (
        f"invalid path: {'a' * 60!r}... (3001 characters)"
    )


def test_a_lone_surrogate_is_refused_alike_on_both(filesystem: Filesystem) -> None:
    assert refusal(lambda: filesystem.write("a\ud800b.txt", "x")) == (
        "invalid path: 'a\\ud800b.txt' is not valid text (surrogates not allowed at character 1)"
    )


def count_opens(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count every ``os.open`` from now on, in a one-item list."""
    opened = [0]
    real_open = os.open

    def counting(*args: Any, **kwargs: Any) -> int:
        opened[0] += 1
        return real_open(*args, **kwargs)

    monkeypatch.setattr(os, "open", counting)
    return opened


def test_host_rollback_of_a_write_at_the_maximum_depth_opens_each_level_a_few_times(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    filesystem = HostFilesystem(tmp_path)
    token = filesystem.snapshot()
    filesystem.write("a/" * (MAX_PATH_DEPTH - 1) + "x", "deep")
    opened = count_opens(monkeypatch)
    started = time.perf_counter()
    filesystem.restore(token)
    elapsed = time.perf_counter() - started
    assert os.listdir(tmp_path) == []
    # Linear: each level is reached by path once and by its child's ``..`` once, and
    # checked to be below the root once; one path from the root per level would be
    # about 256 * 256 / 2 = 32,768 opens.
    assert opened[0] <= 4 * MAX_PATH_DEPTH
    assert elapsed < 2.0


def test_host_journal_of_a_deep_write_holds_each_directory_once(tmp_path: Path) -> None:
    filesystem = HostFilesystem(tmp_path)
    token = filesystem.snapshot()
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        filesystem.write("a/" * (MAX_PATH_DEPTH - 1) + "x", "deep")
        kept, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # A journal entry per created directory holding its whole path would keep about
    # 8 * 256 * 256 / 2 = 262,144 bytes of tuples.
    assert kept - before < 160 * 1024
    filesystem.restore(token)
    assert os.listdir(tmp_path) == []


def test_memory_write_at_the_maximum_depth_under_a_deep_stack_does_not_recurse() -> None:
    filesystem = InMemoryFilesystem()

    def nested(levels: int) -> None:
        # Leaves less stack than the depth of the path, as a deep caller would.
        if levels:
            nested(levels - 1)
        else:
            filesystem.write("a/" * (MAX_PATH_DEPTH - 1) + "x", "deep")
            filesystem.delete("a/" * (MAX_PATH_DEPTH - 1) + "x")

    nested(sys.getrecursionlimit() - MAX_PATH_DEPTH)
    assert filesystem.exists("a/" * (MAX_PATH_DEPTH - 1))
    assert not filesystem.exists("a/" * (MAX_PATH_DEPTH - 1) + "x")


@pytest.mark.parametrize("tool", ["read_file", "write_file", "delete_file", "list_directory"])
def test_vfs_tool_with_a_deep_path_argument_fails_with_the_limit_and_changes_nothing(
    filesystem: Filesystem, tool: str
) -> None:
    template = PromptTemplate(ns="tests", key="limits", sections=[VfsToolsSection()])
    prompt = Prompt(template).bind(resources={Filesystem: filesystem})
    executor = ToolExecutor(prompt=prompt, session=Session())
    arguments = {"path": DEEP, "content": "x"} if tool == "write_file" else {"path": DEEP}
    started = time.perf_counter()
    result = executor.execute(ToolCall(tool, json.dumps(arguments), call_id="call_1"))
    assert time.perf_counter() - started < 1.0
    assert (result.success, result.message) == (
        False,
        f"{tool} failed: path too long: 40001 bytes, at most 4096 allowed (MAX_PATH_BYTES): "
        f"{DEEP_SHOWN}.",
    )
    assert filesystem.list(".") == []
