"""The ``wink`` command on hostile input: bounded memory, one line per problem, no traceback."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
import tracemalloc
from datetime import UTC, datetime
from pathlib import Path

import pytest

from wink import ToolResult
from wink.cli import main
from wink.cli.targets import load_target, tools_of
from wink.cli.validate import CallChecker, validate_lines
from wink.runtime import Session, ToolInvoked

SHOP = Path(__file__).parent / "test_cli_fixtures" / "shop.py"
TOOLS = f"{SHOP}:tools"
VALID = b'{"name": "search", "arguments": {"query": "tea"}}\n'
INVALID = b'{"name": "search", "arguments": {}}\n'


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("WINK_PROVIDER", "WINK_STRICT", "WINK_SCHEMA_DIR", "WINK_TARGETS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("WINK_MAX_LINE_BYTES", raising=False)


def calls_file(tmp_path: Path, content: bytes) -> str:
    path = tmp_path / "calls.jsonl"
    path.write_bytes(content)
    return str(path)


# Long lines


def test_a_line_longer_than_the_limit_is_reported_and_the_next_lines_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = calls_file(tmp_path, VALID + b"[" * 5000 + b"\n" + INVALID)
    assert main(["validate", TOOLS, calls, "--max-line-bytes", "1000"]) == 1
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [
        f"{calls}:2: malformed line: longer than 1000 bytes (--max-line-bytes); skipped",
        f"{calls}:3: search: query: required field is missing",
    ]
    assert captured.out == (
        "checked 2 tool calls in 1 file: 1 invalid, 0 unknown tools, 1 malformed line\n"
    )


def test_a_line_of_exactly_the_limit_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = calls_file(tmp_path, VALID)
    assert main(["validate", TOOLS, calls, "--max-line-bytes", str(len(VALID) - 1)]) == 0
    assert main(["validate", TOOLS, calls, "--max-line-bytes", str(len(VALID) - 2)]) == 1


def test_the_line_limit_comes_from_the_settings_when_not_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WINK_MAX_LINE_BYTES", "10")
    calls = calls_file(tmp_path, VALID)
    assert main(["validate", TOOLS, calls]) == 1
    assert capsys.readouterr().err == (
        f"{calls}:1: malformed line: longer than 10 bytes (--max-line-bytes); skipped\n"
    )


class Zeros(io.RawIOBase):
    """A line of ``size`` zero bytes, then one valid call, made up as they are read."""

    def __init__(self, size: int) -> None:
        self.left = size
        self.tail = b"\n" + VALID

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]  # bytes buffer
        if self.left > 0:
            count = min(len(buffer), self.left)
            buffer[:count] = bytes(count)
            self.left -= count
            return count
        count = min(len(buffer), len(self.tail))
        buffer[:count], self.tail = self.tail[:count], self.tail[count:]
        return count


def test_an_endless_line_is_reported_at_the_limit_and_memory_stays_flat() -> None:
    checker = CallChecker(tools_of(load_target(TOOLS), TOOLS))
    reported: list[str] = []
    stream = io.BufferedReader(Zeros(256 * 1024 * 1024))
    tracemalloc.start()
    try:
        tally = validate_lines(stream, "zeros", checker, reported.append, max_line_bytes=1 << 20)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert reported == [
        "zeros:1: malformed line: longer than 1048576 bytes (--max-line-bytes); skipped"
    ]
    assert (tally.calls, tally.malformed, tally.invalid) == (1, 1, 0)
    assert peak < 4 * (1 << 20)  # the limit and one chunk, not the 256 MiB line


def test_dev_zero_is_reported_as_too_long_at_once_with_flat_memory() -> None:
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero")
    command = [sys.executable, "-c", "import sys; from wink.cli import main; sys.exit(main())"]
    process = subprocess.Popen(
        [*command, "validate", TOOLS, "/dev/zero"], stderr=subprocess.PIPE, text=True
    )
    try:
        started = time.monotonic()
        assert process.stderr is not None
        first = process.stderr.readline()
        elapsed = time.monotonic() - started
        time.sleep(0.5)  # draining the endless line must not grow
        with open(f"/proc/{process.pid}/status") as status:
            rss_kib = next(int(line.split()[1]) for line in status if line.startswith("VmRSS"))
    finally:
        process.kill()
        process.wait()
    assert first == (
        "/dev/zero:1: malformed line: longer than 16777216 bytes (--max-line-bytes); skipped\n"
    )
    assert elapsed < 10
    assert rss_kib < 200 * 1024


# Lines that Python's JSON reader cannot take


def test_a_line_nested_100k_deep_is_reported_and_later_lines_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = calls_file(tmp_path, b"[" * 100_000 + b"]" * 100_000 + b"\n" + INVALID)
    assert main(["validate", TOOLS, calls]) == 1
    assert capsys.readouterr().err.splitlines() == [
        f"{calls}:1: malformed line: nested too deeply to read; skipped",
        f"{calls}:2: search: query: required field is missing",
    ]


def test_an_integer_of_5000_digits_is_said_in_json_terms(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = b'{"name": "search", "arguments": {"query": ' + b"9" * 5000 + b"}}\n"
    calls = calls_file(tmp_path, line + INVALID)
    assert main(["validate", TOOLS, calls]) == 1
    assert capsys.readouterr().err.splitlines() == [
        f"{calls}:1: malformed line: an integer has more than 4300 digits, more than wink reads",
        f"{calls}:2: search: query: required field is missing",
    ]


VALIDATED_TARGET = """\
from pydantic import BaseModel, field_validator

