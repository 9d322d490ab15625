"""``wink sessions``: list, show, export, delete and prune the sessions of a store."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal
from urllib.parse import unquote

from pydantic import AwareDatetime, Field
from pydantic_settings import CliPositionalArg, CliSubCommand, get_subcommand
from typing_extensions import TypeAliasType

from wink._error_text import bounded
from wink.cli.commands import Command
from wink.cli.failure import EXIT_FAILED, EXIT_USAGE, CliError, printable
from wink.cli.settings import WinkSettings
from wink.store import SessionInfo, SessionStore, StoreError, open_store
from wink.store.document import TOOL_INVOKED, session_document

__all__ = [
    "SessionsCommand",
    "SessionsDeleteCommand",
    "SessionsExportCommand",
    "SessionsListCommand",
    "SessionsPruneCommand",
    "SessionsShowCommand",
]

# Named aliases give readable metavars in --help.
URL = TypeAliasType("URL", str)
DIR = TypeAliasType("DIR", Path)
ID = TypeAliasType("ID", str)

_STORE_HELP = "the store: sqlite:///path/to/file.db or postgresql://user@host:port/database"
_LAST_CALLS = 5
"""How many of its latest calls ``wink sessions show`` prints."""


class _StoreCommand(Command):
    store: URL = Field(description=_STORE_HELP)

    def run(self, settings: WinkSettings) -> int:
        """Open the store, do the job, close it."""
        opened = _opened(self.store)
        try:
            return self.run_on(opened)
        except StoreError as error:
            raise CliError(str(error)) from None
        finally:
            opened.close()

    def run_on(self, store: SessionStore) -> int:
        """Do the job on the open store; return the exit status."""
        raise NotImplementedError


class SessionsListCommand(_StoreCommand):
    """List the stored sessions: id, created, updated, version, events."""

    format: Literal["text", "json"] = Field("text", description="text (a table) or json")

    def run_on(self, store: SessionStore) -> int:
        """Print one line (or JSON object) per session, oldest first."""
        sessions = store.sessions()
        if self.format == "json":
            print(json.dumps([_info_data(info) for info in sessions], indent=2))
            return 0
        rows = [("ID", "CREATED", "UPDATED", "VERSION", "EVENTS")]
        rows += [
            (
                printable(info.session_id),
                _moment(info.created_at),
                _moment(info.updated_at),
                str(info.version),
                str(info.event_count),
            )
            for info in sessions
        ]
        widths = [max(len(row[column]) for row in rows) for column in range(5)]
        for row in rows:
            cells = [row[c].ljust(widths[c]) for c in range(3)]
            cells += [row[c].rjust(widths[c]) for c in range(3, 5)]
            print("  ".join(cells))
        return 0


class SessionsShowCommand(_StoreCommand):
    """Print a stored session's summary: versions, slices and their sizes, its last calls."""

    session_id: CliPositionalArg[ID] = Field(description="the session's id")

    def run_on(self, store: SessionStore) -> int:
        """Print the summary."""
        info = _info(store, self.session_id)
        document = _document(store, self.session_id)
        print(f"session {printable(info.session_id)}")
        print(f"  created   {_moment(info.created_at)}")
        print(f"  updated   {_moment(info.updated_at)}")
        snapshot = (
            f"snapshot at {info.snapshot_version}" if info.snapshot_version else "no snapshot"
        )
        print(f"  version   {info.version} ({snapshot})")
        print(f"  events    {info.event_count}")
        slices = document["slices"]
        print(f"slices ({len(slices)})")
        width = max((len(printable(entry["type"])) for entry in slices), default=0)
        for entry in slices:
            name = printable(entry["type"]).ljust(width)
            print(f"  {entry['kind']:<5}  {name}  {len(entry['items'])}")
        calls = _calls(document)
        print(f"last calls ({min(len(calls), _LAST_CALLS)} of {len(calls)})")
        for call in calls[-_LAST_CALLS:]:
            print(f"  {_call_line(call)}")
        return 0


class SessionsExportCommand(_StoreCommand):
    """Write a stored session as session.json (for wink trace) and calls.jsonl (for wink
    validate)."""

    session_id: CliPositionalArg[ID] = Field(description="the session's id")
    out: DIR = Field(description="the folder to write (created when missing)")

    def run_on(self, store: SessionStore) -> int:
        """Write both files."""
        _info(store, self.session_id)
        document = _document(store, self.session_id)
        try:
            self.out.mkdir(parents=True, exist_ok=True)
            session_file = self.out / "session.json"
            session_file.write_text(json.dumps(document, separators=(",", ":")), "utf-8")
            calls = _calls(document)
            calls_file = self.out / "calls.jsonl"
            calls_file.write_text("".join(json.dumps(call) + "\n" for call in calls), "utf-8")
        except OSError as error:
            raise CliError(f"{self.out}: cannot write: {error.strerror or error}") from None
        print(f"wrote {session_file} and {calls_file} ({len(calls)} calls)")
        return 0


