"""``ProviderAdapter``: what evaluates a prompt against a model."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from wink.adapters.response import PromptResponse
from wink.prompt.prompt import OutputT, Prompt
from wink.runtime.budget import BudgetTracker
from wink.runtime.deadline import Deadline
from wink.runtime.session import Session

__all__ = ["DEFAULT_MAX_TURNS", "DEFAULT_OUTPUT_RETRIES", "ProviderAdapter"]

DEFAULT_MAX_TURNS = 10
"""Requests an evaluation may send unless told otherwise."""
DEFAULT_OUTPUT_RETRIES = 1
"""How many times an answer that breaks the output contract is sent back to be redone."""


class ProviderAdapter(Protocol):
    """Runs a prompt against a model: the handle tools get as ``context.adapter``."""

    @property
    def name(self) -> str:
        """The provider's name, as recorded in ``PromptRendered`` and ``PromptExecuted``."""
        ...

    def evaluate(
        self,
        prompt: Prompt[OutputT],
        *,
        session: Session,
        deadline: Deadline | None = None,
        budget_tracker: BudgetTracker | None = None,
        max_turns: int = DEFAULT_MAX_TURNS,
        output_retries: int = DEFAULT_OUTPUT_RETRIES,
        messages: Sequence[Any] = (),
        raise_handler_errors: bool = False,
        allow_truncated: bool = False,
    ) -> PromptResponse[OutputT]:
        """Evaluate ``prompt`` until the model answers without tool calls.

        Raises ``PromptEvaluationError`` (with its ``phase``) when the provider fails,
        a limit is reached, the reply cannot be used (a refusal, a block, an answer cut
        by the token limit unless ``allow_truncated=True``, tool calls cut by it) or the
        answer never matches the output contract; with
        ``raise_handler_errors=True``, a handler's exception propagates after its call
        is rolled back and recorded.
        """
        ...

    async def aevaluate(
        self,
        prompt: Prompt[OutputT],
        *,
        session: Session,
        deadline: Deadline | None = None,
        budget_tracker: BudgetTracker | None = None,
        max_turns: int = DEFAULT_MAX_TURNS,
        output_retries: int = DEFAULT_OUTPUT_RETRIES,
        messages: Sequence[Any] = (),
        raise_handler_errors: bool = False,
        allow_truncated: bool = False,
    ) -> PromptResponse[OutputT]:
        """``evaluate`` on a running event loop; a turn's tool calls run concurrently."""
        ...
