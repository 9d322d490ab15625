"""``session.to_html()`` and ``wink trace``: a saved session as a page, checked in a browser."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import struct
import subprocess
from collections.abc import Callable, Iterator
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
    ToolInvoked,
    ToolResult,
    tool,
)
from wink.cli import main
from wink.runtime.trace_html import (
    TOOL_INVOKED,
    is_internal_slice,
    render_snapshot_document,
    render_snapshot_json,
)


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
        '<p class="summary">6 tool calls: 1 ok, 5 failed (1 denied, 2 rolled back) over 55.0 ms</p>'
        in page
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


def test_a_failed_write_leaves_the_earlier_page_whole_and_no_temporary_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    saved = tmp_path / "session.json"
    saved.write_text(recorded_session().snapshot().to_json())
    out = tmp_path / "out.html"
    out.write_text("earlier page")

    def refuse(source: str, target: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    assert main(["trace", str(saved), "--html", str(out)]) == 1
    assert capsys.readouterr().err == f"wink: {out}: cannot write: No space left on device\n"
    assert out.read_text() == "earlier page"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["out.html", "session.json"]


def test_a_page_path_that_is_a_link_writes_into_its_target(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = recorded_session()
    saved = tmp_path / "session.json"
    saved.write_text(session.snapshot().to_json())
    target = tmp_path / "pages" / "trace.html"
    target.parent.mkdir()
    link = tmp_path / "latest.html"
    link.symlink_to(target)
    assert main(["trace", str(saved), "--html", str(link)]) == 0
    assert capsys.readouterr().out == f"wrote {link}\n"
    assert link.is_symlink()
    assert target.read_text() == session.to_html(title="session.json")


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
    """The timeline entries of a DOM: attributes and the text of their labelled spans and
    blocks; and every ``<details>``, whether it is open."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[dict[str, str]] = []
        self.slices: list[tuple[str, str]] = []  # (section id, slice type)
        self._section = ""
        self.summary = ""
        self._field: str | None = None
        self._in_timeline = False
        self.details_open: list[bool] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = {key: value or "" for key, value in attrs}
        classes = attributes.get("class", "").split()
        if tag == "details":
            self.details_open.append("open" in attributes)
        if tag == "section":
            self._section = attributes.get("id", "")
        elif tag in ("details", "p") and "slice" in classes:
            self.slices.append((self._section, attributes["data-type"]))
        elif tag == "ol" and "timeline" in classes:
            self._in_timeline = True
        elif tag == "li" and "call" in classes:
            self.calls.append({"id": attributes["id"], "data-outcome": attributes["data-outcome"]})
        elif tag == "p" and "summary" in classes:
            self._field = "summary"
        elif self._in_timeline and tag in ("span", "pre") and classes:
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
    assert parser.summary == "6 tool calls: 1 ok, 5 failed (1 denied, 2 rolled back) over 55.0 ms"
    assert parser.calls == [
        {
            "id": "call-1",
            "data-outcome": "ok",
            "tool": "add_note",
            "outcome": "ok",
            "call-id": "c1",
            "timing": "+0.0 ms · took 5.0 ms",
            "excerpt": 'Noted. {"text":"first <b>bold</b>"}',
            "arguments": '{\n  "text": "first <b>bold</b>"\n}',
            "result": 'Noted.\n\n{"text":"first <b>bold</b>"}',
        },
        {
            "id": "call-2",
            "data-outcome": "denied",
            "tool": "add_note",
            "outcome": "denied",
            "call-id": "c2",
            "timing": "+10.0 ms · took 5.0 ms",
            "excerpt": "Secrets stay out of notes.",
            "arguments": '{\n  "text": "the secret"\n}',
            "result": "Secrets stay out of notes.",
        },
        {
            "id": "call-3",
            "data-outcome": "raised",
            "tool": "add_note",
            "outcome": "raised",
            "rolled-back": "rolled back",
            "call-id": "c3",
            "timing": "+20.0 ms · took 5.0 ms",
            "excerpt": "Tool 'add_note' raised ValueError: no booms",
            "arguments": '{\n  "text": "boom"\n}',
            "result": "Tool 'add_note' raised ValueError: no booms",
        },
        {
            "id": "call-4",
            "data-outcome": "failed",
            "tool": "add_note",
            "outcome": "failed",
            "rolled-back": "rolled back",
            "call-id": "c4",
            "timing": "+30.0 ms · took 5.0 ms",
            "excerpt": "Notes may not be empty.",
            "arguments": '{\n  "text": ""\n}',
            "result": "Notes may not be empty.",
        },
        {
            "id": "call-5",
            "data-outcome": "invalid arguments",
            "tool": "add_note",
            "outcome": "invalid arguments",
            "call-id": "c5",
            "timing": "+40.0 ms · took 5.0 ms",
            # Cut at 90 characters, the last one the ellipsis.
            "excerpt": "Invalid arguments for tool 'add_note': text: required field is missing "
            "txt: unknown field…",
            "arguments": '{\n  "txt": "typo"\n}',
            "result": "Invalid arguments for tool 'add_note':\n"
            "text: required field is missing\ntxt: unknown field (allowed: text)",
        },
        {
            "id": "call-6",
            "data-outcome": "unknown tool",
            "tool": "remove_note",
            "outcome": "unknown tool",
            "call-id": "c6",
            "timing": "+50.0 ms · took 5.0 ms",
            "excerpt": "Unknown tool 'remove_note'. Available tools: add_note.",
            "arguments": "{}",
            "result": "Unknown tool 'remove_note'. Available tools: add_note.",
        },
    ]
    # One closed <details> per call and per slice: the page opens on its summaries.
    assert parser.details_open == [False] * 8
    assert parser.slices == [
        ("state", f"{Note.__module__}:Note"),
        ("events", f"{Reviewed.__module__}:Reviewed"),
    ]
    assert '<pre>[\n  {\n    "text": "first &lt;b&gt;bold&lt;/b&gt;"\n  }\n]</pre>' in dumped.stdout


