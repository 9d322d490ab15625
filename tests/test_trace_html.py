"""``session.to_html()`` and ``wink trace``: a saved session as a page, checked in a browser."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from wink import (
    InMemoryFilesystem,
    MarkdownSection,
    PolicyDecision,
    Prompt,
    PromptTemplate,
    Session,
    SliceKind,
    ToolCall,
    ToolContext,
    ToolExecutor,
    ToolResult,
    tool,
)
from wink.cli import main
from wink.runtime.trace_html import render_snapshot_json


@dataclass(frozen=True)
class NoteParams:
    text: str


@dataclass(frozen=True)
class Note:
    text: str


@dataclass(frozen=True)
class Reviewed:
    by: str


@tool
def add_note(params: NoteParams, *, context: ToolContext) -> ToolResult[Note]:
    """Save a note."""
    context.require_filesystem().write("notes.md", params.text)
    if params.text == "boom":
        raise ValueError("no booms")
    if params.text == "":
        return ToolResult.error("Notes may not be empty.")
    return ToolResult.ok(Note(params.text), message="Noted.")


@dataclass(frozen=True)
class NoSecrets:
    name: str = "no_secrets"

    def check(self, tool: Any, params: Any, *, context: ToolContext) -> PolicyDecision:
        if "secret" in params.text:
            return PolicyDecision.deny("Secrets stay out of notes.")
        return PolicyDecision.allow()

    def on_result(self, tool: Any, params: Any, result: Any, *, context: ToolContext) -> None:
        pass


class StepClock:
    """Each reading is 5 ms after the previous one."""

    def __init__(self) -> None:
        self.now = datetime(2025, 1, 1, 12, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(milliseconds=5)
        return self.now


def recorded_session() -> Session:
    template = PromptTemplate(
        ns="tests",
        key="notes",
        sections=[MarkdownSection(title="Notes", tools=[add_note], policies=[NoSecrets()])],
    )
    prompt = Prompt(template).bind(resources={InMemoryFilesystem: InMemoryFilesystem()})
    session = Session()
    session[Reviewed].declare(SliceKind.LOG)
    executor = ToolExecutor(prompt=prompt, session=session, clock=StepClock())
    for call in [
        ToolCall("add_note", '{"text": "first <b>bold</b>"}', call_id="c1"),
        ToolCall("add_note", '{"text": "the secret"}', call_id="c2"),
        ToolCall("add_note", '{"text": "boom"}', call_id="c3"),
        ToolCall("add_note", '{"text": ""}', call_id="c4"),
        ToolCall("add_note", '{"txt": "typo"}', call_id="c5"),
        ToolCall("remove_note", "{}", call_id="c6"),
    ]:
        executor.execute(call)
    session.dispatch(Reviewed(by="ada"))
    return session


def test_the_page_is_self_contained_and_escapes_what_it_shows() -> None:
    page = recorded_session().to_html(title="Notes <session>")
    assert page.startswith('<!DOCTYPE html>\n<html lang="en">')
    assert "<title>Notes &lt;session&gt;</title>" in page
    for loading in ("<script", "<link", "src=", "@import", "url("):
        assert loading not in page
    assert "first &lt;b&gt;bold&lt;/b&gt;" in page and "<b>bold</b>" not in page
    assert (
        '<p class="summary">6 tool calls: 1 ok, 5 failed (3 rolled back) over 55.0 ms</p>' in page
    )


def test_to_html_renders_the_sessions_snapshot() -> None:
    session = recorded_session()
    assert session.to_html() == render_snapshot_json(session.snapshot().to_json())


def test_wink_trace_writes_the_page_of_a_saved_session(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = recorded_session()
    saved = tmp_path / "session.json"
    saved.write_text(session.snapshot().to_json())
    out = tmp_path / "out.html"
    assert main(["trace", str(saved), "--html", str(out)]) == 0
    assert capsys.readouterr().out == f"wrote {out}\n"
    assert out.read_text() == session.to_html(title="session.json")
    assert main(["trace", str(saved), "--title", "T"]) == 0
    assert capsys.readouterr().out == session.to_html(title="T")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read: No such file or directory"),
        (
            "{not json",
            "snapshot is not valid JSON: key must be a string at <root> (line 1 column 2)",
        ),
        ('{"version": 9}', "snapshot version must be 1, got 9"),
        (
            '{"version": 1, "slices": [{"type": 1}]}',
            "slices[0]: expected an object with type (a string), kind ('state' or 'log') and "
            "items (a list)",
        ),
    ],
)
def test_wink_trace_names_the_file_and_what_is_wrong_with_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None, message: str
) -> None:
    saved = tmp_path / "bad.json"
    if content is not None:
        saved.write_text(content)
    assert main(["trace", str(saved), "--html", str(tmp_path / "out.html")]) == 1
    assert capsys.readouterr().err == f"wink: {saved}: {message}\n"
    assert not (tmp_path / "out.html").exists()


# --- in a real browser ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def chromium() -> str:
    found = shutil.which("chromium")
    if found is None and shutil.which("apt-get") and os.geteuid() == 0:
        # A fresh machine may have no package lists yet.
        for command in (
            ["apt-get", "update", "-q"],
            ["apt-get", "install", "-y", "-q", "chromium"],
        ):
            install = subprocess.run(
                command, capture_output=True, text=True, timeout=900, check=False
            )
        found = shutil.which("chromium")
        if found is None:
            pytest.skip(
                "chromium is not installed and apt-get could not install it: "
                + (install.stderr.strip().splitlines() or ["no output"])[-1]
            )
    if found is None:
        pytest.skip(
            "chromium is not installed (Debian: apt-get install chromium) and this "
            "user cannot install it"
        )
    return found


class _Calls(HTMLParser):
    """The timeline entries of a DOM: attributes and the text of their labelled spans."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[dict[str, str]] = []
        self.slices: list[tuple[str, str]] = []  # (section id, slice type)
        self._section = ""
        self.summary = ""
        self._field: str | None = None
        self._in_timeline = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = {key: value or "" for key, value in attrs}
        classes = attributes.get("class", "").split()
        if tag == "section":
            self._section = attributes.get("id", "")
        elif tag == "div" and "slice" in classes:
            self.slices.append((self._section, attributes["data-type"]))
        elif tag == "ol" and "timeline" in classes:
            self._in_timeline = True
        elif tag == "li" and "call" in classes:
            self.calls.append({"id": attributes["id"], "data-outcome": attributes["data-outcome"]})
        elif tag == "p" and "summary" in classes:
            self._field = "summary"
        elif self._in_timeline and tag in ("span", "p") and classes:
            self._field = classes[0]

    def handle_endtag(self, tag: str) -> None:
        self._field = None
        if tag == "ol":
            self._in_timeline = False

    def handle_data(self, data: str) -> None:
        if self._field == "summary":
            self.summary += data
        elif self._field is not None and self.calls:
            self.calls[-1][self._field] = self.calls[-1].get(self._field, "") + data


