"""``wink replay``: a recorded session's tool calls against the target's current tools.

Every recorded call (``session[ToolInvoked]``, in order, sub-calls included, each on
its own) is checked against the current contract of its tool, with the checker
``wink validate`` uses. With ``--run`` it is also executed by the target's tools, on
a session of its own holding the recorded state before the call (rebuilt from the
recorded versions of a ``keep_history=True`` session; for a session saved without
history, the state the replay itself reached, every earlier call replayed in order
from an empty session), never on the recorded session; its result and the state it
changed are compared with the record.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field
from pydantic_settings import CliPositionalArg
from typing_extensions import TypeAliasType

from wink.cli.commands import Command
from wink.cli.failure import EXIT_FAILED, EXIT_USAGE, CliError, printable
from wink.cli.replay_history import RecordedCall, RecordedSession, SliceItems, read_session
from wink.cli.replay_html import render_replay_html
from wink.cli.replay_report import (
    ABSENT,
    Difference,
    FailOn,
    ReplayedCall,
    ReplayReport,
    differences,
)
from wink.cli.serve import served_prompt
from wink.cli.settings import WinkSettings
from wink.cli.targets import load_target, output_to_stderr, tools_of
from wink.cli.trace import _write_whole
from wink.cli.validate import CallChecker, _in_user_words
from wink.prompt import Prompt, RenderedPrompt
from wink.runtime.call import ToolCall
from wink.runtime.executor import ToolExecutor
from wink.runtime.session import Session
from wink.runtime.snapshot import SNAPSHOT_VERSION, Snapshot, SnapshotError, read_document
from wink.runtime.trace_html import TOOL_INVOKED, is_internal_slice
from wink.tools import Tool

if TYPE_CHECKING:
    from wink.store import StoredHistory

__all__ = ["ReplayCommand", "replay_session"]

# Named aliases give readable metavars in --help.
SESSION_FILE = TypeAliasType("SESSION_FILE", str)
TARGET = TypeAliasType("TARGET", str)
URL = TypeAliasType("URL", str)
ID = TypeAliasType("ID", str)
HTML = TypeAliasType("HTML", str)

_TARGET_HELP = (
    "module:attribute or path/to/file.py:attribute naming the current Prompt (with its "
    "resources), PromptTemplate, Section, Tool or list of tools"
)


class ReplayCommand(Command):
    """Replay a recorded session's tool calls against the target's current tools."""

    # Empty strings rather than None: help would show None as "project setting".
    session_file: CliPositionalArg[SESSION_FILE] = Field(
        "",
        description="a session saved with session.snapshot().to_json() or write_json; "
        "or give --store and --session",
    )
    target: TARGET = Field(description=_TARGET_HELP)
    store: URL = Field("", description="a session store URL (sqlite:///path or postgresql://...)")
    session_id: ID = Field(
        "", alias="session", description="the id of the session to replay in --store"
    )
    run_calls: bool = Field(
        False,
        alias="run",
        description="also run each call with the target's tools, on a copy of the recorded "
        "state before it, and compare its result and state change",
    )
    format: Literal["text", "json"] = Field("text", description="report as text or as JSON")
    html: HTML = Field("", description="also write the report as an HTML page to this file")
    fail_on: FailOn = Field(
        "refused",
        description="least severe outcome that fails: refused (refused or denied), changed "
        "(also a different result or state change), or any (also a call now accepted)",
    )

    def run(self, settings: WinkSettings) -> int:
        """Replay and report; exit 1 when a call is at or above ``--fail-on``."""
        value = _load(self.target)  # first: its module defines the stored slice types
        label, text = self._read_session()
        session = read_session(text, label)
        tools = tools_of(value, self.target)
        prompt = served_prompt(value, self.target) if self.run_calls else None
        report = replay_session(session, label, self.target, tools, prompt)
        if self.format == "json":
            sys.stdout.write(json.dumps(report.to_json(self.fail_on), indent=2) + "\n")
        else:
            for line in report.lines():
                print(line)
        if self.html:
            try:
                _write_whole(Path(self.html), render_replay_html(report))
            except OSError as error:
                raise CliError(f"{self.html}: cannot write: {error.strerror or error}") from None
        failing = report.failing(self.fail_on)
        if failing:
            raise CliError(
                f"{len(failing)} call{'s' if len(failing) != 1 else ''} at or above "
                f"--fail-on {self.fail_on} (first: {failing[0].label()} {failing[0].outcome})"
            )
        return 0

    def _read_session(self) -> tuple[str, bytes | str]:
        """(label, JSON text) of the session named on the command line."""
        if self.session_file:
            if self.store or self.session_id:
                raise CliError(
                    "give either a session file or --store and --session, not both", EXIT_USAGE
                )
            try:
                return self.session_file, Path(self.session_file).read_bytes()
            except OSError as error:
                raise CliError(
                    f"{self.session_file}: cannot read: {error.strerror or error}", EXIT_USAGE
                ) from None
        if not self.store or not self.session_id:
            raise CliError(
                "name the session: a file saved with session.snapshot().to_json(), "
                "or --store URL and --session ID",
                EXIT_USAGE,
            )
        return f"{self.store}#{self.session_id}", _stored_text(self.store, self.session_id)


def replay_session(
    session: RecordedSession,
    label: str,
    target: str,
    tools: tuple[Tool[Any, Any], ...],
    prompt: Prompt | None,
) -> ReplayReport:
    """Each recorded call of ``session`` against ``tools``: its arguments checked, and,
    given the target's ``prompt``, run and compared with the record."""
    checker = CallChecker(tools)
    if prompt is None:
        calls = tuple(_checked(call, checker) for call in session.calls)
        return ReplayReport(label, target, ran=False, state=None, calls=calls)
    replayer = _Replayer(session, label, prompt)
    calls = tuple(replayer.replay(call, checker) for call in session.calls)
    return ReplayReport(
        label,
        target,
        ran=True,
        state="history" if session.has_history else "replayed",
        calls=calls,
    )


