"""Run every benchmark module (``bench_*.py``) in this folder and print its figures."""

from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path


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
        module.main()
        print()


if __name__ == "__main__":
    main()
