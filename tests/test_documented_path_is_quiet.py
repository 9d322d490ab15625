"""Doing what the README, the examples and the guide do logs no warning.

Each example handles its own intentional failures (and quiets the executor's
warning about them); anything else at WARNING, such as a result type without
``render()``, would greet a reader who follows the docs.
"""

from __future__ import annotations

import importlib.util
import logging
import re
import runpy
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
EXAMPLES = ROOT / "examples"
MISSING_RENDER = "has no render() method"
SOURCE = "docs/guide.md (its Python blocks)"


@pytest.fixture
def executor_log_level() -> Iterator[None]:
    """Put back the executor logger's level, which the examples' ``main`` sets."""
    logger = logging.getLogger("wink.runtime.executor")
    level = logger.level
    try:
        yield
    finally:
        logger.setLevel(level)


def test_the_readme_first_example_logs_no_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    source = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)[0]
    script = tmp_path / "readme_first_example.py"
    script.write_text(source)
    with caplog.at_level(logging.WARNING, logger="wink"):
        runpy.run_path(str(script), run_name="__main__")
    assert capsys.readouterr().out.splitlines()[1] == "e-1: https://example.com"
    assert caplog.records == []


@pytest.mark.parametrize("name", ["lookup_entity", "notes_agent", "evaluate_agent", "served_notes"])
def test_each_example_script_logs_no_warning(
    name: str,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    executor_log_level: None,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.syspath_prepend(str(EXAMPLES))  # served_notes imports notes_agent
    spec = importlib.util.spec_from_file_location(f"{name}_quiet", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)
    with caplog.at_level(logging.WARNING, logger="wink"):
        spec.loader.exec_module(module)
        module.main()
    assert capsys.readouterr().out  # it ran and printed its story
    assert caplog.records == []


# The guide's chapters are checked the same way, each run as a script, by
# tests/test_docs_guide.py::test_the_chapter_runs_on_its_own.
