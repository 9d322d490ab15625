"""Text for errors and objects that never fails, and never grows without bound.

An exception whose ``__str__`` raises (or a ``KeyError`` whose key's ``__repr__``
raises) must still become a recorded failure, so whatever wink shows of an error
or of a user's object goes through these functions.
"""

from __future__ import annotations

__all__ = ["MAX_TEXT", "bounded", "describe_error", "error_message", "safe_repr", "type_label"]

MAX_TEXT = 2000
"""The most characters shown of one error's or object's text."""


def type_label(obj: object) -> str:
    """The name of ``obj``'s class (``"<unnamed type>"`` if even that is broken)."""
    try:
        name = type(obj).__qualname__
    except Exception:
        return "<unnamed type>"
    return bounded(name) if isinstance(name, str) else "<unnamed type>"


def describe_error(error: BaseException) -> str:
    """``"Type: message"`` (or ``"Type"`` when the message is empty), at most ``MAX_TEXT``."""
    kind = type_label(error)
    text = _message(error)
    return bounded(f"{kind}: {text}" if text else kind)


def error_message(error: BaseException) -> str:
    """``str(error)``, or a stand-in when that raises; at most ``MAX_TEXT``."""
    return bounded(_message(error))


def _message(error: BaseException) -> str:
    try:
        text = str(error)
    except Exception:
        return _fallback(error, "str")
    return text if isinstance(text, str) else f"<{type_label(error)} whose str() is not a string>"


def safe_repr(obj: object) -> str:
    """``repr(obj)``, or a placeholder naming its type when that raises; at most ``MAX_TEXT``."""
    try:
        text = repr(obj)
    except Exception:
        return f"<{type_label(obj)} whose repr() raised>"
    if not isinstance(text, str):
        return f"<{type_label(obj)} whose repr() is not a string>"
    return bounded(text)


def _fallback(error: BaseException, failed: str) -> str:
    try:
        text = repr(error)
    except Exception:
        return f"<{failed}() and repr() of the error raised>"
    return text if isinstance(text, str) else f"<{failed}() of the error raised>"


def bounded(text: str) -> str:
    """``text``, cut to ``MAX_TEXT`` characters (saying how many more it had)."""
    if len(text) <= MAX_TEXT:
        return text
    return f"{text[:MAX_TEXT]}… ({len(text) - MAX_TEXT} more characters)"