# --- denials, rollbacks, evaluations and turns -------------------------------------------


def test_the_executor_records_which_calls_were_denied_and_which_rolled_back() -> None:
    marks = [
        (event.call_id, event.success, event.denied, event.rolled_back)
        for event in recorded_session()[ToolInvoked].all()
    ]
    assert marks == [
        ("c1", True, False, False),
        ("c2", False, True, False),  # the policy refused: the handler never ran
        ("c3", False, False, True),  # the handler raised
        ("c4", False, False, True),  # the handler returned an error
        ("c5", False, False, False),  # invalid arguments: nothing had started
        ("c6", False, False, False),  # unknown tool
    ]


@dataclass(frozen=True)
class Unsure:
    name: str = "unsure"

    def check(self, tool: Any, params: Any, *, context: ToolContext) -> PolicyDecision:
        if params.text == "ask":
            raise RuntimeError("cannot decide")
        return PolicyDecision.allow()

    def on_result(self, tool: Any, params: Any, result: Any, *, context: ToolContext) -> None:
        pass


@tool
def interrupted_note(params: NoteParams, *, context: ToolContext) -> ToolResult[Note]:
    """Save a note, or be interrupted."""
    context.require_filesystem().write("notes.md", params.text)
    raise KeyboardInterrupt


def test_a_failing_policy_is_a_denial_and_an_interrupted_handler_a_rollback() -> None:
    template = PromptTemplate(
        ns="tests",
        key="marks",
        sections=[MarkdownSection(title="Notes", tools=[interrupted_note], policies=[Unsure()])],
    )
    files = InMemoryFilesystem(files={"notes.md": "kept"})
    session = Session()
    executor = ToolExecutor(
        prompt=Prompt(template).bind(resources={InMemoryFilesystem: files}), session=session
    )
    asked = executor.execute(ToolCall("interrupted_note", '{"text": "ask"}', call_id="p"))
    assert asked.message == (
        "Policy 'unsure' failed on tool 'interrupted_note': RuntimeError: cannot decide"
    )
    with pytest.raises(KeyboardInterrupt):
        executor.execute(ToolCall("interrupted_note", '{"text": "stop"}', call_id="k"))
    assert files.read("notes.md") == "kept"
    assert [(e.call_id, e.denied, e.rolled_back) for e in session[ToolInvoked].all()] == [
        ("p", True, False),
        ("k", False, True),
    ]


def test_a_snapshot_saved_without_the_marks_reads_outcomes_from_the_messages() -> None:
    document = json.loads(recorded_session().snapshot().to_json())
    [calls] = [entry for entry in document["slices"] if entry["type"] == TOOL_INVOKED]
    for item in calls["items"]:
        del item["denied"], item["rolled_back"]
    page = render_snapshot_document(document)
    outcomes = [(match[0], match[1]) for match in OUTCOME.findall(page)]
    assert outcomes == [
        ("call-1", "ok"),
        ("call-2", "denied or failed"),  # a policy's reason reads like the tool's error
        ("call-3", "raised"),
        ("call-4", "denied or failed"),
        ("call-5", "invalid arguments"),
        ("call-6", "unknown tool"),
    ]
    assert '<p class="summary">6 tool calls: 1 ok, 5 failed (0 denied, 3 rolled back)' in page


OUTCOME = re.compile(
    r'<li class="call[^"]*" id="(call-\d+)" data-tool="[^"]*" data-outcome="([^"]*)"'
)
T0 = datetime(2025, 1, 1, 12, tzinfo=UTC)


