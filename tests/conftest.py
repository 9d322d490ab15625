"""Test configuration: hypothesis profiles (``long`` is for ``make fuzz``)."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile("default", max_examples=60, deadline=None)
settings.register_profile(
    "long", max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
