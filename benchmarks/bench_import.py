"""What importing wink costs a fresh interpreter, next to importing pydantic.

Each figure is the best of several fresh subprocesses, timed inside the child
from just before the import statement to just after it (interpreter start-up
excluded). Floor: ``import pydantic`` measured the same way in the same run.
"""

from __future__ import annotations

import subprocess
import sys

RUNS = 15

STATEMENTS = {
    "import pydantic (floor)": "import pydantic",
    "import wink": "import wink",
    "from pydantic import BaseModel, TypeAdapter": "from pydantic import BaseModel, TypeAdapter",
    "from wink import Tool, Session, ToolExecutor, PromptTemplate": (
        "from wink import Tool, Session, ToolExecutor, PromptTemplate"
    ),
}

_CHILD = (
    "import time\n"
    "start = time.perf_counter()\n"
    "{statement}\n"
    "print((time.perf_counter() - start) * 1e3)\n"
)


def import_ms(statement: str) -> float:
    """One fresh interpreter's time for ``statement``, in milliseconds."""
    completed = subprocess.run(
        [sys.executable, "-c", _CHILD.format(statement=statement)],
        capture_output=True,
        text=True,
        check=True,
    )
    return float(completed.stdout)


def main() -> None:
    """Print the best of ``RUNS`` fresh imports of each statement, interleaved."""
    best = dict.fromkeys(STATEMENTS, float("inf"))
    for _ in range(RUNS):
        for label, statement in STATEMENTS.items():
            best[label] = min(best[label], import_ms(statement))
    floor = best["import pydantic (floor)"]
    print(f"best of {RUNS} fresh interpreters each:")
    for label, took in best.items():
        print(f"  {label:<62} {took:7.1f} ms  ({took / floor:4.1f}x import pydantic)")


if __name__ == "__main__":
    main()
