"""docs/cli.md's lines turn a saved session into a calls file that ``wink validate`` checks."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

from wink import InMemoryFilesystem, Prompt, Session, ToolCall, ToolExecutor
from wink.cli import main

ROOT = Path(__file__).parent.parent
NOTES_AGENT = ROOT / "examples" / "notes_agent.py"
[SNIPPET] = [
    block
    for block in re.findall(r"```python\n(.*?)```", (ROOT / "docs" / "cli.md").read_text(), re.S)
    if 'saved["slices"]' in block
]


def test_calls_written_from_a_saved_session_as_the_docs_show_are_validated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = importlib.util.spec_from_file_location("notes_agent_saved_session", NOTES_AGENT)
    assert spec is not None and spec.loader is not None
    notes_agent = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, notes_agent)
    spec.loader.exec_module(notes_agent)
    files = InMemoryFilesystem(files={"todo.md": "bread"})
    prompt = Prompt(notes_agent.template).bind(resources={InMemoryFilesystem: files})
    session = Session()
    executor = ToolExecutor(prompt=prompt, session=session)
    for call in [
        ToolCall("read_file", '{"path": "todo.md"}', "c1"),
        ToolCall("write_file", '{"path": "todo.md", "txt": "oops"}', "c2"),
        ToolCall("delete_file", "{}", "c3"),
        ToolCall("read_file", b'{"path": "\xff"}', "c4"),  # saved escaped, read back as bytes
    ]:
        executor.execute(call)
    monkeypatch.chdir(tmp_path)
    Path("session.json").write_text(session.snapshot().to_json())

    exec(compile(SNIPPET, "docs/cli.md (saved session to calls)", "exec"), {})
    status = main(["validate", f"{NOTES_AGENT}:template", "calls.jsonl"])

    captured = capsys.readouterr()
    assert status == 1
    assert captured.err.splitlines() == [
        "calls.jsonl:2: write_file: text: required field is missing",
        "calls.jsonl:2: write_file: txt: unknown field (allowed: path, text, append)",
        "calls.jsonl:3: delete_file: unknown tool (known: read_file, write_file)",
        "calls.jsonl:4: read_file: path: string is not valid UTF-8 text",
    ]
    assert captured.out == (
        "checked 4 tool calls in 1 file: 2 invalid, 1 unknown tool, 0 malformed lines\n"
    )