from wink import Tool


class Count(BaseModel):
    n: int

    @field_validator("n")
    @classmethod
    def positive(cls, value: int) -> int:
        if value <= 0:
            raise ValueError("must be positive")
        return value

    @field_validator("n")
    @classmethod
    def small(cls, value: int) -> int:
        assert value < 100, "must be small"
        return value


tools = [Tool[Count, None](name="count", description="Count.")]
"""


def test_a_validator_s_own_words_are_reported_without_python_s_prefix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "counting.py").write_text(VALIDATED_TARGET)
    lines = (
        b'{"name": "count", "arguments": {"n": -1}}\n{"name": "count", "arguments": {"n": 500}}\n'
    )
    calls = calls_file(tmp_path, lines)
    assert main(["validate", "counting.py:tools", calls]) == 1
    assert capsys.readouterr().err.splitlines() == [
        f"{calls}:1: count: n: must be positive (got -1)",
        f"{calls}:2: count: n: must be small (got 500)",
    ]


# Names and ids from the log are data, not terminal commands


def test_tool_names_and_call_ids_with_newlines_and_ansi_codes_are_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    message = {
        "role": "assistant",
        "tool_calls": [
            {
                "id": f"id\n{n}",
                "type": "function",
                "function": {"name": "evil\n\x1b[31mname\u202e", "arguments": "{}"},
            }
            for n in range(2)
        ],
    }
    calls = calls_file(tmp_path, json.dumps(message).encode() + b"\n")
    assert main(["validate", TOOLS, calls]) == 1
    assert capsys.readouterr().err.splitlines() == [
        f"{calls}:1: evil\\n\\x1b[31mname\\u202e (call id\\n{n}): unknown tool "
        "(known: catalog, search)"
        for n in range(2)
    ]


# Targets


@pytest.mark.parametrize(
    ("statement", "shown"),
    [
        ("raise GeneratorExit", "GeneratorExit"),
        ("raise SystemExit(3)", "SystemExit: 3"),
        ("class Stop(BaseException): pass\nraise Stop('no')", "Stop: no"),
    ],
)
def test_a_target_raising_a_base_exception_on_import_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], statement: str, shown: str
) -> None:
    (tmp_path / "broken.py").write_text(f"{statement}\n")
    assert main(["tools", "broken.py:tools"]) == 1
    line = statement.count("\n") + 1
    assert capsys.readouterr().err == (
        f"wink: target 'broken.py:tools': importing 'broken.py' failed at broken.py:{line}: "
        f"{shown}\n"
    )


def test_an_error_that_cannot_describe_itself_is_still_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "mute.py").write_text(
        "class Mute(Exception):\n    def __str__(self):\n        raise RuntimeError\nraise Mute()\n"
    )
    assert main(["tools", "mute.py:tools"]) == 1
    assert capsys.readouterr().err == (
        "wink: target 'mute.py:tools': importing 'mute.py' failed at mute.py:4: Mute\n"
    )


def test_a_target_attribute_whose_property_raises_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "lazy.py").write_text(
        "class Box:\n    @property\n    def tools(self):\n        raise KeyError('gone')\n"
        "box = Box()\n"
    )
    assert main(["tools", "lazy.py:box.tools"]) == 1
    assert capsys.readouterr().err == (
        "wink: target 'lazy.py:box.tools': reading 'tools' failed at lazy.py:4: KeyError: 'gone'\n"
    )


def test_a_prompt_whose_rendering_raises_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "unrenderable.py").write_text(
        "from wink import Prompt, PromptTemplate\n"
        "class Broken(Prompt):\n"
        "    def render(self, *args, **kwargs):\n"
        "        raise LookupError('no such section')\n"
        "prompt = Broken(PromptTemplate(ns='t', key='k', sections=[]))\n"
    )
    assert main(["tools", "unrenderable.py:prompt"]) == 1
    assert capsys.readouterr().err == (
        "wink: target 'unrenderable.py:prompt': rendering the prompt failed at "
        "unrenderable.py:4: LookupError: no such section\n"
    )


def test_control_characters_in_a_one_line_error_are_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["schemas", "check", TOOLS, "--dir", "out\x1b[2J"]) == 1
    assert capsys.readouterr().err.startswith(
        "wink: schema directory out\\x1b[2J does not exist; create it with: "
    )


PRINTING_TARGET = f"""\
import sys
print("loading tools")
sys.path.insert(0, {str(SHOP.parent)!r})
from shop import search
tools = [search]
"""


def test_a_target_that_prints_on_import_leaves_the_tools_json_valid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "chatty.py").write_text(PRINTING_TARGET)
    assert main(["tools", "chatty.py:tools"]) == 0
    captured = capsys.readouterr()
    assert [spec["function"]["name"] for spec in json.loads(captured.out)] == ["search"]
    assert captured.err == "loading tools\n"


def test_a_target_that_prints_leaves_the_validate_summary_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "chatty.py").write_text(PRINTING_TARGET)
    calls = calls_file(tmp_path, VALID)
    assert main(["validate", "chatty.py:tools", calls]) == 0
    captured = capsys.readouterr()
    assert captured.out == (
        "checked 1 tool calls in 1 file: 0 invalid, 0 unknown tools, 0 malformed lines\n"
    )
    assert captured.err == "loading tools\n"


DESCRIPTOR_TARGET = f"""\
import os
import sys
os.write(1, b"written to fd 1 on import\\n")
sys.__stdout__.write("written to sys.__stdout__ on import\\n")
sys.__stdout__.flush()
sys.path.insert(0, {str(SHOP.parent)!r})
from shop import search
tools = [search]
"""


def test_a_target_that_writes_to_the_stdout_descriptor_leaves_the_tools_json_valid(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "noisy.py").write_text(DESCRIPTOR_TARGET)
    assert main(["tools", "noisy.py:tools"]) == 0
    captured = capfd.readouterr()
    assert [spec["function"]["name"] for spec in json.loads(captured.out)] == ["search"]
    assert captured.err == "written to fd 1 on import\nwritten to sys.__stdout__ on import\n"


SURROGATE_TARGET = """\
from dataclasses import dataclass, field