def _checked(call: RecordedCall, checker: CallChecker) -> ReplayedCall:
    """The call's outcome from its arguments alone."""
    refusal = _refusal(call, checker)
    if refusal is not None and not call.refused:
        return _outcome(call, "refused", reason=refusal)
    if refusal is None and call.refused:
        return _outcome(call, "accepted", reason="refused when recorded, accepted now")
    return _outcome(call, "unchanged")


def _refusal(call: RecordedCall, checker: CallChecker) -> str | None:
    """Why the current contract refuses the call's arguments, or ``None``."""
    with output_to_stderr():  # the tools' validators are user code
        problems = checker.problems(ToolCall(call.name, call.arguments, call.call_id))
    if problems is None:
        return checker.unknown_reason()
    if not problems:
        return None
    return "; ".join(f"{problem.path}: {_in_user_words(problem.reason)}" for problem in problems)


class _Replayer:
    """Runs recorded calls with the target's tools, each on a session of its own."""

    def __init__(self, session: RecordedSession, label: str, prompt: Prompt) -> None:
        self._session = session
        self._label = label
        self._prompt = prompt
        self._rendered: RenderedPrompt = prompt.render()
        self._left_out: set[str] = set()
        self._notes: list[str] = []
        # Without history, the calls build the state up in order on this one session.
        self._replayed = None if session.has_history else self._fork({}, 0)

    def replay(self, call: RecordedCall, checker: CallChecker) -> ReplayedCall:
        """How ``call`` fares when run now."""
        replayed = self._replay(call, checker)
        if not self._notes:
            return replayed
        notes, self._notes = tuple(self._notes), []
        return dataclasses.replace(replayed, notes=notes)

    def _replay(self, call: RecordedCall, checker: CallChecker) -> ReplayedCall:
        refusal = _refusal(call, checker)
        if refusal is not None:
            if call.refused:
                return _outcome(call, "unchanged")
            return _outcome(call, "refused", reason=refusal)
        before: SliceItems = {}
        if self._replayed is None:
            before = self._session.state_before(call.number)
            fork = self._fork(before, call.number)
        else:
            fork = self._replayed
        fork_before = _state_items(self._json(fork, call.number))
        executor = ToolExecutor(prompt=self._prompt, session=fork, rendered_prompt=self._rendered)
        with output_to_stderr():
            executor.execute(ToolCall(call.name, call.arguments, call.call_id))
        document = self._json(fork, call.number)
        record = _last_call(document)
        result = record.get("result")
        now = result if isinstance(result, dict) else {}
        if record.get("denied") is True and not call.denied:
            return _outcome(call, "denied", reason=str(now.get("message", "")))
        found, more = differences("result", _compared(call.result), _compared(now))
        if call.refused:
            return _outcome(call, "accepted", found, more, "refused when recorded, accepted now")
        if found:
            return _outcome(call, "changed-result", found, more)
        if self._replayed is not None:
            return _outcome(call, "unchanged")
        found, more = _state_differences(
            before,
            self._session.state_after(call.number),
            fork_before,
            _state_items(document),
        )
        return _outcome(call, "changed-state" if found else "unchanged", found, more)

    def _fork(self, state: SliceItems, number: int) -> Session:
        """A new session holding ``state`` and the recorded ``LOG`` declarations.

        A slice the current types no longer read (a field renamed in its type) is left
        out, and said so, once, on the first call that runs without it.
        """
        loaded: dict[type[Any], Any] = {}
        for name, items in state.items():
            try:
                loaded.update(_read_slices([(name, "state", items)]).state)
            except SnapshotError as error:
                if name not in self._left_out:
                    self._left_out.add(name)
                    self._notes.append(
                        f"state[{name}] is left out from here on: the current types cannot "
                        f"read it: {_one_line(str(error))}"
                    )
        try:
            log = _read_slices([(name, "log", []) for name in self._session.log_types]).log
        except SnapshotError as error:
            raise CliError(f"{self._label}: cannot read the recorded slices: {error}") from None
        fork = Session()
        fork.restore(Snapshot(loaded, dict(log)), keep_log=False)
        return fork

    def _json(self, fork: Session, number: int) -> dict[str, Any]:
        try:
            return read_document(fork.snapshot().to_json())
        except SnapshotError as error:
            raise CliError(
                f"{self._label}: call-{number}: the replayed session cannot be saved: {error}"
            ) from None


