"""The guide's Python blocks run, in order, and their assertions hold.

All blocks run in one namespace, top to bottom, as a reader following the guide
would: later sections reuse the types, tools and prompts of earlier ones. The
namespace is a real module in ``sys.modules`` so that dataclasses and pydantic
models defined in the blocks resolve their module as they would in a script.
A block preceded by ``<!-- not-run -->`` is intentionally partial and skipped.
The blocks run so far are the module's source (in ``linecache``), as a script's
file would be, so that what reads source (attribute docstrings) finds it.
"""

from __future__ import annotations

import linecache
import re
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

GUIDE = Path(__file__).parent.parent / "docs" / "guide.md"
_BLOCK = re.compile(r"(<!-- not-run -->\s*\n)?```python\n(.*?)```", re.S)
_MODULE = "wink_docs_guide"
_SOURCE = "docs/guide.md (its Python blocks)"


def python_blocks(text: str) -> list[tuple[int, str]]:
    """The runnable blocks as (line of the opening fence, source)."""
    blocks = []
    for match in _BLOCK.finditer(text):
        if match.group(1) is None:
            fence_line = text.count("\n", 0, match.start()) + 1
            blocks.append((fence_line, match.group(2)))
    return blocks


@pytest.fixture
def guide_module() -> Iterator[types.ModuleType]:
    module = types.ModuleType(_MODULE)
    module.__file__ = _SOURCE
    sys.modules[_MODULE] = module
    try:
        yield module
    finally:
        del sys.modules[_MODULE]
        linecache.cache.pop(_SOURCE, None)


def test_not_run_marker_skips_only_the_block_after_it() -> None:
    text = "<!-- not-run -->\n```python\nskipped\n```\n\n```python\nkept\n```\n"
    assert python_blocks(text) == [(6, "kept\n")]


def test_every_python_block_in_the_guide_runs_in_order(guide_module: types.ModuleType) -> None:
    blocks = python_blocks(GUIDE.read_text())
    assert len(blocks) >= 14  # one or more per section; fewer means the fences changed
    seen: list[str] = []
    for line, source in blocks:
        seen.extend(source.splitlines(keepends=True))
        linecache.cache[_SOURCE] = (sum(map(len, seen)), None, list(seen), _SOURCE)
        code = compile(source, f"docs/guide.md (block at line {line})", "exec")
        exec(code, guide_module.__dict__)
