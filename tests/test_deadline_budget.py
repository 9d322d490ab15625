"""Deadlines with an injectable clock, and thread-safe budget tracking."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta, timezone

import pytest

from wink import DeadlineExceededError
from wink.runtime import Budget, BudgetExceededError, BudgetTracker, Deadline, TokenUsage

START = datetime(2025, 1, 1, tzinfo=UTC)


class ManualClock:
    """A clock that only moves when told to."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now


# Deadline


def test_deadline_needs_a_timezone_aware_moment() -> None:
    with pytest.raises(ValueError, match="must be a timezone-aware datetime, got datetime"):
        Deadline(datetime(2025, 1, 1))


def test_deadline_accepts_any_timezone() -> None:
    clock = ManualClock()
    deadline = Deadline(datetime(2025, 1, 1, 2, tzinfo=timezone(timedelta(hours=1))), clock=clock)
    assert deadline.remaining() == timedelta(hours=1)


def test_deadline_is_not_expired_before_its_moment() -> None:
    clock = ManualClock()
    deadline = Deadline(START + timedelta(seconds=10), clock=clock)
    clock.now = START + timedelta(seconds=9)
    assert not deadline.expired
    assert deadline.remaining() == timedelta(seconds=1)
    deadline.check()


def test_deadline_expires_at_its_moment() -> None:
    clock = ManualClock()
    deadline = Deadline(START + timedelta(seconds=10), clock=clock)
    clock.now = START + timedelta(seconds=10)
    assert deadline.expired
    assert deadline.remaining() == timedelta(0)


def test_check_names_the_activity_and_both_moments() -> None:
    clock = ManualClock()
    deadline = Deadline(START, clock=clock)
    clock.now = START + timedelta(seconds=5)
    with pytest.raises(DeadlineExceededError) as raised:
        deadline.check("tool 'x' could start")
    assert str(raised.value) == (
        "deadline 2025-01-01T00:00:00+00:00 passed before tool 'x' could start "
        "(now 2025-01-01T00:00:05+00:00)"
    )


def test_after_counts_from_the_clock() -> None:
    clock = ManualClock()
    assert Deadline.after(30, clock=clock).expires_at == START + timedelta(seconds=30)
    assert Deadline.after(timedelta(minutes=1), clock=clock).expires_at == START + timedelta(
        minutes=1
    )


def test_deadlines_compare_by_moment_not_clock() -> None:
    assert Deadline(START, clock=ManualClock()) == Deadline(START)


# Budget


def test_budget_needs_a_limit() -> None:
    with pytest.raises(ValueError, match="Budget needs a deadline or at least one token limit"):
        Budget()


def test_budget_token_limits_must_be_positive() -> None:
    with pytest.raises(ValueError, match=r"Budget\.max_input_tokens must be positive, got 0"):
        Budget(max_input_tokens=0)


def test_token_usage_adds_up() -> None:
    total = TokenUsage(1, 2) + TokenUsage(10, 20)
    assert (total.input_tokens, total.output_tokens, total.total_tokens) == (11, 22, 33)


def test_record_adds_and_record_cumulative_replaces() -> None:
    tracker = BudgetTracker(Budget(max_total_tokens=1000))
    tracker.record("a", TokenUsage(10, 1))
    tracker.record("a", TokenUsage(10, 1))
    tracker.record_cumulative("b", TokenUsage(5, 5))
    tracker.record_cumulative("b", TokenUsage(7, 7))
    assert tracker.consumed_by("a") == TokenUsage(20, 2)
    assert tracker.consumed == TokenUsage(27, 9)


def test_check_passes_at_the_limit_and_fails_above_it() -> None:
    tracker = BudgetTracker(Budget(max_output_tokens=10))
    tracker.record("a", TokenUsage(0, 10))
    tracker.check()
    tracker.record("a", TokenUsage(0, 1))
    with pytest.raises(BudgetExceededError) as raised:
        tracker.check()
    assert raised.value.dimension == "output_tokens"
    assert str(raised.value) == "budget exceeded on output_tokens: 11 tokens used, limit 10"


@pytest.mark.parametrize(
    ("budget", "dimension"),
    [
        (Budget(max_total_tokens=5), "total_tokens"),
        (Budget(max_input_tokens=3), "input_tokens"),
    ],
)
def test_check_reports_the_dimension_passed(budget: Budget, dimension: str) -> None:
    tracker = BudgetTracker(budget)
    tracker.record("a", TokenUsage(4, 2))
    with pytest.raises(BudgetExceededError) as raised:
        tracker.check()
    assert raised.value.dimension == dimension


def test_check_reports_a_passed_deadline() -> None:
    clock = ManualClock()
    tracker = BudgetTracker(Budget(deadline=Deadline(START, clock=clock)))
    with pytest.raises(BudgetExceededError) as raised:
        tracker.check()
    assert str(raised.value) == (
        "budget exceeded on deadline: the deadline 2025-01-01T00:00:00+00:00 has passed"
    )


def test_concurrent_records_lose_no_tokens() -> None:
    tracker = BudgetTracker(Budget(max_total_tokens=10**9))

    def work(name: str) -> None:
        for _ in range(2000):
            tracker.record(name, TokenUsage(1, 2))

    threads = [threading.Thread(target=work, args=(f"e{n % 3}",)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert tracker.consumed == TokenUsage(16000, 32000)
    assert sum(tracker.consumed_by(f"e{n}").input_tokens for n in range(3)) == 16000
