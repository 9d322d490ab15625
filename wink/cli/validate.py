"""Validate recorded tool calls against the tools' contracts and JSON Schemas, streaming.

Each call is parsed by the tool's params contract (what the executor would do);
a call the contract accepts is also checked against its ``params_schema`` (what
the provider was shown), so a disagreement between the two is reported too. A
``null`` for an optional field (one with a default) passes both, as strict
OpenAI tools send it: the schema checked is the params schema with every
optional property also accepting ``null``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import IO, Any

from pydantic_core import from_json

from wink.cli.failure import printable
from wink.cli.recorded import calls_in
from wink.cli.settings import DEFAULT_MAX_LINE_BYTES
from wink.contract import (
    ContractViolation,
    FieldProblem,
    JsonSchema,
    format_path,
    map_schema,
    schema_checker,
)
from wink.runtime.call import ToolCall
from wink.tools import Tool

__all__ = [
    "DEFAULT_MAX_LINE_BYTES",
    "CallChecker",
    "ValidationTally",
    "unreadable_reason",
    "validate_lines",
]

_DRAIN_CHUNK = 1024 * 1024


@dataclass(slots=True)
class ValidationTally:
    """What a validation run saw, counted as it streams."""

    calls: int = 0
    invalid: int = 0
    unknown: int = 0
    malformed: int = 0

    def add(self, other: ValidationTally) -> None:
        """Count ``other``'s findings in this tally too."""
        self.calls += other.calls
        self.invalid += other.invalid
        self.unknown += other.unknown
        self.malformed += other.malformed

    @property
    def failed(self) -> bool:
        """Whether any call, name or line was bad."""
        return bool(self.invalid or self.unknown or self.malformed)

    def summary(self, files: int) -> str:
        """One line for the end of the run."""
        where = f"{files} file" + ("" if files == 1 else "s")
        counts = [
            f"{self.invalid} invalid",
            f"{self.unknown} unknown tool" + ("" if self.unknown == 1 else "s"),
            f"{self.malformed} malformed line" + ("" if self.malformed == 1 else "s"),
        ]
        return f"checked {self.calls} tool calls in {where}: {', '.join(counts)}"


class CallChecker:
    """Checks calls against a fixed set of tools, found by name."""

    def __init__(self, tools: Sequence[Tool[Any, Any]]) -> None:
        self._checks = {
            tool.name: (
                tool.params_contract.parse,
                None
                if tool.params_type is None
                else schema_checker(_null_for_optional(tool.params_schema)),
            )
            for tool in tools
        }
        self._known = ", ".join(sorted(self._checks))

    def problems(self, call: ToolCall) -> tuple[FieldProblem, ...] | None:
        """The call's problems (empty when valid), or ``None`` for an unknown tool.

        The arguments go to the contract exactly as recorded, as the executor passes
        them: a missing or ``null`` ``arguments`` is not read as ``{}``. Arguments the
        contract accepts are checked against the schema the model was shown too, and
        each disagreement is a problem.
        """
        checks = self._checks.get(call.name)
        if checks is None:
            return None
        parse, schema = checks
        arguments = call.arguments
        try:
            parse(arguments)
            if schema is None:
                return ()  # the contract accepted an empty payload ("", null, {}): no schema
            document = _read_json(arguments) if isinstance(arguments, (str, bytes)) else arguments
            if schema.is_valid(document):
                return ()
            return tuple(
                FieldProblem(
                    format_path(list(error.absolute_path)),
                    f"the JSON Schema rejects it: {error.message}",
                )
                for error in schema.iter_errors(document)
            )
        except ContractViolation as violation:
            return violation.problems
        except Exception as error:  # e.g. a string JSON cannot carry (a lone surrogate)
            reason = f"the arguments cannot be read: {unreadable_reason(error)}"
            return (FieldProblem(format_path([]), reason),)

    def unknown_reason(self) -> str:
        """Why a name was not found, listing the known ones."""
        return f"unknown tool (known: {self._known})"


def validate_lines(
    lines: Iterable[bytes] | IO[bytes],
    label: str,
    checker: CallChecker,
    report: Callable[[str], None],
    *,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
) -> ValidationTally:
    """Check every call on every line, reporting ``label:line: ...`` for each problem.

    A line longer than ``max_line_bytes`` is reported as malformed as soon as that
    many bytes are read, and skipped without being kept; so is a line nested too
    deeply to read. Reported lines show control characters as escapes.
    """
    tally = ValidationTally()
    problems_of = checker.problems
    for number, line in enumerate(_bounded_lines(lines, max_line_bytes), start=1):
        if line is None:
            tally.malformed += 1
            report(
                f"{label}:{number}: malformed line: longer than {max_line_bytes} bytes "
                "(--max-line-bytes); skipped"
            )
            continue
        if not line or line.isspace():
            continue
        try:
            try:
                calls = calls_in(_read_json(line))
            except ValueError as error:  # bad JSON or UTF-8, or a shape no reader knows
                tally.malformed += 1
                report(printable(f"{label}:{number}: malformed line: {_line_error(error, line)}"))
                continue
            for position, call in enumerate(calls, start=1):
                tally.calls += 1
                problems = problems_of(call)
                if problems:
                    tally.invalid += 1
                    _report_problems(
                        report, f"{label}:{number}", call, position, len(calls), problems
                    )
                elif problems is None:
                    tally.unknown += 1
                    called = f"{label}:{number}: {_call_label(call, position, len(calls))}"
                    report(printable(f"{called}: {checker.unknown_reason()}"))
        except RecursionError:
            tally.malformed += 1
            report(f"{label}:{number}: malformed line: nested too deeply to read; skipped")
    return tally


