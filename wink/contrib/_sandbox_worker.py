"""The process that runs ``evaluate_python`` code, one request at a time, under OS limits.

``wink.contrib.asteval`` starts it as ``python -I -S <this file> <asteval's folder>
<memory bytes>``: a fresh interpreter that imports only the standard library and
``asteval``, so it holds no threads, locks or state of the application. Before it
reads a request it lowers its own limits (``setrlimit``): address space to the
given bytes, file size to 0, open files to those already open, child processes to
0, core dumps to 0. Per request it sets its CPU-time limit to the time it has used
so far plus the call's time limit plus a second, so a built-in call that runs long
is ended by the kernel even if the parent cannot end it.

Frames are a 4-byte big-endian length and UTF-8 JSON, on standard input (requests)
and standard output (replies). For each request it answers twice: ``loaded`` once
the kept symbols are defined (the call's time limit starts after it), then the
outcome. When standard input closes it exits.
"""

from __future__ import annotations

import ast
import json
import math
import os
import pickle
import struct
import sys
import time
from collections.abc import Callable, Mapping
from typing import Any, BinaryIO

MAX_DEPTH = 100
"""Deepest nesting of lists, tuples, dicts and sets a kept value may have."""

_HEADER = struct.Struct(">I")


def read_frame(stream: BinaryIO) -> bytes | None:
    """One frame's body from ``stream``; ``None`` at the end of the stream."""
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None
    (size,) = _HEADER.unpack(header)
    body = stream.read(size)
    return body if len(body) == size else None


def frame(body: bytes) -> bytes:
    """``body`` with its length in front."""
    return _HEADER.pack(len(body)) + body


class TimeLimit(BaseException):
    """Raised before an interpreter step once time is up; a ``BaseException``, so that
    the evaluated code's own ``try`` blocks (which ``asteval`` runs) cannot catch it."""


class CappedWriter:
    """A text sink for ``print`` that keeps the first ``cap`` characters and counts the rest."""

    def __init__(self, cap: int) -> None:
        """A writer keeping at most ``cap`` characters."""
        self.cap = cap
        self.parts: list[str] = []
        self.kept = 0
        self.total = 0

    def write(self, text: str) -> int:
        """Keep what fits under the cap; count all of it."""
        self.total += len(text)
        room = self.cap - self.kept
        if room > 0:
            piece = text[:room]
            self.parts.append(piece)
            self.kept += len(piece)
        return len(text)

    def flush(self) -> None:
        """Nothing is buffered elsewhere."""

    def text(self) -> str:
        """What was kept, with a note of how much was left out."""
        kept = "".join(self.parts)
        left_out = self.total - self.kept
        return f"{kept}\n[output cut: {left_out} more characters]" if left_out else kept


class NotLiteral(Exception):
    """The value is not made of Python literals (or refers to itself)."""


class TooBig(Exception):
    """Writing the value out would pass the characters left."""


class TooDeep(Exception):
    """The value is nested deeper than ``MAX_DEPTH``."""


_BRACKETS: dict[type, str] = {list: "[]", tuple: "()", set: "{}", dict: "{}"}


class _Source:
    """Writes a literal value as source text, refusing as soon as it passes ``budget``."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.parts: list[str] = []
        self.size = 0
        self.open: set[int] = set()

    def add(self, text: str) -> None:
        self.size += len(text)
        if self.size > self.budget:
            raise TooBig
        self.parts.append(text)

    def value(self, item: Any, depth: int) -> None:
        kind = type(item)
        if item is None or kind is bool:
            self.add(repr(item))
        elif kind is int:
            # hex is the shortest exact form; refuse before building a string too long.
            if item.bit_length() > 4 * (self.budget - self.size) + 8:
                raise TooBig
            try:
                self.add(repr(item))
            except ValueError:  # past Python's int-to-decimal digit limit
                self.add(hex(item))
        elif kind is float or kind is complex:
            text = repr(item)
            if not all(math.isfinite(part) for part in (item.real, item.imag)):
                raise NotLiteral  # inf and nan have no literal
            self.add(text)
        elif kind is str or kind is bytes:
            if len(item) > self.budget - self.size:
                raise TooBig
            self.add(repr(item))
        elif kind in (list, tuple, set, dict):
            self.container(item, depth + 1)
        else:
            raise NotLiteral

    def container(self, item: Any, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise TooDeep
        if id(item) in self.open:
            raise NotLiteral  # a container inside itself
        if len(item) > self.budget - self.size:
            raise TooBig  # each item takes at least one character
        self.open.add(id(item))
        kind = type(item)
        if kind is set and not item:
            self.add("set()")
        else:
            self.add(_BRACKETS[kind][0])
            for index, element in enumerate(item):
                if index:
                    self.add(", ")
                self.value(element, depth)
                if kind is dict:
                    self.add(": ")
                    self.value(item[element], depth)
            if kind is tuple and len(item) == 1:
                self.add(",")
            self.add(_BRACKETS[kind][1])
        self.open.discard(id(item))


def literal_source(item: Any, budget: int) -> str:
    """``item`` as a Python literal (what ``repr`` gives, big ints in hex).

    Raises ``NotLiteral``, ``TooBig`` (more than ``budget`` characters) or ``TooDeep``.
    """
    source = _Source(budget)
    source.value(item, 0)
    return "".join(source.parts)


def function_source(name: str, text: str) -> bool:
    """Whether ``text`` is one plain ``def name(...)``: no decorators, literal defaults,
    so that defining it again runs nothing but the definition."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    if len(tree.body) != 1:
        return False
    definition = tree.body[0]
    if not isinstance(definition, ast.FunctionDef) or definition.name != name:
        return False
    if definition.decorator_list:
        return False
    defaults = [*definition.args.defaults, *definition.args.kw_defaults]
    for default in defaults:
        if default is None:
            continue
        try:
            ast.literal_eval(default)
        except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
            return False
    return True