class SessionsDeleteCommand(_StoreCommand):
    """Delete a stored session and its history."""

    session_id: CliPositionalArg[ID] = Field(description="the session's id")

    def run_on(self, store: SessionStore) -> int:
        """Delete it."""
        if not store.delete(self.session_id):
            raise CliError(_not_stored(self.session_id))
        print(f"deleted {printable(self.session_id)}")
        return 0


class SessionsPruneCommand(_StoreCommand):
    """Drop history that the latest snapshots hold, and sessions not updated since a date."""

    history: bool = Field(
        True, description="drop each session's changes and snapshots before its latest snapshot"
    )
    updated_before: AwareDatetime | None = Field(
        None,
        description="also delete the sessions not updated since this moment "
        "(ISO 8601 with a time zone, e.g. 2025-01-31T00:00:00Z)",
    )

    def run_on(self, store: SessionStore) -> int:
        """Prune and say what went."""
        report = store.prune(history=self.history, updated_before=self.updated_before)
        print(
            f"pruned {report.sessions} sessions, {report.changes} changes, "
            f"{report.snapshots} snapshots"
        )
        return 0


class SessionsCommand(Command):
    """List, show, export, delete and prune the sessions of a store."""

    list_sessions: CliSubCommand[SessionsListCommand] = Field(
        alias="list", description="list the stored sessions"
    )
    show: CliSubCommand[SessionsShowCommand] = Field(description="summarise one session")
    export: CliSubCommand[SessionsExportCommand] = Field(
        description="write session.json and calls.jsonl"
    )
    delete: CliSubCommand[SessionsDeleteCommand] = Field(description="delete one session")
    prune: CliSubCommand[SessionsPruneCommand] = Field(description="drop old history and sessions")

    def run(self, settings: WinkSettings) -> int:
        """Run the chosen subcommand."""
        chosen = get_subcommand(self, is_required=False)
        if not isinstance(chosen, Command):
            raise CliError(
                "sessions needs a command: list, show, export, delete or prune "
                "(see wink sessions --help)",
                EXIT_USAGE,
            )
        return chosen.run(settings)


def _opened(url: str) -> SessionStore:
    """The store ``url`` names; a SQLite file must exist (a typo must not create one)."""
    if url.startswith("sqlite:///") and url != "sqlite:///:memory:":
        path = Path(unquote(url[len("sqlite:///") :]))
        if not path.is_file():
            raise CliError(f"--store: no SQLite store at {bounded(str(path))!r}")
    try:
        return open_store(url)
    except ValueError as error:
        raise CliError(f"--store: {error}", EXIT_USAGE) from None
    except StoreError as error:
        raise CliError(str(error), EXIT_FAILED) from None


def _not_stored(session_id: str) -> str:
    return f"session {bounded(session_id)!r} is not in the store"


def _info(store: SessionStore, session_id: str) -> SessionInfo:
    for info in store.sessions():
        if info.session_id == session_id:
            return info
    raise CliError(_not_stored(session_id))


def _document(store: SessionStore, session_id: str) -> dict[str, Any]:
    history = store.read(session_id)
    if history is None:  # deleted since it was listed
        raise CliError(_not_stored(session_id))
    return session_document(session_id, history)


def _calls(document: dict[str, Any]) -> list[Any]:
    for entry in document["slices"]:
        if entry["type"] == TOOL_INVOKED:
            items: list[Any] = entry["items"]
            return items
    return []


def _call_line(call: Any) -> str:
    """``name (call id) outcome started_at`` of a recorded call (JSON data)."""
    try:
        result = call["result"]
        outcome = "ok" if result["success"] else "failed"
        if call.get("denied"):
            outcome = "denied"
        line = f"{call['name']} ({call['call_id']}) {outcome} {call['started_at']}"
    except (KeyError, TypeError):
        line = f"unreadable record {bounded(json.dumps(call))}"
    return printable(line)


def _moment(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _info_data(info: SessionInfo) -> dict[str, Any]:
    return {
        "session_id": info.session_id,
        "created_at": info.created_at.isoformat(),
        "updated_at": info.updated_at.isoformat(),
        "version": info.version,
        "event_count": info.event_count,
        "snapshot_version": info.snapshot_version,
    }
