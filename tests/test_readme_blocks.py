"""Every Python block of the README runs as it stands, and its claims about itself hold."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
README = (ROOT / "README.md").read_text()
BLOCKS = re.findall(r"```python\n(.*?)```", README, re.S)


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_every_python_block_runs_on_its_own(
    index: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Each block is a script a reader could paste into a file and run.
    script = tmp_path / f"readme_block_{index}.py"
    script.write_text(BLOCKS[index])
    runpy.run_path(str(script), run_name="__main__")
    capsys.readouterr()


def test_the_readme_has_the_tool_and_provider_blocks() -> None:
    headings = re.findall(r"^## (.*)\n\n```python", README, re.M)
    assert len(BLOCKS) >= 2
    assert "Provider dialects in code" in headings


def test_a_line_count_in_a_heading_is_the_length_of_its_block() -> None:
    claims = re.findall(r"^## .* in (\d+) lines\n\n```python\n(.*?)```", README, re.M | re.S)
    for claimed, block in claims:
        assert len(block.splitlines()) == int(claimed)
