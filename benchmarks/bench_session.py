"""Session costs that must follow the work, not the session's size.

- A rollback after a call that logged one event, at a small and a large ``LOG``:
  the two must be within 1.5x. The floor is the rollback of a call that logged
  nothing (a pointer swap).
- Saving (``write_json``) and loading (``read_json``) recorded calls through a file:
  events per second and peak memory (tracemalloc). The floors are ``json.dump`` and
  ``json.load`` of the same JSON data through the same file; for memory, the
  document's size (what holding it as one text would take, before any tree of it).
"""

from __future__ import annotations

import gc
import json
import os
import tempfile
import time
import tracemalloc
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from benchmarks.timing import per_call_us
from wink.runtime import Session, SliceKind, Snapshot, ToolInvoked
from wink.tools import ToolResult

SMALL_LOG = 1_000
LARGE_LOG = 1_000_000
SAVED_CALLS = 100_000
NUMBER = 2000
REPEAT = 5


@dataclass(frozen=True)
class Logged:
    n: int


@dataclass(frozen=True)
class Found:
    query: str
    hits: list[str]


def _logged_session(size: int) -> Session:
    session = Session()
    session[Logged].declare(SliceKind.LOG)
    session[Logged].seed([Logged(n) for n in range(size)])
    return session


def _rollback_us(session: Session, *, logs: bool) -> float:
    event = Logged(-1)

    def call_that_fails() -> None:
        snapshot = session.snapshot()
        if logs:
            session.dispatch(event)
        session.restore(snapshot, declarations=True)

    # The collector's passes over a million live objects are the heap's cost, not the
    # rollback's: paused while timing, as for the floor.
    gc.collect()
    gc.disable()
    try:
        return per_call_us(call_that_fails, number=NUMBER, repeat=REPEAT)
    finally:
        gc.enable()


def _recorded_calls(count: int) -> Snapshot:
    moment = datetime(2025, 1, 1, tzinfo=UTC)
    events = [
        ToolInvoked(
            "research",
            "search",
            f"call-{n}",
            {"query": f"topic {n}", "limit": 3},
            f'{{"query": "topic {n}", "limit": 3}}',
            ToolResult.ok(Found(f"topic {n}", ["a", "b"])),
            f'{{"query":"topic {n}","hits":["a","b"]}}',
            moment,
            moment,
        )
        for n in range(count)
    ]
    session = Session()
    session[ToolInvoked].seed(events)
    return session.snapshot()


def _timed(function: Any) -> float:
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def _peak_mib(function: Any) -> tuple[float, float]:
    """(peak, still held after) MiB that ``function`` allocated."""
    gc.collect()
    tracemalloc.start()
    try:
        function()
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak / 2**20, held / 2**20


def main() -> None:
    """Print each figure beside its floor."""
    small, large = _logged_session(SMALL_LOG), _logged_session(LARGE_LOG)
    small_us, large_us = _rollback_us(small, logs=True), _rollback_us(large, logs=True)
    floor_us = _rollback_us(large, logs=False)
    print(
        f"rollback after one LOG append: {small_us:6.2f} us at {SMALL_LOG:,} events, "
        f"{large_us:6.2f} us at {LARGE_LOG:,} ({large_us / small_us:.2f}x, target <= 1.5x); "
        f"floor (nothing logged, a swap) {floor_us:6.2f} us"
    )
    del small, large

    snapshot = _recorded_calls(SAVED_CALLS)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "session.json")

        def save() -> None:
            with open(path, "wb") as file:
                snapshot.write_json(file)

        loaded: list[Snapshot] = []  # held, so that the memory measured beyond it is the reader's

        def load() -> None:
            loaded.clear()
            with open(path, "rb") as file:
                loaded.append(Snapshot.read_json(file))

        save_s = _timed(save)
        size_mib = os.path.getsize(path) / 2**20
        load_s = _timed(load)
        with open(path, "rb") as file:
            data = [json.load(file)]  # emptied once the floors are timed
        floor_path = os.path.join(folder, "floor.json")

        def floor_save() -> None:
            with open(floor_path, "w") as file:
                json.dump(data[0], file, separators=(",", ":"))

        def floor_load() -> None:
            with open(floor_path) as file:
                json.load(file)

        floor_save_s, floor_load_s = _timed(floor_save), _timed(floor_load)
        data.clear()
        save_peak, _ = _peak_mib(save)
        load_peak, load_held = _peak_mib(load)
        loaded.clear()
    per_s = SAVED_CALLS / 1e3
    print(
        f"save {SAVED_CALLS:,} recorded calls ({size_mib:.1f} MiB): "
        f"{per_s / save_s:7.1f}k events/s, peak {save_peak:6.1f} MiB; "
        f"floor json.dump {per_s / floor_save_s:7.1f}k events/s, document {size_mib:.1f} MiB"
    )
    print(
        f"load {SAVED_CALLS:,} recorded calls: {per_s / load_s:7.1f}k events/s, "
        f"peak {load_peak - load_held:6.1f} MiB beyond the {load_held:.1f} MiB loaded; "
        f"floor json.load {per_s / floor_load_s:7.1f}k events/s, document {size_mib:.1f} MiB"
    )


if __name__ == "__main__":
    main()
