"""The committed ``schemas/`` folder matches the code: drift fails the test suite (and CI)."""

from __future__ import annotations

from pathlib import Path

import pytest

from wink.cli import main

ROOT = Path(__file__).resolve().parents[1]

# The same command as `make schemas`, with `check` in place of `export`.
EXAMPLES = ["examples/lookup_entity.py:template", "examples/notes_agent.py:template"]
CHECK = ["schemas", "check", *EXAMPLES, "--wire", "--dir", "schemas"]


def test_committed_schemas_match_the_examples_and_wire_types(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(ROOT)
    for name in ("WINK_STRICT", "WINK_SCHEMA_DIR", "WINK_TARGETS", "WINK_DIALECTS", "WINK_WIRE"):
        monkeypatch.delenv(name, raising=False)
    status = main(CHECK)
    captured = capsys.readouterr()
    assert status == 0, f"schemas/ drifted; run `make schemas`\n{captured.out}{captured.err}"
