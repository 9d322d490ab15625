"""A Python sandbox tool suite over the ``asteval`` interpreter (``pip install 'wink[asteval]'``).

``AstevalSection`` carries one tool, ``evaluate_python``: it evaluates an
expression or a small program with ``asteval`` (a restricted interpreter that walks
the syntax tree itself, never calling ``exec``) and returns the value of the last
expression, what ``print`` wrote, and the names the code defined.

The interpreter's symbols live in the session (``session[AstevalSymbols]``, a
``STATE`` slice) as source text: each call starts from the symbols of the previous
successful calls, and a failed call leaves them as they were, like any other
session state. A value is kept when it is a Python literal that reads back equal
(numbers, strings, bytes, ``None``, booleans, and lists, tuples, dicts and sets of
them), a function when ``def`` defined it under its own name (no decorators,
literal defaults, so that defining it again runs nothing else); anything else (a
``lambda``, a ``range``, an exception, ``nan``) is not kept, and the result says so.
Being text, the symbols are saved and loaded with the session
(``Snapshot.to_json``), and a call cannot change a kept list in place.

Refused, and reported to the model as a failure:

- ``import`` and ``from ... import``: no modules, so no file, process or network access;
- ``open``, ``exec``, ``eval``, ``compile``, ``globals``, ``locals`` and ``getattr``
  (none of them is defined);
- private and unsafe attributes (``__class__``, ``__globals__``, ``__subclasses__``,
  any ``__dunder__``);
- ``class`` definitions, ``async`` functions, ``yield`` and ``global``;
- strings longer than 262,144 characters, exponents above 10,000 and shifts above
  1,000 (``asteval``'s own limits), and ``range`` of more than ``max_range`` items;
- programs longer than ``max_code_chars`` characters;
- keeping symbols whose source takes more than ``max_kept_chars`` characters in all,
  or a value nested more than 100 levels deep (the message names the symbol);
- a value that cannot be shown (an int past Python's digit limit, a list nested past
  the recursion limit): the message says so. Such an int is kept in hex.

The code runs in a worker process (``wink.contrib._sandbox_worker``: a fresh
``python -I -S`` importing only the standard library and ``asteval``), one per call
in flight, a few kept idle for later calls; the symbols travel with each request
and come back with the answer, so the session stays their only owner. Limits:

- time: the worker checks ``timeout_seconds`` before each interpreter step (a loop
  stops with its output); a built-in call that runs long is ended by killing the
  worker ``0.5`` seconds past the limit on ``clock`` (its output is lost), and by
  the kernel's CPU-time limit (``RLIMIT_CPU``: the limit plus a second) should the
  parent be gone. The kept symbols are defined before the limit starts (bounded by
  ``max_kept_chars``; a worker reuses the values it already holds);
- memory: ``RLIMIT_AS`` of ``max_memory_bytes``; an allocation past it fails with
  ``MemoryError``, reported like any error;
- output: ``print`` keeps only ``max_output_chars`` characters (and counts the rest);
- the host: no file writes (``RLIMIT_FSIZE`` 0), no new files or sockets
  (``RLIMIT_NOFILE`` at the descriptors already open), no processes
  (``RLIMIT_NPROC`` 0, which the kernel does not apply to root), no core dumps: a
  second wall behind the refusals above. It is not a container: the worker shares
  the host's kernel, user and network namespace.

A killed worker is replaced for the next call. Workers end with
:meth:`AstevalSection.close`, when the section is garbage collected, at interpreter
exit, or when their standard input closes. Linux only.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, TypeAdapter

from wink.contrib import _sandbox_worker
from wink.prompt import Enabled, MarkdownSection
from wink.runtime import Session
from wink.tools import Tool, ToolContext, ToolResult

try:
    import asteval as _asteval
except ImportError as error:  # pragma: no cover - the extra is installed in tests
    raise ImportError(
        "wink.contrib.asteval needs the asteval package: pip install 'wink[asteval]'"
    ) from error

__all__ = ["AstevalSection", "AstevalSymbols", "EvaluatePython", "Evaluation", "KeptSymbol"]


@dataclass(frozen=True, slots=True)
class EvaluatePython:
    """Python code to evaluate in the sandbox."""

    code: Annotated[
        str,
        Field(
            description="An expression or a small Python program; the value of the last "
            "expression is returned, and print() output is captured. Names defined here "
            "stay defined for later calls. No imports, no files."
        ),
    ]


@dataclass(frozen=True, slots=True)
class Evaluation:
    """What evaluating the code gave."""

    value: str | None
    """``repr`` of the last expression's value; ``None`` when the code ends in a statement."""
    output: str
    """What ``print`` wrote (cut to the section's ``max_output_chars``)."""
    defined: tuple[str, ...]
    """Names this call defined or changed, sorted; they are kept for later calls."""
    not_kept: tuple[str, ...] = ()
    """Names whose values cannot be kept in the session, so later calls lack them."""

    def render(self) -> str:
        """The output, then the value, then the names kept and lost."""
        lines = [self.output.rstrip("\n")] if self.output else []
        if self.value is not None:
            lines.append(f"=> {self.value}")
        if self.defined:
            lines.append(f"Defined: {', '.join(self.defined)}")
        if self.not_kept:
            lines.append(
                f"Not kept for later calls (not a literal or a def): {', '.join(self.not_kept)}"
            )
        return "\n".join(lines) if lines else "(no value, no output)"