def at(milliseconds: float) -> str:
    return (T0 + timedelta(milliseconds=milliseconds)).isoformat().replace("+00:00", "Z")


def invoked(call_id: str, prompt: str, start: float, end: float, **result: Any) -> dict[str, Any]:
    return {
        "prompt_name": prompt,
        "name": "add_note",
        "call_id": call_id,
        "params": None,
        "arguments": "{}",
        "result": {"message": "Noted.", "value": None, "success": True, **result},
        "rendered_output": "",
        "started_at": at(start),
        "finished_at": at(end),
        "denied": False,
        "rolled_back": not result.get("success", True),
    }


def exchange(requested: float, replied: float, calls: list[str]) -> dict[str, Any]:
    return {
        "requested_at": at(requested),
        "replied_at": at(replied),
        "usage": {"input_tokens": 10, "output_tokens": 2},
        "tool_calls": calls,
    }


def executed(prompt: str, start: float, end: float, exchanges: list[Any], **rest: Any) -> Any:
    return {
        "prompt_name": prompt,
        "adapter": "script",
        "text": "Done.",
        "output": None,
        "turns": len(exchanges),
        "tool_calls": 0,
        "usage": {"input_tokens": 10 * len(exchanges), "output_tokens": 2 * len(exchanges)},
        "started_at": at(start),
        "finished_at": at(end),
        "error": None,
        "phase": None,
        "exchanges": exchanges,
        **rest,
    }


def evaluated_document() -> dict[str, Any]:
    """An outer evaluation whose first call delegates to an inner one that fails, then a
    second turn with two calls; and a call run outside any evaluation."""
    outer = executed(
        "notes",
        0,
        100,
        [
            exchange(1, 5, ["add_note"]),
            exchange(50, 60, ["add_note", "add_note"]),
            exchange(80, 90, []),
        ],
    )
    inner = executed(
        "helper",
        10,
        40,
        [exchange(12, 15, ["add_note"])],
        text=None,
        error="PromptEvaluationError: prompt 'helper': max_turns=1 reached",
        phase="max_turns",
    )
    rendered = {
        "prompt_name": "notes",
        "adapter": "script",
        "text": "## Notes\n\nKeep notes.",
        "tool_names": ["add_note"],
        "rendered_at": at(0.5),
    }
    calls = [
        invoked("inner-1", "helper", 16, 20),
        invoked("outer-1", "notes", 6, 45),
        invoked("outer-2", "notes", 61, 63, success=False, message="Notes may not be empty."),
        invoked("outer-3", "notes", 64, 66),
        invoked("direct", "notes", 200, 201),
    ]
    return {
        "version": 1,
        "slices": [
            {"type": "wink.adapters.events:PromptRendered", "kind": "log", "items": [rendered]},
            {"type": TOOL_INVOKED, "kind": "log", "items": calls},
            {"type": "wink.adapters.events:PromptExecuted", "kind": "log", "items": [inner, outer]},
        ],
    }


def test_calls_are_grouped_into_the_evaluations_and_turns_they_answered() -> None:
    page = render_snapshot_document(evaluated_document())
    assert (
        '<p class="summary">5 tool calls: 4 ok, 1 failed (0 denied, 1 rolled back) over '
        "201.0 ms</p>" in page
    )
    assert (
        '<p class="summary evaluations">2 evaluations (1 failed), 4 turns, '
        "40 input and 8 output tokens</p>"
    ) in page
    assert re.findall(
        r'<article class="([^"]*)" id="(evaluation-\d)" data-prompt="(\w+)"', page
    ) == [
        ("evaluation", "evaluation-1", "notes"),
        ("evaluation failed", "evaluation-2", "helper"),
    ]
    assert (
        '<article class="evaluation" id="evaluation-1" data-prompt="notes" data-outcome="ok">'
        '<div class="head"><span class="prompt-name">notes</span> '
        '<span class="adapter">script</span> <span class="outcome">ok</span> '
        '<span class="timing">+0.0 ms · took 100.0 ms</span> '
        '<span class="usage">30 in · 6 out tokens</span></div>'
        '<details class="prompt"><summary class="head"><span class="label-name">prompt</span> '
        '<span class="excerpt">## Notes Keep notes.</span></summary>'
        "<pre>## Notes\n\nKeep notes.</pre></details>"
    ) in page
    assert (
        '<div class="head"><span class="prompt-name">helper</span> '
        '<span class="adapter">script</span> <span class="outcome">failed (max_turns)</span> '
        '<span class="timing">+10.0 ms · took 30.0 ms</span> '
        '<span class="usage">10 in · 2 out tokens</span> '
        '<span class="delegated">from call-2</span></div>'
        '<p class="error">PromptEvaluationError: prompt &#x27;helper&#x27;: max_turns=1 reached</p>'
    ) in page
    turn = r'<li class="turn" id="(evaluation-\d-turn-\d)" data-turn="\d">'
    turns = re.findall(turn + r'(.*?)</li>(?=<li class="turn"|</ol>)', page, re.S)
    placed = {turn: re.findall(r'id="(call-\d)"', body) for turn, body in turns}
    assert placed == {
        "evaluation-1-turn-1": ["call-2"],
        "evaluation-1-turn-2": ["call-3", "call-4"],
        "evaluation-1-turn-3": [],
        "evaluation-2-turn-1": ["call-1"],
    }
    assert (
        '<li class="turn" id="evaluation-1-turn-2" data-turn="2"><div class="head">'
        '<span class="turn-label">turn 2</span> '
        '<span class="timing">+50.0 ms · model took 10.0 ms</span> '
        '<span class="usage">10 in · 2 out tokens</span> '
        '<span class="called">called add_note, add_note</span></div>'
    ) in page
    assert '<span class="called">answered</span>' in page
    outside = page[page.index('<section id="calls">') : page.index('<section id="state">')]
    assert "<h2>Tool calls outside an evaluation</h2>" in outside
    assert re.findall(r'id="(call-\d)"', outside) == ["call-5"]
    assert "PromptExecuted" not in page[page.index('<section id="events">') :]


