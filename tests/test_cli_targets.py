"""Targets: ``module:attribute`` or ``path/to/file.py:attribute`` resolved to tools."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

import pytest

from wink.cli import main
from wink.cli.failure import CliError
from wink.cli.targets import resolve_targets

SHOP = Path(__file__).parent / "test_cli_fixtures" / "shop.py"

TOOL_MODULE = """\
from dataclasses import dataclass

from wink import Tool


@dataclass
class PingParams:
    host: str


ping = Tool[PingParams, None](name="ping", description="Ping a host.")
"""


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("WINK_TARGETS", raising=False)


def names(targets: list[str]) -> list[str]:
    return [tool.name for tool in resolve_targets(targets)]


def error_of(targets: list[str]) -> str:
    with pytest.raises(CliError) as raised:
        resolve_targets(targets)
    return str(raised.value)


def test_template_target_gives_all_its_tools_in_declaration_order() -> None:
    assert names([f"{SHOP}:template"]) == ["search", "catalog"]


def test_prompt_target_gives_its_rendered_tools_with_overrides() -> None:
    tools = resolve_targets([f"{SHOP}:prompt"])
    assert [(tool.name, tool.description) for tool in tools] == [
        ("search", "Search the shop."),
        ("catalog", "Count entries."),
    ]


def test_section_target_gives_the_tools_of_its_subtree() -> None:
    assert names([f"{SHOP}:section"]) == ["catalog"]


def test_tool_target_gives_that_tool() -> None:
    assert names([f"{SHOP}:catalog"]) == ["catalog"]


def test_sequence_target_gives_its_tools() -> None:
    assert names([f"{SHOP}:tools"]) == ["search", "catalog"]


def test_dotted_attribute_is_followed() -> None:
    assert names([f"{SHOP}:template.tools"]) == ["search", "catalog"]


def test_module_target_is_imported_from_the_current_directory(tmp_path: Path) -> None:
    package = tmp_path / "pingpkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "tools.py").write_text(TOOL_MODULE)
    try:
        assert names(["pingpkg.tools:ping"]) == ["ping"]
    finally:
        for name in ("pingpkg", "pingpkg.tools"):
            sys.modules.pop(name, None)
    assert str(tmp_path) not in sys.path


def test_relative_file_target_is_named_like_its_import_path(tmp_path: Path) -> None:
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "ping.py").write_text(TOOL_MODULE)
    try:
        (tool,) = resolve_targets(["examples/ping.py:ping"])
        assert tool.params_type.__module__ == "examples.ping"
    finally:
        sys.modules.pop("examples.ping", None)


def test_a_file_named_like_a_loaded_module_leaves_that_module_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Restored after the test even if the file does replace it.
    monkeypatch.setitem(sys.modules, "json", json)
    (tmp_path / "json.py").write_text(TOOL_MODULE)
    (first,) = resolve_targets(["json.py:ping"])
    (again,) = resolve_targets(["json.py:ping"])
    module = sys.modules.pop(first.params_type.__module__)
    assert sys.modules["json"] is json
    assert module.__file__ == str(tmp_path / "json.py")
    assert again is first


def test_a_file_named_like_a_standard_module_not_yet_loaded_does_not_take_its_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delitem(sys.modules, "mailbox", raising=False)
    (tmp_path / "mailbox.py").write_text(TOOL_MODULE)
    (tool,) = resolve_targets(["mailbox.py:ping"])
    module = sys.modules.pop(tool.params_type.__module__)
    assert module.__name__ != "mailbox"
    assert "mailbox" not in sys.modules


def test_a_failing_file_named_like_a_loaded_module_leaves_that_module_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "copy", copy)
    (tmp_path / "copy.py").write_text("raise RuntimeError('boom')\n")
    assert main(["tools", "copy.py:tools"]) == 1
    assert capsys.readouterr().err == (
        "wink: target 'copy.py:tools': importing 'copy.py' failed at copy.py:1: "
        "RuntimeError: boom\n"
    )
    assert sys.modules["copy"] is copy


def test_the_same_tool_from_two_targets_is_listed_once() -> None:
    assert names([f"{SHOP}:template", f"{SHOP}:tools", f"{SHOP}:search"]) == ["search", "catalog"]


def test_two_different_tools_with_one_name_are_an_error() -> None:
    assert error_of([f"{SHOP}:template", f"{SHOP}:prompt"]) == (
        f"tool name 'search' is defined by both '{SHOP}:template' and '{SHOP}:prompt'"
    )


def test_target_without_attribute_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tools", "examples.lookup_entity"]) == 2
    assert capsys.readouterr().err == (
        "wink: target 'examples.lookup_entity' must be module:attribute or "
        "path/to/file.py:attribute\n"
    )


def test_missing_module_is_one_line_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tools", "no_such_module:prompt"]) == 1
    assert capsys.readouterr().err == (
        "wink: target 'no_such_module:prompt': no module named 'no_such_module' "
        "(run from the project root, or install the package)\n"
    )


def test_missing_file_is_one_line_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tools", "tools/nothing.py:prompt"]) == 1
    assert capsys.readouterr().err == (
        "wink: target 'tools/nothing.py:prompt': no such file 'tools/nothing.py'\n"
    )


def test_import_failure_names_the_line_that_raised(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "broken.py").write_text("import os\n\nraise RuntimeError('no database')\n")
    assert main(["tools", "broken.py:prompt"]) == 1
    assert capsys.readouterr().err == (
        "wink: target 'broken.py:prompt': importing 'broken.py' failed at broken.py:3: "
        "RuntimeError: no database\n"
    )
    assert "broken" not in sys.modules


def test_import_failure_in_a_dependency_names_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "needs.py").write_text("import not_installed_anywhere\n")
    assert main(["tools", "needs:prompt"]) == 1
    assert capsys.readouterr().err == (
        "wink: target 'needs:prompt': importing 'needs' failed at needs.py:1: "
        "ModuleNotFoundError: No module named 'not_installed_anywhere'\n"
    )


def test_invalid_tool_in_the_module_is_reported_at_the_users_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "badtool.py").write_text(TOOL_MODULE.replace('name="ping"', 'name="Ping Host"'))
    assert main(["tools", "badtool.py:ping"]) == 1
    assert capsys.readouterr().err == (
        "wink: target 'badtool.py:ping': importing 'badtool.py' failed at badtool.py:11: "
        "PromptValidationError: tool name 'Ping Host' must match ^[a-z0-9_-]{1,64}$ "
        "(lowercase letters, digits, '_' or '-', no spaces)\n"
    )


def test_syntax_error_names_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "typo.py").write_text("x = 1\ndef (:\n")
    assert main(["tools", "typo.py:x"]) == 1
    assert capsys.readouterr().err == (
        "wink: target 'typo.py:x': importing 'typo.py' failed at typo.py:2: "
        "SyntaxError: invalid syntax (typo.py, line 2)\n"
    )


def test_module_exiting_on_import_is_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "quits.py").write_text("raise SystemExit(3)\n")
    assert main(["tools", "quits.py:x"]) == 1
    assert capsys.readouterr().err == (
        "wink: target 'quits.py:x': importing 'quits.py' failed at quits.py:1: SystemExit: 3\n"
    )


def test_missing_attribute_is_one_line_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tools", f"{SHOP}:templat"]) == 1
    assert capsys.readouterr().err == (
        f"wink: target '{SHOP}:templat': '{SHOP}' has no attribute 'templat'\n"
    )


def test_attribute_of_another_kind_is_one_line_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tools", f"{SHOP}:number"]) == 1
    assert capsys.readouterr().err == (
        f"wink: target '{SHOP}:number' is a int; expected a PromptTemplate, Prompt, "
        "RenderedPrompt, Section, Tool or a sequence of tools\n"
    )


def test_sequence_with_a_non_tool_names_the_item() -> None:
    assert error_of([f"{SHOP}:mixed"]) == f"target '{SHOP}:mixed': item 1 is a str, not a Tool"


def test_target_without_tools_is_an_error() -> None:
    assert error_of([f"{SHOP}:empty"]) == f"target '{SHOP}:empty' has no tools"


def test_no_target_and_no_setting_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tools"]) == 2
    assert capsys.readouterr().err == (
        "wink: no target given: pass module:attribute (or path/to/file.py:attribute), "
        "or set targets in [tool.wink] of pyproject.toml or WINK_TARGETS\n"
    )
