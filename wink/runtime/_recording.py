"""Recording a tool call: the ``ToolInvoked`` event every call ends with, and the
call's telemetry span.

Whatever happens to a call (an unknown tool, a denial, a rollback, a success), its
last step is ``_record``: the event goes to the session, through its reducers; when
those fail on a failed call, the event is still kept, unreduced.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from wink import telemetry
from wink._lazy_logging import LazyLogger
from wink.runtime._executor_state import _ExecutorState
from wink.runtime.call import ToolCall
from wink.runtime.events import ToolInvoked
from wink.tools import ToolResult

# The executor's steps log under the name of the module users know (and configure).
logger = LazyLogger("wink.runtime.executor")


class _Recording(_ExecutorState):
    """The executor's recording steps (the base of its other steps)."""

    __slots__ = ()

    def _span(self, tracer: Any, call: ToolCall) -> Any:
        """The telemetry span of ``call``, named for its tool when the prompt has it."""
        plan = self._plans.get(call.name)
        tool = None if plan is None else plan.tool
        return telemetry.tool_call_span(tracer, call, tool, self._prompt_name)

    def _record_failure(
        self, call: ToolCall, params: Any, message: str, started_at: datetime
    ) -> ToolResult[Any]:
        return self._record(call, params, ToolResult.error(message), "", started_at)

    def _record(
        self,
        call: ToolCall,
        params: Any,
        result: ToolResult[Any],
        rendered_output: str,
        started_at: datetime,
        value_type: type[Any] | None = None,
        *,
        denied: bool = False,
        rolled_back: bool = False,
        earlier_attempts: tuple[str, ...] = (),
    ) -> ToolResult[Any]:
        event = ToolInvoked(
            self._prompt_name,
            call.name,
            call.call_id,
            params,
            call.arguments,
            result,
            rendered_output,
            started_at,
            self._clock(),
            denied,
            rolled_back,
            earlier_attempts,
        )
        try:
            self._session.dispatch(event, value_type=value_type)
        except Exception:
            if result.success:
                raise  # the caller rolls the call back and records the failure
            logger.warning("reducers failed on ToolInvoked for %r; kept unreduced", call.name)
            self._session.append_event(event)
        except BaseException:
            if result.success:
                raise  # the caller rolls the call back and records the failure
            self._session.append_event(event)  # never lose the record, then stop
            raise
        return result


def _render_failure(result: ToolResult[Any]) -> str:
    """The text of a failed result's error payload; a broken ``render()`` gives ``""``."""
    try:
        return result.render()
    except Exception:  # the failure itself is what the model must see
        logger.info("rendering a failed result's value raised", exc_info=True)
        return ""