@dataclass(frozen=True, slots=True)
class KeptSymbol:
    """One symbol of the sandbox, as source text."""

    name: str
    """The name the code bound."""
    kind: Literal["value", "function"]
    """``value``: ``source`` is a Python literal; ``function``: a ``def`` statement."""
    source: str
    """The literal, or the function's definition."""


@dataclass(frozen=True, slots=True)
class AstevalSymbols:
    """The sandbox's symbols in one session, as source text (so the session can be saved)."""

    symbols: tuple[KeptSymbol, ...] = ()
    """The symbols the code defined, sorted by name."""


@dataclass(frozen=True, slots=True)
class _Reply:
    """One frame from the worker: ``loaded``, then the outcome of the call."""

    status: Literal["loaded", "done", "error", "timeout", "refused", "failed"]
    message: str = ""
    output: str = ""
    value: str | None = None
    symbols: tuple[tuple[str, Literal["value", "function"], str], ...] = ()
    defined: tuple[str, ...] = ()
    not_kept: tuple[str, ...] = ()


_REPLY = TypeAdapter(_Reply)

_LOAD_SECONDS = 10.0
"""Longest the worker may take to start and define the kept symbols, which the size
limit on kept symbols bounds to a small fraction of this."""

_GRACE_SECONDS = 0.5
"""Time past the limit before the worker is killed: the worker stops Python-level code
itself at the limit, and needs a moment to write its symbols and answer."""

_IDLE_WORKERS = 4
"""Workers kept waiting for calls; more, started for calls in flight at once, are ended."""

_WORKER = Path(_sandbox_worker.__file__)
_ASTEVAL_HOME = str(Path(_asteval.__file__).resolve().parent.parent)


_INSTRUCTIONS = """\
`evaluate_python` runs Python code in a sandbox: arithmetic, strings, lists, dicts, \
loops, functions and the `math` functions, with no imports and no file access. The value \
of the last expression is returned and `print()` output is shown. Names you define stay \
defined for your later calls (literal values and `def` functions, at most {max_kept_chars} \
characters of them in all); a call that fails changes none of them.

Limits: at most {max_code_chars} characters of code, {timeout_seconds:g} seconds per call, \
`range` of at most {max_range} items; output longer than {max_output_chars} characters is cut."""