def test_a_session_of_evaluations_only_has_no_section_of_loose_calls() -> None:
    document = evaluated_document()
    document["slices"][1]["items"].pop()
    page = render_snapshot_document(document)
    assert '<section id="calls">' not in page
    assert page.count('<li class="call') == 4


class _Evaluations(HTMLParser):
    """Per evaluation of a DOM: its attributes, head texts, and its turns' calls."""

    def __init__(self) -> None:
        super().__init__()
        self.evaluations: list[dict[str, Any]] = []
        self._field: str | None = None
        self._head = False
        self._in_call = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = {key: value or "" for key, value in attrs}
        classes = attributes.get("class", "").split()
        if tag == "article" and "evaluation" in classes:
            self.evaluations.append(
                {"id": attributes["id"], "outcome": attributes["data-outcome"], "turns": []}
            )
        elif tag == "span" and "outcome" in classes and self._head and not self._in_call:
            self._field = "outcome-text"
        elif tag == "li" and "turn" in classes:
            self.evaluations[-1]["turns"].append({"calls": []})
        elif tag == "li" and "call" in classes and self.evaluations:
            turn = self.evaluations[-1]["turns"][-1]
            turn["calls"].append((attributes["id"], attributes["data-outcome"]))
            self._in_call = True
        elif tag == "div" and "head" in classes:
            self._head = True
        elif self._head and tag == "span" and classes and self.evaluations:
            self._field = classes[0]

    def handle_endtag(self, tag: str) -> None:
        self._field = None
        if tag == "div":
            self._head = False
        elif tag == "li":
            self._in_call = False

    def handle_data(self, data: str) -> None:
        # Calls' heads are checked by the timeline test; timings vary from run to run.
        if self._field is None or self._field == "timing" or self._in_call:
            return
        evaluation = self.evaluations[-1]
        target = evaluation["turns"][-1] if evaluation["turns"] else evaluation
        target[self._field] = target.get(self._field, "") + data


def test_the_page_shows_each_evaluation_and_its_turns_in_chromium(
    chromium: str, tmp_path: Path
) -> None:
    from adapter_prompts import notes_template, parent_template

    from wink import PromptEvaluationError, TokenUsage
    from wink.testing import ScriptedAdapter, call

    session = Session()
    ScriptedAdapter(
        [
            call("delegate", {"task": "tag"}, "outer"),
            call("tag", {"tag": "food"}, "inner"),
            "tagged food",
            "all done",
        ],
        usage=TokenUsage(input_tokens=10, output_tokens=2),
    ).evaluate(Prompt(parent_template), session=session)
    with pytest.raises(PromptEvaluationError):
        ScriptedAdapter(
            [[call("search", {"query": "e"}, "s1"), call("get_note", {"id": 7}, "s2")]]
        ).evaluate(Prompt(notes_template), session=session, max_turns=1)
    saved = tmp_path / "session.json"
    saved.write_text(session.snapshot().to_json())
    page = tmp_path / "trace.html"
    assert main(["trace", str(saved), "--html", str(page)]) == 0
    dumped = subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    parser = _Evaluations()
    parser.feed(dumped.stdout)
    assert parser.evaluations == [
        {
            "id": "evaluation-1",
            "outcome": "ok",
            "prompt-name": "parent",
            "outcome-text": "ok",
            "adapter": "script",
            "usage": "20 in · 4 out tokens",
            "turns": [
                {
                    "calls": [("call-2", "ok")],
                    "turn-label": "turn 1",
                    "usage": "10 in · 2 out tokens",
                    "called": "called delegate",
                },
                {
                    "calls": [],
                    "turn-label": "turn 2",
                    "usage": "10 in · 2 out tokens",
                    "called": "answered",
                },
            ],
        },
        {
            "id": "evaluation-2",
            "outcome": "ok",
            "prompt-name": "tagger",
            "outcome-text": "ok",
            "adapter": "script",
            "usage": "20 in · 4 out tokens",
            "delegated": "from call-2",
            "turns": [
                {
                    "calls": [("call-1", "ok")],
                    "turn-label": "turn 1",
                    "usage": "10 in · 2 out tokens",
                    "called": "called tag",
                },
                {
                    "calls": [],
                    "turn-label": "turn 2",
                    "usage": "10 in · 2 out tokens",
                    "called": "answered",
                },
            ],
        },
        {
            "id": "evaluation-3",
            "outcome": "failed",
            "prompt-name": "notes",
            "outcome-text": "failed (max_turns)",
            "adapter": "script",
            "usage": "0 in · 0 out tokens",
            "turns": [
                {
                    "calls": [("call-3", "ok"), ("call-4", "failed")],
                    "turn-label": "turn 1",
                    "usage": "0 in · 0 out tokens",
                    "called": "called search, get_note",
                }
            ],
        },
    ]


