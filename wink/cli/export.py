"""Schema files: build them from code, write them, and compare them with committed ones.

The layout under the schema directory is ``contract/<tool>.json`` for every tool
(its canonical contract, which drift is classified on), ``<dialect>/<tool>.json``
for every tool and dialect, ``wire/<Type>.json`` for wink's wire types (when asked for) and an
``index.json`` listing them all. Every file is JSON with two-space indents, keys
in emission order, and a final newline, so the same code always writes the same
bytes.

wink owns the JSON files in the ``contract``, dialect and ``wire`` folders and those the
committed ``index.json`` lists: an export removes the ones the code no longer
produces, and a check reports them as extra, so re-exporting always clears a
check. Every other file in the directory is the user's and left alone.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wink.cli.dialects import Dialect
from wink.cli.drift import CONTRACT_FOLDER, contract_document
from wink.cli.failure import CliError
from wink.cli.schema_directory import SchemaDirectory
from wink.cli.settings import DIALECT_NAMES
from wink.cli.wire import wire_schemas
from wink.tools import Tool

__all__ = [
    "INDEX",
    "Drift",
    "ExportOptions",
    "WriteSummary",
    "build_schema_files",
    "check_schema_files",
    "committed_contracts",
    "committed_options",
    "json_text",
    "options_mismatch",
    "write_schema_files",
]

INDEX = "index.json"
_OWNED_FOLDERS = (CONTRACT_FOLDER, *DIALECT_NAMES, "wire")


def build_schema_files(
    tools: Sequence[Tool[Any, Any]],
    dialects: Sequence[Dialect],
    *,
    wire: bool,
    warn: Callable[[str], None] = lambda line: None,
) -> dict[str, str]:
    """Relative POSIX path to file text, for every tool and dialect, plus the index.

    A recursive tool a dialect cannot express (Gemini's OpenAPI form) gets no file
    there: ``warn`` is told, and the index notes why under the tool's ``skipped``.
    """
    files: dict[str, str] = {}
    listed: dict[str, dict[str, str]] = {tool.name: {} for tool in tools}
    for tool in tools:
        path = f"{CONTRACT_FOLDER}/{tool.name}.json"
        files[path] = json_text(contract_document(tool))
        listed[tool.name][CONTRACT_FOLDER] = path
    skipped: dict[str, dict[str, str]] = {tool.name: {} for tool in tools}
    for dialect in dialects:
        kept, recursive = dialect.split_recursive(tools)
        for name, reason in recursive.items():
            warn(f"warning: {dialect.name}: skipped tool {name!r}: {reason}")
            skipped[name][dialect.name] = reason
        specs = dialect.specs(kept) if kept else []
        if len(specs) != len(kept):
            raise CliError(f"{dialect.name} specs: expected {len(kept)} specs, got {len(specs)}")
        for tool, spec in zip(kept, specs, strict=True):
            path = f"{dialect.name}/{tool.name}.json"
            files[path] = json_text(spec)
            listed[tool.name][dialect.name] = path
    wire_files = {}
    if wire:
        for name, schema in wire_schemas().items():
            wire_files[name] = f"wire/{name}.json"
            files[wire_files[name]] = json_text(schema)
    descriptions = {tool.name: tool.description for tool in tools}
    index = {
        "dialects": {dialect.name: dialect.describe() for dialect in dialects},
        "tools": {
            name: {
                "description": descriptions[name],
                "files": listed[name],
                **({"skipped": skipped[name]} if skipped[name] else {}),
            }
            for name in sorted(listed)
        },
        "wire": wire_files,
    }
    files[INDEX] = json_text(index)
    return files


def json_text(value: object) -> str:
    """The one text form of every schema file (and of ``wink tools``' output).

    A lone surrogate (a description written with a ``\\ud800`` escape) is written as
    its JSON escape, so the text is always valid UTF-8 and still the same JSON.
    """
    text = json.dumps(value, indent=2, ensure_ascii=False) + "\n"
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


@dataclass(frozen=True, slots=True)
class WriteSummary:
    """What ``write_schema_files`` did."""

    written: tuple[str, ...]
    unchanged: tuple[str, ...]
    removed: tuple[str, ...]

    def describe(self, directory: Path) -> str:
        """One line for the end of an export."""
        return (
            f"wrote {len(self.written)} files to {directory}"
            f" ({len(self.unchanged)} unchanged, {len(self.removed)} stale removed)"
        )


def write_schema_files(directory: Path, files: Mapping[str, str]) -> WriteSummary:
    """Write ``files`` under ``directory``; owned files (see the module) that are no
    longer produced are removed, and nothing else is touched.

    Nothing is written, read or removed through a symbolic link inside ``directory``
    (see ``SchemaDirectory``)."""
    if directory.exists() and not directory.is_dir():
        raise CliError(f"--out {directory} exists and is not a directory")
    schemas = SchemaDirectory(directory)
    stale = sorted(_owned_files(schemas) - set(files))
    written, unchanged = [], []
    for relative, text in files.items():
        if schemas.read(relative) == text:
            unchanged.append(relative)
            continue
        schemas.write(relative, text)
        written.append(relative)
    for relative in stale:
        schemas.remove(relative)
    return WriteSummary(tuple(written), tuple(unchanged), tuple(stale))


@dataclass(frozen=True, slots=True)
class Drift:
    """How a schema directory differs from what the code produces."""

    changed: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    report: list[str] = field(default_factory=list)
    """Unified diffs and missing/extra lines, ready to print."""

    @property
    def found(self) -> bool:
        """Whether anything differs."""
        return bool(self.changed or self.missing or self.extra)

    def counts(self) -> str:
        """``1 changed, 0 missing, 2 extra``."""
        return f"{len(self.changed)} changed, {len(self.missing)} missing, {len(self.extra)} extra"


def check_schema_files(directory: Path, files: Mapping[str, str]) -> Drift:
    """Compare ``directory`` with ``files``: unified diffs, missing files, and owned files
    (see the module) that are not produced."""
    drift = Drift()
    schemas = SchemaDirectory(directory)
    for relative in sorted(files):
        shown = f"{directory}/{relative}"
        committed = schemas.read(relative)
        if committed is None:
            drift.missing.append(relative)
            drift.report.append(f"missing: {shown} (the code produces it; it is not on disk)\n")
        elif committed != files[relative]:
            drift.changed.append(relative)
            drift.report.extend(
                difflib.unified_diff(
                    committed.splitlines(keepends=True),
                    files[relative].splitlines(keepends=True),
                    fromfile=f"{shown} (on disk)",
                    tofile=f"{shown} (from code)",
                )
            )
    for relative in sorted(_owned_files(schemas) - set(files)):
        if schemas.is_file(relative):
            drift.extra.append(relative)
            drift.report.append(
                f"extra: {directory}/{relative} (on disk; no tool or dialect produces it)\n"
            )
    return drift


def committed_contracts(directory: Path) -> tuple[dict[str, dict[str, Any]], set[str]]:
    """The contracts committed in ``directory`` by tool name, and the names of every tool
    the directory holds (those of an export by an older wink have no contract file)."""
    schemas = SchemaDirectory(directory)
    index = _committed_index(schemas)
    names = set(index["tools"]) if index is not None else set()
    contracts: dict[str, dict[str, Any]] = {}
    for relative in sorted(schemas.json_files(CONTRACT_FOLDER)):
        text = schemas.read(relative)
        try:
            document = json.loads(text) if text is not None else None
        except (ValueError, RecursionError):
            document = None
        if not isinstance(document, dict) or not isinstance(document.get("name"), str):
            raise CliError(
                f"{directory}/{relative} is not a contract wink wrote; fix it, or delete it "
                "and run wink schemas export again"
            )
        contracts[document["name"]] = document
        names.add(document["name"])
    return contracts, names


def _owned_files(schemas: SchemaDirectory) -> set[str]:
    """The JSON files of the dialect and wire folders, and the files the index lists."""
    owned = _previously_listed(schemas)
    for folder in _OWNED_FOLDERS:
        owned.update(schemas.json_files(folder))
    return owned


def _previously_listed(schemas: SchemaDirectory) -> set[str]:
    """Files the existing index says an earlier export wrote."""
    index = _committed_index(schemas)
    if index is None:
        return set()
    listed: set[str] = set()
    for entry in index["tools"].values():
        listed.update(entry["files"].values())
    listed.update(index["wire"].values())
    # Spelled as the files export writes (``./mcp/x.json`` is ``mcp/x.json``), so a
    # hand-edited listing never makes a file just written look stale.
    return {Path(p).as_posix() for p in listed if _is_inside(p)}


def _committed_index(schemas: SchemaDirectory) -> dict[str, Any] | None:
    """The ``index.json`` in ``directory``, checked, or ``None`` when there is none.

    wink decides which files it owns from it, so one it did not write stops the
    command (one line naming the file and the field) rather than being guessed at.
    """
    path = schemas.path / INDEX
    text = schemas.read(INDEX) if schemas.path.is_dir() else None
    if text is None:
        return None
    try:
        index = json.loads(text)
    except ValueError as error:
        reason = (
            f"{error.msg} at line {error.lineno} column {error.colno}"
            if isinstance(error, json.JSONDecodeError)
            else "an integer has more than 4300 digits"
        )
        raise CliError(f"{path} is not valid JSON ({reason}); {_INDEX_ADVICE}") from None
    except RecursionError:
        raise CliError(f"{path} is nested too deeply to read; {_INDEX_ADVICE}") from None
    problem = _index_problem(index)
    if problem is not None:
        raise CliError(f"{path} is not an index wink wrote: {problem}; {_INDEX_ADVICE}")
    return dict(index)


_INDEX_ADVICE = "fix it, or delete it and run wink schemas export again"


def _index_problem(index: object) -> str | None:
    """What is wrong with the shape of an index (``None``: nothing), naming the field."""
    if not isinstance(index, dict):
        return f"expected an object, got {_kind(index)}"
    for key in ("dialects", "tools", "wire"):
        if key not in index:
            return f"{key}: missing"
        if not isinstance(index[key], dict):
            return f"{key}: expected an object, got {_kind(index[key])}"
    for name, entry in index["dialects"].items():
        if not isinstance(entry, dict) or not isinstance(entry.get("options", {}), dict):
            return f"dialects.{name}: expected an object with provider and options"
    for name, entry in index["tools"].items():
        if not isinstance(entry, dict):
            return f"tools.{name}: expected an object, got {_kind(entry)}"
        for key in ("files", "skipped"):
            problem = _names_to_strings(entry.get(key, {}), f"tools.{name}.{key}")
            if problem is not None:
                return problem
    return _names_to_strings(index["wire"], "wire")


def _names_to_strings(value: object, where: str) -> str | None:
    if not isinstance(value, dict):
        return f"{where}: expected an object, got {_kind(value)}"
    for key, item in value.items():
        if not isinstance(item, str):
            return f"{where}.{key}: expected a string, got {_kind(item)}"
    return None


def _kind(value: object) -> str:
    if value is None:
        return "null"
    names = {bool: "a boolean", int: "a number", float: "a number", str: "a string"}
    return names.get(type(value), "an array" if isinstance(value, list) else "an object")


def _is_inside(relative: str) -> bool:
    parts = Path(relative).parts
    return bool(parts) and not Path(relative).is_absolute() and ".." not in parts


@dataclass(frozen=True, slots=True)
class ExportOptions:
    """The options a schema directory is exported with, as its ``index.json`` records them."""

    dialects: Mapping[str, Any]
    """Dialect name to ``{"provider": ..., "options": {...}}`` (``Dialect.describe()``)."""
    wire: bool
    """Whether wink's wire types are covered."""

    @classmethod
    def of(cls, dialects: Sequence[Dialect], *, wire: bool) -> ExportOptions:
        """The options of an export of ``dialects``."""
        return cls({dialect.name: dialect.describe() for dialect in dialects}, wire)

    def flags(self) -> dict[str, str]:
        """Each option in its command-line form, by option name."""
        names = list(self.dialects)
        flags = {
            "dialect": "all dialects"
            if sorted(names) == sorted(DIALECT_NAMES)
            else " ".join(f"--dialect {name}" for name in names),
            "wire": "--wire" if self.wire else "--no-wire",
        }
        strict = self._strict()
        if strict is not None:
            flags["strict"] = f"--strict {strict}"
        return flags

    def _strict(self) -> str | None:
        """The ``--strict`` value the dialects were given, if any dialect takes one."""
        for name in ("openai-chat", "openai-responses", "anthropic"):
            entry = self.dialects.get(name)
            options = entry.get("options") if isinstance(entry, dict) else None
            if isinstance(options, dict) and "strict" in options:
                value = options["strict"]
                return value if isinstance(value, str) else str(value).lower()
        return None


def committed_options(directory: Path) -> ExportOptions | None:
    """The options the ``index.json`` in ``directory`` records, or ``None`` when it has none."""
    index = _committed_index(SchemaDirectory(directory))
    if index is None:
        return None
    return ExportOptions(index["dialects"], index["wire"] != {})


def options_mismatch(committed: ExportOptions, given: ExportOptions) -> str | None:
    """Which options differ between an export and a check, in words; ``None`` if none do.

    Options that differ in no command-line form (an index from another wink version)
    are left to the file comparison.
    """
    if committed == given:
        return None
    theirs, ours = committed.flags(), given.flags()
    differing = [
        name
        for name in ("dialect", "strict", "wire")
        if name in theirs and name in ours and theirs[name] != ours[name]
    ]
    if not differing:
        return None
    return (
        f"the committed schemas were exported with {', '.join(theirs[n] for n in differing)}; "
        f"check was given {', '.join(ours[n] for n in differing)}"
    )
