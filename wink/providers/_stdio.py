"""``protocol_stdout``: this process's stdout kept for a protocol, everything else to stderr.

A protocol spoken over stdout (MCP over stdio) breaks on the first stray line:
a handler's ``print``, a library's banner, a child process's output. While the
protocol runs, its stream is a private duplicate of file descriptor 1; fd 1
itself points at stderr and ``sys.stdout`` is ``sys.stderr``, so whatever else
writes to stdout, at the Python level or the descriptor level, lands on stderr.
``protocol_stdin`` keeps stdin the same way: the protocol reads a private
duplicate and fd 0 reads the null device.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import BinaryIO

__all__ = ["protocol_stdin", "protocol_stdout"]


@contextmanager
def protocol_stdout() -> Iterator[BinaryIO]:
    """Own this process's stdout for a protocol: yield its stream, send all else to stderr.

    Inside, ``sys.stdout`` is ``sys.stderr`` and fd 1 points at stderr (or the null
    device when there is no stderr); what ``sys.stdout`` held unwritten when it
    began, or gets written through an older reference, goes to stderr too. On exit
    both are restored. Raises ``OSError`` when the process has no stdout.
    """
    protocol_fd = _duplicate_above_standard(1)
    try:
        _divert_to_stderr(1)
    except BaseException:
        os.close(protocol_fd)
        raise
    saved = sys.stdout
    sys.stdout = sys.stderr
    try:
        # Unwritten output from before is not the protocol's: it goes to stderr now.
        _flush(saved)
        with open(protocol_fd, "wb", closefd=False) as stream:
            yield stream
    finally:
        sys.stdout = saved
        # Whatever reached the old stdout object while serving goes to stderr, not
        # to the restored stream after the protocol has ended.
        _flush(saved)
        try:
            os.dup2(protocol_fd, 1)
        finally:
            os.close(protocol_fd)


@contextmanager
def protocol_stdin() -> Iterator[BinaryIO]:
    """Own this process's stdin for a protocol: yield its stream; fd 0 reads the null device.

    A handler, or a child process it starts, that reads stdin gets end of input
    instead of taking the client's messages. On exit fd 0 is restored. The private
    duplicate stays open: a thread still blocked reading it when serving ends must
    not find its descriptor closed and reused under it. Raises ``OSError`` when the
    process has no stdin.
    """
    protocol_fd = _duplicate_above_standard(0)
    try:
        null = os.open(os.devnull, os.O_RDONLY)
        try:
            os.dup2(null, 0)
        finally:
            os.close(null)
    except BaseException:
        os.close(protocol_fd)
        raise
    try:
        # Not closed on exit, for the reason above; closefd=False keeps the duplicate
        # open when the stream is collected.
        yield open(protocol_fd, "rb", closefd=False)  # noqa: SIM115
    finally:
        os.dup2(protocol_fd, 0)


def _duplicate_above_standard(fd: int) -> int:
    """A non-inheritable duplicate of ``fd`` that is not 0, 1 or 2, which others may claim."""
    if sys.platform == "win32":  # pragma: no cover - no fcntl; dup is non-inheritable
        return os.dup(fd)
    import fcntl

    return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)


def _divert_to_stderr(fd: int) -> None:
    try:
        os.dup2(2, fd)
    except OSError:  # no stderr: nothing else may reach the protocol all the same
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, fd)
        finally:
            os.close(null)


def _flush(stream: object) -> None:
    flush = getattr(stream, "flush", None)
    if flush is not None:
        with suppress(OSError, ValueError):  # closed by the application: nothing to write
            flush()
