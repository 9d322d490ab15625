"""Run ``mypy --strict`` over snippets of user code, as a user's CI would."""

from __future__ import annotations

import contextlib
from pathlib import Path

from mypy import api

ROOT = Path(__file__).parent.parent


def check(directory: Path, sources: dict[str, str]) -> list[str]:
    """mypy's output lines for ``sources`` (module name to code) written under ``directory``.

    The repository's configuration (strict, pydantic plugin) is used, with a cache of
    its own: mypy's cache would replay an unchanged snippet's messages with the path
    the snippet had when first checked.
    """
    for module, source in sources.items():
        (directory / f"{module}.py").write_text(source)
    with contextlib.chdir(directory):
        stdout, stderr, _ = api.run(
            [
                "--strict",
                "--config-file",
                str(ROOT / "pyproject.toml"),
                "--cache-dir",
                str(directory / ".mypy_cache"),
                "--no-error-summary",
                "--hide-error-context",
                *(f"{module}.py" for module in sources),
            ]
        )
    assert not stderr, stderr
    return stdout.splitlines()
