"""docs/cli.md: its install steps work from a clone, and its pytest example passes."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

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
