"""``CliError``: why a ``wink`` command stopped, as one line for stderr."""

from __future__ import annotations

import unicodedata

from wink.errors import WinkError

__all__ = ["EXIT_FAILED", "EXIT_USAGE", "CliError", "printable"]

EXIT_FAILED = 1
"""A check failed (drift, invalid payloads) or the command could not do its job."""
EXIT_USAGE = 2
"""The command line or the settings are wrong."""


class CliError(WinkError):
    """A command cannot go on; ``main`` prints ``wink: <message>`` and exits non-zero."""

    def __init__(self, message: str, exit_code: int = EXIT_FAILED) -> None:
        super().__init__(message)
        self.exit_code = exit_code


_SHOWN_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# Control and format characters (ANSI escape sequences, bidi overrides), line and
# paragraph separators, and lone surrogates, which no terminal shows as themselves.
_HIDDEN = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


def printable(text: str) -> str:
    """``text`` with every character a terminal would act on or hide written as an escape.

    Names and ids from recorded calls are data, not terminal commands: a tool name
    holding a newline or an ANSI colour code must not forge or recolour a report line.
    """
    if text.isprintable():
        return text
    return "".join(_shown(char) for char in text)


def _shown(char: str) -> str:
    if char in _SHOWN_ESCAPES:
        return _SHOWN_ESCAPES[char]
    if unicodedata.category(char) not in _HIDDEN:
        return char
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
