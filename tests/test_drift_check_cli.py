"""``wink schemas check`` classifies tool drift: levels, --fail-on, --ignore, --format json
and --recorded, against a committed export of an earlier version of the tools."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wink.cli import main

BEFORE = """
from dataclasses import dataclass, field
from typing import Literal

from wink import Tool


@dataclass
class SearchParams:
    query: str
    limit: int = 10


@dataclass
class SearchResult:
    titles: list[str]


@dataclass
class KindParams:
    kind: Literal["book", "film"]


search = Tool[SearchParams, SearchResult](name="search", description="Search the shop.")
kinds = Tool[KindParams, None](name="kinds", description="Count by kind.")
tools = [search, kinds]
"""


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("WINK_STRICT", "WINK_SCHEMA_DIR", "WINK_TARGETS", "WINK_DIALECTS", "WINK_WIRE"):
        monkeypatch.delenv(name, raising=False)


def committed_then_changed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], *edits: tuple[str, str]
) -> list[str]:
    """Export BEFORE, apply ``edits`` to the code, and return the check command."""
    code = tmp_path / "shop.py"
    code.write_text(BEFORE)
    assert main(["schemas", "export", "shop.py:tools", "--out", "schemas", "--dialect", "mcp"]) == 0
    capsys.readouterr()
    changed = BEFORE
    for old, new in edits:
        assert old in changed
        changed = changed.replace(old, new)
    # Another file: a target's module is imported once per process.
    (tmp_path / "shop_now.py").write_text(changed)
    return ["schemas", "check", "shop_now.py:tools", "--dir", "schemas", "--dialect", "mcp"]


LIMIT_REQUIRED = ("    limit: int = 10", "    limit: int")
POEM_ADDED = ('Literal["book", "film"]', 'Literal["book", "film", "poem"]')
DESCRIBED = ('description="Search the shop."', 'description="Search the whole shop."')


def test_a_compatible_change_passes_by_default_and_is_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    check = committed_then_changed(tmp_path, capsys, POEM_ADDED)
    assert main(check) == 0
    captured = capsys.readouterr()
    assert captured.out == (
        "schemas differs from the code: 1 change in 1 tool (0 breaking, 0 warning, 1 info)\n"
        "kinds:\n"
        "  info     params-enum-value-added at /params/properties/kind/enum: kind: now also "
        'accepts "poem"; calls that worked still work\n'
    )
    assert captured.err == ""


def test_a_breaking_change_fails_naming_the_rule_and_how_to_go_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    check = committed_then_changed(tmp_path, capsys, LIMIT_REQUIRED)
    assert main(check) == 1
    captured = capsys.readouterr()
    assert captured.out.splitlines() == [
        "schemas differs from the code: 2 changes in 1 tool (1 breaking, 0 warning, 1 info)",
        "search:",
        "  breaking params-property-became-required at /params/properties/limit: limit is now "
        "required; calls that leave it out are now refused",
        "  info     params-default-removed at /params/properties/limit: limit: default of 10 "
        "removed",
    ]
    assert captured.err == (
        "wink: schemas: 1 change at or above --fail-on breaking; accept them in an --ignore "
        "file, or record the new schemas with: wink schemas export shop_now.py:tools --out schemas "
        "--dialect mcp\n"
    )


@pytest.mark.parametrize(("fail_on", "status"), [("breaking", 0), ("warning", 0), ("any", 1)])
def test_fail_on_sets_the_least_severe_level_that_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fail_on: str, status: int
) -> None:
    check = committed_then_changed(tmp_path, capsys, DESCRIBED)
    assert main([*check, "--fail-on", fail_on]) == status


def test_a_changed_default_is_a_warning_that_fail_on_warning_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    check = committed_then_changed(tmp_path, capsys, ("limit: int = 10", "limit: int = 20"))
    assert main(check) == 0
    assert main([*check, "--fail-on", "warning"]) == 1
    assert (
        "  warning  params-default-changed at /params/properties/limit: limit: default changed "
        "from 10 to 20; calls that leave it out now behave differently"
        in capsys.readouterr().out.splitlines()
    )


def test_an_accepted_change_is_marked_with_its_reason_and_does_not_fail(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    check = committed_then_changed(tmp_path, capsys, LIMIT_REQUIRED)
    (tmp_path / "drift-ignore.toml").write_text(
        "[[accept]]\n"
        'rule = "params-property-became-required"\n'
        'tool = "search"\n'
        'pointer = "/params/properties/limit"\n'
        'reason = "every client sends a limit"\n'
    )
    assert main([*check, "--ignore", "drift-ignore.toml"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == (
        "schemas differs from the code: 2 changes in 1 tool (0 breaking, 0 warning, 1 info)"
    )
    assert out[2].endswith("are now refused [accepted: every client sends a limit]")


def test_an_ignore_entry_matching_nothing_is_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    check = committed_then_changed(tmp_path, capsys, POEM_ADDED)
    (tmp_path / "ignore.toml").write_text(
        '[[accept]]\nrule = "tool-removed"\ntool = "gone"\nreason = "retired in May"\n'
    )
    assert main([*check, "--ignore", "ignore.toml"]) == 0
    assert capsys.readouterr().err == (
        "warning: ignore.toml: no change matches rule 'tool-removed', tool 'gone', pointer ''\n"
    )


def test_an_ignore_entry_without_a_reason_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    check = committed_then_changed(tmp_path, capsys, POEM_ADDED)
    (tmp_path / "ignore.toml").write_text('[[accept]]\nrule = "x"\ntool = "search"\n')
    assert main([*check, "--ignore", "ignore.toml"]) == 1
    assert capsys.readouterr().err == (
        "wink: ignore file ignore.toml: accept.0.reason: field required (each [[accept]] "
        "needs rule, tool, pointer and reason)\n"
    )


def test_json_format_lists_every_change_with_its_level_and_pointer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    check = committed_then_changed(tmp_path, capsys, LIMIT_REQUIRED, POEM_ADDED)
    assert main([*check, "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert {key: report[key] for key in ("files", "fail_on", "failed", "counts")} == {
        "files": 5,
        "fail_on": "breaking",
        "failed": True,
        "counts": {"breaking": 1, "warning": 0, "info": 2},
    }
    assert [(c["tool"], c["rule"], c["level"], c["pointer"]) for c in report["changes"]] == [
        ("kinds", "params-enum-value-added", "info", "/params/properties/kind/enum"),
        ("search", "params-default-removed", "info", "/params/properties/limit"),
        ("search", "params-property-became-required", "breaking", "/params/properties/limit"),
    ]


def test_a_renamed_tool_is_breaking_and_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    check = committed_then_changed(tmp_path, capsys, ('name="kinds"', 'name="count_kinds"'))
    assert main(check) == 1
    assert capsys.readouterr().out.splitlines()[1:] == [
        "kinds:",
        "  breaking tool-renamed: tool renamed to 'count_kinds'; models and clients calling "
        "'kinds' now get an unknown tool",
    ]


def test_recorded_calls_the_change_breaks_are_listed_per_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    check = committed_then_changed(
        tmp_path, capsys, LIMIT_REQUIRED, ('Literal["book", "film"]', 'Literal["book"]')
    )
    (tmp_path / "calls.jsonl").write_text(
        '{"name": "search", "arguments": {"query": "owls"}, "call_id": "c1"}\n'
        '{"name": "search", "arguments": {"query": "owls", "limit": 3}}\n'
        '{"name": "kinds", "arguments": {"kind": "film"}}\n'
        '{"name": "kinds", "arguments": {"kind": "poem"}}\n'
    )
    assert main([*check, "--recorded", "calls.jsonl"]) == 1
    out = capsys.readouterr().out.splitlines()
    summary = out.index(
        "recorded calls: 4 read, 2 broken by the change, 1 refused by the committed contract "
        "already"
    )
    assert out[summary + 1 :] == [
        "  calls.jsonl:1: search (call c1): params-property-became-required at "
        "/params/properties/limit: limit: required field is missing",
        "  calls.jsonl:3: kinds: params-enum-value-removed at /params/properties/kind/const: "
        "kind: input should be 'book' (got \"film\")",
    ]