class AstevalSection(MarkdownSection[None]):
    """Instructions for the Python sandbox, carrying the ``evaluate_python`` tool.

    Its worker processes end with :meth:`close`, when the section is garbage collected,
    or when the interpreter exits.
    """

    def __init__(
        self,
        *,
        title: str = "Python sandbox",
        key: str = "asteval",
        timeout_seconds: float = 5.0,
        max_code_chars: int = 10_000,
        max_output_chars: int = 4_000,
        max_range: int = 1_000_000,
        policies: Sequence[object] = (),
        enabled: Enabled = True,
        accepts_overrides: bool = True,
        clock: Callable[[], float] = time.monotonic,
        max_kept_chars: int = 1_000_000,
        max_memory_bytes: int = 512 * 1024 * 1024,
    ) -> None:
        """A section whose tool evaluates code within the given limits."""
        for name, limit in (
            ("timeout_seconds", timeout_seconds),
            ("max_code_chars", max_code_chars),
            ("max_output_chars", max_output_chars),
            ("max_range", max_range),
            ("max_kept_chars", max_kept_chars),
            ("max_memory_bytes", max_memory_bytes),
        ):
            if not limit > 0:
                raise ValueError(f"AstevalSection: {name} must be positive, got {limit!r}")
        self.timeout_seconds = timeout_seconds
        """Longest a call may run, on ``clock`` (the worker is killed half a second later)."""
        self.max_code_chars = max_code_chars
        """Longest code accepted, in characters."""
        self.max_output_chars = max_output_chars
        """Longest output (and value ``repr``) returned, in characters."""
        self.max_range = max_range
        """Most items a ``range`` may have."""
        self.max_kept_chars = max_kept_chars
        """Most characters the kept symbols' source may take, all names together."""
        self.max_memory_bytes = max_memory_bytes
        """The worker process's address-space limit (``RLIMIT_AS``), in bytes."""
        self._clock = clock
        self._pool = _Pool(max_memory_bytes)
        self._finalizer = weakref.finalize(self, self._pool.close)
        text = _INSTRUCTIONS.format(
            max_code_chars=max_code_chars,
            timeout_seconds=timeout_seconds,
            max_range=max_range,
            max_output_chars=max_output_chars,
            max_kept_chars=max_kept_chars,
        )
        self.evaluate_tool = Tool[EvaluatePython, Evaluation](
            name="evaluate_python",
            description="Evaluate Python code in a sandbox and return its value and output.",
            handler=self._evaluate,
        )
        """The section's tool (a handler bound to these limits)."""
        super().__init__(
            title=title,
            key=key,
            template=text.replace("$", "$$"),
            tools=(self.evaluate_tool,),
            policies=tuple(policies),
            enabled=enabled,
            accepts_overrides=accepts_overrides,
        )

    def close(self) -> None:
        """End the worker processes; later calls fail. Calling it again does nothing."""
        self._finalizer()

    def _evaluate(self, params: EvaluatePython, *, context: ToolContext) -> ToolResult[Evaluation]:
        """Evaluate ``params.code`` from the session's symbols; keep the new ones on success."""
        session = context.session
        if not isinstance(session, Session):
            return ToolResult.error("evaluate_python needs a Session to keep its symbols in.")
        if len(params.code) > self.max_code_chars:
            return ToolResult.error(
                f"evaluate_python refused the code: it has {len(params.code)} characters, "
                f"more than the limit of {self.max_code_chars}; split it into smaller calls."
            )
        stored = session[AstevalSymbols].latest()
        symbols = () if stored is None else stored.symbols
        request = json.dumps(
            {
                "code": params.code,
                "symbols": [(kept.name, kept.kind, kept.source) for kept in symbols],
                "timeout": self.timeout_seconds,
                "max_code_chars": self.max_code_chars,
                "max_output_chars": self.max_output_chars,
                "max_range": self.max_range,
                "max_kept_chars": self.max_kept_chars,
            }
        ).encode()
        reply = self._exchange(request)
        if isinstance(reply, str):
            return ToolResult.error(reply)
        if reply.status != "done":
            return ToolResult.error(self._failure(reply))
        session[AstevalSymbols].seed(
            [AstevalSymbols(tuple(KeptSymbol(*symbol) for symbol in reply.symbols))]
        )
        evaluation = Evaluation(
            value=None if reply.value is None else self._cut(reply.value, "value"),
            output=reply.output,
            defined=reply.defined,
            not_kept=reply.not_kept,
        )
        return ToolResult.ok(evaluation, message="Evaluated.")

    def _exchange(self, request: bytes) -> _Reply | str:
        """The worker's outcome for ``request``, or a failure message."""
        try:
            worker = self._pool.acquire()
        except _Closed:
            return "evaluate_python is not available: its sandbox was closed."
        except OSError as error:
            return f"evaluate_python could not start its sandbox process: {error}"
        healthy = False
        try:
            reply = self._converse(worker, request)
            healthy = not isinstance(reply, str)
            return reply
        finally:
            self._pool.release(worker, healthy=healthy)

    def _converse(self, worker: _Worker, request: bytes) -> _Reply | str:
        limit = f"{self.timeout_seconds:g} seconds"
        try:
            worker.send(_sandbox_worker.frame(request))
            first = worker.receive(self._clock, self._clock() + _LOAD_SECONDS, self._max_reply)
            if first is None:
                return (
                    "evaluate_python stopped: defining the kept symbols took more than "
                    f"{_LOAD_SECONDS:g} seconds."
                )
            if first.status != "loaded":
                return first
            deadline = self._clock() + self.timeout_seconds + _GRACE_SECONDS
            reply = worker.receive(self._clock, deadline, self._max_reply)
        except _WorkerEnded as ended:
            return (
                f"evaluate_python stopped the code: its sandbox process ended ({ended}); "
                f"the code used more than its {limit} of CPU time or its memory limit of "
                f"{self.max_memory_bytes // 2**20} MiB."
            )
        if reply is None:
            return (
                f"evaluate_python stopped the code after {limit}, its time limit (a built-in "
                "call was still running, so its output is lost); make it do less work per call."
            )
        return reply

    @property
    def _max_reply(self) -> int:
        # JSON writes a character in at most 12 bytes (an escaped surrogate pair).
        return 12 * (self.max_kept_chars + 2 * self.max_output_chars) + 65_536

    def _failure(self, reply: _Reply) -> str:
        text = reply.output.rstrip("\n")
        note = f"\nOutput before the failure:\n{text}" if text else ""
        if reply.status == "timeout":
            return (
                f"evaluate_python stopped the code after {self.timeout_seconds:g} seconds, "
                f"its time limit; make it do less work per call.{note}"
            )
        if reply.status == "failed":
            return f"evaluate_python cannot load this session's symbols: {reply.message}."
        if reply.status == "refused":
            return f"evaluate_python {reply.message}.{note}"
        return f"evaluate_python failed: {reply.message}{note}"

    def _cut(self, text: str, what: str) -> str:
        if len(text) <= self.max_output_chars:
            return text
        left_out = len(text) - self.max_output_chars
        return f"{text[: self.max_output_chars]}\n[{what} cut: {left_out} more characters]"


