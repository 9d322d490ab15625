"""The README's code and commands stay true."""

from __future__ import annotations

import re
import runpy
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
README = (ROOT / "README.md").read_text()


def test_readme_opens_with_the_demo_and_test_commands() -> None:
    first_block = re.findall(r"```sh\n(.*?)```", README, re.S)[0]
    commands = [line.split("#")[0].strip() for line in first_block.splitlines()]
    assert commands == ["make demo", "make test"]


def test_ci_runs_the_readme_test_command() -> None:
    assert "make test" in (ROOT / ".ci" / "run").read_text()


def test_readme_first_example_evaluates_the_prompt_and_prints_the_schema(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = re.findall(r"```python\n(.*?)```", README, re.S)[0]
    assert "adapter.evaluate(" in source
    script = tmp_path / "readme_example.py"
    script.write_text(source)
    runpy.run_path(str(script), run_name="__main__")
    out = capsys.readouterr().out.splitlines()
    assert out[:2] == [
        "LookupResult(entity_id='e-1', document_url='https://example.com')",
        "e-1: https://example.com",
    ]
    assert out[2] == (
        "{'properties': {'entity_id': {'description': 'Global identifier to fetch', "
        "'type': 'string'}}, 'required': ['entity_id'], 'type': 'object', "
        "'additionalProperties': False}"
    )


def test_readme_first_example_shows_the_fields_form_next_to_the_params_class() -> None:
    source = re.findall(r"```python\n(.*?)```", README, re.S)[0]
    assert "def lookup_entity(entity_id: str, *, context: ToolContext)" in source
    assert "def lookup(params: LookupParams, *, context: ToolContext)" in source
    assert "assert lookup.params_schema == lookup_entity.params_schema" in source


def test_readme_cli_commands_name_targets_that_exist() -> None:
    targets = set(re.findall(r"wink \w+(?: \w+)? (examples/\S+\.py):\w+", README))
    assert targets == {"examples/notes_agent.py", "examples/served_notes.py"}
    assert all((ROOT / target).is_file() for target in targets)


def test_readme_validate_command_reports_the_invalid_recorded_calls(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from wink.cli import main

    line = next(line for line in README.splitlines() if "wink validate" in line)
    monkeypatch.chdir(ROOT)
    assert main(line.split()[1:]) == 1
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [
        "examples/recorded_calls.jsonl:3: write_file: text: required field is missing",
        "examples/recorded_calls.jsonl:3: write_file: txt: unknown field "
        "(allowed: path, text, append)",
        "examples/recorded_calls.jsonl:4: read_file: path: input should be a valid string (got 7)",
    ]


def test_make_knows_every_target_the_readme_names() -> None:
    named = set(re.findall(r"make (\w+)", README))
    dry_run = subprocess.run(
        ["make", "-n", *sorted(named)], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert named >= {"demo", "test", "install", "bench", "fuzz", "schemas"}
    assert dry_run.returncode == 0, dry_run.stderr