def test_an_evaluation_saved_without_its_turns_still_holds_its_calls() -> None:
    document = evaluated_document()
    for record in document["slices"][2]["items"]:
        del record["exchanges"]
    page = render_snapshot_document(document)
    evaluations = [
        article.split("</article>")[0] for article in page.split('<article class="evaluation')[1:]
    ]
    assert [re.findall(r'id="(call-\d)"', article) for article in evaluations] == [
        ["call-2", "call-3", "call-4"],
        ["call-1"],
    ]
    assert [article.count('<li class="turn"') for article in evaluations] == [0, 0]
    assert "0 turns" in page


# --- state over time ----------------------------------------------------------------------


def test_a_session_without_history_says_what_the_page_shows_and_how_to_keep_it() -> None:
    page = recorded_session().to_html()
    assert (
        '<section id="state"><h2>State at the end</h2>\n'
        '<p class="note">This session kept no history, so each slice shows only its final '
        "values. Create it with Session(keep_history=True) to see every version of each "
        'slice, with the tool call that made it.</p>\n<div class="slices">'
    ) in page
    assert '<section id="history">' not in page


@dataclass(frozen=True)
class Nothing:
    pass


@tool
def sabotage(params: Nothing, *, context: ToolContext) -> ToolResult[None]:
    """Add a step to the plan, then fail."""
    from wink.contrib.planning import AddStep

    context.session.dispatch(AddStep(steps=("never kept",)))
    raise RuntimeError("sabotaged")


def planned_session() -> Session:
    from wink.contrib.planning import PlanningToolsSection
    from wink.testing import ScriptedAdapter, call

    session = Session(keep_history=True)
    template = PromptTemplate(
        ns="tests",
        key="plan",
        sections=[
            PlanningToolsSection(),
            MarkdownSection(title="Mischief", key="mischief", template="No.", tools=[sabotage]),
        ],
    )
    ScriptedAdapter(
        [
            call("planning_setup_plan", {"objective": "Ship", "initial_steps": ["build"]}, "p1"),
            call("planning_add_step", {"steps": ["test"]}, "p2"),
            call("sabotage", {}, "p3"),
            call("planning_update_step", {"step_id": 1, "status": "done"}, "p4"),
            "shipped",
        ]
    ).evaluate(Prompt(template), session=session)
    return session


class _Versions(HTMLParser):
    """Per slice history of a DOM: its type, and each version's attributes and head texts."""

    def __init__(self) -> None:
        super().__init__()
        self.histories: list[dict[str, Any]] = []
        self._field: str | None = None
        self._section = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = {key: value or "" for key, value in attrs}
        classes = attributes.get("class", "").split()
        if tag == "section":
            self._section = attributes.get("id", "")
        if self._section != "history":
            return
        if tag == "div" and "slice-history" in classes:
            self.histories.append({"type": attributes["data-type"], "versions": []})
        elif tag == "li" and "version" in classes:
            version = {"class": attributes["class"], "data-call": attributes.get("data-call", "")}
            self.histories[-1]["versions"].append(version)
        elif tag == "span" and classes and self.histories and self.histories[-1]["versions"]:
            self._field = classes[0]
        elif tag == "pre" and self.histories and self.histories[-1]["versions"]:
            self._field = "values"

    def handle_endtag(self, tag: str) -> None:
        self._field = None

    def handle_data(self, data: str) -> None:
        # Timings vary from run to run; excerpts are checked apart.
        if self._field is None or self._field in ("timing", "excerpt"):
            return
        version = self.histories[-1]["versions"][-1]
        version[self._field] = version.get(self._field, "") + data


