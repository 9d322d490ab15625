"""``wink schemas export`` and ``wink schemas check``: schema files and drift in CI."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from wink.cli import main
from wink.cli.targets import resolve_targets
from wink.providers import mcp, openai

SHOP = Path(__file__).parent / "test_cli_fixtures" / "shop.py"
TOOLS = f"{SHOP}:tools"
TWO_DIALECTS = ["--dialect", "mcp", "--dialect", "openai-chat"]


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("WINK_STRICT", "WINK_SCHEMA_DIR", "WINK_TARGETS", "WINK_DIALECTS", "WINK_WIRE"):
        monkeypatch.delenv(name, raising=False)


def files_under(directory: Path) -> list[str]:
    return sorted(p.relative_to(directory).as_posix() for p in directory.rglob("*") if p.is_file())


def export(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(["schemas", "export", *argv]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    return captured.out


def test_export_writes_one_file_per_tool_and_dialect_and_an_index(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = export(capsys, TOOLS, "--out", "schemas")
    assert out == "wrote 15 files to schemas (0 unchanged, 0 stale removed)\n"
    folders = [
        "anthropic",
        "contract",
        "gemini",
        "gemini-openapi",
        "mcp",
        "openai-chat",
        "openai-responses",
    ]
    assert files_under(tmp_path / "schemas") == sorted(
        [f"{folder}/{tool}.json" for folder in folders for tool in ("catalog", "search")]
        + ["index.json"]
    )


def test_contract_file_holds_the_canonical_schemas_of_the_tool(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    export(capsys, TOOLS, "--out", "schemas", "--dialect", "mcp")
    [search, _] = resolve_targets([TOOLS])
    assert json.loads((tmp_path / "schemas" / "contract" / "search.json").read_text()) == {
        "name": "search",
        "description": "Search the catalogue.",
        "params": search.params_schema,
        "result": search.result_schema,
    }


def test_tool_file_holds_the_provider_spec_as_indented_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    export(capsys, TOOLS, "--out", "schemas", *TWO_DIALECTS)
    tools = resolve_targets([TOOLS])
    expected = json.dumps(mcp.tool_specs(tools)[1], indent=2) + "\n"
    assert (tmp_path / "schemas" / "mcp" / "catalog.json").read_text() == expected
    chat = json.loads((tmp_path / "schemas" / "openai-chat" / "search.json").read_text())
    assert chat == openai.tool_specs(tools, api="chat", strict="auto")[0]


def test_index_lists_dialects_tools_and_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    export(capsys, TOOLS, "--out", "schemas", *TWO_DIALECTS)
    assert json.loads((tmp_path / "schemas" / "index.json").read_text()) == {
        "dialects": {
            "openai-chat": {"provider": "openai", "options": {"api": "chat", "strict": "auto"}},
            "mcp": {"provider": "mcp", "options": {}},
        },
        "tools": {
            "catalog": {
                "description": "Count entries.",
                "files": {
                    "contract": "contract/catalog.json",
                    "openai-chat": "openai-chat/catalog.json",
                    "mcp": "mcp/catalog.json",
                },
            },
            "search": {
                "description": "Search the catalogue.",
                "files": {
                    "contract": "contract/search.json",
                    "openai-chat": "openai-chat/search.json",
                    "mcp": "mcp/search.json",
                },
            },
        },
        "wire": {},
    }


def test_export_again_rewrites_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    export(capsys, TOOLS, "--out", "schemas")
    before = {
        name: (tmp_path / "schemas" / name).read_bytes()
        for name in files_under(tmp_path / "schemas")
    }
    assert export(capsys, TOOLS, "--out", "schemas") == (
        "wrote 0 files to schemas (15 unchanged, 0 stale removed)\n"
    )
    after = {
        name: (tmp_path / "schemas" / name).read_bytes()
        for name in files_under(tmp_path / "schemas")
    }
    assert after == before


def test_export_removes_stale_files_of_its_folders_and_keeps_the_users(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    export(capsys, TOOLS, "--out", "schemas", *TWO_DIALECTS)
    (tmp_path / "schemas" / "README.md").write_text("hand-written\n")
    (tmp_path / "schemas" / "extra.json").write_text("{}\n")
    (tmp_path / "schemas" / "mcp" / "notes.json").write_text("{}\n")
    assert export(capsys, f"{SHOP}:search", "--out", "schemas", "--dialect", "mcp") == (
        "wrote 1 files to schemas (2 unchanged, 5 stale removed)\n"
    )
    assert files_under(tmp_path / "schemas") == [
        "README.md",
        "contract/search.json",
        "extra.json",
        "index.json",
        "mcp/search.json",
    ]


def test_export_removes_a_folder_its_stale_files_leave_empty_and_keeps_other_folders(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    export(capsys, TOOLS, "--out", "schemas", *TWO_DIALECTS)
    (tmp_path / "schemas" / "fixtures").mkdir()
    export(capsys, TOOLS, "--out", "schemas", "--dialect", "mcp")
    assert sorted(path.name for path in (tmp_path / "schemas").iterdir()) == [
        "contract",
        "fixtures",
        "index.json",
        "mcp",
    ]


def test_an_index_spelling_a_path_with_dot_slash_does_not_make_a_written_file_stale(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    export(capsys, TOOLS, "--out", "schemas", "--dialect", "mcp")
    index_path = tmp_path / "schemas" / "index.json"
    index = json.loads(index_path.read_text())
    for entry in index["tools"].values():
        entry["files"] = {name: f"./{path}" for name, path in entry["files"].items()}
    index_path.write_text(json.dumps(index))
    before = files_under(tmp_path / "schemas" / "mcp")
    export(capsys, TOOLS, "--out", "schemas", "--dialect", "mcp")
    assert files_under(tmp_path / "schemas" / "mcp") == before
    assert before != []


def test_export_with_wire_writes_the_wire_type_schemas(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    export(capsys, TOOLS, "--out", "schemas", "--dialect", "mcp", "--wire")
    wire = tmp_path / "schemas" / "wire"
    assert files_under(wire) == ["ToolCall.json", "ToolInvoked.json", "ToolResult.json"]
    tool_call = json.loads((wire / "ToolCall.json").read_text())
    assert tool_call["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert tool_call["title"] == "ToolCall"
    assert (list(tool_call["properties"]), tool_call["required"]) == (
        ["name", "arguments", "call_id"],
        ["name"],
    )
    result = json.loads((wire / "ToolResult.json").read_text())
    assert list(result["properties"]) == [
        "message",
        "value",
        "success",
        "exclude_value_from_context",
    ]
    index = json.loads((tmp_path / "schemas" / "index.json").read_text())
    assert index["wire"] == {
        "ToolCall": "wire/ToolCall.json",
        "ToolInvoked": "wire/ToolInvoked.json",
        "ToolResult": "wire/ToolResult.json",
    }


def test_export_directory_comes_from_settings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.wink]\nschema_dir = "specs"\ntargets = ["{TOOLS}"]\ndialects = ["mcp"]\n'
    )
    assert export(capsys) == "wrote 5 files to specs (0 unchanged, 0 stale removed)\n"
    assert files_under(tmp_path / "specs") == [
        "contract/catalog.json",
        "contract/search.json",
        "index.json",
        "mcp/catalog.json",
        "mcp/search.json",
    ]


def test_schema_dir_from_settings_is_under_the_project_root_from_a_subfolder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.wink]\nschema_dir = "specs"\ntargets = ["{TOOLS}"]\ndialects = ["mcp"]\n'
    )
    (tmp_path / "src").mkdir()
    monkeypatch.chdir(tmp_path / "src")
    assert export(capsys) == "wrote 5 files to ../specs (0 unchanged, 0 stale removed)\n"
    assert (tmp_path / "specs" / "mcp" / "search.json").is_file()
    assert main(["schemas", "check"]) == 0
    assert capsys.readouterr().out == "../specs is up to date (5 files)\n"


def test_a_recursive_tool_is_skipped_for_gemini_openapi_with_a_warning_and_a_note(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["schemas", "export", f"{SHOP}:with_tree", "--out", "schemas"]) == 0
    reason = (
        "field children[] refers back to Folder (a recursive type), which cannot be inlined; "
        "use form='json_schema', which keeps $ref"
    )
    assert capsys.readouterr().err == (
        f"warning: gemini-openapi: skipped tool 'browse': {reason}\n"
    )
    browse = json.loads((tmp_path / "schemas" / "index.json").read_text())["tools"]["browse"]
    assert browse["skipped"] == {"gemini-openapi": reason}
    assert sorted(browse["files"]) == [
        "anthropic",
        "contract",
        "gemini",
        "mcp",
        "openai-chat",
        "openai-responses",
    ]
    assert (tmp_path / "schemas" / "gemini-openapi" / "search.json").is_file()
    assert main(["schemas", "check", f"{SHOP}:with_tree", "--dir", "schemas"]) == 0


def test_export_to_a_file_path_is_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "taken").write_text("")
    assert main(["schemas", "export", TOOLS, "--out", "taken"]) == 1
    assert capsys.readouterr().err == "wink: --out taken exists and is not a directory\n"


def test_unknown_dialect_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schemas", "export", TOOLS, "--dialect", "cohere"]) == 2
    assert capsys.readouterr().err == (
        "wink: schemas export --dialect: input should be 'openai-chat', 'openai-responses', "
        "'anthropic', 'gemini', 'gemini-openapi' or 'mcp' (got 'cohere')\n"
    )


def test_export_of_a_spec_the_dialect_cannot_express_is_one_line_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["schemas", "export", f"{SHOP}:free_form", "--strict", "true"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("wink: openai-chat specs: tool 'tally': field counts ")
    assert err.count("\n") == 1


def test_schemas_without_subcommand_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schemas"]) == 2
    assert capsys.readouterr().err == (
        "wink: schemas needs a command: export or check (see wink schemas --help)\n"
    )


def test_check_passes_on_freshly_exported_files(capsys: pytest.CaptureFixture[str]) -> None:
    export(capsys, TOOLS, "--out", "schemas", "--wire")
    assert main(["schemas", "check", TOOLS, "--dir", "schemas", "--wire"]) == 0
    captured = capsys.readouterr()
    assert captured.out == "schemas is up to date (18 files)\n"
    assert captured.err == ""


def test_a_provider_file_changed_while_the_contract_did_not_is_info(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    export(capsys, TOOLS, "--out", "schemas", *TWO_DIALECTS)
    committed = tmp_path / "schemas" / "mcp" / "search.json"
    committed.write_text(committed.read_text().replace("Search the catalogue.", "Search."))
    assert main(["schemas", "check", TOOLS, "--dir", "schemas", *TWO_DIALECTS]) == 0
    captured = capsys.readouterr()
    assert captured.out == (
        "schemas differs from the code: 1 change in 1 tool (0 breaking, 0 warning, 1 info)\n"
        "search:\n"
        "  info     file-changed: mcp/search.json differs from what the code produces\n"
    )
    assert captured.err == ""


def test_fail_on_any_fails_on_every_difference_and_diff_shows_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    export(capsys, TOOLS, "--out", "schemas", *TWO_DIALECTS)
    committed = tmp_path / "schemas" / "mcp" / "search.json"
    committed.write_text(committed.read_text().replace("Search the catalogue.", "Search."))
    check = ["schemas", "check", TOOLS, "--dir", "schemas", *TWO_DIALECTS]
    assert main([*check, "--fail-on", "any", "--diff"]) == 1
    captured = capsys.readouterr()
    assert captured.out.splitlines()[3:6] == [
        "--- schemas/mcp/search.json (on disk)",
        "+++ schemas/mcp/search.json (from code)",
        "@@ -1,6 +1,6 @@",
    ]
    assert '-  "description": "Search.",' in captured.out.splitlines()
    assert '+  "description": "Search the catalogue.",' in captured.out.splitlines()
    assert captured.err == (
        "wink: schemas: 1 change at or above --fail-on any; accept them in an --ignore file, "
        "or record the new schemas with: "
        f"wink schemas export {TOOLS} --out schemas --dialect openai-chat --dialect mcp\n"
    )


def test_check_reports_missing_and_extra_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    export(capsys, TOOLS, "--out", "schemas", *TWO_DIALECTS)
    (tmp_path / "schemas" / "mcp" / "catalog.json").unlink()
    (tmp_path / "schemas" / "mcp" / "retired.json").write_text("{}\n")
    check = ["schemas", "check", TOOLS, "--dir", "schemas", *TWO_DIALECTS, "--fail-on", "any"]
    assert main(check) == 1
    captured = capsys.readouterr()
    assert captured.out.splitlines()[1:] == [
        "catalog:",
        "  info     file-missing: mcp/catalog.json is not on disk; the code produces it",
        "(files):",
        "  info     file-extra: mcp/retired.json is on disk; no tool or dialect produces it",
    ]
    assert captured.err.startswith("wink: schemas: 2 changes at or above --fail-on any;")


def test_check_leaves_json_files_outside_the_dialect_folders_to_the_user(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    export(capsys, TOOLS, "--out", "schemas", *TWO_DIALECTS)
    (tmp_path / "schemas" / "openapi.json").write_text("{}\n")
    (tmp_path / "schemas" / "fixtures").mkdir()
    (tmp_path / "schemas" / "fixtures" / "call.json").write_text("{}\n")
    assert main(["schemas", "check", TOOLS, "--dir", "schemas", *TWO_DIALECTS]) == 0
    assert capsys.readouterr().out == "schemas is up to date (7 files)\n"


def test_exporting_again_clears_every_extra_file_check_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    export(capsys, TOOLS, "--out", "schemas", *TWO_DIALECTS)
    (tmp_path / "schemas" / "mcp" / "retired.json").write_text("{}\n")
    (tmp_path / "schemas" / "wire").mkdir()
    (tmp_path / "schemas" / "wire" / "Old.json").write_text("{}\n")
    check = ["schemas", "check", TOOLS, "--dir", "schemas", *TWO_DIALECTS, "--fail-on", "any"]
    assert main(check) == 1
    assert capsys.readouterr().out.splitlines()[1:] == [
        "(files):",
        "  info     file-extra: mcp/retired.json is on disk; no tool or dialect produces it",
        "  info     file-extra: wire/Old.json is on disk; no tool or dialect produces it",
    ]
    export(capsys, TOOLS, "--out", "schemas", *TWO_DIALECTS)
    assert main(check) == 0


def test_a_tool_gone_from_the_code_is_breaking_and_a_new_one_is_info(
    capsys: pytest.CaptureFixture[str],
) -> None:
    export(capsys, f"{SHOP}:search", "--out", "schemas", "--dialect", "mcp")
    check = ["schemas", "check", f"{SHOP}:catalog", "--dir", "schemas", "--dialect", "mcp"]
    assert main(check) == 1
    captured = capsys.readouterr()
    assert captured.out == (
        "schemas differs from the code: 2 changes in 2 tools (1 breaking, 0 warning, 1 info)\n"
        "catalog:\n"
        "  info     tool-added: tool added\n"
        "search:\n"
        "  breaking tool-removed: tool removed; models and clients calling it now get an "
        "unknown tool\n"
    )


def test_check_with_another_strict_mode_than_the_export_names_both_and_shows_no_diff(
    capsys: pytest.CaptureFixture[str],
) -> None:
    export(capsys, TOOLS, "--out", "schemas", *TWO_DIALECTS)
    check = ["schemas", "check", TOOLS, "--dir", "schemas", *TWO_DIALECTS, "--strict", "true"]
    assert main(check) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "wink: schemas: the committed schemas were exported with --strict auto; check was "
        "given --strict true; check with the export's options, or, to change the committed "
        f"schemas, re-export with: wink schemas export {TOOLS} --out schemas "
        "--dialect openai-chat --dialect mcp --strict true\n"
    )


def test_check_with_other_dialects_and_wire_than_the_export_names_both(
    capsys: pytest.CaptureFixture[str],
) -> None:
    export(capsys, TOOLS, "--out", "schemas", "--wire")
    assert main(["schemas", "check", TOOLS, "--dir", "schemas", "--dialect", "mcp"]) == 1
    assert capsys.readouterr().err.startswith(
        "wink: schemas: the committed schemas were exported with all dialects, --wire; "
        "check was given --dialect mcp, --no-wire; "
    )


def test_a_re_export_command_keeps_wire_off_against_the_settings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.wink]\nwire = true\n")
    assert main(["schemas", "check", TOOLS, "--dir", "nowhere", "--no-wire"]) == 1
    assert capsys.readouterr().err == (
        f"wink: schema directory nowhere does not exist; create it with: "
        f"wink schemas export {TOOLS} --out nowhere --no-wire\n"
    )


def test_check_of_a_missing_directory_says_how_to_create_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["schemas", "check", TOOLS, "--dir", "nowhere", "--strict", "false"]) == 1
    assert capsys.readouterr().err == (
        f"wink: schema directory nowhere does not exist; create it with: "
        f"wink schemas export {TOOLS} --out nowhere --strict false\n"
    )


# --- links inside the schema directory ----------------------------------------------


def linked(path: str) -> str:
    return (
        f"wink: {path} is a symbolic link; wink does not read, write or remove files through "
        "links inside the schema directory (replace it with a real folder or file)\n"
    )


def outside_folder(tmp_path: Path) -> tuple[Path, dict[str, bytes]]:
    """A folder outside the schema directory, with files named like schema files."""
    outside = tmp_path / "outside"
    outside.mkdir()
    contents = {"search.json": b"outside search\n", "Old.json": b"outside, not stale\n"}
    for name, data in contents.items():
        (outside / name).write_bytes(data)
    return outside, contents


def contents_of(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in folder.iterdir()}


def test_export_through_a_linked_dialect_folder_is_refused_and_writes_nothing_outside(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outside, contents = outside_folder(tmp_path)
    (tmp_path / "schemas").mkdir()
    (tmp_path / "schemas" / "mcp").symlink_to(outside, target_is_directory=True)
    assert main(["schemas", "export", TOOLS, "--out", "schemas", *TWO_DIALECTS]) == 1
    assert capsys.readouterr().err == linked("schemas/mcp")
    assert contents_of(outside) == contents
    assert files_under(tmp_path / "schemas") == []


def test_export_of_a_linked_wire_folder_removes_no_stale_file_outside(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outside, contents = outside_folder(tmp_path)
    export(capsys, TOOLS, "--out", "schemas", "--dialect", "mcp")
    (tmp_path / "schemas" / "wire").symlink_to(outside, target_is_directory=True)
    before = {
        path: (tmp_path / "schemas" / path).read_bytes()
        for path in files_under(tmp_path / "schemas")
    }
    assert (
        main(["schemas", "export", f"{SHOP}:search", "--out", "schemas", "--dialect", "mcp"]) == 1
    )
    assert capsys.readouterr().err == linked("schemas/wire")
    assert contents_of(outside) == contents
    after = {
        path: (tmp_path / "schemas" / path).read_bytes()
        for path in files_under(tmp_path / "schemas")
    }
    assert after == before


def test_export_over_a_schema_file_that_is_a_link_is_refused_and_leaves_its_target(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outside, contents = outside_folder(tmp_path)
    (tmp_path / "schemas" / "mcp").mkdir(parents=True)
    (tmp_path / "schemas" / "mcp" / "search.json").symlink_to(outside / "search.json")
    assert (
        main(["schemas", "export", f"{SHOP}:search", "--out", "schemas", "--dialect", "mcp"]) == 1
    )
    assert capsys.readouterr().err == linked("schemas/mcp/search.json")
    assert contents_of(outside) == contents


def test_export_removes_nothing_an_index_lists_under_a_linked_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outside, contents = outside_folder(tmp_path)
    export(capsys, TOOLS, "--out", "schemas", "--dialect", "mcp")
    index_path = tmp_path / "schemas" / "index.json"
    index = json.loads(index_path.read_text())
    index["wire"] = {"Old": "elsewhere/Old.json"}
    index_path.write_text(json.dumps(index))
    (tmp_path / "schemas" / "elsewhere").symlink_to(outside, target_is_directory=True)
    assert main(["schemas", "export", TOOLS, "--out", "schemas", "--dialect", "mcp"]) == 1
    assert capsys.readouterr().err == linked("schemas/elsewhere")
    assert contents_of(outside) == contents


def test_export_replaces_a_hard_linked_schema_file_and_leaves_the_outside_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outside, contents = outside_folder(tmp_path)
    (tmp_path / "schemas" / "mcp").mkdir(parents=True)
    (tmp_path / "schemas" / "mcp" / "search.json").hardlink_to(outside / "search.json")
    export(capsys, f"{SHOP}:search", "--out", "schemas", "--dialect", "mcp")
    assert contents_of(outside) == contents
    written = (tmp_path / "schemas" / "mcp" / "search.json").read_text()
    assert json.loads(written)["name"] == "search"
    assert files_under(tmp_path / "schemas") == [
        "contract/search.json",
        "index.json",
        "mcp/search.json",
    ]


def test_export_to_an_out_path_that_is_itself_a_link_writes_into_its_target(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "schemas").symlink_to(tmp_path / "real", target_is_directory=True)
    assert export(capsys, f"{SHOP}:search", "--out", "schemas", "--dialect", "mcp") == (
        "wrote 3 files to schemas (0 unchanged, 0 stale removed)\n"
    )
    assert files_under(tmp_path / "real") == [
        "contract/search.json",
        "index.json",
        "mcp/search.json",
    ]


def test_check_through_a_linked_dialect_folder_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    export(capsys, TOOLS, "--out", "elsewhere", "--dialect", "mcp")
    (tmp_path / "schemas").mkdir()
    (tmp_path / "schemas" / "index.json").write_bytes(
        (tmp_path / "elsewhere" / "index.json").read_bytes()
    )
    (tmp_path / "schemas" / "mcp").symlink_to(
        tmp_path / "elsewhere" / "mcp", target_is_directory=True
    )
    assert main(["schemas", "check", TOOLS, "--dir", "schemas", "--dialect", "mcp"]) == 1
    assert capsys.readouterr() == ("", linked("schemas/mcp"))


def test_a_fifo_named_like_a_schema_file_is_refused_without_blocking(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "schemas" / "mcp").mkdir(parents=True)
    os.mkfifo(tmp_path / "schemas" / "mcp" / "search.json")
    assert (
        main(["schemas", "export", f"{SHOP}:search", "--out", "schemas", "--dialect", "mcp"]) == 1
    )
    assert capsys.readouterr().err == (
        "wink: cannot read schemas/mcp/search.json: not a regular file\n"
    )
