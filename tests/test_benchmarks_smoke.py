"""Every benchmark module still runs: each ``main()`` once, with every timing cut to one call.

The sizes below shrink each module's inputs so that the whole pass takes a few
seconds; the figures printed are not measurements, only proof that the code runs.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import pkgutil
from pathlib import Path

import pytest

import benchmarks
from benchmarks import timing
from benchmarks.__main__ import expected_warnings_silenced

SMALL_SIZES: dict[str, dict[str, object]] = {
    "bench_adapters": {"NUMBER": 1, "REPEAT": 1},
    "bench_asteval": {"NUMBER": 1, "REPEAT": 1, "KEPT_ITEMS": 10},
    "bench_async": {"NUMBER": 1, "REPEAT": 1, "CONCURRENT": 2, "IO_SECONDS": 0.001},
    "bench_cli": {"LINES": 20},
    "bench_contract": {"TOOLS": 4, "COMPILES": 2, "TOOLS_PER_SECTION": 2, "ROUNDS": 1},
    "bench_dbos": {"CALLS": 4, "RECOVERED_CALLS": 4, "ROUNDS": 1},
    "bench_executor": {"LOG_EVENTS": 10, "CYCLES": 1},
    "bench_git_workspace": {"TREE_SIZES": (3,), "CHANGED": (1,), "REPEAT": 1},
    "bench_import": {"RUNS": 1},
    "bench_mcp": {"NUMBER": 1, "REPEAT": 1},
    "bench_peers": {"NUMBER": 1, "THREAD_NUMBER": 1},
    "bench_providers": {"TOOLS": 3},
    "bench_session": {"SMALL_LOG": 10, "LARGE_LOG": 100, "SAVED_CALLS": 20},
    "bench_store": {"NUMBER": 1, "REPEAT": 1, "OPENED_EVENTS": 20},
    "bench_telemetry": {"ROUNDS": 1},
}
"""Per module, the constants that set how much work it does, and a small value for each."""

PEER_PACKAGES = ("pydantic_ai", "agents", "langchain_core")


def bench_modules() -> list[str]:
    folder = Path(benchmarks.__file__).parent
    return sorted(
        info.name for info in pkgutil.iter_modules([str(folder)]) if info.name.startswith("bench_")
    )


def test_every_benchmark_module_has_small_sizes_for_the_smoke_pass() -> None:
    assert bench_modules() == sorted(SMALL_SIZES)


@pytest.mark.parametrize("name", bench_modules())
def test_benchmark_module_runs_and_prints_figures_without_warnings(
    name: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    if name == "bench_peers":
        missing = [p for p in PEER_PACKAGES if importlib.util.find_spec(p) is None]
        if missing:
            pytest.skip(f"the compared runtimes are not installed: {', '.join(missing)}")
    module = importlib.import_module(f"benchmarks.{name}")
    monkeypatch.setattr(timing, "QUICK", True)
    for constant, value in SMALL_SIZES[name].items():
        assert hasattr(module, constant), f"{name}.{constant} no longer exists"
        monkeypatch.setattr(module, constant, value)
    if name == "bench_peers":
        quick = module.async_per_call_us

        async def once(call: object, *, number: int = 1, repeat: int = 1) -> float:
            return await quick(call, number=1, repeat=1)

        monkeypatch.setattr(module, "async_per_call_us", once)

    with caplog.at_level(logging.WARNING), expected_warnings_silenced():
        module.main()

    printed = capsys.readouterr().out
    assert printed.count("\n") >= 2, printed
    assert [record.getMessage() for record in caplog.records] == []
