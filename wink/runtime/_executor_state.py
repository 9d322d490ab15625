"""What a ``ToolExecutor`` holds, declared once for the modules of its steps
(``_recording``, ``_transaction``, ``_admission``) and its drivers (``executor``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from wink.prompt import Prompt, RenderedPrompt
from wink.resources import ResourceRegistry, Snapshotable
from wink.runtime._turns import CallLock
from wink.runtime.budget import BudgetTracker
from wink.runtime.deadline import Clock, Deadline
from wink.runtime.session import Session
from wink.tools import ToolContext

if TYPE_CHECKING:
    from wink.adapters.protocol import ProviderAdapter
    from wink.policy.approval import Approval
    from wink.runtime._admission import _Plan


class _ExecutorState:
    """The executor's fields; ``ToolExecutor.__init__`` says what each one is for."""

    __slots__ = (
        "_adapter",
        "_approvals",
        "_available",
        "_budget_tracker",
        "_clock",
        "_context",
        "_deadline",
        "_direct",
        "_heartbeat",
        "_locks",
        "_plans",
        "_prompt",
        "_prompt_name",
        "_raise_handler_errors",
        "_rendered",
        "_resources",
        "_scoped",
        "_session",
        "_turn_timeout",
    )

    _adapter: ProviderAdapter | None
    _approvals: Mapping[str, Approval]
    _available: str
    _budget_tracker: BudgetTracker | None
    _clock: Clock
    _context: ToolContext | None
    _deadline: Deadline | None
    _direct: bool
    _heartbeat: Callable[[], None] | None
    _locks: tuple[tuple[Snapshotable, ...], list[CallLock]] | None
    _plans: dict[str, _Plan]
    _prompt: Prompt
    _prompt_name: str
    _raise_handler_errors: bool
    _rendered: RenderedPrompt
    _resources: ResourceRegistry
    _scoped: bool
    _session: Session
    _turn_timeout: float | None
