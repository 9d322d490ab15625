"""Run every benchmark module (``bench_*.py``) in this folder and print its figures."""

from __future__ import annotations

import contextlib
import importlib
import logging
import pkgutil
import sys
from collections.abc import Iterator
from pathlib import Path


def _not_missing_render(record: logging.LogRecord) -> bool:
    return not str(record.msg).startswith("result value type %s has no render() method")


@contextlib.contextmanager
def expected_warnings_silenced() -> Iterator[None]:
    """Drop the warnings the benchmarks cause on purpose, and only those.

    Their result types have no ``render()``: the model sees them as JSON, like the
    floors' ``json.dumps``. Saying so would be noise among the figures.
    """
    logger = logging.getLogger("wink.tools.result")
    logger.addFilter(_not_missing_render)
    try:
        yield
    finally:
        logger.removeFilter(_not_missing_render)


def main() -> None:
    """Import each ``bench_*`` module and call its ``main()``."""
    folder = Path(__file__).parent
    selected = set(sys.argv[1:])
    for module_info in sorted(pkgutil.iter_modules([str(folder)]), key=lambda m: m.name):
        if not module_info.name.startswith("bench_"):
            continue
        if selected and module_info.name not in selected:
            continue
        module = importlib.import_module(f"benchmarks.{module_info.name}")
        print(f"== {module_info.name} ==")
        with expected_warnings_silenced():
            module.main()
        print()


if __name__ == "__main__":
    main()
