"""wink's loggers import ``logging`` on first use and log as ``logging.getLogger`` would."""

from __future__ import annotations

import logging
import sys

import pytest

from wink._lazy_logging import LazyLogger


@pytest.mark.parametrize(
    ("method", "level"), [("info", "INFO"), ("warning", "WARNING"), ("error", "ERROR")]
)
def test_a_record_goes_to_the_named_logger_and_names_the_caller_not_the_wrapper(
    method: str, level: str, caplog: pytest.LogCaptureFixture
) -> None:
    logger = LazyLogger("wink.lazy_logging_test")
    with caplog.at_level(logging.INFO, logger="wink.lazy_logging_test"):
        getattr(logger, method)("tool %r raised", "echo", exc_info=ValueError("bad"))
        line = sys._getframe().f_lineno - 1
    [record] = caplog.records
    assert (record.name, record.levelname, record.getMessage()) == (
        "wink.lazy_logging_test",
        level,
        "tool 'echo' raised",
    )
    assert (record.pathname, record.lineno, record.funcName) == (
        __file__,
        line,
        "test_a_record_goes_to_the_named_logger_and_names_the_caller_not_the_wrapper",
    )
    assert record.exc_info is not None
    assert repr(record.exc_info[1]) == "ValueError('bad')"


def test_the_logger_is_the_one_logging_getlogger_returns_for_its_name() -> None:
    assert LazyLogger("wink.runtime.executor").logger is logging.getLogger("wink.runtime.executor")


def test_a_filter_added_through_logging_applies_to_what_a_lazy_logger_logs(
    caplog: pytest.LogCaptureFixture,
) -> None:
    logger = LazyLogger("wink.lazy_logging_filtered")
    logging.getLogger("wink.lazy_logging_filtered").addFilter(
        lambda record: "keep" in record.getMessage()
    )
    with caplog.at_level(logging.INFO, logger="wink.lazy_logging_filtered"):
        logger.warning("drop this")
        logger.warning("keep this")
    assert [record.getMessage() for record in caplog.records] == ["keep this"]
