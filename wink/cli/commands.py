"""The subcommands of ``wink``: each is a pydantic model that pydantic-settings parses."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic_settings import CliPositionalArg, CliSubCommand, get_subcommand
from typing_extensions import TypeAliasType

from wink.cli.dialects import Dialect, GeminiForm, OpenAIApi, command_dialect, export_dialect
from wink.cli.drift import (
    FailOn,
    ToolChange,
    apply_acceptances,
    fails,
    read_acceptances,
    report_lines,
)
from wink.cli.drift import counts as drift_counts
from wink.cli.drift_check import RecordedBreaks, drift_changes, drift_json, recorded_breaks
from wink.cli.export import (
    Drift,
    ExportOptions,
    build_schema_files,
    check_schema_files,
    committed_contracts,
    committed_options,
    json_text,
    options_mismatch,
    write_schema_files,
)
from wink.cli.failure import EXIT_FAILED, EXIT_USAGE, CliError, printable
from wink.cli.settings import DIALECT_NAMES, DialectName, Provider, StrictMode, WinkSettings
from wink.cli.targets import load_target, output_to_stderr, resolve_targets, tools_of
from wink.cli.validate import CallChecker, ValidationTally, validate_lines
from wink.tools import Tool

__all__ = [
    "CheckCommand",
    "Command",
    "ExportCommand",
    "SchemasCommand",
    "ToolsCommand",
    "ValidateCommand",
]

StrictFlag = Literal["auto", "true", "false"]

# Named aliases give readable metavars in --help (DIR rather than Path).
DIR = TypeAliasType("DIR", Path)
FILE = TypeAliasType("FILE", Path)
DIALECT = TypeAliasType("DIALECT", DialectName)

_TARGET_HELP = (
    "module:attribute or path/to/file.py:attribute naming a PromptTemplate, Prompt, Section, "
    "Tool or list of tools"
)
_TARGETS_HELP = f"{_TARGET_HELP} [setting: targets]"


class Command(BaseModel):
    """A subcommand: parsed from the command line, run with the project settings."""

    model_config = ConfigDict(frozen=True)

    def run(self, settings: WinkSettings) -> int:
        """Do the job; return the exit status."""
        raise NotImplementedError


class ToolsCommand(Command):
    """Print the provider tool specs of the targets' tools as JSON."""

    targets: CliPositionalArg[list[str] | None] = Field(None, description=_TARGETS_HELP)
    provider: Provider | None = Field(
        None, description="provider whose specs to print [setting: provider, else openai]"
    )
    strict: StrictFlag | None = Field(
        None,
        description="strict mode of openai (auto, true, false) or anthropic (true, false) "
        "[setting: strict, else auto]",
    )
    # No setting holds these two: their defaults are plain values, and whether they
    # were given at all (``model_fields_set``) decides if they clash with --provider.
    api: OpenAIApi = Field("chat", description="openai API shape")
    form: GeminiForm = Field("json_schema", description="gemini schema form")

    def run(self, settings: WinkSettings) -> int:
        """Print the specs."""
        dialect = command_dialect(
            self.provider or settings.provider,
            strict=_strict(self.strict, settings.strict),
            strict_given=self.strict is not None,
            api=self.api if "api" in self.model_fields_set else None,
            form=self.form if "form" in self.model_fields_set else None,
        )
        with output_to_stderr():
            specs = dialect.specs(_resolve(self.targets, settings))
        sys.stdout.write(json_text(specs))
        return 0


