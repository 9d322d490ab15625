"""What importing wink costs a fresh interpreter, next to importing pydantic.

Each figure is the best of several fresh subprocesses, timed inside the child
from just before the import statement to just after it (interpreter start-up
excluded). Each wink statement is printed next to its floor, the pydantic
statement a program needs anyway, measured the same way in the same run.

The children read compiled bytecode, as an installed program does: they share a
bytecode cache of their own (filled by one untimed run of each statement), so
that neither side compiles source when ``PYTHONDONTWRITEBYTECODE`` is set or the
source tree is read-only.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

RUNS = 25

PAIRS = (
    # (label, statement, floor label, floor statement, target ratio or None)
    ("import wink", "import wink", "import pydantic", "import pydantic", None),
    (
        "from wink import Tool, Session, ToolExecutor, PromptTemplate",
        "from wink import Tool, Session, ToolExecutor, PromptTemplate",
        "from pydantic import BaseModel, TypeAdapter",
        "from pydantic import BaseModel, TypeAdapter",
        1.5,
    ),
)

_CHILD = (
    "import time\n"
    "start = time.perf_counter()\n"
    "{statement}\n"
    "print((time.perf_counter() - start) * 1e3)\n"
)


def import_ms(statement: str, environment: dict[str, str]) -> float:
    """One fresh interpreter's time for ``statement``, in milliseconds."""
    completed = subprocess.run(
        [sys.executable, "-c", _CHILD.format(statement=statement)],
        capture_output=True,
        text=True,
        check=True,
        env=environment,
    )
    return float(completed.stdout)


def child_environment(cache: str) -> dict[str, str]:
    """This process's environment, with bytecode written to and read from ``cache``."""
    environment = {
        name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"
    }
    environment["PYTHONPYCACHEPREFIX"] = cache
    return environment


def main() -> None:
    """Print the best of ``RUNS`` fresh imports of each statement (interleaved), each
    next to its floor."""
    statements = {statement for pair in PAIRS for statement in (pair[1], pair[3])}
    best = dict.fromkeys(statements, float("inf"))
    with tempfile.TemporaryDirectory(prefix="wink-bench-import-") as cache:
        environment = child_environment(cache)
        for statement in statements:
            import_ms(statement, environment)  # fills the bytecode cache; not timed
        for _ in range(RUNS):
            for statement in sorted(statements):
                best[statement] = min(best[statement], import_ms(statement, environment))
    print(f"best of {RUNS} fresh interpreters each, bytecode cached:")
    for label, statement, floor_label, floor_statement, target in PAIRS:
        took, floor = best[statement], best[floor_statement]
        print(f"  {floor_label + ' (floor)':<62} {floor:7.1f} ms")
        print(f"  {label:<62} {took:7.1f} ms")
        aim = f" (target <= {target}x)" if target is not None else ""
        print(f"  {'  / floor' + aim:<62} {took / floor:7.2f}x")


if __name__ == "__main__":
    main()
