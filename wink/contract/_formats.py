"""The exact text a JSON string must have to parse as a date, time, duration, decimal,
UUID or IPv6 address.

pydantic reads more than the JSON Schema formats allow (a naive ``2024-05-01T10:20:30``
for ``format: date-time``, ``1 day, 01:00:00`` for ``format: duration``, ``" 1_0 "``
for a decimal, a UUID without hyphens, an IPv6 address with a ``%zone``); parsing
checks these patterns first, so what it accepts is what the schema says. The
patterns follow RFC 3339 (its Appendix A for durations) and RFC 4122; the IPv6 one
only keeps out what ``format: ipv6`` never allows, and ``ipaddress`` checks the rest.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = [
    "DECIMAL_PATTERN",
    "DURATION_PATTERN",
    "NAIVE_DATETIME_PATTERN",
    "NAIVE_TIME_PATTERN",
    "TEXT_FORMATS",
    "TextFormat",
    "scheme_pattern",
    "uuid_pattern",
]

# ``[0-9]``, not ``\d``: Python's ``\d`` also matches other scripts' digits.
_DATE = (
    r"(?:[0-9]{3}[1-9]|[0-9]{2}[1-9][0-9]|[0-9][1-9][0-9]{2}|[1-9][0-9]{3})"
    r"-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])"
    r"|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)|02-(?:0[1-9]|1[0-9]|2[0-9]))"
)
_TIME = r"(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]+)?"
_OFFSET = r"(?:[Zz]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])"
_DURATION = (
    r"-?P(?:[0-9]+W|(?=[0-9]|T[0-9])(?:[0-9]+Y)?(?:[0-9]+M)?(?:[0-9]+D)?"
    r"(?:T(?=[0-9])(?:[0-9]+H)?(?:[0-9]+M)?(?:[0-9]+(?:\.[0-9]+)?S)?)?)"
)

DECIMAL_PATTERN = r"^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]{1,9})?$"
"""A decimal written as a string: the digits of a JSON number (an exponent of at most
nine digits)."""
DURATION_PATTERN = rf"^{_DURATION}$"
"""An ISO 8601 duration as ``timedelta`` is written: RFC 3339's ``duration`` (its
Appendix A), and also a leading ``-`` and fractional seconds (``-PT0.5S``), which
that format lacks. A duration past ``timedelta``'s range (999,999,999 days) matches,
and parsing refuses it."""
NAIVE_TIME_PATTERN = rf"^{_TIME}$"
"""A time of day without a UTC offset."""
NAIVE_DATETIME_PATTERN = rf"^{_DATE}[Tt]{_TIME}$"
"""A date and time without a UTC offset (``NaiveDatetime``). The pattern knows each
month's length but not leap years: February 29th of a common year matches, and
parsing still refuses it (as it refuses a leap second, which RFC 3339 allows)."""


def uuid_pattern(version: int) -> str:
    """A hyphenated UUID of ``version`` and the RFC 4122 variant (what ``UUID4`` accepts)."""
    hexa = "[0-9a-fA-F]"
    return f"^{hexa}{{8}}-{hexa}{{4}}-{version}{hexa}{{3}}-[89abAB]{hexa}{{3}}-{hexa}{{12}}$"


def scheme_pattern(schemes: list[str]) -> str:
    """A URL whose scheme is one of ``schemes``, in any letter case (as ``HttpUrl`` reads)."""
    spelled = sorted(
        ("".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() else re.escape(c) for c in scheme))
        for scheme in schemes
    )
    return f"^(?:{'|'.join(spelled)}):"


class TextFormat:
    """One format: its pattern, and what to tell a model that missed it."""

    __slots__ = ("example", "name", "pattern", "source")

    pattern: re.Pattern[str]
    """``source`` compiled, on first use: most contracts have no such field, and
    compiling every pattern would slow down importing wink."""

    def __init__(self, name: str, pattern: str, example: str) -> None:
        self.name = name
        self.source = pattern
        self.example = example

    def __getattr__(self, attribute: str) -> Any:
        # Called only while the ``pattern`` slot is empty; later reads are plain slot reads.
        if attribute != "pattern":
            raise AttributeError(f"'TextFormat' object has no attribute {attribute!r}")
        self.pattern = re.compile(self.source)
        return self.pattern


TEXT_FORMATS = {
    "datetime": TextFormat(
        "an RFC 3339 date-time, with or without a UTC offset",
        rf"^{_DATE}[Tt]{_TIME}{_OFFSET}?$",
        "2024-05-01T10:20:30Z",
    ),
    "aware-datetime": TextFormat(
        "an RFC 3339 date-time with a UTC offset",
        rf"^{_DATE}[Tt]{_TIME}{_OFFSET}$",
        "2024-05-01T10:20:30Z",
    ),
    "naive-datetime": TextFormat(
        "a date-time without a UTC offset", NAIVE_DATETIME_PATTERN, "2024-05-01T10:20:30"
    ),
    "date": TextFormat("an RFC 3339 full-date", rf"^{_DATE}$", "2024-05-01"),
    "time": TextFormat(
        "an RFC 3339 time, with or without a UTC offset",
        rf"^{_TIME}{_OFFSET}?$",
        "10:20:30+02:00",
    ),
    "aware-time": TextFormat(
        "an RFC 3339 time with a UTC offset", rf"^{_TIME}{_OFFSET}$", "10:20:30+02:00"
    ),
    "naive-time": TextFormat("a time without a UTC offset", NAIVE_TIME_PATTERN, "10:20:30"),
    "timedelta": TextFormat("an ISO 8601 duration", DURATION_PATTERN, "P1DT2H"),
    "decimal": TextFormat("a decimal number", DECIMAL_PATTERN, "12.50"),
    "uuid": TextFormat(
        "a UUID in its hyphenated form",
        r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$",
        "123e4567-e89b-12d3-a456-426614174000",
    ),
    "ipv6": TextFormat("an IPv6 address without a zone index", r"^[0-9A-Fa-f:.]+$", "2001:db8::1"),
}
"""Core schema kind (``datetime`` and ``time`` split by time-zone constraint) to its format."""
