"""Test configuration: hypothesis profiles (``long`` is for ``make fuzz``)."""

from __future__ import annotations

import os
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("default", max_examples=60, deadline=None)
settings.register_profile(
    "long", max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


@pytest.fixture(params=["direct", "phased"])
def executor_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run a test once as executors run it (a plain handler's call in one direct phase
    where nothing is built per call), and once with every call taking the phases that
    calls with call-scoped resources or limits take: both must behave the same."""
    path: str = request.param
    if path == "phased":
        from wink.runtime.executor import ToolExecutor

        original = ToolExecutor.__init__

        def phased(self: ToolExecutor, **options: Any) -> None:
            original(self, **options)
            self._direct = False

        monkeypatch.setattr(ToolExecutor, "__init__", phased)
    return path
