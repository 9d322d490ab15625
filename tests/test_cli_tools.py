"""``wink tools`` and the command's own behaviour: help, version, usage errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from wink.cli import main
from wink.cli.targets import resolve_targets
from wink.providers import anthropic, gemini, mcp, openai

SHOP = Path(__file__).parent / "test_cli_fixtures" / "shop.py"
TOOLS = f"{SHOP}:tools"


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("WINK_PROVIDER", "WINK_STRICT", "WINK_TARGETS"):
        monkeypatch.delenv(name, raising=False)


def printed_specs(argv: list[str], capsys: pytest.CaptureFixture[str]) -> Any:
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    return json.loads(captured.out)


def test_openai_chat_specs_are_printed_by_default(capsys: pytest.CaptureFixture[str]) -> None:
    specs = printed_specs(["tools", TOOLS], capsys)
    assert [(spec["type"], spec["function"]["name"]) for spec in specs] == [
        ("function", "search"),
        ("function", "catalog"),
    ]
    assert specs == openai.tool_specs(resolve_targets([TOOLS]), api="chat", strict="auto")


def test_search_spec_is_printed_exactly(capsys: pytest.CaptureFixture[str]) -> None:
    assert printed_specs(["tools", f"{SHOP}:search", "--provider", "anthropic"], capsys) == [
        {
            "name": "search",
            "description": "Search the catalogue.",
            "input_schema": {
                "properties": {
                    "query": {"description": "Words to look for", "type": "string"},
                    "limit": {"default": 10, "type": ["integer", "null"]},
                },
                "required": ["query"],
                "type": "object",
                "additionalProperties": False,
            },
        }
    ]


def test_api_responses_prints_flat_openai_specs(capsys: pytest.CaptureFixture[str]) -> None:
    specs = printed_specs(["tools", TOOLS, "--api", "responses"], capsys)
    assert specs[0]["name"] == "search"
    assert specs == openai.tool_specs(resolve_targets([TOOLS]), api="responses", strict="auto")


def test_strict_false_turns_openai_strict_mode_off(capsys: pytest.CaptureFixture[str]) -> None:
    specs = printed_specs(["tools", TOOLS, "--strict", "false"], capsys)
    assert [spec["function"]["strict"] for spec in specs] == [False, False]


def test_anthropic_strict_true_is_passed_through(capsys: pytest.CaptureFixture[str]) -> None:
    specs = printed_specs(["tools", TOOLS, "--provider", "anthropic", "--strict", "true"], capsys)
    assert specs == anthropic.tool_specs(resolve_targets([TOOLS]), strict=True)
    assert specs != anthropic.tool_specs(resolve_targets([TOOLS]), strict=False)


def test_gemini_openapi_form_is_printed(capsys: pytest.CaptureFixture[str]) -> None:
    specs = printed_specs(["tools", TOOLS, "--provider", "gemini", "--form", "openapi"], capsys)
    assert specs[0]["parameters"]["type"] == "OBJECT"
    assert specs == gemini.tool_specs(resolve_targets([TOOLS]), form="openapi")


def test_mcp_specs_are_printed(capsys: pytest.CaptureFixture[str]) -> None:
    specs = printed_specs(["tools", TOOLS, "--provider", "mcp"], capsys)
    assert specs == mcp.tool_specs(resolve_targets([TOOLS]))


def test_provider_and_targets_come_from_pyproject(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.wink]\nprovider = "mcp"\ntargets = ["{SHOP}:search"]\n'
    )
    specs = printed_specs(["tools"], capsys)
    assert [spec["inputSchema"]["required"] for spec in specs] == [["query"]]


def test_environment_overrides_pyproject(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.wink]\nprovider = "mcp"\n')
    monkeypatch.setenv("WINK_PROVIDER", "gemini")
    specs = printed_specs(["tools", TOOLS], capsys)
    assert "parametersJsonSchema" in specs[0]


def test_command_line_overrides_environment(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("WINK_PROVIDER", "gemini")
    specs = printed_specs(["tools", TOOLS, "--provider", "anthropic"], capsys)
    assert "input_schema" in specs[0]


def test_targets_from_the_environment_may_be_comma_separated(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("WINK_TARGETS", f"{SHOP}:search,{SHOP}:catalog")
    specs = printed_specs(["tools", "--provider", "mcp"], capsys)
    assert [spec["name"] for spec in specs] == ["search", "catalog"]


def test_strict_true_on_a_free_form_mapping_is_one_line_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["tools", f"{SHOP}:free_form", "--strict", "true"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("wink: openai-chat specs: tool 'tally': field counts ")
    assert captured.err.count("\n") == 1


def test_unknown_provider_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tools", TOOLS, "--provider", "cohere"]) == 2
    assert capsys.readouterr().err == (
        "wink: tools --provider: input should be 'openai', 'anthropic', 'gemini' or 'mcp' "
        "(got 'cohere')\n"
    )


def test_unknown_provider_setting_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("WINK_PROVIDER", "cohere")
    assert main(["tools", TOOLS]) == 2
    assert capsys.readouterr().err == (
        "wink: invalid setting 'provider' (WINK_PROVIDER or [tool.wink] in pyproject.toml): "
        "input should be 'openai', 'anthropic', 'gemini' or 'mcp' (got 'cohere')\n"
    )


def test_unknown_pyproject_setting_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.wink]\ntarget = "x:y"\n')
    assert main(["tools", TOOLS]) == 2
    assert capsys.readouterr().err == (
        "wink: unknown setting 'target' in [tool.wink] of pyproject.toml "
        "(settings: provider, strict, schema_dir, targets, dialects, wire, serve_transport, "
        "serve_host, serve_port, serve_session_idle_timeout, serve_max_sessions, "
        "serve_max_message_bytes, serve_max_in_flight, serve_store, max_line_bytes)\n"
    )


def test_unreadable_pyproject_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.wink\n")
    assert main(["tools", TOOLS]) == 2
    assert capsys.readouterr().err == (
        "wink: cannot read pyproject.toml: Expected ']' at the end of a table declaration "
        "(at line 1, column 11)\n"
    )


def test_form_with_another_provider_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tools", TOOLS, "--form", "openapi"]) == 2
    assert capsys.readouterr().err == "wink: --form applies to --provider gemini, not openai\n"


def test_api_with_another_provider_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tools", TOOLS, "--provider", "mcp", "--api", "chat"]) == 2
    assert capsys.readouterr().err == "wink: --api applies to --provider openai, not mcp\n"


def test_strict_with_gemini_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tools", TOOLS, "--provider", "gemini", "--strict", "true"]) == 2
    assert capsys.readouterr().err == (
        "wink: --strict applies to --provider openai or anthropic, not gemini\n"
    )


def test_strict_auto_with_anthropic_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tools", TOOLS, "--provider", "anthropic", "--strict", "auto"]) == 2
    assert capsys.readouterr().err == (
        "wink: --strict auto applies to --provider openai; anthropic takes true or false\n"
    )


def test_help_shows_the_plain_defaults_of_api_and_form(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tools", "--help"]) == 0
    help_text = " ".join(capsys.readouterr().out.split())
    assert "--api {chat,responses} openai API shape (default: chat)" in help_text
    assert "--form {json_schema,openapi} gemini schema form (default: json_schema)" in help_text


def test_settings_are_found_from_a_subfolder_with_paths_from_the_project_root(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "project_tools.py").write_text("from shop import search\ntools = [search]\n")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.wink]\nprovider = "mcp"\ntargets = ["project_tools.py:tools"]\n'
    )
    monkeypatch.syspath_prepend(str(SHOP.parent))
    (tmp_path / "deep" / "er").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "deep" / "er")
    specs = printed_specs(["tools"], capsys)
    assert [spec["name"] for spec in specs] == ["search"]
    assert "inputSchema" in specs[0]


def test_unknown_option_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tools", TOOLS, "--pretty"]) == 2
    assert capsys.readouterr().err == "wink: unrecognized arguments: --pretty\n"


def test_unknown_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lint"]) == 2
    err = capsys.readouterr().err
    # argparse quotes the choices differently across Python releases.
    assert err.startswith(
        "wink: argument {tools,schemas,validate,serve,trace,sessions,replay}: "
        "invalid choice: 'lint' "
    )
    assert err.count("\n") == 1


def test_no_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert capsys.readouterr().err == (
        "wink: choose a command: tools, schemas, validate, serve, trace, sessions or replay "
        "(see wink --help)\n"
    )


def test_help_lists_the_commands_and_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(
        "usage: wink [-h] [--version]\n"
        "            {tools,schemas,validate,serve,trace,sessions,replay} ..."
    )
    assert "validate recorded tool calls (JSONL)" in out


def test_version_is_printed(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib.metadata import version

    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"wink {version('wink')}\n"
