"""docs/cli.md: its install steps work from a clone, its pytest example passes, and it
documents every command and option."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from wink.cli import main

ROOT = Path(__file__).parent.parent
CLI_DOC = (ROOT / "docs" / "cli.md").read_text()


def test_install_is_shown_from_a_clone_not_from_pypi() -> None:
    assert "pip install wink" not in CLI_DOC
    install = re.findall(r"```sh\n(cd wink.*?)```", CLI_DOC, re.S)[0]
    commands = [line.split("#")[0].strip() for line in install.splitlines()]
    assert commands == [
        "cd wink",
        "python3 -m venv .venv",
        ".venv/bin/pip install -e .",
        ".venv/bin/wink --help",
    ]


def test_the_pytest_example_passes_when_run_by_pytest(tmp_path: Path) -> None:
    [source] = re.findall(r"## From pytest\n.*?```python\n(.*?)```", CLI_DOC, re.S)
    test_file = tmp_path / "test_wink_cli_example.py"
    test_file.write_text(source)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test_file)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "2 passed" in run.stdout


def _help(capsys: pytest.CaptureFixture[str], *command: str) -> str:
    assert main([*command, "--help"]) == 0
    return capsys.readouterr().out


def test_every_command_has_a_section_of_its_own(capsys: pytest.CaptureFixture[str]) -> None:
    listed = re.findall(r"\{([a-z,]+)\}", _help(capsys))[0]
    sections = re.findall(r"^## \d+\. .*?(?=^## )", CLI_DOC, re.S | re.M)
    documented = [
        command
        for command in listed.split(",")
        if any(f"wink {command} " in section for section in sections)
    ]
    expected = ["tools", "schemas", "validate", "serve", "trace", "sessions", "replay"]
    assert documented == listed.split(",") == expected


@pytest.mark.parametrize(
    "command",
    [
        ("tools",),
        ("schemas", "export"),
        ("schemas", "check"),
        ("validate",),
        ("serve",),
        ("trace",),
        ("replay",),
        ("sessions", "list"),
        ("sessions", "show"),
        ("sessions", "export"),
        ("sessions", "delete"),
        ("sessions", "prune"),
    ],
)
def test_every_option_of_a_command_is_documented(
    command: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    options = set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", _help(capsys, *command)))
    # ``--no-X`` is the documented ``--X`` switched off.
    undocumented = {
        option
        for option in options - {"--help"}
        if f"`{option}" not in CLI_DOC
        and f"{option} " not in CLI_DOC
        and not (option.startswith("--no-") and f"--{option[5:]}" in CLI_DOC)
    }
    assert undocumented == set()


def test_the_global_version_option_is_documented(capsys: pytest.CaptureFixture[str]) -> None:
    assert "--version" in _help(capsys)
    assert "`wink --version`" in CLI_DOC
