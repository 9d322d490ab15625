"""Shared timing helpers for the benchmarks: best-of-N per-call cost in microseconds."""

from __future__ import annotations

import time
from collections.abc import Callable

QUICK = False
"""When true, every timing calls its function once: the smoke test sets it to run each
module's ``main()`` as a check that it still works, not as a measurement."""


def per_call_us(function: Callable[[], object], *, number: int = 2000, repeat: int = 5) -> float:
    """Best of ``repeat`` runs of ``number`` calls, in microseconds per call."""
    if QUICK:
        number = repeat = 1
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            function()
        best = min(best, time.perf_counter() - start)
    return best / number * 1e6


def once_ms(function: Callable[[], object]) -> float:
    """Wall time of one call, in milliseconds."""
    start = time.perf_counter()
    function()
    return (time.perf_counter() - start) * 1e3