def plan(*steps: tuple[int, str, str], next_id: int) -> str:
    shown = [{"step_id": i, "title": title, "status": status} for i, title, status in steps]
    value = {"objective": "Ship", "status": "active", "steps": shown, "next_step_id": next_id}
    return json.dumps([value], indent=2)


def test_the_page_shows_the_plans_versions_over_time_in_chromium(
    chromium: str, tmp_path: Path
) -> None:
    saved = tmp_path / "session.json"
    saved.write_text(planned_session().snapshot().to_json())
    page = tmp_path / "trace.html"
    assert main(["trace", str(saved), "--html", str(page)]) == 0
    dumped = subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert '<section id="history"><h2>State over time</h2>' in dumped.stdout
    assert '<p class="note">' not in dumped.stdout
    parser = _Versions()
    parser.feed(dumped.stdout)
    one = (1, "build", "pending")
    two = (2, "test", "pending")
    assert parser.histories == [
        {
            "type": "wink.contrib.planning:Plan",
            "versions": [
                {
                    "class": "version",
                    "data-call": "call-1",
                    "version-label": "version 1",
                    "cause": "result value",
                    "made-by": "by call-1 planning_setup_plan (p1), in evaluation 1, turn 1",
                    "values": plan(one, next_id=2),
                },
                {
                    "class": "version",
                    "data-call": "call-2",
                    "version-label": "version 2",
                    "cause": "result value",
                    "made-by": "by call-2 planning_add_step (p2), in evaluation 1, turn 2",
                    "values": plan(one, two, next_id=3),
                },
                {
                    "class": "version undone",
                    "data-call": "call-3",
                    "version-label": "version 3",
                    "cause": "AddStep",
                    "made-by": "during call-3 sabotage (p3), in evaluation 1, turn 3",
                    "rolled-back": "rolled back",
                    "values": plan(one, two, (3, "never kept", "pending"), next_id=4),
                },
                {
                    "class": "version restore",
                    "data-call": "call-3",
                    "version-label": "version 4",
                    "cause": "restored",
                    "made-by": "during call-3 sabotage (p3), in evaluation 1, turn 3",
                    "values": plan(one, two, next_id=3),
                },
                {
                    "class": "version",
                    "data-call": "call-4",
                    "version-label": "version 5",
                    "cause": "result value",
                    "made-by": "by call-4 planning_update_step (p4), in evaluation 1, turn 4",
                    "values": plan((1, "build", "done"), two, next_id=3),
                },
            ],
        }
    ]


# --- a page that opens on its summaries ---------------------------------------------------


def test_every_entry_is_closed_under_a_one_line_summary() -> None:
    page = recorded_session().to_html()
    assert page.count("<details") == 8  # six calls, the Note slice, the Reviewed log
    assert " open" not in page
    assert (
        '<li class="call" id="call-1" data-tool="add_note" data-outcome="ok"><details>'
        '<summary class="head"><span class="tool">add_note</span> '
        '<span class="outcome">ok</span> <span class="call-id">c1</span> '
        '<span class="timing">+0.0 ms · took 5.0 ms</span> '
        '<span class="excerpt">Noted. {&quot;text&quot;:&quot;first &lt;b&gt;bold&lt;/b&gt;'
        "&quot;}</span></summary>"
        '<p class="label">arguments</p><pre class="arguments">{\n  &quot;text&quot;: '
        "&quot;first &lt;b&gt;bold&lt;/b&gt;&quot;\n}</pre>"
        '<p class="label">result</p><pre class="result">Noted.\n\n{&quot;text&quot;:'
        "&quot;first &lt;b&gt;bold&lt;/b&gt;&quot;}</pre></details></li>"
    ) in page
    assert (
        '<details class="slice" data-type="test_trace_html:Note"><summary class="head">'
        '<span class="slice-name">Note</span> <span class="timing">1 item</span> '
        '<span class="excerpt">[{&quot;text&quot;: &quot;first &lt;b&gt;bold&lt;/b&gt;'
        "&quot;}]</span></summary>"
    ) in page


def test_a_call_shows_its_result_once_as_the_model_read_it() -> None:
    page = recorded_session().to_html()
    assert re.findall(r'<pre class="result">(.*?)</pre>', page, re.S)[:2] == [
        "Noted.\n\n{&quot;text&quot;:&quot;first &lt;b&gt;bold&lt;/b&gt;&quot;}",
        "Secrets stay out of notes.",
    ]
    assert 'class="message"' not in page and 'class="value"' not in page
    # As the model read it (compact JSON): in the summary's excerpt and the result only.
    assert page.count("{&quot;text&quot;:&quot;first") == 2


