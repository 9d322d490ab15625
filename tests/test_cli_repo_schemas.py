"""The committed ``schemas/`` folder matches the code: drift fails the test suite (and CI)."""

from __future__ import annotations

from pathlib import Path

import pytest

from wink.cli import main
from wink.cli.settings import WinkSettings

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture()
def at_the_root(monkeypatch: pytest.MonkeyPatch) -> None:
    """The repository root as the current directory, with no WINK_* overrides."""
    monkeypatch.chdir(ROOT)
    for name in WinkSettings.model_fields:
        monkeypatch.delenv(f"WINK_{name.upper()}", raising=False)


@pytest.mark.usefixtures("at_the_root")
def test_committed_schemas_match_the_project_settings(capsys: pytest.CaptureFixture[str]) -> None:
    # `make schemas` runs `wink schemas export --out schemas`: [tool.wink] says the rest.
    # Every difference fails, compatible ones included: the folder must be re-exported.
    status = main(["schemas", "check", "--dir", "schemas", "--fail-on", "any"])
    captured = capsys.readouterr()
    assert status == 0, f"schemas/ drifted; run `make schemas`\n{captured.out}{captured.err}"
