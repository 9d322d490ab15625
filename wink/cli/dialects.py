"""Provider dialects: which ``wink.providers`` module and options emit a spec shape."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Literal, get_args

from wink.cli.failure import EXIT_USAGE, CliError
from wink.cli.settings import DIALECT_NAMES, DialectName, Provider, StrictMode
from wink.errors import WinkError
from wink.providers import RecursiveSchemaError
from wink.tools import Tool

__all__ = ["PROVIDERS", "Dialect", "command_dialect", "export_dialect"]

PROVIDERS: tuple[Provider, ...] = get_args(Provider)

OpenAIApi = Literal["chat", "responses"]
GeminiForm = Literal["json_schema", "openapi"]


@dataclass(frozen=True, slots=True)
class Dialect:
    """A provider and the options its ``tool_specs`` is called with."""

    name: str
    """Folder name under the schema directory (``openai-chat``, ``gemini-openapi``...)."""
    provider: Provider
    """The ``wink.providers`` module that emits the specs."""
    options: tuple[tuple[str, object], ...] = ()
    """Keyword options of ``tool_specs``, in a stable order."""

    def specs(self, tools: Sequence[Tool[Any, Any]]) -> list[dict[str, Any]]:
        """The provider specs of ``tools``, one per tool, in order."""
        module = provider_module(self.provider)
        try:
            specs: list[dict[str, Any]] = module.tool_specs(tools, **dict(self.options))
        except (WinkError, ValueError, TypeError) as error:
            raise CliError(f"{self.name} specs: {_one_line(error)}") from None
        return specs

    def split_recursive(
        self, tools: Sequence[Tool[Any, Any]]
    ) -> tuple[list[Tool[Any, Any]], dict[str, str]]:
        """``tools`` this dialect can express, and why each recursive one it cannot
        (Gemini's OpenAPI form inlines every reference), by tool name."""
        module = provider_module(self.provider)
        kept: list[Tool[Any, Any]] = []
        skipped: dict[str, str] = {}
        for tool in tools:
            try:
                module.tool_specs([tool], **dict(self.options))
            except RecursiveSchemaError as error:
                skipped[tool.name] = _one_line(error).removeprefix(f"tool {tool.name!r}: ")
                continue
            except (WinkError, ValueError, TypeError):
                pass  # reported by ``specs``, which sees all the tools
            kept.append(tool)
        return kept, skipped

    def describe(self) -> dict[str, Any]:
        """The provider and options, for the index file."""
        return {"provider": self.provider, "options": dict(self.options)}


def provider_module(provider: str) -> ModuleType:
    """The ``wink.providers`` module of ``provider``."""
    if provider not in PROVIDERS:
        raise CliError(f"unknown provider {provider!r} (choose {', '.join(PROVIDERS)})", EXIT_USAGE)
    return importlib.import_module(f"wink.providers.{provider}")


def export_dialect(name: DialectName, strict: StrictMode) -> Dialect:
    """The dialect written to the folder ``name``; ``strict`` applies where supported."""
    if name not in DIALECT_NAMES:
        raise CliError(f"unknown dialect {name!r} (choose {', '.join(DIALECT_NAMES)})", EXIT_USAGE)
    if name in ("openai-chat", "openai-responses"):
        api = name.removeprefix("openai-")
        return Dialect(name, "openai", (("api", api), ("strict", strict)))
    if name == "anthropic":
        return Dialect(name, "anthropic", (("strict", strict is True),))
    if name in ("gemini", "gemini-openapi"):
        form = "openapi" if name == "gemini-openapi" else "json_schema"
        return Dialect(name, "gemini", (("form", form),))
    return Dialect(name, "mcp")


def command_dialect(
    provider: Provider,
    *,
    strict: StrictMode,
    strict_given: bool,
    api: OpenAIApi | None,
    form: GeminiForm | None,
) -> Dialect:
    """The dialect of ``wink tools``; an option the provider does not take is an error."""
    provider_module(provider)
    if api is not None and provider != "openai":
        raise CliError(f"--api applies to --provider openai, not {provider}", EXIT_USAGE)
    if form is not None and provider != "gemini":
        raise CliError(f"--form applies to --provider gemini, not {provider}", EXIT_USAGE)
    if strict_given and provider not in ("openai", "anthropic"):
        raise CliError(
            f"--strict applies to --provider openai or anthropic, not {provider}", EXIT_USAGE
        )
    if strict_given and provider == "anthropic" and strict == "auto":
        raise CliError(
            "--strict auto applies to --provider openai; anthropic takes true or false",
            EXIT_USAGE,
        )
    if provider == "openai":
        return export_dialect("openai-responses" if api == "responses" else "openai-chat", strict)
    if provider == "gemini":
        return export_dialect("gemini-openapi" if form == "openapi" else "gemini", strict)
    return export_dialect(provider, strict)


def _one_line(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return "; ".join(lines) or type(error).__name__
