"""Run every stress family (``family_*.py`` modules here) and print its tally.

``python -m stress [SCALE] [family_name ...]``: SCALE multiplies each family's quick
input count (``make stress`` uses 50; ``make test`` runs each family at 1). Exits 1
when any count that must be zero is not.
"""

from __future__ import annotations

import importlib
import logging
import pkgutil
import sys
from pathlib import Path

from stress.report import MUST_BE_ZERO, FamilyReport


def families() -> list[str]:
    """The names of the family modules, sorted."""
    folder = Path(__file__).parent
    return sorted(
        m.name for m in pkgutil.iter_modules([str(folder)]) if m.name.startswith("family_")
    )


def run_family(name: str, scale: float) -> FamilyReport:
    """Import ``stress.<name>`` and run it at ``scale``."""
    module = importlib.import_module(f"stress.{name}")
    report: FamilyReport = module.run(scale)
    return report


def main(argv: list[str]) -> int:
    """Run the selected families; return the exit status."""
    # The campaigns make handlers fail on purpose; wink's warnings about each of those
    # would bury the tally. What matters is counted in each family's report.
    logging.getLogger("wink").setLevel(logging.ERROR)
    scale = float(argv[0]) if argv and argv[0].replace(".", "", 1).isdigit() else 50.0
    selected = [a for a in argv if not a.replace(".", "", 1).isdigit()] or families()
    header = f"{'family':<28}{'inputs':>9}" + "".join(f"{c:>13}" for c in MUST_BE_ZERO)
    print(header + f"{'worst ms':>11}{'worst KiB':>11}")
    failed = False
    for name in selected:
        report = run_family(name, scale)
        counts = "".join(f"{getattr(report, c):>13}" for c in MUST_BE_ZERO)
        print(
            f"{report.family:<28}{report.inputs:>9}{counts}"
            f"{report.worst_seconds * 1e3:>11.2f}{report.worst_bytes / 1024:>11.1f}"
        )
        for example in report.examples:
            print(f"    {example}")
        failed = failed or bool(report.failures())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
