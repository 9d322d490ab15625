"""Run ``mypy --strict`` over snippets of user code, as a user's CI would."""

from __future__ import annotations

import contextlib
from pathlib import Path

from mypy import api

ROOT = Path(__file__).parent.parent


def check(directory: Path, sources: dict[str, str]) -> list[str]:
    """mypy's output lines for ``sources`` (module name to code) written under ``directory``,
    sorted: mypy reports modules in the order it happens to process them.

    The repository's configuration (strict, pydantic plugin) and cache are used, so
    the SDKs are analysed once. The snippets are checked by relative path: mypy's
    cache replays the messages of an unchanged module with the path it had then.
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
                str(ROOT / ".mypy_cache"),
                "--no-error-summary",
                "--hide-error-context",
                *(f"{module}.py" for module in sources),
            ]
        )
    assert not stderr, stderr
    return sorted(stdout.splitlines(), key=_file_then_line)


def _file_then_line(line: str) -> tuple[str, int]:
    path, _, rest = line.partition(":")
    number = rest.partition(":")[0]
    return path, int(number) if number.isdigit() else 0
