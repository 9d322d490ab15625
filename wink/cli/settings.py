"""``WinkSettings``: the defaults of the ``wink`` command.

Read, highest priority first, from keyword arguments, ``WINK_*`` environment
variables and the ``[tool.wink]`` table of the project's ``pyproject.toml``: the
nearest one in the current directory or above it, whose folder is the project
root. Relative paths in settings (``schema_dir``, file targets) are relative to
the project root, so the command works from any subfolder; on the command line
they are relative to the current directory. Command-line flags override all of
them.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator
from pydantic_settings import (
    BaseSettings,
    NoDecode,
    PydanticBaseSettingsSource,
    PyprojectTomlConfigSettingsSource,
    SettingsConfigDict,
)

__all__ = [
    "DEFAULT_MAX_LINE_BYTES",
    "DIALECT_NAMES",
    "DialectName",
    "Provider",
    "StrictMode",
    "WinkSettings",
    "project_root",
]

Provider = Literal["openai", "anthropic", "gemini", "mcp"]
"""A provider with a ``wink.providers`` module."""

StrictMode = Literal["auto"] | bool
"""OpenAI strict mode: ``"auto"`` turns it on only where meaning is kept."""

DialectName = Literal[
    "openai-chat", "openai-responses", "anthropic", "gemini", "gemini-openapi", "mcp"
]
"""One provider spec shape; ``wink schemas export`` writes one folder per dialect."""

DIALECT_NAMES: tuple[DialectName, ...] = (
    "openai-chat",
    "openai-responses",
    "anthropic",
    "gemini",
    "gemini-openapi",
    "mcp",
)


DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024
"""Longest line ``wink validate`` reads (16 MiB): a longer one is reported as too long
and skipped, so a file without line breaks (``/dev/zero``) cannot exhaust memory."""


class WinkSettings(BaseSettings):
    """Project defaults: ``WINK_*`` variables, then ``[tool.wink]`` in ``pyproject.toml``."""

    model_config = SettingsConfigDict(
        env_prefix="WINK_",
        pyproject_toml_table_header=("tool", "wink"),
        extra="forbid",
        frozen=True,
    )

    provider: Provider = "openai"
    """Provider used by ``wink tools`` when ``--provider`` is not given."""
    strict: StrictMode = "auto"
    """Strict mode for OpenAI specs (and Anthropic's, where ``True``)."""
    schema_dir: Path = Path("schemas")
    """Folder ``wink schemas export``/``check`` use when ``--out``/``--dir`` is not given."""
    targets: Annotated[list[str], NoDecode] = Field(default_factory=list)
    """``module:attribute`` targets used when a command is given none."""
    dialects: Annotated[list[DialectName], NoDecode] = Field(
        default_factory=lambda: list(DIALECT_NAMES)
    )
    """Dialects ``wink schemas export``/``check`` write and compare."""
    wire: bool = False
    """Whether ``wink schemas`` also covers wink's own wire types (in ``wire/``)."""
    serve_transport: Literal["stdio", "http"] = "stdio"
    """Transport ``wink serve`` uses when ``--transport`` is not given."""
    serve_host: str = "127.0.0.1"
    """Address ``wink serve --transport http`` listens on when ``--host`` is not given."""
    serve_port: int = Field(8000, ge=0, le=65535)
    """Port ``wink serve --transport http`` listens on when ``--port`` is not given (0: free)."""
    serve_session_idle_timeout: float = Field(600.0, gt=0, allow_inf_nan=False)
    """Seconds an HTTP session of ``wink serve`` may stay idle before it is closed."""
    serve_max_sessions: int = Field(1000, gt=0)
    """HTTP sessions ``wink serve`` keeps; one more ends the least recently used idle one."""
    serve_max_message_bytes: int = Field(4 * 1024 * 1024, gt=0)
    """Longest message ``wink serve`` reads (a stdio line, an HTTP body); longer is refused."""
    serve_max_in_flight: int = Field(64, gt=0)
    """Requests of a stdio client ``wink serve`` runs at once; further lines wait."""
    serve_store: str | None = None
    """Store of the sessions of ``wink serve``'s clients (``sqlite:///path`` or
    ``postgresql://...``) when ``--store`` is not given; ``None``: kept in memory."""
    max_line_bytes: int = Field(DEFAULT_MAX_LINE_BYTES, gt=0)
    """Longest line ``wink validate`` reads; a longer one is reported and skipped."""

    @field_validator("targets", "dialects", mode="before")
    @classmethod
    def _split_words(cls, value: Any) -> Any:
        """A list from the environment: a JSON array, or words split on commas and spaces."""
        if not isinstance(value, str):
            return value
        if value.lstrip().startswith("["):
            return json.loads(value)
        return value.replace(",", " ").split()

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Keyword arguments, then the environment, then ``pyproject.toml``."""
        pyproject = project_root() / "pyproject.toml"
        return (
            init_settings,
            env_settings,
            PyprojectTomlConfigSettingsSource(settings_cls, pyproject),
        )

    @property
    def root(self) -> Path:
        """The project root: relative paths in settings start there."""
        return project_root()

    def schema_path(self) -> Path:
        """``schema_dir`` as a path from the current directory."""
        if self.schema_dir.is_absolute():
            return self.schema_dir
        return Path(os.path.relpath(self.root / self.schema_dir))


def project_root() -> Path:
    """The folder of the nearest ``pyproject.toml`` at or above the current directory,
    else the current directory."""
    here = Path.cwd()
    for folder in (here, *here.parents):
        if (folder / "pyproject.toml").is_file():
            return folder
    return here
