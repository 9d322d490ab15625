"""Events the runtime records in a session."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Annotated, Any

from wink.runtime._raw import RawArguments, RawText, decode
from wink.runtime.call import ToolCall
from wink.tools import ToolResult

__all__ = ["RawArguments", "RawText", "ToolInvoked", "recorded_call"]


def _none_earlier(earlier_attempts: tuple[str, ...]) -> bool:
    # A call that ran once writes the JSON it wrote before retries were recorded.
    return not earlier_attempts


def _left_out_when_empty() -> Any:
    """pydantic's field info leaving ``earlier_attempts`` out of the JSON while empty.

    Called where pydantic reads the (string) annotation, when the type is first
    compiled: importing wink then loads no ``pydantic.fields``.
    """
    from pydantic import Field

    return Field(exclude_if=_none_earlier)


@dataclass(frozen=True, slots=True, init=False)
class ToolInvoked:
    """One tool call and its outcome; recorded for every call, failed ones included.

    It lives in a ``LOG`` slice, so restoring a snapshot keeps it.
    """

    prompt_name: str
    """Name of the prompt whose tool was called."""
    name: RawText
    """The tool name the model sent (possibly unknown)."""
    call_id: RawText | None
    """The provider's id for the call."""
    params: Any
    """The parsed params; ``None`` when parsing failed or the tool takes none."""
    arguments: RawArguments
    """The arguments exactly as received. In JSON, text, bytes and mappings that JSON
    cannot carry as themselves (invalid UTF-8, lone surrogates, NaN) are written
    escaped, ``{"escaped": "bytes" | "text" | "mapping", "data": ...}``, and read back
    exactly."""
    result: ToolResult[Any]
    """The result returned to the model."""
    rendered_output: RawText
    """The value as the model sees it (``""`` when there is none): rendered through the
    tool's result contract on success, by ``result.render()`` on failure."""
    started_at: datetime
    """When the executor received the call (timezone-aware)."""
    finished_at: datetime
    """When the result was ready (timezone-aware)."""
    denied: bool = False
    """A policy refused the call: its handler did not run."""
    rolled_back: bool = False
    """The call failed after every policy allowed it (in its handler, on a limit, or
    with a result that could not be applied), so the session and the resources were
    restored to their state before the call."""
    earlier_attempts: Annotated[tuple[str, ...], _left_out_when_empty()] = ()
    """Why each attempt before the last one failed, oldest first, for a tool with
    ``Retries``; each was rolled back before the next. Empty for a call that ran once
    (and then left out of the JSON form, which reads back without it)."""

    def __init__(
        self,
        prompt_name: str,
        name: RawText,
        call_id: RawText | None,
        params: Any,
        arguments: RawArguments,
        result: ToolResult[Any],
        rendered_output: RawText,
        started_at: datetime,
        finished_at: datetime,
        denied: bool = False,
        rolled_back: bool = False,
        earlier_attempts: tuple[str, ...] = (),
    ) -> None:
        # Every call records one: each field is set through its slot's descriptor, not
        # through ``object.__setattr__`` as a frozen dataclass's own constructor does,
        # at almost twice the cost. Assigning to a field afterwards still raises
        # ``FrozenInstanceError``.
        _set_prompt_name(self, prompt_name)
        _set_name(self, name)
        _set_call_id(self, call_id)
        _set_params(self, params)
        _set_arguments(self, arguments)
        _set_result(self, result)
        _set_rendered_output(self, rendered_output)
        _set_started_at(self, started_at)
        _set_finished_at(self, finished_at)
        _set_denied(self, denied)
        _set_rolled_back(self, rolled_back)
        _set_earlier_attempts(self, earlier_attempts)

    @property
    def success(self) -> bool:
        """Whether the call succeeded."""
        return self.result.success

    @property
    def attempts(self) -> int:
        """How many times the handler ran: 1, or more for a retried call."""
        return len(self.earlier_attempts) + 1

    @property
    def duration(self) -> timedelta:
        """How long the call took."""
        return self.finished_at - self.started_at


# The slots' own setters, for ``ToolInvoked.__init__``.
_SLOTS = vars(ToolInvoked)
_set_prompt_name = _SLOTS["prompt_name"].__set__
_set_name = _SLOTS["name"].__set__
_set_call_id = _SLOTS["call_id"].__set__
_set_params = _SLOTS["params"].__set__
_set_arguments = _SLOTS["arguments"].__set__
_set_result = _SLOTS["result"].__set__
_set_rendered_output = _SLOTS["rendered_output"].__set__
_set_started_at = _SLOTS["started_at"].__set__
_set_finished_at = _SLOTS["finished_at"].__set__
_set_denied = _SLOTS["denied"].__set__
_set_rolled_back = _SLOTS["rolled_back"].__set__
_set_earlier_attempts = _SLOTS["earlier_attempts"].__set__


def recorded_call(document: Mapping[str, Any]) -> ToolCall:
    """The call a ``ToolInvoked``'s JSON form records, its escaped raw values read back.

    Raises ``ValueError`` when ``name``, ``call_id`` or ``arguments`` is neither plain
    nor a valid escaped form.
    """
    name, call_id = decode(document.get("name")), decode(document.get("call_id"))
    if not isinstance(name, str) or not (call_id is None or isinstance(call_id, str)):
        raise ValueError("a recorded ToolInvoked's name and call_id must be text")
    return ToolCall(name=name, arguments=decode(document.get("arguments")), call_id=call_id)
