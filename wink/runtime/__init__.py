"""The runtime: sessions, events, deadlines, budgets and the tool executor.

Sessions and events sit below ``wink.policy``; the executor sits above it. The
executor is therefore imported on first use, so that importing a session does
not pull in the policies through this package.
"""

from typing import TYPE_CHECKING, Any

from wink.runtime._vector import SliceValues
from wink.runtime.budget import (
    Budget,
    BudgetDimension,
    BudgetExceededError,
    BudgetTracker,
    TokenUsage,
)
from wink.runtime.call import ToolCall
from wink.runtime.deadline import Clock, Deadline, utc_now
from wink.runtime.events import ToolInvoked
from wink.runtime.history import SliceVersion
from wink.runtime.observers import Observer
from wink.runtime.reducers import append, replace_latest, upsert_by
from wink.runtime.session import Reducer, Session, SliceAccessor, SliceKind
from wink.runtime.snapshot import SNAPSHOT_VERSION, Snapshot, SnapshotError

if TYPE_CHECKING:
    from wink.runtime.executor import ToolExecutor

__all__ = [
    "SNAPSHOT_VERSION",
    "Budget",
    "BudgetDimension",
    "BudgetExceededError",
    "BudgetTracker",
    "Clock",
    "Deadline",
    "Observer",
    "Reducer",
    "Session",
    "SliceAccessor",
    "SliceKind",
    "SliceValues",
    "SliceVersion",
    "Snapshot",
    "SnapshotError",
    "TokenUsage",
    "ToolCall",
    "ToolExecutor",
    "ToolInvoked",
    "append",
    "replace_latest",
    "upsert_by",
    "utc_now",
]


def __getattr__(name: str) -> Any:
    if name == "ToolExecutor":
        from wink.runtime.executor import ToolExecutor

        return ToolExecutor
    raise AttributeError(f"module 'wink.runtime' has no attribute {name!r}")