class Sandbox:
    """Evaluates requests with a fresh ``asteval`` interpreter each, reusing parsed values."""

    def __init__(self, asteval: Any, send: Callable[[dict[str, Any]], None]) -> None:
        """A sandbox using the ``asteval`` module, replying ``loaded`` with ``send``."""
        self.asteval = asteval
        self.procedure = asteval.astutils.Procedure
        self.send = send
        self.loaded: dict[str, tuple[str, bytes]] = {}
        """name -> (source, pickled value) of the last successful call's values: a value
        is loaded from its pickle (fast, and a fresh object each time) when its source
        is unchanged, and a value whose pickle is unchanged keeps its source."""

    def handle(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """The outcome of one request (after sending ``loaded``)."""
        output = CappedWriter(request["max_output_chars"])
        interpreter = self.interpreter(output, request)
        baseline = dict(interpreter.symtable)
        previous: dict[str, tuple[str, str]] = {}
        loaded: dict[str, tuple[str, bytes]] = {}
        for name, kind, source in request["symbols"]:
            previous[name] = (kind, source)
            failure = self.load(interpreter, name, kind, source, loaded)
            if failure is not None:
                return {"status": "failed", "message": failure}
        self.send({"status": "loaded"})
        timeout = request["timeout"]
        _limit_cpu(timeout)
        deadline = time.monotonic() + timeout
        run = interpreter.run

        def timed_run(*args: Any, **kwargs: Any) -> Any:
            if time.monotonic() > deadline:
                raise TimeLimit
            return run(*args, **kwargs)

        # Every step of the evaluation goes through ``run``: checked before each one.
        interpreter.run = timed_run
        try:
            value = interpreter.eval(request["code"], show_errors=False)
        except TimeLimit:
            return {"status": "timeout", "output": output.text()}
        finally:
            interpreter.run = run
        if interpreter.error:
            kind, detail = interpreter.error[-1].get_error()
            return {"status": "error", "message": error_text(kind, detail), "output": output.text()}
        shown = None
        if value is not None:
            try:
                shown = repr(value)
            except Exception as error:  # past the digit limit, too deep, out of memory
                return {
                    "status": "error",
                    "message": f"the value cannot be shown: {_describe(error)}; "
                    "show a part of it instead",
                    "output": output.text(),
                }
        outcome = self.keep(interpreter.symtable, baseline, previous, loaded, request)
        if "message" in outcome:
            return {"status": "refused", "message": outcome["message"], "output": output.text()}
        return {"status": "done", "value": shown, "output": output.text(), **outcome}

    def interpreter(self, output: CappedWriter, request: Mapping[str, Any]) -> Any:
        """A fresh interpreter without ``open`` and with a bounded ``range``."""
        interpreter = self.asteval.Interpreter(
            writer=output,
            err_writer=CappedWriter(0),
            use_numpy=False,
            max_statement_length=request["max_code_chars"],
        )
        interpreter.symtable.pop("open", None)
        interpreter.symtable["range"] = _bounded_range(request["max_range"])
        return interpreter

    def load(
        self,
        interpreter: Any,
        name: str,
        kind: str,
        source: str,
        loaded: dict[str, tuple[str, bytes]],
    ) -> str | None:
        """Define one kept symbol; a message when it cannot be (a hand-edited session)."""
        if kind == "function":
            if function_source(name, source):
                interpreter.eval(source, show_errors=False)
                if not interpreter.error:
                    return None
            return f"the kept function {name!r} cannot be defined again from its source"
        cached = self.loaded.get(name)
        if cached is not None and cached[0] == source:
            interpreter.symtable[name] = pickle.loads(cached[1])
            loaded[name] = cached
            return None
        try:
            value = ast.literal_eval(source)
        except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
            return f"the kept value {name!r} is not a Python literal"
        interpreter.symtable[name] = value
        loaded[name] = (source, pickle.dumps(value))
        return None

    def keep(
        self,
        symtable: Mapping[str, Any],
        baseline: Mapping[str, Any],
        previous: Mapping[str, tuple[str, str]],
        loaded: Mapping[str, tuple[str, bytes]],
        request: Mapping[str, Any],
    ) -> dict[str, Any]:
        """The symbols to keep (within ``max_kept_chars`` in all), or a refusal message."""
        limit = request["max_kept_chars"]
        used = 0
        kept: list[tuple[str, str, str]] = []
        not_kept: list[str] = []
        values: dict[str, tuple[str, bytes]] = {}
        for name in sorted(symtable):
            item = symtable[name]
            if baseline.get(name, _MISSING) is item:
                continue
            if isinstance(item, self.procedure):
                text = getattr(item, "__text__", None)
                if (
                    item.__is_lambda__
                    or item.__name__ != name
                    or not isinstance(text, str)
                    or not function_source(name, text)
                ):
                    not_kept.append(name)  # a lambda's text is not code; an alias names another
                    continue
                kind, source = "function", text
                if len(source) > limit - used:
                    return {"message": _too_big(name, limit, used)}
            else:
                kind = "value"
                try:
                    source, pickled = self.value_source(name, item, limit - used, loaded)
                except NotLiteral:
                    not_kept.append(name)
                    continue
                except TooBig:
                    return {"message": _too_big(name, limit, used)}
                except TooDeep:
                    return {
                        "message": f"refused to keep {name!r}: it is nested more than "
                        f"{MAX_DEPTH} levels deep; `del {name}` or flatten it"
                    }
                values[name] = (source, pickled)
            used += len(source)
            kept.append((name, kind, source))
        self.loaded = values
        defined = [name for name, kind, source in kept if previous.get(name) != (kind, source)]
        return {"symbols": kept, "defined": defined, "not_kept": not_kept}

    def value_source(
        self, name: str, item: Any, budget: int, loaded: Mapping[str, tuple[str, bytes]]
    ) -> tuple[str, bytes]:
        """``item``'s source and pickle; the loaded source when the pickle is unchanged."""
        pickled = None
        if name in loaded:
            try:
                pickled = pickle.dumps(item)
            except Exception:  # not picklable, so not one of the literal types
                raise NotLiteral from None
            source, before = loaded[name]
            if pickled == before and len(source) <= budget:
                return source, pickled
        source = literal_source(item, budget)
        return source, pickle.dumps(item) if pickled is None else pickled


_MISSING: Any = object()


def _too_big(name: str, limit: int, used: int) -> str:
    others = f" ({used} are taken by the names before it)" if used else ""
    return (
        f"refused to keep {name!r}: written out it takes more than {limit - used} characters, "
        f"and all kept names together may take {limit}{others}; `del {name}` or keep less"
    )


def _describe(error: BaseException) -> str:
    text = str(error)
    if len(text) > 300:
        text = text[:300] + "..."
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def error_text(kind: str, detail: str) -> str:
    """``ZeroDivisionError: division by zero (in: 1/0)`` from asteval's two-line detail."""
    # asteval's detail is the code, maybe a line of carets under it, then the error.
    lines = [line for line in detail.splitlines() if line.strip(" ^")]
    message = lines[-1].strip().removesuffix(":") if lines else kind
    code = " / ".join(line.strip() for line in lines[:-1])
    if not message.startswith(kind):
        message = f"{kind}: {message}"
    return f"{message} (in: {code})" if code else message


def _bounded_range(max_items: int) -> Callable[..., range]:
    def bounded(*arguments: int) -> range:
        result = range(*arguments)
        if len(result) > max_items:
            raise ValueError(
                f"range of {len(result)} items is over the sandbox's limit of {max_items}"
            )
        return result

    bounded.__name__ = bounded.__qualname__ = "range"  # what error messages call it
    return bounded


def _limit_cpu(timeout: float) -> None:
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    used = usage.ru_utime + usage.ru_stime
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    resource.setrlimit(resource.RLIMIT_CPU, (math.ceil(used + timeout) + 1, hard))


def _limit_process(memory_bytes: int) -> None:
    import resource

    open_files = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else 8
    for limit, value in (
        (resource.RLIMIT_AS, memory_bytes),
        (resource.RLIMIT_FSIZE, 0),
        (resource.RLIMIT_NOFILE, open_files),
        (resource.RLIMIT_NPROC, 0),
        (resource.RLIMIT_CORE, 0),
    ):
        resource.setrlimit(limit, (value, value))


def main(argv: list[str]) -> int:
    """Serve requests from standard input until it closes."""
    sys.path.insert(0, argv[1])
    # asteval uses numpy when it can import it; the sandbox offers no numpy.
    sys.modules["numpy"] = None  # type: ignore[assignment]  # None blocks an import
    import asteval

    requests = sys.stdin.buffer
    replies = os.fdopen(os.dup(1), "wb")
    # Only frames go to the parent: anything else printing to stdout goes nowhere.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.close(devnull)
    _limit_process(int(argv[2]))

    def send(message: dict[str, Any]) -> None:
        # A lone surrogate (``chr(0xD800)`` printed) has no UTF-8 form: sent as "?".
        replies.write(frame(json.dumps(message, ensure_ascii=False).encode(errors="replace")))
        replies.flush()

    sandbox = Sandbox(asteval, send)
    while True:
        body = read_frame(requests)
        if body is None:
            return 0
        try:
            reply = sandbox.handle(json.loads(body))
        except MemoryError:
            sandbox.loaded = {}
            reply = {"status": "error", "message": "MemoryError: out of memory", "output": ""}
        send(reply)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
