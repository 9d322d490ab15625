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
them), a function when ``def`` defined it under its own name; anything else (a
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
- running longer than ``timeout_seconds``: the interpreter checks the time before
  each step, so a single built-in call that runs long (``sum`` over a huge range, say)
  is stopped only when it returns.

Output beyond ``max_output_chars`` (and a value whose ``repr`` is longer) is cut, with
a note saying how much was left out.
"""

from __future__ import annotations

import ast
import io
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import Field

from wink.prompt import Enabled, MarkdownSection
from wink.runtime import Session
from wink.tools import Tool, ToolContext, ToolResult

try:
    import asteval as _asteval
    from asteval.astutils import Procedure as _Procedure
except ImportError as error:  # pragma: no cover - the extra is installed in tests
    raise ImportError(
        "wink.contrib.asteval needs the asteval package: pip install 'wink[asteval]'"
    ) from error

__all__ = ["AstevalSection", "AstevalSymbols", "EvaluatePython", "Evaluation", "KeptSymbol"]

_REMOVED = ("open",)
"""Built-ins ``asteval`` offers that the sandbox takes away (``open`` reads host files)."""


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


class _TimeLimit(BaseException):
    """Raised inside the interpreter when time is up; a BaseException, so that the
    evaluated code's own ``try`` blocks (which ``asteval`` runs) cannot catch it."""


_INSTRUCTIONS = """\
`evaluate_python` runs Python code in a sandbox: arithmetic, strings, lists, dicts, \
loops, functions and the `math` functions, with no imports and no file access. The value \
of the last expression is returned and `print()` output is shown. Names you define stay \
defined for your later calls; a call that fails changes none of them.

Limits: at most {max_code_chars} characters of code, {timeout_seconds:g} seconds per call, \
`range` of at most {max_range} items; output longer than {max_output_chars} characters is cut."""


class AstevalSection(MarkdownSection[None]):
    """Instructions for the Python sandbox, carrying the ``evaluate_python`` tool."""

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
    ) -> None:
        """A section whose tool evaluates code within the given limits."""
        for name, limit in (
            ("timeout_seconds", timeout_seconds),
            ("max_code_chars", max_code_chars),
            ("max_output_chars", max_output_chars),
            ("max_range", max_range),
        ):
            if not limit > 0:
                raise ValueError(f"AstevalSection: {name} must be positive, got {limit!r}")
        self.timeout_seconds = timeout_seconds
        """Longest a call may run."""
        self.max_code_chars = max_code_chars
        """Longest code accepted, in characters."""
        self.max_output_chars = max_output_chars
        """Longest output (and value ``repr``) returned, in characters."""
        self.max_range = max_range
        """Most items a ``range`` may have."""
        self._clock = clock
        text = _INSTRUCTIONS.format(
            max_code_chars=max_code_chars,
            timeout_seconds=timeout_seconds,
            max_range=max_range,
            max_output_chars=max_output_chars,
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
        output = io.StringIO()
        errors = io.StringIO()
        interpreter = self._interpreter(output, errors)
        baseline = dict(interpreter.symtable)
        previous = {} if stored is None else {kept.name: kept for kept in stored.symbols}
        _attach(previous.values(), interpreter)
        try:
            value = interpreter.eval(params.code, show_errors=False)
        except _TimeLimit:
            return ToolResult.error(
                f"evaluate_python stopped the code after {self.timeout_seconds:g} seconds, "
                f"its time limit; make it do less work per call.{self._output_note(output)}"
            )
        if interpreter.error:
            kind, detail = interpreter.error[-1].get_error()
            return ToolResult.error(
                f"evaluate_python failed: {_error_text(kind, detail)}{self._output_note(output)}"
            )
        kept, not_kept = _detach(_user_symbols(interpreter.symtable, baseline))
        session[AstevalSymbols].seed([AstevalSymbols(tuple(kept[name] for name in sorted(kept)))])
        evaluation = Evaluation(
            value=None if value is None else self._cut(repr(value), "value"),
            output=self._cut(output.getvalue(), "output"),
            defined=tuple(sorted(name for name in kept if previous.get(name) != kept[name])),
            not_kept=not_kept,
        )
        return ToolResult.ok(evaluation, message="Evaluated.")

    def _interpreter(self, output: io.StringIO, errors: io.StringIO) -> Any:
        interpreter = _asteval.Interpreter(
            writer=output,
            err_writer=errors,
            use_numpy=False,
            max_statement_length=self.max_code_chars,
        )
        for name in _REMOVED:
            interpreter.symtable.pop(name, None)
        interpreter.symtable["range"] = _bounded_range(self.max_range)
        deadline = self._clock() + self.timeout_seconds
        run = interpreter.run
        clock = self._clock

        def timed_run(*args: Any, **kwargs: Any) -> Any:
            if clock() > deadline:
                raise _TimeLimit
            return run(*args, **kwargs)

        # Every step of the evaluation goes through ``run``: checked before each one.
        interpreter.run = timed_run
        return interpreter

    def _cut(self, text: str, what: str) -> str:
        if len(text) <= self.max_output_chars:
            return text
        left_out = len(text) - self.max_output_chars
        return f"{text[: self.max_output_chars]}\n[{what} cut: {left_out} more characters]"

    def _output_note(self, output: io.StringIO) -> str:
        text = output.getvalue().rstrip("\n")
        return f"\nOutput before the failure:\n{self._cut(text, 'output')}" if text else ""


_MISSING: Any = object()


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


def _user_symbols(symtable: Mapping[str, Any], baseline: Mapping[str, Any]) -> dict[str, Any]:
    """Names the code (or an earlier call) defined, or bound to something new."""
    return {
        name: item for name, item in symtable.items() if baseline.get(name, _MISSING) is not item
    }


def _detach(symbols: Mapping[str, Any]) -> tuple[dict[str, KeptSymbol], tuple[str, ...]]:
    """The symbols that can be kept as source text, and the names of those that cannot."""
    kept: dict[str, KeptSymbol] = {}
    lost: list[str] = []
    for name, item in symbols.items():
        symbol = _as_source(name, item)
        if symbol is None:
            lost.append(name)
        else:
            kept[name] = symbol
    return kept, tuple(sorted(lost))


def _as_source(name: str, item: Any) -> KeptSymbol | None:
    if isinstance(item, _Procedure):
        text = getattr(item, "__text__", None)
        if item.__is_lambda__ or item.__name__ != name or not isinstance(text, str):
            return None  # a lambda's text is not code; an alias would define another name
        return KeptSymbol(name, "function", text)
    try:
        text = repr(item)
        same = ast.literal_eval(text) == item
    except Exception:  # not a literal (or one that cannot be compared)
        return None
    return KeptSymbol(name, "value", text) if same else None


def _attach(symbols: Iterable[KeptSymbol], interpreter: Any) -> None:
    """Define the kept ``symbols`` in ``interpreter``."""
    for symbol in symbols:
        if symbol.kind == "value":
            interpreter.symtable[symbol.name] = ast.literal_eval(symbol.source)
        else:
            interpreter.eval(symbol.source, show_errors=False)


def _error_text(kind: str, detail: str) -> str:
    """``ZeroDivisionError: division by zero (in: 1/0)`` from asteval's two-line detail."""
    # asteval's detail is the code, maybe a line of carets under it, then the error.
    lines = [line for line in detail.splitlines() if line.strip(" ^")]
    message = lines[-1] if lines else kind
    code = " / ".join(line.strip() for line in lines[:-1])
    if not message.startswith(kind):
        message = f"{kind}: {message}"
    return f"{message} (in: {code})" if code else message
