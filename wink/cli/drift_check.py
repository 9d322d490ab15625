"""What ``wink schemas check`` found: classified tool changes, file changes the
contracts do not explain, and the recorded calls a change breaks."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wink.cli.drift import CONTRACT_FOLDER, FailOn, ToolChange, classify_tools
from wink.cli.export import INDEX, Drift
from wink.cli.failure import CliError
from wink.cli.recorded import calls_in
from wink.cli.validate import CallChecker, _null_for_optional, _read_json, unreadable_reason
from wink.contract import format_path, schema_checker
from wink.contract.drift import ANY, LEVELS, Location
from wink.runtime.call import ToolCall
from wink.tools import Tool

__all__ = ["RecordedBreaks", "drift_changes", "drift_json", "recorded_breaks"]


def drift_changes(
    drift: Drift,
    files: Mapping[str, str],
    old: Mapping[str, Mapping[str, Any]],
    old_names: set[str],
) -> list[ToolChange]:
    """Tool changes classified on the contracts, then file differences they do not explain."""
    new = {
        json.loads(text)["name"]: json.loads(text)
        for path, text in files.items()
        if path.startswith(f"{CONTRACT_FOLDER}/")
    }
    changes = classify_tools(old, new)
    # Files of an added or removed tool are told by its tool-level change.
    explained = {change.tool for change in changes} | (set(new) ^ old_names)
    for name in sorted(old_names - set(old)):
        # Exported by a wink that wrote no contract: nothing to classify against.
        if name not in new:
            changes.append(ToolChange(name, "tool-removed", "breaking", "", (), "tool removed"))
        elif _touched(drift, name):
            changes.append(
                ToolChange(
                    name,
                    "undecided",
                    "breaking",
                    "",
                    (),
                    "its provider specs changed and no contract/ file was committed to "
                    "classify the change against (undecided: reported as breaking)",
                )
            )
        else:
            changes.append(
                ToolChange(
                    name,
                    "contract-missing",
                    "info",
                    "",
                    (),
                    f"no {CONTRACT_FOLDER}/{name}.json committed; export again to record it",
                )
            )
        explained.add(name)
    for kind, paths in (
        ("changed", drift.changed),
        ("missing", drift.missing),
        ("extra", drift.extra),
    ):
        for path in paths:
            folder, _, file_name = path.rpartition("/")
            tool = file_name.removesuffix(".json") if folder not in ("", "wire") else ""
            if folder == CONTRACT_FOLDER or tool in explained:
                continue
            if path == INDEX and changes:
                continue
            changes.append(
                ToolChange(
                    tool if tool in new or tool in old_names else "",
                    f"file-{kind}",
                    "info",
                    "",
                    (),
                    f"{path} {_FILE_WORDS[kind]}",
                )
            )
    return changes


_FILE_WORDS = {
    "changed": "differs from what the code produces",
    "missing": "is not on disk; the code produces it",
    "extra": "is on disk; no tool or dialect produces it",
}


def _touched(drift: Drift, tool: str) -> bool:
    return any(
        path.endswith(f"/{tool}.json") for path in (*drift.changed, *drift.missing, *drift.extra)
    )


def drift_json(
    directory: Path,
    total: int,
    changes: Sequence[ToolChange],
    fail_on: FailOn,
    failing: Sequence[ToolChange],
    broken: RecordedBreaks | None,
) -> dict[str, Any]:
    """The ``--format json`` report."""
    counted = Counter(change.level for change in changes if change.accepted is None)
    report: dict[str, Any] = {
        "directory": str(directory),
        "files": total,
        "fail_on": fail_on,
        "failed": bool(failing),
        "counts": {level: counted[level] for level in LEVELS},
        "changes": [change.as_json() for change in changes],
    }
    if broken is not None:
        report["recorded"] = broken.as_json()
    return report


@dataclass(frozen=True, slots=True)
class BrokenCall:
    """A recorded call the old contract accepted and the new one refuses."""

    where: str
    """``file:line``."""
    tool: str
    call_id: str | None
    rule: str
    pointer: str
    problem: str


@dataclass(slots=True)
class RecordedBreaks:
    """The recorded calls read, and those the change breaks."""

    calls: int = 0
    already_invalid: int = 0
    broken: list[BrokenCall] = field(default_factory=list)

    def lines(self) -> list[str]:
        """The report: a count, then one line per broken call and rule."""
        calls = len({(call.where, call.call_id, call.tool) for call in self.broken})
        lines = [
            f"recorded calls: {self.calls} read, {calls} broken by the change, "
            f"{self.already_invalid} refused by the committed contract already"
        ]
        for call in self.broken:
            called = call.tool if call.call_id is None else f"{call.tool} (call {call.call_id})"
            where = f" at {call.pointer}" if call.pointer else ""
            lines.append(f"  {call.where}: {called}: {call.rule}{where}: {call.problem}")
        return lines

    def as_json(self) -> dict[str, Any]:
        """The recorded part of ``--format json``."""
        return {
            "calls": self.calls,
            "already_invalid": self.already_invalid,
            "broken": [
                {
                    "where": call.where,
                    "tool": call.tool,
                    "call_id": call.call_id,
                    "rule": call.rule,
                    "pointer": call.pointer,
                    "problem": call.problem,
                }
                for call in self.broken
            ],
        }


def recorded_breaks(
    paths: Sequence[Path],
    tools: Sequence[Tool[Any, Any]],
    old: Mapping[str, Mapping[str, Any]],
    changes: Sequence[ToolChange],
) -> RecordedBreaks:
    """Run every recorded call in ``paths`` through the committed contracts and the code's,
    and attribute each call only the code's refuses to the change rule at its field."""
    checker = CallChecker(tools)
    known = {tool.name for tool in tools}
    old_checks = {
        name: schema_checker(_null_for_optional(document["params"]))
        for name, document in old.items()
        if isinstance(document.get("params"), dict)
    }
    gone = {change.tool: change for change in changes if change.rule.startswith("tool-")}
    result = RecordedBreaks()
    for path in paths:
        for where, call in _recorded_calls(path):
            result.calls += 1
            old_check = old_checks.get(call.name)
            if old_check is None:
                continue  # not a tool of the committed schemas
            arguments = _arguments(call)
            if arguments is _UNREADABLE or not old_check.is_valid(arguments):
                result.already_invalid += 1
                continue
            if call.name not in known:
                change = gone.get(call.name)
                rule = change.rule if change is not None else "tool-removed"
                result.broken.append(
                    BrokenCall(
                        where, call.name, call.call_id, rule, "", "the tool no longer exists"
                    )
                )
                continue
            for problem in checker.problems(call) or ():
                rule, pointer = _attributed(problem.path, call.name, changes)
                result.broken.append(
                    BrokenCall(where, call.name, call.call_id, rule, pointer, str(problem))
                )
    return result