class _SchemaFilesOptions(Command):
    targets: CliPositionalArg[list[str] | None] = Field(None, description=_TARGETS_HELP)
    dialect: list[DIALECT] | None = Field(
        None,
        description=f"dialect to cover, repeatable: {', '.join(DIALECT_NAMES)} "
        "[setting: dialects, else all]",
    )
    strict: StrictFlag | None = Field(
        None, description="strict mode of openai specs [setting: strict, else auto]"
    )
    wire: bool | None = Field(
        None, description="also cover wink's wire types, under wire/ [setting: wire, else off]"
    )

    def _files(self, settings: WinkSettings) -> dict[str, str]:
        with output_to_stderr():
            tools = _resolve(self.targets, settings)
            dialects = self._dialects(settings)
            return build_schema_files(tools, dialects, wire=self._wire(settings), warn=_report)

    def _dialects(self, settings: WinkSettings) -> list[Dialect]:
        strict = _strict(self.strict, settings.strict)
        return [export_dialect(name, strict) for name in self._dialect_names(settings)]

    def _dialect_names(self, settings: WinkSettings) -> list[DialectName]:
        chosen = set(self.dialect if self.dialect is not None else settings.dialects)
        # One canonical order, however the dialects were listed: the index stays the same.
        return [name for name in DIALECT_NAMES if name in chosen]

    def _wire(self, settings: WinkSettings) -> bool:
        return settings.wire if self.wire is None else self.wire

    def export_command(self, settings: WinkSettings, directory: Path | None) -> str:
        """The ``wink schemas export`` line that regenerates ``directory`` (``None``: the
        settings' ``schema_dir``); targets and folder from the settings are left to them."""
        words = ["wink", "schemas", "export", *(self.targets or ())]
        if directory is not None:
            words += ["--out", str(directory)]
        names = self._dialect_names(settings)
        if names != list(DIALECT_NAMES):
            for name in names:
                words += ["--dialect", name]
        strict = self.strict or _flag(settings.strict)
        if strict != "auto" or _flag(settings.strict) != "auto":
            words += ["--strict", strict]
        if self._wire(settings):
            words.append("--wire")
        elif settings.wire:
            words.append("--no-wire")  # the settings would turn it back on
        return shlex.join(words)


class ExportCommand(_SchemaFilesOptions):
    """Write one JSON file per tool and dialect (and an index.json) to the schema directory."""

    out: DIR | None = Field(
        None, description="schema directory [setting: schema_dir, else schemas]"
    )

    def run(self, settings: WinkSettings) -> int:
        """Write the files."""
        directory = self.out or settings.schema_path()
        summary = write_schema_files(directory, self._files(settings))
        print(summary.describe(directory))
        return 0


class CheckCommand(_SchemaFilesOptions):
    """Compare the schema directory with the code, classify each tool change (breaking,
    warning, info), and fail on those at or above --fail-on."""

    directory: DIR | None = Field(
        None,
        alias="dir",
        description="schema directory [setting: schema_dir, else schemas]",
    )
    fail_on: FailOn = Field(
        "breaking",
        description="least severe change that fails the check: breaking, warning, or any "
        "(every difference, files included)",
    )
    format: Literal["text", "json"] = Field("text", description="report as text or as JSON")
    ignore: FILE | None = Field(
        None, description="TOML file of accepted changes ([[accept]] rule, tool, pointer, reason)"
    )
    recorded: list[FILE] | None = Field(
        None,
        description="JSONL file of recorded calls, repeatable: list those the change breaks",
    )
    diff: bool = Field(False, description="also print a unified diff of every changed file")

    def run(self, settings: WinkSettings) -> int:
        """Compare, classify and report."""
        directory = self.directory or settings.schema_path()
        acceptances = read_acceptances(self.ignore) if self.ignore is not None else []
        files = self._files(settings)
        if directory.exists() and not directory.is_dir():
            raise CliError(f"schema directory {directory} is not a directory")
        if not directory.is_dir():
            raise CliError(
                f"schema directory {directory} does not exist; create it with: "
                f"{self.export_command(settings, self.directory)}"
            )
        self._check_options(settings, directory)
        drift = check_schema_files(directory, files)
        old, old_names = committed_contracts(directory)
        changes, unused = apply_acceptances(
            drift_changes(drift, files, old, old_names), acceptances
        )
        for entry in unused:
            _report(
                f"warning: {self.ignore}: no change matches rule {entry.rule!r}, tool "
                f"{entry.tool!r}, pointer {entry.pointer!r}"
            )
        broken = None
        if self.recorded:
            with output_to_stderr():
                broken = recorded_breaks(
                    self.recorded, _resolve(self.targets, settings), old, changes
                )
        failing = [change for change in changes if fails(change, self.fail_on)]
        if self.format == "json":
            sys.stdout.write(
                json_text(drift_json(directory, len(files), changes, self.fail_on, failing, broken))
            )
        else:
            self._print_text(directory, len(files), drift, changes, broken)
        if failing:
            raise CliError(
                f"{directory}: {len(failing)} change{'s' if len(failing) != 1 else ''} at or "
                f"above --fail-on {self.fail_on}; accept them in an --ignore file, or record "
                f"the new schemas with: {self.export_command(settings, self.directory)}"
            )
        return 0

    def _print_text(
        self,
        directory: Path,
        total: int,
        drift: Drift,
        changes: list[ToolChange],
        broken: RecordedBreaks | None,
    ) -> None:
        if not changes:
            print(f"{directory} is up to date ({total} files)")
        else:
            tools = {change.tool for change in changes if change.tool}
            print(
                f"{directory} differs from the code: {len(changes)} "
                f"change{'s' if len(changes) != 1 else ''} in {len(tools)} "
                f"tool{'s' if len(tools) != 1 else ''} ({drift_counts(changes)})"
            )
            for line in report_lines(changes):
                print(printable(line))
        if broken is not None:
            for line in broken.lines():
                print(printable(line))
        if self.diff:
            sys.stdout.write("".join(drift.report))

    def _check_options(self, settings: WinkSettings, directory: Path) -> None:
        """Stop before any diff when the check's options are not the export's.

        Every file would differ, and re-exporting with the check's options would
        change the committed schemas rather than confirm them.
        """
        committed = committed_options(directory)
        given = ExportOptions.of(self._dialects(settings), wire=self._wire(settings))
        mismatch = None if committed is None else options_mismatch(committed, given)
        if mismatch is not None:
            raise CliError(
                f"{directory}: {mismatch}; check with the export's options, or, to change "
                f"the committed schemas, re-export with: "
                f"{self.export_command(settings, self.directory)}"
            )