def test_a_value_kept_from_the_model_is_left_out_of_its_result() -> None:
    call = invoked("hidden", "notes", 0, 1, value=42, exclude_value_from_context=True)
    call["rendered_output"] = "42"
    shown = invoked("shown", "notes", 2, 3, value=42, message="")
    shown["rendered_output"] = "42"
    document = {
        "version": 1,
        "slices": [{"type": TOOL_INVOKED, "kind": "log", "items": [call, shown]}],
    }
    page = render_snapshot_document(document)
    assert re.findall(r'<pre class="result">(.*?)</pre>', page) == ["Noted.", "42"]


def test_an_excerpt_is_one_line_cut_to_ninety_characters() -> None:
    call = invoked("long", "notes", 0, 1, message="line one\n\n  line   two " + "x" * 100)
    document = {"version": 1, "slices": [{"type": TOOL_INVOKED, "kind": "log", "items": [call]}]}
    [excerpt] = re.findall(
        r'<span class="excerpt">(.*?)</span>', render_snapshot_document(document)
    )
    assert excerpt == "line one line two " + "x" * 71 + "…"
    assert len(excerpt) == 90


def test_a_slice_that_ended_as_its_last_version_is_not_shown_twice() -> None:
    page = planned_session().to_html()
    assert (
        '<p class="slice" data-type="wink.contrib.planning:Plan"><span class="slice-name">Plan'
        '</span> <span class="timing">1 item</span> '
        '<span class="note">as version 5 above</span></p>'
    ) in page
    assert page.count("&quot;next_step_id&quot;: 3") == 3  # versions 2, 4 and 5 only


def test_a_slice_that_changed_after_its_last_version_shows_its_end() -> None:
    document = json.loads(planned_session().snapshot().to_json())
    [plan_slice] = [entry for entry in document["slices"] if entry["kind"] == "state"]
    plan_slice["items"][0]["objective"] = "Changed"
    page = render_snapshot_document(document)
    state = page[page.index('<section id="state">') : page.index('<section id="events">')]
    assert '<details class="slice" data-type="wink.contrib.planning:Plan">' in state
    assert "as version" not in state
    assert "&quot;objective&quot;: &quot;Changed&quot;" in state


# --- wink's own slices ----------------------------------------------------------------------


def release_session() -> Session:
    """Seven calls under a policy that keeps its PolicyState, with history."""
    from wink import SequentialDependencyPolicy
    from wink.contrib.planning import PlanningToolsSection
    from wink.testing import ScriptedAdapter, call

    after_setup = frozenset({"planning_setup_plan"})
    template = PromptTemplate(
        ns="tests",
        key="release",
        sections=[PlanningToolsSection()],
        policies=[
            SequentialDependencyPolicy(
                dependencies={"planning_add_step": after_setup, "planning_update_step": after_setup}
            )
        ],
    )
    session = Session(keep_history=True)
    ScriptedAdapter(
        [
            call("planning_add_step", {"steps": ["too early"]}, "r1"),
            call("planning_setup_plan", {"objective": "Release", "initial_steps": ["build"]}, "r2"),
            call("planning_add_step", {"steps": ["test", "tag"]}, "r3"),
            call("planning_update_step", {"step_id": 1, "status": "done"}, "r4"),
            call("planning_update_step", {"step_id": 2, "status": "done"}, "r5"),
            call("planning_update_step", {"step_id": 9, "status": "done"}, "r6"),
            call("planning_read_plan", {}, "r7"),
            "released",
        ]
    ).evaluate(Prompt(template), session=session)
    return session


SLICE_TYPES = re.compile(
    r'<(?:div class="slice-history"|details class="slice"|p class="slice") '
    r'data-type="([^"]*)"'
)


def test_wink_own_slices_are_left_out_and_named() -> None:
    page = release_session().to_html()
    assert SLICE_TYPES.findall(page) == ["wink.contrib.planning:Plan"] * 2
    assert "PolicyState" not in page.replace(
        '<p class="note hidden-slices">Not shown: wink&#x27;s own slices (PolicyState). '
        "wink trace --internal-slices or to_html(internal_slices=True) shows them.</p>",
        "",
        1,
    )


def test_internal_slices_shows_wink_own_slices_and_their_versions() -> None:
    page = release_session().to_html(internal_slices=True)
    assert SLICE_TYPES.findall(page) == [
        "wink.policy.state:PolicyState",  # in the history
        "wink.contrib.planning:Plan",
        "wink.policy.state:PolicyState",  # at the end
        "wink.contrib.planning:Plan",
    ]
    assert "hidden-slices" not in page
    assert page.count('<li class="version') == 9


