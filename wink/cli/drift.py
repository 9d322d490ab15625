"""Tool drift: classify how the tools changed since the schemas were committed.

The comparison reads each tool's canonical contract (``contract/<tool>.json`` in
the schema directory: name, description, params and result schemas, examples),
not the provider dialects, so one change is reported once, whatever the dialects.
Dialect files that differ while the contract did not are reported as ``info``.
"""

from __future__ import annotations

import json
import tomllib
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from wink.cli.failure import CliError
from wink.contract import JsonSchema
from wink.contract.drift import LEVELS, Level, Location, compare_schemas
from wink.tools import Tool

__all__ = [
    "CONTRACT_FOLDER",
    "Acceptance",
    "ToolChange",
    "FailOn",
    "apply_acceptances",
    "classify_tools",
    "contract_document",
    "fails",
    "read_acceptances",
]

CONTRACT_FOLDER = "contract"
"""Folder of the schema directory holding each tool's canonical contract."""

FailOn = Literal["breaking", "warning", "any"]
"""The least severe change that fails ``wink schemas check``."""


@dataclass(frozen=True, slots=True)
class ToolChange:
    """One classified change, found in one tool (or in the files, ``tool`` empty)."""

    tool: str
    rule: str
    level: Level
    pointer: str
    location: Location
    message: str
    accepted: str | None = None
    """The reason from the ignore file when the change is accepted, else ``None``."""

    def as_json(self) -> dict[str, Any]:
        """The change in ``--format json``."""
        return {
            "tool": self.tool,
            "rule": self.rule,
            "level": self.level,
            "pointer": self.pointer,
            "message": self.message,
            "accepted": self.accepted,
        }


def contract_document(tool: Tool[Any, Any]) -> dict[str, Any]:
    """The canonical contract of ``tool`` as the schema directory records it."""
    document: dict[str, Any] = {
        "name": tool.name,
        "description": tool.description,
        "params": _plain(tool.params_schema),
        "result": _plain(tool.result_schema),
    }
    if tool.examples:
        document["examples"] = [
            {
                "description": example.description,
                "input": tool.params_contract.dump(example.input),
                "output": tool.result_contract.dump(example.output),
            }
            for example in tool.examples
        ]
    return document


def _plain(schema: JsonSchema) -> Any:
    """A frozen schema as plain JSON data."""
    return json.loads(json.dumps(schema))


def classify_tools(
    old: Mapping[str, Mapping[str, Any]], new: Mapping[str, Mapping[str, Any]]
) -> list[ToolChange]:
    """Every classified change from the ``old`` contracts to the ``new`` ones, by tool name."""
    changes: list[ToolChange] = []
    removed = [name for name in old if name not in new]
    added = [name for name in new if name not in old]
    renamed = _renames(old, new, removed, added)
    for name in sorted(set(old) | set(new)):
        if name in old and name in new:
            changes.extend(_tool_changes(name, old[name], new[name]))
        elif name in renamed:
            changes.append(
                ToolChange(
                    name,
                    "tool-renamed",
                    "breaking",
                    "",
                    (),
                    f"tool renamed to {renamed[name]!r}; models and clients calling "
                    f"{name!r} now get an unknown tool",
                )
            )
        elif name in old:
            changes.append(
                ToolChange(
                    name,
                    "tool-removed",
                    "breaking",
                    "",
                    (),
                    "tool removed; models and clients calling it now get an unknown tool",
                )
            )
        elif name not in renamed.values():
            changes.append(ToolChange(name, "tool-added", "info", "", (), "tool added"))
    return changes


def _renames(
    old: Mapping[str, Mapping[str, Any]],
    new: Mapping[str, Mapping[str, Any]],
    removed: Sequence[str],
    added: Sequence[str],
) -> dict[str, str]:
    """Removed tool to the added one with the same params and result, when just one has."""
    renamed: dict[str, str] = {}
    for name in removed:
        same = [
            other
            for other in added
            if (new[other].get("params"), new[other].get("result"))
            == (old[name].get("params"), old[name].get("result"))
            and other not in renamed.values()
        ]
        if len(same) == 1:
            renamed[name] = same[0]
    return renamed


