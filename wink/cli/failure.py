"""``CliError``: why a ``wink`` command stopped, as one line for stderr."""

from __future__ import annotations

from wink.errors import WinkError

__all__ = ["EXIT_FAILED", "EXIT_USAGE", "CliError"]

EXIT_FAILED = 1
"""A check failed (drift, invalid payloads) or the command could not do its job."""
EXIT_USAGE = 2
"""The command line or the settings are wrong."""


class CliError(WinkError):
    """A command cannot go on; ``main`` prints ``wink: <message>`` and exits non-zero."""

    def __init__(self, message: str, exit_code: int = EXIT_FAILED) -> None:
        super().__init__(message)
        self.exit_code = exit_code