class _Closed(Exception):
    """The section was closed."""


class _WorkerEnded(Exception):
    """The worker process ended (or broke the protocol) during a call."""


class _Worker:
    """One worker process and the pipes to it."""

    def __init__(self, memory_bytes: int) -> None:
        # -I ignores PYTHON* variables, the user's site and the current folder; -S skips
        # site-packages: the worker imports the standard library and asteval alone.
        self.process = subprocess.Popen(
            [sys.executable, "-I", "-S", str(_WORKER), _ASTEVAL_HOME, str(memory_bytes)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd="/",
        )

    @property
    def pid(self) -> int:
        return self.process.pid

    def send(self, data: bytes) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        try:
            stdin.write(data)
            stdin.flush()
        except (BrokenPipeError, ValueError):
            raise _WorkerEnded(self.ended()) from None

    def receive(self, clock: Callable[[], float], deadline: float, limit: int) -> _Reply | None:
        """The next frame, or ``None`` when ``deadline`` (on ``clock``) passes first."""
        stdout = self.process.stdout
        assert stdout is not None
        header = self._read(stdout.fileno(), 4, clock, deadline)
        if header is None:
            return None
        size = int.from_bytes(header, "big")
        if size > limit:
            raise _WorkerEnded(f"a reply of {size} bytes, over the limit of {limit}")
        body = self._read(stdout.fileno(), size, clock, deadline)
        if body is None:
            return None
        try:
            return _REPLY.validate_json(body)
        except ValueError as error:
            raise _WorkerEnded(f"a reply that is not valid: {str(error)[:200]}") from None

    def _read(
        self, fd: int, size: int, clock: Callable[[], float], deadline: float
    ) -> bytes | None:
        chunks: list[bytes] = []
        missing = size
        while missing:
            # Waits in short slices so that a ``clock`` other than the system's is followed.
            wait = min(deadline - clock(), 0.25)
            if wait <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], wait)
            if not ready:
                continue
            chunk = os.read(fd, min(missing, 1 << 20))
            if not chunk:
                raise _WorkerEnded(self.ended())
            chunks.append(chunk)
            missing -= len(chunk)
        return b"".join(chunks)

    def ended(self) -> str:
        """How the process ended, for a message."""
        try:
            code = self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            return "it stopped answering"
        if code < 0:
            try:
                return f"killed by {signal.Signals(-code).name}"
            except ValueError:
                return f"killed by signal {-code}"
        return f"exit status {code}"

    def stop(self) -> None:
        """Kill the process and reap it."""
        if self.process.stdin is not None:
            with contextlib.suppress(OSError):  # a broken pipe: the process is gone already
                self.process.stdin.close()
        self.process.kill()
        self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()


class _Pool:
    """The worker processes of one section: one per call in flight, a few kept idle."""

    def __init__(self, memory_bytes: int) -> None:
        self.memory_bytes = memory_bytes
        self.lock = threading.Lock()
        self.idle: list[_Worker] = []
        self.busy: set[_Worker] = set()
        self.closed = False

    def acquire(self) -> _Worker:
        with self.lock:
            if self.closed:
                raise _Closed
            if self.idle:
                worker = self.idle.pop()
                self.busy.add(worker)
                return worker
        worker = _Worker(self.memory_bytes)  # started outside the lock: other calls go on
        with self.lock:
            if not self.closed:
                self.busy.add(worker)
                return worker
        worker.stop()
        raise _Closed

    def release(self, worker: _Worker, *, healthy: bool) -> None:
        with self.lock:
            self.busy.discard(worker)
            keep = healthy and not self.closed and len(self.idle) < _IDLE_WORKERS
            if keep:
                self.idle.append(worker)
        if not keep:
            worker.stop()

    def pids(self) -> list[int]:
        """The process ids of the live workers (for checks that none is left over)."""
        with self.lock:
            return sorted(worker.pid for worker in [*self.idle, *self.busy])

    def close(self) -> None:
        with self.lock:
            self.closed = True
            workers = [*self.idle, *self.busy]
            self.idle.clear()
        for worker in workers:
            worker.stop()