def test_the_page_loads_in_chromium_with_every_call_on_the_timeline(
    chromium: str, tmp_path: Path
) -> None:
    saved = tmp_path / "session.json"
    saved.write_text(recorded_session().snapshot().to_json())
    page = tmp_path / "trace.html"
    assert main(["trace", str(saved), "--html", str(page)]) == 0
    dumped = subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    parser = _Calls()
    parser.feed(dumped.stdout)
    assert parser.summary == "6 tool calls: 1 ok, 5 failed (3 rolled back) over 55.0 ms"
    assert parser.calls == [
        {
            "id": "call-1",
            "data-outcome": "ok",
            "tool": "add_note",
            "outcome": "ok",
            "call-id": "c1",
            "timing": "+0.0 ms · took 5.0 ms",
            "message": "Noted.",
        },
        {
            "id": "call-2",
            "data-outcome": "denied or failed",
            "tool": "add_note",
            "outcome": "denied or failed",
            "rolled-back": "rolled back",
            "call-id": "c2",
            "timing": "+10.0 ms · took 5.0 ms",
            "message": "Secrets stay out of notes.",
        },
        {
            "id": "call-3",
            "data-outcome": "raised",
            "tool": "add_note",
            "outcome": "raised",
            "rolled-back": "rolled back",
            "call-id": "c3",
            "timing": "+20.0 ms · took 5.0 ms",
            "message": "Tool 'add_note' raised ValueError: no booms",
        },
        {
            "id": "call-4",
            "data-outcome": "denied or failed",
            "tool": "add_note",
            "outcome": "denied or failed",
            "rolled-back": "rolled back",
            "call-id": "c4",
            "timing": "+30.0 ms · took 5.0 ms",
            "message": "Notes may not be empty.",
        },
        {
            "id": "call-5",
            "data-outcome": "invalid arguments",
            "tool": "add_note",
            "outcome": "invalid arguments",
            "call-id": "c5",
            "timing": "+40.0 ms · took 5.0 ms",
            "message": "Invalid arguments for tool 'add_note':\n"
            "text: required field is missing\ntxt: unknown field (allowed: text)",
        },
        {
            "id": "call-6",
            "data-outcome": "unknown tool",
            "tool": "remove_note",
            "outcome": "unknown tool",
            "call-id": "c6",
            "timing": "+50.0 ms · took 5.0 ms",
            "message": "Unknown tool 'remove_note'. Available tools: add_note.",
        },
    ]
    assert parser.slices == [
        ("state", f"{Note.__module__}:Note"),
        ("events", f"{Reviewed.__module__}:Reviewed"),
    ]
    assert '<pre>[\n  {\n    "text": "first &lt;b&gt;bold&lt;/b&gt;"\n  }\n]</pre>' in dumped.stdout