from wink import Tool


@dataclass
class Lookup:
    query: str = field(metadata={"description": "look \\ud800 up"})


tools = [Tool[Lookup, None](name="lookup", description="Look things up.")]
"""


def test_a_description_holding_a_lone_surrogate_is_printed_and_exported_as_its_json_escape(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "odd.py").write_text(SURROGATE_TARGET)
    assert main(["tools", "odd.py:tools"]) == 0
    out = capsys.readouterr().out
    assert '"description": "look \\ud800 up"' in out
    spec = json.loads(out)[0]["function"]["parameters"]["properties"]["query"]
    assert spec["description"] == "look \ud800 up"
    assert main(["schemas", "export", "odd.py:tools", "--out", "out"]) == 0
    assert main(["schemas", "check", "odd.py:tools", "--dir", "out"]) == 0
    assert capsys.readouterr().out.endswith("out is up to date (8 files)\n")


# Recorded ToolInvoked lines keep what JSON cannot carry escaped


def test_a_saved_tool_invoked_is_validated_with_its_escaped_arguments_read_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    moment = datetime(2025, 1, 1, tzinfo=UTC)
    session = Session()
    for arguments in (b'{"query": "tea"}', '{"query": 1, "x": "\ud800"}'):
        session.dispatch(
            ToolInvoked(
                "p", "search", None, None, arguments, ToolResult.error("no"), "", *[moment] * 2
            )
        )
    items = json.loads(session.snapshot().to_json())["slices"][0]["items"]
    assert items[0]["arguments"]["escaped"] == "bytes"
    calls = calls_file(tmp_path, b"".join(json.dumps(item).encode() + b"\n" for item in items))
    assert main(["validate", TOOLS, calls]) == 1
    assert capsys.readouterr().err == (
        f"{calls}:2: search: x: string holds a lone UTF-16 surrogate (\\ud800-\\udfff "
        "without its pair), which is not Unicode text\n"
    )


# schemas


def test_dir_naming_a_file_says_it_is_not_a_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "schemas.txt").write_text("")
    assert main(["schemas", "check", TOOLS, "--dir", "schemas.txt"]) == 1
    assert capsys.readouterr().err == "wink: schema directory schemas.txt is not a directory\n"


@pytest.mark.parametrize(
    ("index", "problem"),
    [
        ("[]", "is not an index wink wrote: expected an object, got an array"),
        (
            '{"dialects": {}, "tools": [], "wire": {}}',
            "is not an index wink wrote: tools: expected an object, got an array",
        ),
        (
            '{"dialects": {}, "tools": {"search": {"files": ["a.json"]}}, "wire": {}}',
            "is not an index wink wrote: tools.search.files: expected an object, got an array",
        ),
        (
            '{"dialects": {}, "tools": {}, "wire": {"ToolCall": 5}}',
            "is not an index wink wrote: wire.ToolCall: expected a string, got a number",
        ),
        (
            '{"dialects": {"mcp": "x"}, "tools": {}, "wire": {}}',
            "is not an index wink wrote: dialects.mcp: expected an object with provider and "
            "options",
        ),
        ('{"dialects": {}, "tools": {}}', "is not an index wink wrote: wire: missing"),
        ('{"tools": ', "is not valid JSON (Expecting value at line 1 column 11)"),
    ],
)
@pytest.mark.parametrize("command", ["export", "check"])
def test_an_index_json_wink_did_not_write_is_one_line_naming_the_file_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], index: str, problem: str, command: str
) -> None:
    (tmp_path / "schemas").mkdir()
    (tmp_path / "schemas" / "index.json").write_text(index)
    option = "--out" if command == "export" else "--dir"
    assert main(["schemas", command, TOOLS, option, "schemas"]) == 1
    assert capsys.readouterr().err == (
        f"wink: schemas/index.json {problem}; fix it, or delete it and run wink schemas "
        "export again\n"
    )
    assert (tmp_path / "schemas" / "index.json").read_text() == index


def test_an_index_listing_a_path_with_a_nul_byte_is_one_line_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["schemas", "export", TOOLS, "--out", "schemas", "--dialect", "mcp"]) == 0
    index_path = tmp_path / "schemas" / "index.json"
    index = json.loads(index_path.read_text())
    index["wire"] = {"Old": "mcp/old\u0000.json"}
    index_path.write_text(json.dumps(index))
    capsys.readouterr()
    assert main(["schemas", "export", TOOLS, "--out", "schemas", "--dialect", "mcp"]) == 1
    assert capsys.readouterr().err == (
        "wink: schema directory schemas: invalid path: 'mcp/old\\x00.json'\n"
    )


def test_an_index_json_that_is_not_utf8_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "schemas").mkdir()
    (tmp_path / "schemas" / "index.json").write_bytes(b"\xff{}")
    assert main(["schemas", "check", TOOLS, "--dir", "schemas"]) == 1
    assert capsys.readouterr().err == (
        "wink: cannot read schemas/index.json: not valid UTF-8 (at byte 0)\n"
    )


# Settings in Python wording


def test_a_settings_list_that_is_broken_json_is_said_in_json_terms(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WINK_TARGETS", "[1")
    assert main(["tools"]) == 2
    assert capsys.readouterr().err == (
        "wink: invalid setting 'targets' (WINK_TARGETS or [tool.wink] in pyproject.toml): "
        "not a valid JSON array (Expecting ',' delimiter at column 3) (got '[1')\n"
    )


# wink trace reads saved sessions as from_json does


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            '{"version":1,"slices":' + "[" * 100_000 + "]" * 100_000 + "}",
            "snapshot is not valid JSON: nested more than 200 objects and arrays deep at "
            "slices[0][0][0][0][0][0][0]... (201 levels deep) (line 1 column 223)",
        ),
        (
            '{"version":1,"slices":[' + "9" * 5000 + "]}",
            "snapshot is not valid JSON: a number too large to read (integers have at most "
            "4300 digits) at slices[0] (line 1 column 4325)",
        ),
    ],
)
def test_wink_trace_says_what_is_wrong_with_a_hostile_snapshot_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, message: str
) -> None:
    saved = tmp_path / "bad.json"
    saved.write_text(content)
    assert main(["trace", str(saved), "--html", str(tmp_path / "out.html")]) == 1
    assert capsys.readouterr().err == f"wink: {saved}: {message}\n"


def test_wink_trace_shows_escaped_raw_values_as_they_were_received(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    moment = datetime(2025, 1, 1, tzinfo=UTC)
    session = Session()
    session.dispatch(
        ToolInvoked(
            "p",
            "se\ud800",
            "id-1",
            None,
            b'{"q": "\xff"}',
            ToolResult.error("no"),
            "",
            moment,
            moment,
        )
    )
    saved = tmp_path / "session.json"
    saved.write_text(session.snapshot().to_json())
    assert main(["trace", str(saved)]) == 0
    page = capsys.readouterr().out
    assert '<span class="tool">se\\ud800</span>' in page
    assert "{&quot;q&quot;: &quot;\\xff&quot;}" in page