class SchemasCommand(Command):
    """Export schema files, or check committed ones against the code."""

    export: CliSubCommand[ExportCommand] = Field(description="write the schema files")
    check: CliSubCommand[CheckCommand] = Field(
        description="classify schema drift; fail on breaking changes"
    )

    def run(self, settings: WinkSettings) -> int:
        """Run the chosen subcommand."""
        chosen = get_subcommand(self, is_required=False)
        if not isinstance(chosen, Command):
            raise CliError(
                "schemas needs a command: export or check (see wink schemas --help)", EXIT_USAGE
            )
        return chosen.run(settings)


class ValidateCommand(Command):
    """Validate recorded tool calls (JSONL; plain calls or OpenAI/Anthropic/Gemini logs)."""

    target: CliPositionalArg[str] = Field(description=_TARGET_HELP)
    calls: CliPositionalArg[list[str]] = Field(
        description="JSONL files of recorded calls; - is stdin"
    )
    max_line_bytes: int | None = Field(
        None,
        gt=0,
        description="longest line read, in bytes; a longer one is reported and skipped "
        "[setting: max_line_bytes, else 16 MiB]",
    )

    def run(self, settings: WinkSettings) -> int:
        """Check every call; report each problem as file:line: tool: field: reason."""
        limit = self.max_line_bytes or settings.max_line_bytes
        checker = CallChecker(tools_of(load_target(self.target), self.target))
        for name in self.calls:
            # Pipes (``<(zcat calls.gz)``, /dev/stdin) count as files; a folder does not.
            if name != "-" and Path(name).is_dir():
                raise CliError(f"calls file {name!r} is a directory")
            if name != "-" and not Path(name).exists():
                raise CliError(f"calls file {name!r} does not exist")
        total = ValidationTally()
        for name in self.calls:
            # The tools' validators are user code: what they print must not join the summary.
            with _lines(name) as lines, output_to_stderr():
                total.add(validate_lines(lines, name, checker, _report, max_line_bytes=limit))
        print(total.summary(len(self.calls)))
        if total.calls == 0 and not total.failed:
            _report("warning: no tool calls found")
        return EXIT_FAILED if total.failed else 0


@contextmanager
def _lines(name: str) -> Iterator[IO[bytes]]:
    if name == "-":
        yield sys.stdin.buffer
        return
    try:
        file = open(name, "rb")  # noqa: SIM115 - closed below; open errors alone are reported
    except OSError as error:
        raise CliError(f"cannot read calls file {name!r}: {error.strerror or error}") from None
    with file:
        yield file


def _resolve(targets: list[str] | None, settings: WinkSettings) -> tuple[Tool[Any, Any], ...]:
    """The tools of the command line's targets, else of the settings' (from the project root)."""
    if targets:
        return resolve_targets(targets)
    return resolve_targets(settings.targets, settings.root)


def _report(line: str) -> None:
    print(printable(line), file=sys.stderr)


def _strict(flag: StrictFlag | None, default: StrictMode) -> StrictMode:
    if flag is None:
        return default
    if flag == "auto":
        return "auto"
    return flag == "true"


def _flag(strict: StrictMode) -> StrictFlag:
    return "auto" if strict == "auto" else ("true" if strict else "false")
