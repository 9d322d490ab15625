"""A saved session as ``wink replay`` reads it: its recorded calls, and the state before
and after each of them when it kept its history.

Everything is read from the snapshot's JSON document, so checking a call's arguments
needs no slice type importable. A session created with ``Session(keep_history=True)``
saved every version of its ``STATE`` slices (``wink.runtime.history``); each version is
tied to the call that made it: the call its ``call_id`` and ``tool`` name when its
cause is a call's result value, else the innermost call running when it was
committed. The state before a call is each slice's last version committed before
the call started, never one of that call or of a later call; the state after it
also holds the versions of the call and of the calls its handler made.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from wink.cli.failure import EXIT_USAGE, CliError
from wink.runtime.events import recorded_call
from wink.runtime.snapshot import SnapshotError, read_document
from wink.runtime.trace_html import SLICE_VERSION, TOOL_INVOKED

__all__ = ["RecordedCall", "RecordedSession", "SliceItems", "read_session"]

SliceItems = dict[str, list[Any]]
"""``STATE`` slices as a snapshot's JSON holds them: type name to items."""

_RESULT_VALUE_CAUSE = TOOL_INVOKED
"""The ``cause`` of a version made by a call's result value."""
_REFUSED_PREFIXES = ("Invalid arguments for tool ", "Unknown tool ")
"""How the executor's message starts for a call refused before any policy ran."""


@dataclass(frozen=True, slots=True)
class RecordedCall:
    """One recorded ``ToolInvoked``, as its JSON holds it."""

    number: int
    """Its 1-based position among the session's calls."""
    name: str
    """The tool name the model sent."""
    call_id: str | None
    """The provider's id for the call."""
    arguments: Any
    """The arguments as received (escaped forms read back)."""
    record: Mapping[str, Any]
    """The whole recorded item."""
    started_at: datetime | None
    """When it started, if recorded readably."""
    finished_at: datetime | None
    """When it finished, if recorded readably."""

    @property
    def result(self) -> Mapping[str, Any]:
        """The recorded ``ToolResult`` (empty when the record has none)."""
        result = self.record.get("result")
        return result if isinstance(result, dict) else {}

    @property
    def denied(self) -> bool:
        """Whether a policy denied it (read from the message for sessions saved before
        ``denied`` was recorded)."""
        denied = self.record.get("denied")
        if isinstance(denied, bool):
            return denied
        return not self.result.get("success", True) and str(
            self.result.get("message", "")
        ).startswith("Policy ")

    @property
    def refused(self) -> bool:
        """Whether the executor refused it before any policy: invalid arguments or an
        unknown tool."""
        return (
            not self.result.get("success", True)
            and not self.denied
            and str(self.result.get("message", "")).startswith(_REFUSED_PREFIXES)
        )


@dataclass(frozen=True, slots=True)
class _Version:
    slice_type: str
    values: list[Any]
    changed_at: datetime | None
    cause: str
    call_id: str | None
    tool: str | None


class RecordedSession:
    """The calls of a saved session, and its state around each call when it has history."""

    def __init__(
        self,
        calls: Sequence[RecordedCall],
        versions: Sequence[_Version],
        state: SliceItems,
        log_types: Sequence[str],
    ) -> None:
        self.calls = tuple(calls)
        """Every recorded call, in order."""
        self.has_history = bool(versions) or not state
        """Whether the state around each call can be rebuilt (``keep_history=True``, or a
        session that never held any state)."""
        self.log_types = tuple(log_types)
        """The ``LOG`` slice types the session declared (history, not rebuilt)."""
        self._versions = tuple(versions)
        self._owners = [self._owner(version) for version in versions]

    def state_before(self, number: int) -> SliceItems:
        """The ``STATE`` slices just before call ``number`` started."""
        call = self.calls[number - 1]
        end = len(self._versions)
        for index, (version, owner) in enumerate(zip(self._versions, self._owners, strict=True)):
            if owner is None:
                later = _after(version.changed_at, call.started_at)
            else:
                later = owner >= number or self._within(owner, number)
            if later:
                end = index
                break
        return _last_values(self._versions[:end])

    def state_after(self, number: int) -> SliceItems:
        """The ``STATE`` slices once call ``number`` (and the calls its handler made)
        committed or rolled back."""
        mine = [
            index
            for index, owner in enumerate(self._owners)
            if owner is not None and self._within(owner, number)
        ]
        if not mine:
            return self.state_before(number)
        return _last_values(self._versions[: mine[-1] + 1])

    def _within(self, inner: int, outer: int) -> bool:
        """Whether call ``inner`` ran inside call ``outer`` (its handler made it): a
        sub-call finishes, and is recorded, before the call that made it."""
        if inner == outer:
            return True
        first, second = self.calls[outer - 1], self.calls[inner - 1]
        return (
            inner < outer
            and not _after(first.started_at, second.started_at)
            and not _after(second.finished_at, first.finished_at)
            and None not in (first.started_at, second.started_at)
        )

    def _owner(self, version: _Version) -> int | None:
        """The number of the call that made ``version``, or ``None`` (a change from outside)."""
        if version.cause == _RESULT_VALUE_CAUSE and version.tool is not None:
            for call in reversed(self.calls):
                if (
                    call.name == version.tool
                    and (version.call_id is None or call.call_id == version.call_id)
                    and not _after(call.started_at, version.changed_at)
                ):
                    return call.number
        moment = version.changed_at
        running = [
            call
            for call in self.calls
            if moment is not None
            and call.started_at is not None
            and call.finished_at is not None
            and not _after(call.started_at, moment)
            and not _after(moment, call.finished_at)
            and _comparable(moment, call.started_at)
        ]
        if not running:
            return None
        # The innermost: the one that started last (a sub-call is recorded before its caller).
        innermost = running[0]
        for call in running[1:]:
            if _after(call.started_at, innermost.started_at):
                innermost = call
        return innermost.number


