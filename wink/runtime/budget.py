"""Budgets: token limits (and an optional deadline) shared by an evaluation's calls."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from wink.errors import WinkError
from wink.runtime.deadline import Deadline

__all__ = ["Budget", "BudgetDimension", "BudgetExceededError", "BudgetTracker", "TokenUsage"]

BudgetDimension = Literal["deadline", "total_tokens", "input_tokens", "output_tokens"]
"""Which limit a ``BudgetExceededError`` reports."""


@dataclass(frozen=True, slots=True)
class TokenUsage:
    """Tokens consumed by one or more provider calls."""

    input_tokens: int = 0
    """Prompt tokens."""
    output_tokens: int = 0
    """Completion tokens."""

    def __post_init__(self) -> None:
        if self.input_tokens < 0 or self.output_tokens < 0:
            raise ValueError(f"token counts must not be negative: {self!r}")

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            self.input_tokens + other.input_tokens, self.output_tokens + other.output_tokens
        )


@dataclass(frozen=True, slots=True)
class Budget:
    """Limits for an evaluation; at least one must be set, token limits positive."""

    deadline: Deadline | None = None
    """Wall-clock limit."""
    max_total_tokens: int | None = None
    """Limit on input plus output tokens."""
    max_input_tokens: int | None = None
    """Limit on input tokens."""
    max_output_tokens: int | None = None
    """Limit on output tokens."""

    def __post_init__(self) -> None:
        limits = {
            "max_total_tokens": self.max_total_tokens,
            "max_input_tokens": self.max_input_tokens,
            "max_output_tokens": self.max_output_tokens,
        }
        if self.deadline is None and all(limit is None for limit in limits.values()):
            raise ValueError("Budget needs a deadline or at least one token limit")
        for name, limit in limits.items():
            if limit is not None and limit <= 0:
                raise ValueError(f"Budget.{name} must be positive, got {limit}")


class BudgetExceededError(WinkError):
    """A budget limit was passed; ``dimension`` says which."""

    def __init__(self, dimension: BudgetDimension, budget: Budget, consumed: TokenUsage) -> None:
        self.dimension: BudgetDimension = dimension
        self.budget = budget
        self.consumed = consumed
        super().__init__(
            f"budget exceeded on {dimension}: {_describe(dimension, budget, consumed)}"
        )


class BudgetTracker:
    """Adds up token usage across evaluations and checks it against a ``Budget``.

    Thread-safe: several evaluations (or threads) may record into one tracker.
    """

    __slots__ = ("_budget", "_by_evaluation", "_consumed", "_lock")

    def __init__(self, budget: Budget) -> None:
        """A tracker of ``budget`` with nothing consumed."""
        self._budget = budget
        self._lock = threading.Lock()
        self._by_evaluation: dict[str, TokenUsage] = {}
        self._consumed = TokenUsage()

    @property
    def budget(self) -> Budget:
        """The limits."""
        return self._budget

    @property
    def consumed(self) -> TokenUsage:
        """Usage summed over every evaluation."""
        return self._consumed

    def consumed_by(self, evaluation_id: str) -> TokenUsage:
        """Usage recorded for one evaluation."""
        return self._by_evaluation.get(evaluation_id, TokenUsage())

    def record_cumulative(self, evaluation_id: str, usage: TokenUsage) -> None:
        """Set the running total of ``evaluation_id``, replacing the previous one."""
        with self._lock:
            self._by_evaluation[evaluation_id] = usage
            self._consumed = _sum(self._by_evaluation.values())

    def record(self, evaluation_id: str, usage: TokenUsage) -> None:
        """Add ``usage`` to the running total of ``evaluation_id``."""
        with self._lock:
            self._by_evaluation[evaluation_id] = self.consumed_by(evaluation_id) + usage
            self._consumed = self._consumed + usage

    def check(self) -> None:
        """Raise ``BudgetExceededError`` if a limit has been passed."""
        budget, consumed = self._budget, self._consumed
        if budget.deadline is not None and budget.deadline.expired:
            raise BudgetExceededError("deadline", budget, consumed)
        token_limits: tuple[tuple[BudgetDimension, int, int | None], ...] = (
            ("total_tokens", consumed.total_tokens, budget.max_total_tokens),
            ("input_tokens", consumed.input_tokens, budget.max_input_tokens),
            ("output_tokens", consumed.output_tokens, budget.max_output_tokens),
        )
        for dimension, used, limit in token_limits:
            if limit is not None and used > limit:
                raise BudgetExceededError(dimension, budget, consumed)


def _sum(usages: Iterable[TokenUsage]) -> TokenUsage:
    total = TokenUsage()
    for usage in usages:
        total = total + usage
    return total


def _describe(dimension: BudgetDimension, budget: Budget, consumed: TokenUsage) -> str:
    if dimension == "deadline":
        expires_at = budget.deadline.expires_at.isoformat() if budget.deadline else "?"
        return f"the deadline {expires_at} has passed"
    used, limit = {
        "total_tokens": (consumed.total_tokens, budget.max_total_tokens),
        "input_tokens": (consumed.input_tokens, budget.max_input_tokens),
        "output_tokens": (consumed.output_tokens, budget.max_output_tokens),
    }[dimension]
    return f"{used} tokens used, limit {limit}"
