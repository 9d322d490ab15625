"""Loggers that import ``logging`` when they first log, not when wink is imported.

wink logs only when something goes wrong (a handler raised, a reducer failed), so a
program that never hits such a case need not pay the few milliseconds that importing
``logging`` costs. Each method hands its arguments to the ``logging.Logger`` of the
same name, as if called directly: the record names the caller's file and line.
"""

from __future__ import annotations

from types import TracebackType
from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:
    import logging

__all__ = ["LazyLogger"]

_ExcInfo: TypeAlias = (
    bool
    | BaseException
    | tuple[type[BaseException], BaseException, TracebackType | None]
    | tuple[None, None, None]
    | None
)


class LazyLogger:
    """The ``logging.getLogger(name)`` logger, looked up (and ``logging`` imported) on
    first use."""

    __slots__ = ("_logger", "name")

    def __init__(self, name: str) -> None:
        self.name = name
        self._logger: logging.Logger | None = None

    @property
    def logger(self) -> logging.Logger:
        """The ``logging.Logger`` this one writes to."""
        logger = self._logger
        if logger is None:
            import logging

            logger = self._logger = logging.getLogger(self.name)
        return logger

    # ``stacklevel=2``: the record names the caller of these methods, not this module.

    def info(self, msg: object, *args: object, exc_info: _ExcInfo = None) -> None:
        """``Logger.info``."""
        self.logger.info(msg, *args, exc_info=exc_info, stacklevel=2)

    def warning(self, msg: object, *args: object, exc_info: _ExcInfo = None) -> None:
        """``Logger.warning``."""
        self.logger.warning(msg, *args, exc_info=exc_info, stacklevel=2)

    def error(self, msg: object, *args: object, exc_info: _ExcInfo = None) -> None:
        """``Logger.error``."""
        self.logger.error(msg, *args, exc_info=exc_info, stacklevel=2)