def _one_line(text: str) -> str:
    """A reader's message of several lines (a problem per line) on one line."""
    first, *rest = [line.strip() for line in text.splitlines() if line.strip()] or [""]
    return f"{first} {'; '.join(rest)}" if rest else first


def _read_slices(slices: list[tuple[str, str, list[Any]]]) -> Snapshot:
    document = {
        "version": SNAPSHOT_VERSION,
        "slices": [{"type": name, "kind": kind, "items": items} for name, kind, items in slices],
    }
    return Snapshot.from_json(json.dumps(document))


def _compared(result: object) -> dict[str, Any]:
    """What of a result is compared: whether it succeeded, its message and its value."""
    if not isinstance(result, dict):
        return {}
    return {key: result.get(key, ABSENT) for key in ("success", "message", "value")}


def _state_differences(
    recorded_before: SliceItems,
    recorded_after: SliceItems,
    replayed_before: SliceItems,
    replayed_after: SliceItems,
) -> tuple[tuple[Difference, ...], int]:
    """Where the slices a call changed, as recorded or as replayed, now end differently.

    wink's own slices (``PolicyState``) are left out: a policy's bookkeeping is not the
    state the tools work on.
    """
    changed = {
        name
        for before, after in ((recorded_before, recorded_after), (replayed_before, replayed_after))
        for name in {*before, *after}
        if before.get(name, []) != after.get(name, [])
    }
    found: list[Difference] = []
    more = 0
    for name in sorted(changed):
        if is_internal_slice(name):
            continue
        listed, beyond = differences(
            f"state[{name}]", recorded_after.get(name, []), replayed_after.get(name, [])
        )
        found += listed
        more += beyond
    return tuple(found), more


def _state_items(document: dict[str, Any]) -> SliceItems:
    return {
        entry["type"]: entry["items"] for entry in document["slices"] if entry["kind"] == "state"
    }


def _last_call(document: dict[str, Any]) -> dict[str, Any]:
    """The ``ToolInvoked`` recorded last: the call just run (its sub-calls come before)."""
    for entry in document["slices"]:
        if entry["type"] == TOOL_INVOKED and entry["items"]:
            last: dict[str, Any] = entry["items"][-1]
            return last
    return {}


def _outcome(
    call: RecordedCall,
    outcome: Any,
    found: tuple[Difference, ...] = (),
    more: int = 0,
    reason: str = "",
) -> ReplayedCall:
    return ReplayedCall(
        number=call.number,
        tool=call.name,
        call_id=call.call_id,
        outcome=outcome,
        reason=reason,
        differences=found,
        more_differences=more,
    )


def _load(target: str) -> object:
    """The target's value; a target that cannot be loaded is a usage error (exit 2)."""
    try:
        return load_target(target)
    except CliError as error:
        raise CliError(str(error), EXIT_USAGE) from None


def _stored_document(stored: StoredHistory) -> str:
    """The session's snapshot document, its stored changes applied as JSON: read with no
    slice type, so that a session whose types changed since is still read.

    A change appends the values each slice gained, and names the slices it replaced
    whole (``set``) or removed (``drop``).
    """
    slices: dict[str, dict[str, Any]] = {}
    changes = [(stored.snapshot, "")] if stored.snapshot is not None else []
    changes += [(change.body, change.ops) for change in stored.changes]
    for body, ops in changes:
        named = json.loads(ops) if ops else {}
        for gone in named.get("drop", ()):
            slices.pop(gone, None)
        replaced = set(named.get("set", ()))
        for entry in read_document(body)["slices"]:
            earlier = slices.get(entry["type"])
            if earlier is None or entry["type"] in replaced or earlier["kind"] != entry["kind"]:
                slices[entry["type"]] = entry
            else:
                earlier["items"] = [*earlier["items"], *entry["items"]]
    return json.dumps({"version": SNAPSHOT_VERSION, "slices": list(slices.values())})


def _stored_text(url: str, session_id: str) -> str:
    """The JSON of the stored session ``session_id``."""
    from wink.store import StoreError, open_store  # a store's driver loads only when named

    try:
        store = open_store(url)
    except (ValueError, StoreError) as error:
        raise CliError(f"--store: {error}", EXIT_USAGE) from None
    except Exception as error:  # a driver's own failure to connect
        raise CliError(f"--store {printable(url)!r}: {error}", EXIT_USAGE) from None
    try:
        stored = store.read(session_id)
        if stored is None:
            raise CliError(
                f"session {session_id!r} is not stored in {url!r}",
                EXIT_USAGE,
            )
        return _stored_document(stored)
    except (StoreError, SnapshotError, ValueError) as error:  # ValueError: bad ops JSON
        raise CliError(f"session {session_id!r} in {url!r}: {error}", EXIT_FAILED) from None
    finally:
        store.close()