def _report_problems(
    report: Callable[[str], None],
    where: str,
    call: ToolCall,
    position: int,
    count: int,
    problems: tuple[FieldProblem, ...],
) -> None:
    # Where a problem is (file, line, call) is spelled out only for a line that has one.
    called = f"{where}: {_call_label(call, position, count)}"
    for problem in problems:
        report(printable(f"{called}: {problem.path}: {_in_user_words(problem.reason)}"))


def _read_json(text: str | bytes) -> Any:
    """``json.loads(text)``, read by pydantic-core's faster parser where it can.

    Where that parser reads a document at all it reads it as ``json.loads`` does;
    what it refuses (a BOM, a lone surrogate, deep nesting, a syntax error) goes to
    ``json.loads``, whose result or error (and its wording) is the one kept.
    """
    try:
        return from_json(text)
    except ValueError:
        return json.loads(text)


def _bounded_lines(lines: Iterable[bytes] | IO[bytes], limit: int) -> Iterator[bytes | None]:
    """Each line, or ``None`` for one longer than ``limit`` bytes (never held whole)."""
    readline = getattr(lines, "readline", None)
    if readline is None:
        for line in lines:
            yield line if len(line.rstrip(b"\r\n")) <= limit else None
        return
    while True:
        line = readline(limit + 1)
        if not line:
            return
        if len(line) <= limit or line.endswith(b"\n"):
            yield line
            continue
        yield None  # reported before the rest of the line is read, however long it is
        while line and not line.endswith(b"\n"):
            line = readline(_DRAIN_CHUNK)


def _call_label(call: ToolCall, position: int, count: int) -> str:
    """The tool's name, plus which call it is when the line holds several.

    The call's id names it when recorded; otherwise its 1-based position on the line.
    """
    if count == 1:
        return printable(call.name)
    return printable(f"{call.name} (call {call.call_id if call.call_id else f'#{position}'})")


def _null_for_optional(schema: JsonSchema) -> JsonSchema:
    """``schema`` where every optional property also accepts ``null``.

    The contract reads such a ``null`` as the field's default (strict OpenAI
    tools send it), so the schema check must not report it. ``if``/``else``
    rather than ``anyOf`` keeps the property's own error messages.
    """

    def visit(node: JsonSchema) -> JsonSchema:
        properties = node.get("properties")
        if isinstance(properties, dict):
            required = set(node.get("required", ()))
            node["properties"] = {
                name: prop
                if name in required or not isinstance(prop, dict)
                else {"if": {"type": "null"}, "else": prop}
                for name, prop in properties.items()
            }
        return node

    return map_schema(schema, visit)


def _line_error(error: ValueError, line: bytes) -> str:
    if isinstance(error, json.JSONDecodeError):
        # Past the end means the line stopped short; point just after its last character.
        column = min(error.pos, len(line.rstrip())) + 1
        return f"not valid JSON ({error.msg} at column {column})"
    if isinstance(error, UnicodeDecodeError):
        return f"not valid UTF-8 ({error.reason} at byte {error.start})"
    if _INT_LIMIT in str(error):
        return unreadable_reason(error)
    return str(error)  # the readers' own words: where the document went wrong


_INT_LIMIT = "integer string conversion"  # Python's refusal of integers over 4300 digits
_PYTHON_PREFIX = re.compile(r"^(?:value error|assertion failed), ", re.IGNORECASE)


def _in_user_words(reason: str) -> str:
    """A contract problem without pydantic's Python prefix (``value error, ...``)."""
    return _PYTHON_PREFIX.sub("", reason)


def unreadable_reason(error: BaseException) -> str:
    """Why data could not be read, in the words of JSON rather than of Python."""
    text = str(error).strip().splitlines()[0] if str(error).strip() else ""
    if isinstance(error, RecursionError):
        return "nested too deeply to read"
    if isinstance(error, UnicodeError):
        return "a string holds a lone surrogate, which JSON cannot carry"
    if _INT_LIMIT in text:
        return "an integer has more than 4300 digits, more than wink reads"
    return f"{type(error).__name__}: {text}" if text else type(error).__name__