def _tool_changes(
    name: str, old: Mapping[str, Any], new: Mapping[str, Any]
) -> Iterable[ToolChange]:
    if old.get("description") != new.get("description"):
        yield ToolChange(
            name,
            "tool-description-changed",
            "info",
            "/description",
            (),
            "description changed (the prompt the model sees changed)",
        )
    if old.get("examples") != new.get("examples"):
        yield ToolChange(
            name,
            "tool-example-changed",
            "info",
            "/examples",
            (),
            "examples changed (the prompt the model sees changed)",
        )
    for side in ("params", "result"):
        before, after = old.get(side), new.get(side)
        if not isinstance(before, dict) or not isinstance(after, dict):
            if before != after:
                yield ToolChange(
                    name,
                    "undecided",
                    "breaking",
                    f"/{side}",
                    (),
                    f"the committed {side} schema is not a JSON object (undecided: reported "
                    "as breaking)",
                )
            continue
        for change in compare_schemas(before, after, side, pointer=f"/{side}"):
            yield ToolChange(
                name, change.rule, change.level, change.pointer, change.location, change.message
            )


# --- the ignore file ------------------------------------------------------------


class Acceptance(BaseModel):
    """One accepted change in the ignore file: which rule, tool and pointer, and why."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    rule: str = Field(min_length=1)
    tool: str = Field(min_length=1)
    pointer: str = ""
    reason: str = Field(min_length=1)


class _IgnoreFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    accept: list[Acceptance] = []


def read_acceptances(path: Path) -> list[Acceptance]:
    """The ``[[accept]]`` entries of the TOML ignore file at ``path``."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CliError(f"ignore file {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as error:
        raise CliError(f"cannot read ignore file {path}: {error}") from None
    except tomllib.TOMLDecodeError as error:
        raise CliError(f"ignore file {path} is not valid TOML: {error}") from None
    try:
        return _IgnoreFile.model_validate(data).accept
    except ValidationError as error:
        problem = error.errors(include_url=False)[0]
        where = ".".join(str(part) for part in problem["loc"])
        raise CliError(
            f"ignore file {path}: {where}: {problem['msg'].lower()} (each [[accept]] needs "
            "rule, tool, pointer and reason)"
        ) from None


def apply_acceptances(
    changes: Sequence[ToolChange], acceptances: Sequence[Acceptance]
) -> tuple[list[ToolChange], list[Acceptance]]:
    """``changes`` with the accepted ones marked, and the entries that matched none."""
    reasons = {(entry.rule, entry.tool, entry.pointer): entry.reason for entry in acceptances}
    used: set[tuple[str, str, str]] = set()
    marked = []
    for change in changes:
        key = (change.rule, change.tool, change.pointer)
        if key in reasons:
            used.add(key)
            change = replace(change, accepted=reasons[key])
        marked.append(change)
    unused = [e for e in acceptances if (e.rule, e.tool, e.pointer) not in used]
    return marked, unused


def fails(change: ToolChange, fail_on: FailOn) -> bool:
    """Whether ``change`` fails a check run with ``--fail-on fail_on``."""
    if change.accepted is not None:
        return False
    if fail_on == "any":
        return True
    return LEVELS.index(change.level) <= LEVELS.index(fail_on)


def counts(changes: Sequence[ToolChange]) -> str:
    """``1 breaking, 0 warning, 2 info``, accepted changes left out."""
    counted = Counter(change.level for change in changes if change.accepted is None)
    return ", ".join(f"{counted[level]} {level}" for level in LEVELS)


def report_lines(changes: Sequence[ToolChange]) -> list[str]:
    """The changes grouped by tool: a header per tool, then one line per change."""
    lines: list[str] = []
    by_tool: dict[str, list[ToolChange]] = {}
    for change in changes:
        by_tool.setdefault(change.tool, []).append(change)
    for tool in sorted(by_tool, key=lambda name: (name == "", name)):
        lines.append(f"{tool or '(files)'}:")
        ordered = sorted(by_tool[tool], key=lambda change: LEVELS.index(change.level))
        for change in ordered:
            where = f" at {change.pointer}" if change.pointer else ""
            accepted = f" [accepted: {change.accepted}]" if change.accepted is not None else ""
            lines.append(f"  {change.level:<8} {change.rule}{where}: {change.message}{accepted}")
    return lines