def read_session(text: str | bytes, label: str) -> RecordedSession:
    """The recorded session in ``text`` (``Snapshot.to_json``'s document); ``CliError``
    (exit 2) saying where for anything else."""
    try:
        document = read_document(text)
    except SnapshotError as error:
        raise CliError(f"{label}: {error}", EXIT_USAGE) from None
    slices = document.get("slices", [])
    if not isinstance(slices, list):
        raise CliError(f"{label}: slices: expected a list", EXIT_USAGE)
    calls: list[RecordedCall] = []
    versions: list[_Version] = []
    state: SliceItems = {}
    log_types: list[str] = []
    for index, entry in enumerate(slices):
        where = f"{label}: slices[{index}]"
        if (
            not isinstance(entry, dict)
            or entry.get("kind") not in ("state", "log")
            or not isinstance(entry.get("type"), str)
            or not isinstance(entry.get("items"), list)
        ):
            raise CliError(
                f"{where}: expected an object with type (a string), kind ('state' or 'log') "
                "and items (a list)",
                EXIT_USAGE,
            )
        kind, name, items = entry["kind"], entry["type"], entry["items"]
        if kind == "state":
            state[name] = items
        elif name == TOOL_INVOKED:
            calls = [_call(item, position, where) for position, item in enumerate(items)]
        elif name == SLICE_VERSION:
            versions = [_version(item, position, where) for position, item in enumerate(items)]
        else:
            log_types.append(name)
    return RecordedSession(calls, versions, state, log_types)


def _call(item: object, position: int, where: str) -> RecordedCall:
    here = f"{where}.items[{position}]"
    if not isinstance(item, dict):
        raise CliError(f"{here}: expected a recorded ToolInvoked (an object)", EXIT_USAGE)
    try:
        call = recorded_call(item)
    except ValueError as error:
        raise CliError(f"{here}: {error}", EXIT_USAGE) from None
    return RecordedCall(
        number=position + 1,
        name=call.name,
        call_id=call.call_id,
        arguments=call.arguments,
        record=item,
        started_at=_moment(item.get("started_at")),
        finished_at=_moment(item.get("finished_at")),
    )


def _version(item: object, position: int, where: str) -> _Version:
    here = f"{where}.items[{position}]"
    if (
        not isinstance(item, dict)
        or not isinstance(item.get("slice_type"), str)
        or not isinstance(item.get("values"), list)
    ):
        raise CliError(
            f"{here}: expected a SliceVersion (slice_type, a string, and values, a list)",
            EXIT_USAGE,
        )
    call_id, tool, cause = item.get("call_id"), item.get("tool"), item.get("cause")
    return _Version(
        slice_type=item["slice_type"],
        values=item["values"],
        changed_at=_moment(item.get("changed_at")),
        cause=cause if isinstance(cause, str) else "",
        call_id=call_id if isinstance(call_id, str) else None,
        tool=tool if isinstance(tool, str) else None,
    )


def _moment(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


def _after(moment: datetime | None, other: datetime | None) -> bool:
    """Whether ``moment`` is known to come after ``other`` (unknown times never do)."""
    if moment is None or other is None:
        return False
    try:
        return moment > other
    except TypeError:  # one of them recorded without a timezone
        return False


def _comparable(moment: datetime, other: datetime) -> bool:
    """Whether the two can be ordered (both with a timezone, or both without)."""
    return (moment.tzinfo is None) == (other.tzinfo is None)


def _last_values(versions: Sequence[_Version]) -> SliceItems:
    last: SliceItems = {}
    for version in versions:
        last[version.slice_type] = version.values
    return last