def test_wink_trace_internal_slices_flag_shows_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = release_session()
    saved = tmp_path / "session.json"
    saved.write_text(session.snapshot().to_json())
    assert main(["trace", str(saved), "--internal-slices"]) == 0
    assert capsys.readouterr().out == session.to_html(title="session.json", internal_slices=True)
    assert main(["trace", str(saved)]) == 0
    assert capsys.readouterr().out == session.to_html(title="session.json")


@pytest.mark.parametrize(
    ("type_name", "internal"),
    [
        ("wink.policy.state:PolicyState", True),
        ("wink:PolicyState", True),
        ("wink.runtime.events:ToolInvoked", True),
        ("wink.contrib.planning:Plan", False),
        ("winkle.models:Plan", False),
        ("myapp.wink.state:Plan", False),
    ],
)
def test_a_slice_is_internal_when_wink_outside_contrib_defines_it(
    type_name: str, internal: bool
) -> None:
    assert is_internal_slice(type_name) is internal


# --- the file's mode ------------------------------------------------------------------------


@pytest.fixture
def umask() -> Iterator[Callable[[int], int]]:
    """Sets the process umask for one test and puts the earlier one back."""
    earlier = os.umask(0o022)
    yield os.umask
    os.umask(earlier)


@pytest.mark.parametrize(("mask", "mode"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_a_new_page_gets_the_mode_the_umask_leaves(
    tmp_path: Path, umask: Callable[[int], int], mask: int, mode: int
) -> None:
    saved = tmp_path / "session.json"
    saved.write_text(recorded_session().snapshot().to_json())
    umask(mask)
    out = tmp_path / "out.html"
    assert main(["trace", str(saved), "--html", str(out)]) == 0
    assert stat.S_IMODE(out.stat().st_mode) == mode


def test_a_page_written_over_a_file_keeps_that_files_mode(
    tmp_path: Path, umask: Callable[[int], int]
) -> None:
    saved = tmp_path / "session.json"
    saved.write_text(recorded_session().snapshot().to_json())
    out = tmp_path / "out.html"
    out.write_text("earlier page")
    out.chmod(0o640)
    assert main(["trace", str(saved), "--html", str(out)]) == 0
    assert stat.S_IMODE(out.stat().st_mode) == 0o640
    assert out.read_text().startswith("<!DOCTYPE html>")


# --- the collapsed page in a browser --------------------------------------------------------

_MEASURE = (
    # Added to a copy of the page for the test only: the page itself has no scripts.
    "<script>"
    "const body = document.body;"
    "body.dataset.collapsed = document.documentElement.scrollHeight;"
    "body.dataset.summaryHeights = [...new Set([...document.querySelectorAll("
    "'li.call summary')].map(s => s.getBoundingClientRect().height))].length;"
    "for (const d of document.querySelectorAll('details')) d.open = true;"
    "body.dataset.expanded = document.documentElement.scrollHeight;"
    "for (const d of document.querySelectorAll('details')) d.open = false;"
    "</script>"
)


def test_seven_calls_fit_on_one_screen_until_opened_in_chromium(
    chromium: str, tmp_path: Path
) -> None:
    saved = tmp_path / "session.json"
    saved.write_text(release_session().snapshot().to_json())
    page = tmp_path / "trace.html"
    assert main(["trace", str(saved), "--html", str(page)]) == 0
    window = ["--headless", "--no-sandbox", "--disable-gpu", "--window-size=1280,1600"]
    screenshot = tmp_path / "collapsed.png"
    subprocess.run(
        [chromium, *window, "--hide-scrollbars", f"--screenshot={screenshot}", page.as_uri()],
        capture_output=True,
        timeout=120,
        check=True,
    )
    png = screenshot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", png[16:24]) == (1280, 1600)
    measured = tmp_path / "measured.html"
    measured.write_text(page.read_text().replace("</body>", _MEASURE + "</body>"))
    dumped = subprocess.run(
        [chromium, *window, "--dump-dom", measured.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    parser = _Calls()
    parser.feed(dumped.stdout)
    # Seven calls, the prompt, the answer, five Plan versions: all closed.
    assert parser.details_open == [False] * 14
    assert [call["tool"] for call in parser.calls] == [
        "planning_add_step",
        "planning_setup_plan",
        "planning_add_step",
        "planning_update_step",
        "planning_update_step",
        "planning_update_step",
        "planning_read_plan",
    ]
    [(collapsed, lines, expanded)] = re.findall(
        r'data-collapsed="(\d+)" data-summary-heights="(\d+)" data-expanded="(\d+)"',
        dumped.stdout,
    )
    assert lines == "1"  # every call's summary is as tall as the others: one line
    # The whole collapsed page fits in the 1600 px screenshot; opened, it is far longer.
    assert int(collapsed) < 1600
    assert int(expanded) > 3 * int(collapsed)
