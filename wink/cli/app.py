"""The ``wink`` command: parsed by pydantic-settings ``CliApp``, every error one line."""

from __future__ import annotations

import json
import os
import sys
import tomllib
from importlib.metadata import PackageNotFoundError, version

from pydantic import Field, PrivateAttr, ValidationError
from pydantic_core import ErrorDetails
from pydantic_settings import (
    BaseSettings,
    CliApp,
    CliSubCommand,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
    get_subcommand,
)

from wink.cli.commands import Command, SchemasCommand, ToolsCommand, ValidateCommand
from wink.cli.failure import EXIT_FAILED, EXIT_USAGE, CliError, printable
from wink.cli.replay import ReplayCommand
from wink.cli.serve import ServeCommand
from wink.cli.sessions import SessionsCommand
from wink.cli.settings import WinkSettings
from wink.cli.trace import TraceCommand

__all__ = ["WinkCommand", "main"]

_EXIT_BROKEN_PIPE = 141
"""What a shell reports for a process ended by SIGPIPE (128 + 13)."""


class WinkCommand(BaseSettings):
    """Provider tool schemas from typed wink tools: print, export, check, validate, serve,
    trace; and the sessions of a store.

    Options left unset take the project setting: WINK_* environment variables, then
    [tool.wink] in the nearest pyproject.toml at or above the current directory
    (provider, strict, schema_dir, targets, dialects, wire, serve_*).
    """

    model_config = SettingsConfigDict(
        cli_prog_name="wink",
        cli_kebab_case=True,
        cli_implicit_flags="toggle",
        cli_hide_none_type=True,
        # An unset option falls back to WinkSettings; help shows that instead of "None".
        cli_parse_none_str="project setting",
        cli_avoid_json=True,
        cli_enforce_required=True,
        cli_exit_on_error=False,
        frozen=True,
    )

    tools: CliSubCommand[ToolsCommand] = Field(description="print provider tool specs as JSON")
    schemas: CliSubCommand[SchemasCommand] = Field(
        description="export schema files, or check them for drift"
    )
    validate_calls: CliSubCommand[ValidateCommand] = Field(
        alias="validate", description="validate recorded tool calls (JSONL)"
    )
    serve: CliSubCommand[ServeCommand] = Field(description="serve the tools over MCP")
    trace: CliSubCommand[TraceCommand] = Field(
        description="render a saved session as an HTML timeline"
    )
    sessions: CliSubCommand[SessionsCommand] = Field(
        description="list, show, export, delete or prune stored sessions"
    )
    replay: CliSubCommand[ReplayCommand] = Field(
        description="replay a recorded session's tool calls against the current tools"
    )
    version: bool = Field(False, description="print wink's version and exit")

    _exit_code: int = PrivateAttr(default=0)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Only the command line; project defaults come from ``WinkSettings``."""
        return (init_settings,)

    def cli_cmd(self) -> None:
        """Run the chosen subcommand with the project settings."""
        if self.version:
            print(f"wink {_version()}")
            return
        chosen = get_subcommand(self, is_required=False)
        if not isinstance(chosen, Command):
            raise CliError(
                "choose a command: tools, schemas, validate, serve, trace, sessions or replay "
                "(see wink --help)",
                EXIT_USAGE,
            )
        self._exit_code = chosen.run(_load_settings())

    @property
    def exit_code(self) -> int:
        """The status the chosen subcommand returned."""
        return self._exit_code


def main(argv: list[str] | None = None) -> int:
    """Run ``wink`` with ``argv`` (default: ``sys.argv[1:]``); return the exit status."""
    arguments = sys.argv[1:] if argv is None else list(argv)
    try:
        command = CliApp.run(WinkCommand, cli_args=arguments)
    except CliError as error:
        return _fail(str(error), error.exit_code)
    except SettingsError as error:
        return _fail(_settings_error(error), EXIT_USAGE)
    except ValidationError as error:
        return _fail(_invalid_arguments(error), EXIT_USAGE)
    except SystemExit as exit_:  # argparse after printing --help
        return exit_.code if isinstance(exit_.code, int) else 0
    except KeyboardInterrupt:
        return _fail("interrupted", 130)
    except BrokenPipeError:  # the reader went away (``wink tools ... | head``): stop quietly
        _silence_stdout()
        return _EXIT_BROKEN_PIPE
    except BaseException as error:  # a bug must still read as one line, not a traceback
        return _fail(f"unexpected {_described(error)}", EXIT_FAILED)
    return command.exit_code


def _described(error: BaseException) -> str:
    try:
        text = str(error)
    except Exception:  # an error that cannot describe itself is still named
        text = ""
    return f"{type(error).__name__}: {text}" if text.strip() else type(error).__name__


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout is not a real file (captured in tests)
        pass


def _load_settings() -> WinkSettings:
    try:
        return WinkSettings()
    except tomllib.TOMLDecodeError as error:
        raise CliError(f"cannot read pyproject.toml: {error}", EXIT_USAGE) from None
    except ValidationError as error:
        raise CliError(_invalid_setting(error), EXIT_USAGE) from None


def _invalid_setting(error: ValidationError) -> str:
    problems = error.errors(include_url=False)
    name = str(problems[0]["loc"][0]) if problems[0]["loc"] else "<settings>"
    if problems[0]["type"] == "extra_forbidden":
        known = ", ".join(WinkSettings.model_fields)
        return f"unknown setting {name!r} in [tool.wink] of pyproject.toml (settings: {known})"
    # A union (strict: "auto" or a bool) fails once per branch; say all of them.
    reasons = dict.fromkeys(
        _reason(problem) for problem in problems if problem["loc"][:1] == (name,)
    )
    return (
        f"invalid setting {name!r} (WINK_{name.upper()} or [tool.wink] in pyproject.toml): "
        f"{' or '.join(reasons)} (got {problems[0].get('input')!r:.60})"
    )


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:]


def _reason(problem: ErrorDetails) -> str:
    """pydantic's message, without its Python wording (``Value error, ...``)."""
    error = (problem.get("ctx") or {}).get("error")
    if problem["type"] in ("value_error", "assertion_error") and error is not None:
        text = str(error)
        if isinstance(error, json.JSONDecodeError):
            text = f"not a valid JSON array ({error.msg} at column {error.pos + 1})"
        return _lower_first(text)
    return _lower_first(problem["msg"])


def _fail(message: str, code: int) -> int:
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    print(printable(f"wink: {'; '.join(lines)}"), file=sys.stderr)
    return code


def _settings_error(error: SettingsError) -> str:
    # argparse's own wording, minus pydantic-settings' prefix and the help text it appends.
    first = str(error).strip().splitlines()[0] if str(error).strip() else "invalid command line"
    return first.removeprefix("error parsing CLI: ").removeprefix("Error: ")


def _invalid_arguments(error: ValidationError) -> str:
    problem = error.errors(include_url=False)[0]
    location = [str(part) for part in problem["loc"] if not isinstance(part, int)]
    words = [*location[:-1], "--" + location[-1].replace("_", "-")] if location else []
    return f"{' '.join(words)}: {_reason(problem)} (got {problem.get('input')!r:.60})"


def _version() -> str:
    try:
        return version("wink")
    except PackageNotFoundError:
        return "unknown"