_UNREADABLE = object()


def _arguments(call: ToolCall) -> Any:
    arguments = call.arguments
    if isinstance(arguments, str | bytes):
        try:
            return _read_json(arguments)
        except (ValueError, RecursionError):
            return _UNREADABLE
    return arguments


def _recorded_calls(path: Path) -> Iterator[tuple[str, ToolCall]]:
    try:
        text = path.read_bytes()
    except OSError as error:
        raise CliError(f"cannot read recorded calls {path}: {error.strerror or error}") from None
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            calls = calls_in(_read_json(line))
        except (ValueError, RecursionError) as error:
            raise CliError(
                f"{path}:{number}: not a recorded call ({unreadable_reason(error)})"
            ) from None
        for call in calls:
            yield f"{path}:{number}", call


def _attributed(path: str, tool: str, changes: Sequence[ToolChange]) -> tuple[str, str]:
    """The params rule whose location is the longest prefix of the problem's ``path``."""
    location = _location(path)
    best: ToolChange | None = None
    for change in changes:
        if change.tool != tool or not change.rule.startswith("params-") or change.level == "info":
            continue
        if _covers(change.location, location) and (
            best is None or len(change.location) > len(best.location)
        ):
            best = change
    if best is None:
        return "no-rule", ""
    return best.rule, best.pointer


def _covers(prefix: Location, location: tuple[str, ...]) -> bool:
    if len(prefix) > len(location):
        return False
    return all(part in (ANY, actual) for part, actual in zip(prefix, location, strict=False))


def _location(path: str) -> tuple[str, ...]:
    """``filters.kind``, ``tags[2]`` or ``by_key["a.b"]`` (``format_path``'s form) as parts."""
    if path == format_path([]):
        return ()
    decoder = json.JSONDecoder()
    parts: list[str] = []
    index = 0
    while index < len(path):
        if path[index] == ".":
            index += 1
        elif path.startswith('["', index):
            key, end = decoder.raw_decode(path, index + 1)
            parts.append(str(key))
            index = end + 1
        elif path[index] == "[":
            end = path.index("]", index)
            parts.append(path[index + 1 : end])
            index = end + 1
        else:
            stops = [i for i in (path.find(".", index), path.find("[", index)) if i != -1]
            end = min(stops, default=len(path))
            parts.append(path[index:end])
            index = end
    return tuple(parts)
