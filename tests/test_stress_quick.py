"""A quick pass of every stress family: each tries inputs and every must-be-zero count is 0."""

from __future__ import annotations

import pytest

from stress.__main__ import families, run_family


@pytest.mark.parametrize("name", families())
def test_stress_family_quick_pass_finds_nothing(name: str) -> None:
    report = run_family(name, 1.0)
    assert report.inputs > 0
    assert report.failures() == {}, report.examples
