"""Each chapter of the guide runs on its own, as a reader would paste it.

A chapter's Python blocks, in order, make one script: ``chapter_NN.py`` in a
folder of its own, run as ``__main__`` by a fresh interpreter with nothing added
(no ``from __future__`` import, nothing from the chapters before it). Blank
lines stand where the guide's prose is, so that a line of the script is the same
line of ``docs/guide.md`` in a traceback or a mypy message. A block preceded by
``<!-- not-run -->`` is intentionally partial and skipped. What a chapter shows
under "prints" is exactly what its script writes to stdout, and every script
passes ``mypy --strict``, as a user's CI would run it.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.mypy_check import check

GUIDE = Path(__file__).parent.parent / "docs" / "guide.md"
_BLOCK = re.compile(r"(<!-- not-run -->\s*\n)?```python\n(.*?)```", re.S)
_HEADING = re.compile(r"^## (.*)$", re.M)
_PRINTS = re.compile(r"^prints\n\n```\n(.*?)```", re.S | re.M)


def python_blocks(text: str) -> list[tuple[int, str]]:
    """The runnable blocks as (line of the opening fence, source)."""
    blocks = []
    for match in _BLOCK.finditer(text):
        if match.group(1) is None:
            fence_line = text.count("\n", 0, match.start()) + 1
            blocks.append((fence_line, match.group(2)))
    return blocks


def chapter_script(text: str) -> str:
    """A chapter's runnable blocks as one script whose line N is line N of ``text``."""
    lines: list[str] = []
    for fence_line, source in python_blocks(text):
        lines.extend([""] * (fence_line - len(lines)))
        lines.extend(source.splitlines())
    return "\n".join(lines) + "\n" if lines else ""


def chapters(text: str) -> dict[str, str]:
    """Each ``##`` chapter by its heading, with the lines above it blanked (so that line
    numbers stay the guide's)."""
    headings = list(_HEADING.finditer(text))
    ends = [heading.start() for heading in headings[1:]] + [len(text)]
    return {
        heading.group(1): "\n" * text.count("\n", 0, heading.start()) + text[heading.start() : end]
        for heading, end in zip(headings, ends, strict=True)
    }


def printed(chapter: str) -> str:
    """What a chapter says its code prints: the blocks after a line "prints"."""
    return "".join(_PRINTS.findall(chapter))


CHAPTERS = {
    heading: chapter
    for heading, chapter in chapters(GUIDE.read_text()).items()
    if python_blocks(chapter)
}


def _file_name(heading: str) -> str:
    return f"chapter_{int(heading.split('.')[0]):02d}"


def test_not_run_marker_skips_only_the_block_after_it() -> None:
    text = "<!-- not-run -->\n```python\nskipped\n```\n\n```python\nkept\n```\n"
    assert python_blocks(text) == [(6, "kept\n")]


def test_a_chapter_script_keeps_the_guide_line_numbers() -> None:
    text = "## 1. One\n\ntext\n\n```python\na = 1\n```\n\n```python\nb = a\n```\n"
    assert chapter_script(text) == "\n" * 5 + "a = 1\n" + "\n" * 3 + "b = a\n"


def test_chapters_are_split_at_their_headings_with_the_lines_above_blanked() -> None:
    text = "# Guide\n\n## 1. One\n\nOne.\n## 2. Two\n\nTwo.\n"
    assert chapters(text) == {
        "1. One": "\n\n## 1. One\n\nOne.\n",
        "2. Two": "\n" * 5 + "## 2. Two\n\nTwo.\n",
    }


def test_printed_output_is_the_blocks_after_a_prints_line() -> None:
    chapter = "## 1. One\n\nprints\n\n```\nfirst\n```\n\n```\nnot shown\n```\n"
    assert printed(chapter) == "first\n"


def test_every_numbered_chapter_but_the_security_one_has_code() -> None:
    numbers = [int(heading.split(".")[0]) for heading in CHAPTERS]
    assert numbers == [*range(1, 24), 25, 26, 27, 28, 29]
    assert "24. Security: what each part guarantees, and what it does not" not in CHAPTERS


@pytest.mark.parametrize("heading", CHAPTERS)
def test_the_chapter_runs_on_its_own(heading: str, tmp_path: Path) -> None:
    script = tmp_path / f"{_file_name(heading)}.py"
    script.write_text(chapter_script(CHAPTERS[heading]))
    run = subprocess.run(
        [sys.executable, script.name],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout == printed(CHAPTERS[heading])
    # Doing what the guide does shows a model no result type without render(): the
    # warning would reach stderr through logging's last-resort handler.
    assert "has no render() method" not in run.stderr


def test_chapter_18_says_what_its_code_prints() -> None:
    [chapter] = [chapter for heading, chapter in CHAPTERS.items() if heading.startswith("18.")]
    assert printed(chapter).splitlines() == [
        "slices: expected a list, got a number",
        "snapshot: expected an object with version and slices, got null",
        "slices[0]: expected an object with type, kind and items, got a list",
    ]


def test_every_chapter_passes_mypy_strict(tmp_path: Path) -> None:
    scripts = {
        _file_name(heading): chapter_script(chapter) for heading, chapter in CHAPTERS.items()
    }
    assert check(tmp_path, scripts) == []
