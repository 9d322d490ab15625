"""An evaluation that waits for a person: what it keeps in its session when a policy
defers a call (``PausedEvaluation``), the ``ApprovalPending`` it raises, and how
``adapter.resume`` checks the decisions and rebuilds the conversation.

The conversation is kept as the model's turns and the answers each got (text,
calls, the provider's echo, the tool messages' text), all JSON: a resume in another
process replays them into a new conversation of the same adapter, so the next
request carries the same transcript.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from wink._error_text import bounded
from wink.errors import WinkError
from wink.policy.approval import Approval, ApprovalRequest
from wink.prompt import RenderedPrompt
from wink.runtime.budget import TokenUsage
from wink.runtime.call import ToolCall
from wink.runtime.session import Session, SliceKind
from wink.tools import ToolResult

__all__ = ["ApprovalError", "ApprovalPending", "PausedEvaluation", "SavedCall", "SavedTurn"]


class ApprovalPending(WinkError):
    """An evaluation stopped before running calls a policy defers to a person.

    ``requests`` lists them; resume with ``adapter.resume(prompt, session=...,
    decisions={call_id: Approval.approve() | Approval.deny(reason)})``.
    """

    def __init__(self, prompt_name: str, session_id: str, requests: Sequence[ApprovalRequest]):
        listed = ", ".join(f"{r.call_id!r} ({r.tool_name})" for r in requests)
        super().__init__(
            f"prompt {prompt_name!r} awaits a person's decision on {len(requests)} call(s): "
            f"{bounded(listed)}; resume with adapter.resume(..., decisions=...)"
        )
        self.prompt_name = prompt_name
        self.session_id = session_id
        self.requests = tuple(requests)


class ApprovalError(WinkError):
    """``adapter.resume`` cannot continue: nothing awaits, or the decisions or the
    prompt do not fit what awaits."""


@dataclass(frozen=True, slots=True)
class SavedCall:
    """A model's tool call, as JSON data."""

    name: str
    arguments: str
    """JSON text (a decoded mapping is written back as JSON)."""
    decoded: bool
    """Whether the model's arguments were a mapping, not text."""
    call_id: str | None

    @staticmethod
    def of(call: ToolCall) -> SavedCall:
        arguments = call.arguments
        if isinstance(arguments, str):
            return SavedCall(call.name, arguments, False, call.call_id)
        if isinstance(arguments, bytes):
            return SavedCall(call.name, arguments.decode("utf-8", "replace"), False, call.call_id)
        return SavedCall(call.name, json.dumps(arguments), True, call.call_id)

    def call(self) -> ToolCall:
        arguments: Any = json.loads(self.arguments) if self.decoded else self.arguments
        return ToolCall(self.name, arguments, self.call_id)


@dataclass(frozen=True, slots=True)
class SavedTurn:
    """One model turn and what the conversation answered it."""

    kind: str
    """``"tools"``, ``"invalid"`` (the answer was refused), ``"pause"`` or ``"pending"``."""
    text: str | None
    calls: tuple[SavedCall, ...]
    echo: Any
    """The provider's echo of the turn (JSON data), or ``None``."""
    answers: tuple[tuple[str, bool], ...] = ()
    """Each tool message's text and success, in call order."""
    correction: str | None = None
    """What the model was told about a refused answer."""


@dataclass(frozen=True, slots=True)
class PausedEvaluation:
    """An evaluation waiting for a person, kept in its session (a ``STATE`` slice)."""

    prompt_name: str
    render_digest: str
    """Identifies the render (text and tools) the evaluation ran: a resume must match."""
    messages: int
    """How many messages the caller passed (``messages=``): a resume passes the same."""
    turns: int
    usage: TokenUsage
    first_record: int
    """How many ``ToolInvoked`` the session held when the evaluation began."""
    history: tuple[SavedTurn, ...]
    """The turns answered so far, and last the turn whose calls await."""
    awaiting: tuple[ApprovalRequest, ...]
    resumed: bool = False
    """Set once resumed: a second resume is refused."""


Session.declare_default(PausedEvaluation, SliceKind.STATE)


def render_digest(rendered: RenderedPrompt) -> str:
    """A digest of what the model was shown: the text and each tool's contract."""
    tools = [[tool.name, tool.description, tool.params_schema] for tool in rendered.tools]
    data = json.dumps([rendered.text, tools], sort_keys=True, default=str)
    return hashlib.sha256(data.encode("utf-8", "surrogatepass")).hexdigest()


def saved_turn(kind: str, text: str | None, calls: Sequence[ToolCall], echo: Any) -> SavedTurn:
    return SavedTurn(kind, text, tuple(SavedCall.of(call) for call in calls), echo)


def answered(turn: SavedTurn, results: Sequence[ToolResult[Any]]) -> SavedTurn:
    return replace(turn, kind="tools", answers=tuple((r.model_text(), r.success) for r in results))


def replayed_result(answer: tuple[str, bool]) -> ToolResult[Any]:
    """A result whose tool message reads as the recorded one did."""
    return ToolResult(message=answer[0], success=answer[1])


def paused(session: Session, prompt_name: str) -> PausedEvaluation:
    """The session's paused evaluation of ``prompt_name``; ``ApprovalError`` when none."""
    record = session[PausedEvaluation].latest()
    where = f"session {bounded(session.session_id)!r}"
    if record is None or record.prompt_name != prompt_name:
        raise ApprovalError(
            f"{where} has no evaluation of prompt {prompt_name!r} awaiting approval"
        )
    if record.resumed:
        raise ApprovalError(
            f"{where}: the evaluation of prompt {prompt_name!r} was resumed already; its "
            "decisions were applied once"
        )
    return record


def check_decisions(record: PausedEvaluation, decisions: Mapping[str, Approval]) -> None:
    """Refuse decisions for calls that do not await one, and calls left undecided."""
    awaited = {request.call_id: request for request in record.awaiting}
    listed = ", ".join(f"{r.call_id!r} ({r.tool_name})" for r in record.awaiting)
    for call_id, decision in decisions.items():
        if call_id not in awaited:
            raise ApprovalError(
                f"a decision was given for call {bounded(str(call_id))!r}, which does not await "
                f"one; the calls awaiting a decision are {bounded(listed)}"
            )
        if not isinstance(decision, Approval):
            raise ApprovalError(
                f"the decision for call {call_id!r} is a {type(decision).__name__}; give "
                "Approval.approve(), Approval.approve(arguments=...) or Approval.deny(reason)"
            )
    missing = [r for r in record.awaiting if r.call_id not in decisions]
    if missing:
        names = ", ".join(f"{r.call_id!r} ({r.tool_name})" for r in missing)
        raise ApprovalError(
            f"no decision was given for {bounded(names)}; each awaiting call needs one"
        )


def edited(call: ToolCall, decision: Approval | None) -> ToolCall:
    """``call`` with the arguments a person gave instead, if any."""
    if decision is None or decision.arguments is None:
        return call
    return ToolCall(call.name, json.dumps(dict(decision.arguments)), call.call_id)
