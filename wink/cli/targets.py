"""Resolve ``module:attribute`` (or ``path/to/file.py:attribute``) targets to tools.

A target names a ``PromptTemplate`` (all its tools), a ``Prompt`` (the tools of
its render, overrides applied), a ``RenderedPrompt``, a ``Section`` (its
subtree's tools), a ``Tool`` or a sequence of tools. The base folder (the
current directory, or the project root for targets from the settings) is
importable while a target loads, as with ``python -m``, and file targets are
relative to it; a file target also sees its own folder, as with
``python path/to/file.py``.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
import os
import sys
import sysconfig
import traceback
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

from wink.cli.failure import EXIT_USAGE, CliError
from wink.errors import WinkError
from wink.prompt import Prompt, PromptTemplate, RenderedPrompt, Section
from wink.providers.mcp import protocol_stdout
from wink.tools import Tool

__all__ = ["load_target", "output_to_stderr", "resolve_targets", "tools_of"]

_ACCEPTED = "a PromptTemplate, Prompt, RenderedPrompt, Section, Tool or a sequence of tools"


def resolve_targets(targets: Sequence[str], base: Path | None = None) -> tuple[Tool[Any, Any], ...]:
    """The tools of every target, in order; the same name twice must be the same tool.

    ``base`` is the folder targets are relative to (default: the current directory).
    """
    if not targets:
        raise CliError(
            "no target given: pass module:attribute (or path/to/file.py:attribute), "
            "or set targets in [tool.wink] of pyproject.toml or WINK_TARGETS",
            EXIT_USAGE,
        )
    found: dict[str, tuple[Tool[Any, Any], str]] = {}
    for target in targets:
        for tool in tools_of(load_target(target, base), target):
            previous = found.get(tool.name)
            if previous is None:
                found[tool.name] = (tool, target)
            elif previous[0] is not tool:
                raise CliError(
                    f"tool name {tool.name!r} is defined by both {previous[1]!r} and {target!r}"
                )
    return tuple(tool for tool, _ in found.values())


def load_target(target: str, base: Path | None = None) -> object:
    """Import the module or file of ``target`` (relative to ``base``, default the current
    directory) and return its attribute."""
    source, separator, attribute = target.rpartition(":")
    if not separator or not source or not attribute:
        raise CliError(
            f"target {target!r} must be module:attribute or path/to/file.py:attribute",
            EXIT_USAGE,
        )
    with output_to_stderr():
        module = _import(source, target, base or Path.cwd())
        value: object = module
        for part in attribute.split("."):
            try:
                value = getattr(value, part)
            except AttributeError:
                raise CliError(
                    f"target {target!r}: {source!r} has no attribute {attribute!r}"
                ) from None
            except KeyboardInterrupt:
                raise
            except BaseException as error:  # a property of the user's: any failure is theirs
                raise CliError(
                    f"target {target!r}: reading {part!r} failed{_location(error)}: "
                    f"{_described(error)}"
                ) from None
    return value


@contextlib.contextmanager
def output_to_stderr() -> Iterator[None]:
    """Send what user code prints (a target's module, its validators) to stderr.

    stdout carries only the command's own output (JSON specs, a summary), so that
    ``wink tools ... > specs.json`` stays valid JSON whatever the target writes:
    ``print``, ``sys.__stdout__``, file descriptor 1, a child process.
    """
    with protocol_stdout():
        yield


def tools_of(value: object, target: str) -> tuple[Tool[Any, Any], ...]:
    """The tools ``value`` exposes, in declaration order."""
    with output_to_stderr():
        tools = _collect(value, target)
    if not tools:
        raise CliError(f"target {target!r} has no tools")
    return tools


def _collect(value: object, target: str) -> tuple[Tool[Any, Any], ...]:
    if isinstance(value, Tool):
        return (value,)
    if isinstance(value, PromptTemplate | RenderedPrompt):
        return tuple(value.tools)
    if isinstance(value, Prompt):
        try:
            return value.render().tools
        except WinkError as error:
            raise CliError(f"target {target!r}: rendering the prompt failed: {error}") from None
        except KeyboardInterrupt:
            raise
        except BaseException as error:  # a section's user code failed while rendering
            raise CliError(
                f"target {target!r}: rendering the prompt failed{_location(error)}: "
                f"{_described(error)}"
            ) from None
    if isinstance(value, Section):
        return tuple(_section_tools(value))
    if isinstance(value, list | tuple):
        for index, item in enumerate(value):
            if not isinstance(item, Tool):
                raise CliError(f"target {target!r}: item {index} is {_kind(item)}, not a Tool")
        return tuple(value)
    raise CliError(f"target {target!r} is {_kind(value)}; expected {_ACCEPTED}")


def _section_tools(section: Section[Any]) -> Iterator[Tool[Any, Any]]:
    yield from section.tools
    for child in section.children:
        yield from _section_tools(child)


def _kind(value: object) -> str:
    return f"a {type(value).__qualname__}"


def _import(source: str, target: str, base: Path) -> ModuleType:
    is_file = source.endswith(".py") or "/" in source or os.sep in source
    try:
        if is_file:
            return _import_file(Path(source), target, base)
        with _on_sys_path(str(base)):
            return importlib.import_module(source)
    except CliError:
        raise
    except ModuleNotFoundError as error:
        if error.name is not None and (source == error.name or source.startswith(error.name + ".")):
            raise CliError(
                f"target {target!r}: no module named {error.name!r} "
                f"(run from the project root, or install the package)"
            ) from None
        raise CliError(_import_failure(source, target, error)) from None
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # GeneratorExit, SystemExit, the module's own BaseException
        raise CliError(_import_failure(source, target, error)) from None


def _import_file(path: Path, target: str, base: Path) -> ModuleType:
    resolved = (base / path).resolve()
    if not resolved.is_file():
        raise CliError(f"target {target!r}: no such file {str(path)!r}")
    name = _module_name(resolved, base)
    if _is_taken(name, resolved):
        # Another module owns the name (``json.py`` next to the standard library's
        # ``json``): replacing it would hand this file to every later ``import json``.
        name = _private_name(resolved)
    existing = sys.modules.get(name)
    if existing is not None and getattr(existing, "__file__", None) == str(resolved):
        return existing
    spec = importlib.util.spec_from_file_location(name, resolved)
    if spec is None or spec.loader is None:
        raise CliError(f"target {target!r}: cannot load {str(path)!r} as a Python module")
    module = importlib.util.module_from_spec(spec)
    # Registered before running so dataclasses and pydantic can resolve the module's annotations.
    sys.modules[name] = module
    try:
        with _on_sys_path(str(base)), _on_sys_path(str(resolved.parent)):
            spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def _module_name(path: Path, base: Path) -> str:
    """``examples/x.py`` under the base folder is ``examples.x``, like its import name."""
    try:
        relative = path.with_suffix("").relative_to(base.resolve())
    except ValueError:
        return path.stem
    return ".".join(relative.parts)


def _is_taken(name: str, path: Path) -> bool:
    """Whether ``name`` is a module other than the file at ``path``, loaded or in the
    standard library."""
    existing = sys.modules.get(name)
    if existing is not None:
        return getattr(existing, "__file__", None) != str(path)
    return name.partition(".")[0] in sys.stdlib_module_names


def _private_name(path: Path) -> str:
    """A module name no import statement uses, the same for the same file."""
    digest = hashlib.sha256(str(path).encode()).hexdigest()[:16]
    return f"_wink_target_{digest}_{path.stem}"


@contextmanager
def _on_sys_path(folder: str) -> Iterator[None]:
    if folder in sys.path:
        yield
        return
    sys.path.insert(0, folder)
    try:
        yield
    finally:
        sys.path.remove(folder)


def _import_failure(source: str, target: str, error: BaseException) -> str:
    where = _location(error)
    return f"target {target!r}: importing {source!r} failed{where}: {_described(error)}"


def _described(error: BaseException) -> str:
    """``Type: first line of the message``, even when ``str(error)`` itself fails."""
    try:
        text = str(error).strip()
    except Exception:  # an error that cannot describe itself is still named
        text = ""
    detail = text.splitlines()[0] if text else ""
    return f"{type(error).__name__}: {detail}" if detail else type(error).__name__


def _location(error: BaseException) -> str:
    if isinstance(error, SyntaxError) and error.filename:
        return f" at {_short_path(error.filename)}:{error.lineno}"
    frames = traceback.extract_tb(error.__traceback__)
    # The innermost frame of the user's own code says where to look; wink, the standard
    # library and installed packages only say how the failure travelled.
    own = [frame for frame in frames if not _is_library(frame.filename)]
    chosen = own or frames
    if not chosen:
        return ""
    return f" at {_short_path(chosen[-1].filename)}:{chosen[-1].lineno}"


def _is_library(filename: str) -> bool:
    if filename.startswith("<"):
        return True
    library_roots = {sysconfig.get_path(name) for name in ("stdlib", "purelib", "platlib")}
    library_roots.add(str(Path(__file__).resolve().parents[1]))
    resolved = str(Path(filename).resolve())
    return any(resolved.startswith(root + os.sep) for root in library_roots if root)


def _short_path(filename: str) -> str:
    try:
        return str(Path(filename).resolve().relative_to(Path.cwd()))
    except ValueError:
        return filename
