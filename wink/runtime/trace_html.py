"""A saved session as one self-contained HTML page: its evaluations, their turns and
tool calls over time, and its state.

The page is built from a snapshot's JSON (``Snapshot.to_json``), so no slice type
needs importing: ``wink trace SNAPSHOT.json --html out.html`` renders a session
saved anywhere, and ``session.to_html()`` the live one. It has no scripts and loads
nothing: styles are inline. Every entry (call, state version, slice, prompt, answer)
is a closed ``<details>`` whose one-line ``<summary>`` says what it is and how it
went, so a long session reads as a list of lines; a click shows the rest.

Each evaluation an adapter recorded (``PromptExecuted``, with the rendered text of
its ``PromptRendered``) is one entry: prompt, adapter, outcome, timing, tokens,
then its turns (``PromptExecuted.exchanges``), each with the tool calls that
answered that reply, then the final answer. A call belongs to the innermost
evaluation of its prompt running when it started, and to the turn whose reply
came last before it (an evaluation saved without its turns lists its calls
directly); an evaluation started by a tool call (a delegation) names that call.
Calls outside any evaluation (run by an executor directly) come after.

Each ``ToolInvoked`` is one entry: tool, outcome, call id, when it started (from the
first recorded moment) and how long it took, and the start of its result on one line;
opened, its arguments and its result as the model read it. The outcome tells a
policy's denial (``denied``) from a failure, and marks a failed call whose changes
were undone ``rolled back`` (both as the executor recorded them; sessions saved
before it recorded them are read from the messages' wording).

A session created with ``Session(keep_history=True)`` saved every version of its
``STATE`` slices (``wink.runtime.history``): each slice's versions follow, in
order, each with what made it and when, tied to the tool call whose result value
it was, else to the innermost call or evaluation turn running when it was
committed; versions a rollback undid are marked ``rolled back``. Then every
``STATE`` slice as it ended (without history, the page says how to get it; a slice
whose last version above already shows its end is named, not repeated), and every
other ``LOG`` slice (events) in order.

Slices of wink's own machinery (``PolicyState`` and any other type defined in the
``wink`` package outside ``wink.contrib``) are left out unless
``internal_slices=True``; the page names what it left out. The suites of
``wink.contrib`` keep the session's content (a plan, files), so they are shown.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from wink.runtime._raw import decode
from wink.runtime.history import RESTORE, UPDATE, undone_positions
from wink.runtime.snapshot import SNAPSHOT_VERSION, SnapshotError, read_document

__all__ = [
    "NO_HISTORY",
    "SLICE_VERSION",
    "TOOL_INVOKED",
    "is_internal_slice",
    "render_snapshot_document",
    "render_snapshot_json",
]

TOOL_INVOKED = "wink.runtime.events:ToolInvoked"
"""How a snapshot names the slice of tool calls."""
_RENDERED = "wink.adapters.events:PromptRendered"
_EXECUTED = "wink.adapters.events:PromptExecuted"
SLICE_VERSION = "wink.runtime.history:SliceVersion"
"""How a snapshot names the slice of ``STATE`` versions (``keep_history=True``)."""
_SHOWN = frozenset({TOOL_INVOKED, _RENDERED, _EXECUTED, SLICE_VERSION})

NO_HISTORY = (
    "This session kept no history, so each slice shows only its final values. "
    "Create it with Session(keep_history=True) to see every version of each slice, "
    "with the tool call that made it."
)
"""What the page says above the final state of a session that kept no history."""

_EXCERPT_LENGTH = 90
"""Characters of a value shown on its entry's one-line summary."""

# (message prefix, outcome): the executor's own wording of failures before any policy ran.
_EARLY_FAILURES = (
    ("Unknown tool ", "unknown tool"),
    ("Invalid arguments for tool ", "invalid arguments"),
)

_STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 60rem;
       color: #1d2330; padding: 0 1rem; }
h1 { font-size: 1.4rem; margin-bottom: .2rem; }
h2 { font-size: 1.1rem; margin-top: 2rem; border-bottom: 1px solid #d8dce6; }
.summary { color: #4a5368; margin-top: 0; }
ol.timeline { list-style: none; padding: 0; }
li.call { border-left: 4px solid #3b9c5a; margin: .3rem 0; padding: .15rem .8rem;
          background: #f6f8fb; }
li.call.failed { border-left-color: #c8463d; }
.head { display: flex; gap: .8rem; align-items: baseline; flex-wrap: wrap; }
summary.head { display: flex; }
summary.head::before { content: "▸"; color: #6b7489; }
details[open] > summary.head::before { content: "▾"; }
.excerpt { color: #4a5368; font-family: ui-monospace, monospace; font-size: .85rem;
           overflow: hidden; text-overflow: ellipsis; white-space: nowrap; min-width: 0;
           flex: 1 1 10rem; }
.label { color: #6b7489; font-size: .8rem; margin: .4rem 0 0; }
.tool { font-weight: 600; font-family: ui-monospace, monospace; }
.outcome { font-size: .8rem; padding: 0 .4rem; border-radius: .3rem; background: #dcefe2; }
li.failed .outcome { background: #f6dcda; }
.rolled-back { font-size: .8rem; color: #c8463d; }
ol.versions { list-style: none; padding: 0; }
li.version { border-left: 4px solid #8a6fc8; margin: .3rem 0; padding: .15rem .8rem;
             background: #f6f8fb; }
li.version.undone { border-left-color: #c8463d; opacity: .75; }
.version-label { font-weight: 600; }
.cause, .made-by { color: #4a5368; font-size: .85rem; }
.note { color: #4a5368; font-style: italic; }
.timing, .call-id { color: #6b7489; font-size: .85rem; }
pre { background: #fff; border: 1px solid #e3e6ee; padding: .4rem .6rem; overflow-x: auto;
      margin: .3rem 0; white-space: pre-wrap; word-break: break-word; }
.error { margin: .3rem 0; white-space: pre-wrap; color: #c8463d; }
article.evaluation { border: 1px solid #d8dce6; border-left: 4px solid #3b6fc8;
                     margin: 1rem 0; padding: .5rem .8rem; }
article.evaluation.failed { border-left-color: #c8463d; }
.prompt-name, .turn-label { font-weight: 600; }
.adapter, .usage, .called, .delegated { color: #6b7489; font-size: .85rem; }
ol.turns { list-style: none; padding-left: .6rem; }
li.turn { margin: .4rem 0; }
summary { cursor: pointer; color: #4a5368; }
details.slice { margin: .3rem 0; }
h3 { font-size: 1rem; margin: 1rem 0 .3rem; }
"""


def render_snapshot_json(
    text: str | bytes, *, title: str = "wink session", internal_slices: bool = False
) -> str:
    """The page of a snapshot given as the JSON that ``Snapshot.to_json`` writes.

    ``internal_slices=True`` also shows the slices of wink's own machinery
    (``is_internal_slice``). Raises ``SnapshotError`` when ``text`` is not such a
    document.
    """
    return render_snapshot_document(
        read_document(text), title=title, internal_slices=internal_slices
    )


def is_internal_slice(type_name: str) -> bool:
    """Whether a slice type (``module:Qualname``) belongs to wink's own machinery.

    ``wink.contrib`` is left out: its tool suites keep what the model worked on.
    """
    module = type_name.partition(":")[0]
    return (module == "wink" or module.startswith("wink.")) and not module.startswith(
        "wink.contrib."
    )


def render_snapshot_document(
    document: object, *, title: str = "wink session", internal_slices: bool = False
) -> str:
    """The page of a decoded snapshot document (see ``render_snapshot_json``)."""
    slices = _slices(document)
    hidden = set() if internal_slices else _internal_types(slices)
    calls = [
        _raw_values_read(_dict(item), ("name", "call_id", "arguments", "rendered_output"))
        for _, name, items in slices
        if name == TOOL_INVOKED
        for item in items
    ]
    rendered = [
        _raw_values_read(_dict(item), ("text",))
        for _, name, items in slices
        if name == _RENDERED
        for item in items
    ]
    executed = [
        _raw_values_read(_dict(item), ("text", "error"))
        for _, name, items in slices
        if name == _EXECUTED
        for item in items
    ]
    versions = [
        _raw_values_read(_dict(item), ("call_id", "tool"))
        for _, name, items in slices
        if name == SLICE_VERSION
        for item in items
        if str(_dict(item).get("slice_type")) not in hidden
    ]
    state = [
        (name, items) for kind, name, items in slices if kind == "state" and name not in hidden
    ]
    events = [
        (name, items)
        for kind, name, items in slices
        if kind == "log" and name not in _SHOWN and name not in hidden
    ]
    evaluations = _evaluations(executed, rendered, calls)
    moments = [
        moment
        for record in (*calls, *executed)
        for key in ("started_at", "finished_at")
        if (moment := _time(record, key)) is not None
    ]
    origin = min(moments, default=None)
    loose = [index for index in range(len(calls)) if not _placed(index, evaluations)]
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{_text(title)}</title>",
        f"<style>{_STYLE}</style></head><body>",
        f"<h1>{_text(title)}</h1>",
        _summary(calls, moments),
    ]
    if evaluations:
        parts += [
            _evaluation_summary(evaluations),
            '<section id="evaluations"><h2>Evaluations</h2>',
            *(_evaluation_entry(e, calls, origin) for e in evaluations),
            "</section>",
        ]
    heading = "Tool calls outside an evaluation" if evaluations else "Tool calls"
    if loose or not evaluations:
        parts += [
            f'<section id="calls"><h2>{heading}</h2>',
            _timeline([(index, calls[index]) for index in loose], origin),
            "</section>",
        ]
    if hidden:
        parts.append(_hidden_note(hidden))
    if versions:
        parts += [
            '<section id="history"><h2>State over time</h2>',
            _history(versions, calls, evaluations, origin),
            "</section>",
        ]
    parts += [
        '<section id="state"><h2>State at the end</h2>',
        "" if versions else f'<p class="note">{_text(NO_HISTORY)}</p>',
        _slice_list(state, "No state slices.", _last_values(versions)),
        "</section>",
        '<section id="events"><h2>Other events</h2>',
        _slice_list(events, "No other events.", {}),
        "</section>",
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def _internal_types(slices: list[tuple[str, str, list[Any]]]) -> set[str]:
    """The internal slice types among the slices and the types of their versions, save
    those the page shows as calls, evaluations and versions."""
    named = {name for _, name, _ in slices if name not in _SHOWN} | {
        str(_dict(item).get("slice_type"))
        for _, name, items in slices
        if name == SLICE_VERSION
        for item in items
    }
    return {name for name in named if is_internal_slice(name)}


def _hidden_note(hidden: set[str]) -> str:
    shortened = ", ".join(sorted(name.rpartition(":")[2] or name for name in hidden))
    note = (
        f"Not shown: wink's own slices ({shortened}). "
        "wink trace --internal-slices or to_html(internal_slices=True) shows them."
    )
    return f'<p class="note hidden-slices">{_text(note)}</p>'


def _slices(document: object) -> list[tuple[str, str, list[Any]]]:
    if not isinstance(document, dict) or document.get("version") != SNAPSHOT_VERSION:
        found = document.get("version") if isinstance(document, dict) else document
        raise SnapshotError(f"snapshot version must be {SNAPSHOT_VERSION}, got {found!r:.60}")
    raw = document.get("slices", [])
    if not isinstance(raw, list):
        raise SnapshotError("slices: expected a list")
    slices = []
    for index, entry in enumerate(raw):
        if (
            not isinstance(entry, dict)
            or entry.get("kind") not in ("state", "log")
            or not isinstance(entry.get("type"), str)
            or not isinstance(entry.get("items"), list)
        ):
            raise SnapshotError(
                f"slices[{index}]: expected an object with type (a string), kind ('state' or "
                "'log') and items (a list)"
            )
        slices.append((entry["kind"], entry["type"], entry["items"]))
    return slices


@dataclass(slots=True)
class _Evaluation:
    """A recorded evaluation and the calls placed in it, by turn."""

    number: int
    record: dict[str, Any]
    rendered: dict[str, Any] | None
    started: datetime | None
    finished: datetime | None
    turns: list[list[int]] = field(default_factory=list)
    """Per turn (reply), the indexes of its calls in the ToolInvoked log."""
    delegated_by: int | None = None
    """The index of the call whose handler ran this evaluation, if one did."""
    unturned: list[int] = field(default_factory=list)
    """The indexes of its calls when it recorded no turns (saved by an older wink)."""


def _evaluations(
    executed: list[dict[str, Any]], rendered: list[dict[str, Any]], calls: list[dict[str, Any]]
) -> list[_Evaluation]:
    found = [
        _Evaluation(0, record, None, _time(record, "started_at"), _time(record, "finished_at"))
        for record in executed
    ]
    found.sort(key=lambda e: (e.started is None, e.started or datetime.min))
    for number, evaluation in enumerate(found, 1):
        evaluation.number = number
        exchanges = evaluation.record.get("exchanges")
        count = len(exchanges) if isinstance(exchanges, list) else 0
        evaluation.turns = [[] for _ in range(count)]
        evaluation.rendered = next(
            (r for r in rendered if _within(r, "rendered_at", evaluation, same_prompt=True)), None
        )
    for index, call in enumerate(calls):
        holder = _innermost(found, call, "started_at", same_prompt=True)
        if holder is not None and holder.turns:
            holder.turns[_turn_of(holder, call)].append(index)
        elif holder is not None:
            holder.unturned.append(index)
    for evaluation in found:
        evaluation.delegated_by = _delegating_call(evaluation, calls)
    return found


def _within(
    record: Mapping[str, Any], key: str, evaluation: _Evaluation, *, same_prompt: bool
) -> bool:
    moment = _time(record, key)
    if moment is None or evaluation.started is None or evaluation.finished is None:
        return False
    if same_prompt and record.get("prompt_name") != evaluation.record.get("prompt_name"):
        return False
    return evaluation.started <= moment <= evaluation.finished


def _innermost(
    evaluations: list[_Evaluation], record: Mapping[str, Any], key: str, *, same_prompt: bool
) -> _Evaluation | None:
    holders = [e for e in evaluations if _within(record, key, e, same_prompt=same_prompt)]
    return holders[-1] if holders else None  # sorted by start: the last is the innermost


def _turn_of(evaluation: _Evaluation, call: Mapping[str, Any]) -> int:
    """The turn whose reply was read last before ``call`` started (0-based)."""
    started = _time(call, "started_at")
    turn = 0
    for number, exchange in enumerate(evaluation.record.get("exchanges") or []):
        replied = _time(exchange, "replied_at")
        if started is not None and replied is not None and replied <= started:
            turn = number
    return turn


def _delegating_call(evaluation: _Evaluation, calls: list[dict[str, Any]]) -> int | None:
    """The latest-starting call still running when ``evaluation`` started."""
    start = evaluation.started
    if start is None:
        return None
    running = [
        (started, index)
        for index, call in enumerate(calls)
        if (started := _time(call, "started_at")) is not None
        and (finished := _time(call, "finished_at")) is not None
        and started <= start <= finished
    ]
    return max(running)[1] if running else None


def _placed(index: int, evaluations: list[_Evaluation]) -> bool:
    return any(
        index in evaluation.unturned or any(index in turn for turn in evaluation.turns)
        for evaluation in evaluations
    )


def _summary(calls: list[dict[str, Any]], moments: list[datetime]) -> str:
    outcomes = [_outcome(call) for call in calls]
    failed = sum(1 for outcome, _ in outcomes if outcome != "ok")
    denied = sum(1 for outcome, _ in outcomes if outcome == "denied")
    rolled_back = sum(1 for _, rolled in outcomes if rolled)
    span = f" over {_ms(max(moments) - min(moments))}" if moments else ""
    text = (
        f"{_count(len(calls), 'tool call')}: {len(calls) - failed} ok, {failed} failed "
        f"({denied} denied, {rolled_back} rolled back){span}"
    )
    return f'<p class="summary">{_text(text)}</p>'


def _evaluation_summary(evaluations: list[_Evaluation]) -> str:
    failed = sum(1 for e in evaluations if e.record.get("error") is not None)
    turns = sum(len(e.turns) for e in evaluations)
    usage = [_tokens(e.record.get("usage")) for e in evaluations]
    text = (
        f"{_count(len(evaluations), 'evaluation')} ({failed} failed), {_count(turns, 'turn')}, "
        f"{sum(i for i, _ in usage)} input and {sum(o for _, o in usage)} output tokens"
    )
    return f'<p class="summary evaluations">{_text(text)}</p>'


def _evaluation_entry(
    evaluation: _Evaluation, calls: list[dict[str, Any]], origin: datetime | None
) -> str:
    record = evaluation.record
    prompt = str(record.get("prompt_name", "?"))
    error = record.get("error")
    outcome = "ok" if error is None else f"failed ({record.get('phase') or 'error'})"
    input_tokens, output_tokens = _tokens(record.get("usage"))
    head = [
        f'<span class="prompt-name">{_text(prompt)}</span>',
        f'<span class="adapter">{_text(str(record.get("adapter", "?")))}</span>',
        f'<span class="outcome">{_text(outcome)}</span>',
        f'<span class="timing">{_text(_timing(record, origin))}</span>',
        f'<span class="usage">{input_tokens} in · {output_tokens} out tokens</span>',
    ]
    if evaluation.delegated_by is not None:
        head.append(f'<span class="delegated">from call-{evaluation.delegated_by + 1}</span>')
    body = [f'<div class="head">{" ".join(head)}</div>']
    if error is not None:
        body.append(f'<p class="error">{_text(str(error))}</p>')
    if evaluation.rendered is not None:
        body.append(_folded("prompt", str(evaluation.rendered.get("text", ""))))
    exchanges = record.get("exchanges") or []
    body.append('<ol class="turns">')
    for number, (exchange, indexes) in enumerate(zip(exchanges, evaluation.turns, strict=True), 1):
        body.append(_turn_entry(evaluation.number, number, _dict(exchange), indexes, calls, origin))
    body.append("</ol>")
    if evaluation.unturned:
        body.append(_timeline([(index, calls[index]) for index in evaluation.unturned], origin))
    answer = record.get("text")
    if isinstance(answer, str):
        body.append(_folded("answer", answer))
    css = "evaluation" if error is None else "evaluation failed"
    attributes = (
        f'class="{css}" id="evaluation-{evaluation.number}" data-prompt="{_text(prompt)}" '
        f'data-outcome="{"ok" if error is None else "failed"}"'
    )
    return f"<article {attributes}>" + "".join(body) + "</article>"


def _turn_entry(
    evaluation: int,
    number: int,
    exchange: dict[str, Any],
    indexes: list[int],
    calls: list[dict[str, Any]],
    origin: datetime | None,
) -> str:
    timing = _timing(exchange, origin, ("requested_at", "replied_at"), took="model took")
    input_tokens, output_tokens = _tokens(exchange.get("usage"))
    asked = exchange.get("tool_calls") or []
    called = f"called {', '.join(map(str, asked))}" if asked else "answered"
    head = [
        f'<span class="turn-label">turn {number}</span>',
        f'<span class="timing">{_text(timing)}</span>',
        f'<span class="usage">{input_tokens} in · {output_tokens} out tokens</span>',
        f'<span class="called">{_text(called)}</span>',
    ]
    timeline = _timeline([(index, calls[index]) for index in indexes], origin) if indexes else ""
    return (
        f'<li class="turn" id="evaluation-{evaluation}-turn-{number}" data-turn="{number}">'
        f'<div class="head">{" ".join(head)}</div>{timeline}</li>'
    )


def _timeline(calls: list[tuple[int, dict[str, Any]]], origin: datetime | None) -> str:
    if not calls:
        return '<p class="empty">No tool calls.</p>'
    entries = [_call_entry(index + 1, call, origin) for index, call in calls]
    return '<ol class="timeline">\n' + "\n".join(entries) + "\n</ol>"


def _call_entry(number: int, call: dict[str, Any], origin: datetime | None) -> str:
    name = str(call.get("name", "?"))
    outcome, rolled_back = _outcome(call)
    css = "call" if outcome == "ok" else "call failed"
    result = _dict(call.get("result"))
    call_id = call.get("call_id")
    head = [
        f'<span class="tool">{_text(name)}</span>',
        f'<span class="outcome">{_text(outcome)}</span>',
    ]
    if rolled_back:
        head.append('<span class="rolled-back">rolled back</span>')
    if call_id is not None:
        head.append(f'<span class="call-id">{_text(str(call_id))}</span>')
    timing = _timing(call, origin)
    if timing:
        head.append(f'<span class="timing">{_text(timing)}</span>')
    seen = _model_text(result, call.get("rendered_output"))
    head.append(f'<span class="excerpt">{_text(_excerpt(seen))}</span>')
    body = [
        f'<summary class="head">{" ".join(head)}</summary>',
        '<p class="label">arguments</p>',
        f'<pre class="arguments">{_text(_arguments(call.get("arguments")))}</pre>',
        '<p class="label">result</p>',
        f'<pre class="result">{_text(seen)}</pre>',
    ]
    attributes = (
        f'class="{css}" id="call-{number}" data-tool="{_text(name)}" '
        f'data-outcome="{_text(outcome)}"'
    )
    return f"<li {attributes}><details>" + "".join(body) + "</details></li>"


def _model_text(result: Mapping[str, Any], rendered: object) -> str:
    """The result as the model read it: the message, a blank line, the rendered value.

    This one form is shown for a call, not the message, the rendered value and the
    value's JSON apart: it is what the model answered next, and the value's JSON is
    the state that the state sections show. The value is left out as the executor
    left it out (``exclude_value_from_context``), as ``ToolResult.model_text`` does.
    """
    message = str(result.get("message", ""))
    if not isinstance(rendered, str) or not rendered or result.get("exclude_value_from_context"):
        return message
    return f"{message}\n\n{rendered}" if message else rendered


def _timing(
    record: Mapping[str, Any],
    origin: datetime | None,
    keys: tuple[str, str] = ("started_at", "finished_at"),
    *,
    took: str = "took",
) -> str:
    """When ``record`` started after ``origin``, and how long it took, as far as known."""
    started, finished = _time(record, keys[0]), _time(record, keys[1])
    timing = []
    if started is not None and origin is not None:
        timing.append(f"+{_ms(started - origin)}")
    if started is not None and finished is not None:
        timing.append(f"{took} {_ms(finished - started)}")
    return " · ".join(timing)


def _raw_values_read(record: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    """The record with what it keeps as received (escaped where JSON cannot carry it)
    read back, and shown as text: bytes as UTF-8, a lone surrogate as its escape."""
    data = dict(record)
    for key in keys:
        try:
            value = decode(data.get(key))
        except ValueError:
            continue  # not a form wink writes: shown as it is
        if isinstance(value, bytes):
            value = value.decode("utf-8", "backslashreplace")
        if isinstance(value, str):
            value = value.encode("utf-8", "backslashreplace").decode("utf-8")
        data[key] = value
    return data


def _outcome(call: Mapping[str, Any]) -> tuple[str, bool]:
    """(outcome, whether its changes were rolled back) of a recorded call."""
    result = call.get("result")
    if not isinstance(result, dict) or result.get("success", True):
        return "ok", False
    message = str(result.get("message", ""))
    denied, rolled_back = call.get("denied"), call.get("rolled_back")
    if not isinstance(denied, bool) or not isinstance(rolled_back, bool):
        return _unmarked_outcome(message)
    if denied:
        return "denied", False
    if not rolled_back:
        for prefix, outcome in _EARLY_FAILURES:
            if message.startswith(prefix):
                return outcome, False
        return "failed", False
    return _failure_kind(call, message), True


def _failure_kind(call: Mapping[str, Any], message: str) -> str:
    """How a call that had started failed, from the executor's wording."""
    tool = f"Tool {str(call.get('name', ''))!r} "
    if message.startswith(tool + "raised "):
        return "raised"
    if message.startswith(tool + "was stopped: "):
        return "stopped"
    return "failed"


def _unmarked_outcome(message: str) -> tuple[str, bool]:
    """The outcome of a call recorded without ``denied`` and ``rolled_back``, from its
    message alone: a policy's refusal and the tool's own error then read alike."""
    for prefix, outcome in _EARLY_FAILURES:
        if message.startswith(prefix):
            return outcome, False
    if message.startswith("Policy "):
        return "denied", False
    if message.startswith("Tool ") and " raised " in message.split("\n", 1)[0]:
        return "raised", True
    return "denied or failed", True


def _tokens(usage: object) -> tuple[int, int]:
    data = _dict(usage)
    input_tokens, output_tokens = data.get("input_tokens"), data.get("output_tokens")
    return (
        input_tokens if isinstance(input_tokens, int) else 0,
        output_tokens if isinstance(output_tokens, int) else 0,
    )


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _arguments(arguments: object) -> str:
    if isinstance(arguments, str):
        try:
            return json.dumps(json.loads(arguments), indent=2, ensure_ascii=False)
        except ValueError:
            return arguments
    if arguments is None:
        return "(none)"
    text = json.dumps(arguments, indent=2, ensure_ascii=False)
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _history(
    versions: list[dict[str, Any]],
    calls: list[dict[str, Any]],
    evaluations: list[_Evaluation],
    origin: datetime | None,
) -> str:
    """Each slice's versions in order, each tied to the call or turn that made it."""
    undone = undone_positions(
        [
            (str(v.get("slice_type")), str(v.get("cause")), _int_or_none(v.get("undoes_from")))
            for v in versions
        ]
    )
    by_slice: dict[str, list[int]] = {}
    for position, version in enumerate(versions):
        by_slice.setdefault(str(version.get("slice_type", "?")), []).append(position)
    parts = ['<div class="histories">']
    for name, positions in by_slice.items():
        short = name.rpartition(":")[2] or name
        parts.append(
            f'<div class="slice-history" data-type="{_text(name)}"><h3>{_text(short)} '
            f'<span class="timing">{_text(_count(len(positions), "version"))}</span></h3>'
            '<ol class="versions">'
        )
        for number, position in enumerate(positions, 1):
            parts.append(
                _version_entry(
                    number, versions[position], position in undone, calls, evaluations, origin
                )
            )
        parts.append("</ol></div>")
    parts.append("</div>")
    return "\n".join(parts)


def _version_entry(
    number: int,
    version: dict[str, Any],
    undone: bool,
    calls: list[dict[str, Any]],
    evaluations: list[_Evaluation],
    origin: datetime | None,
) -> str:
    cause = str(version.get("cause", "?"))
    made_by, call = _made_by(version, calls, evaluations)
    if call is not None:
        made_by += _turn_holding(call, evaluations)
    head = [
        f'<span class="version-label">version {number}</span>',
        f'<span class="cause">{_text(_cause_text(cause))}</span>',
        f'<span class="made-by">{_text(made_by)}</span>',
    ]
    if undone:
        head.append('<span class="rolled-back">rolled back</span>')
    moment = _time(version, "changed_at")
    if moment is not None and origin is not None:
        head.append(f'<span class="timing">+{_ms(moment - origin)}</span>')
    values = version.get("values")
    head.append(f'<span class="excerpt">{_text(_excerpt(_json_line(values)))}</span>')
    css = " ".join(
        ["version", *(["undone"] if undone else []), *(["restore"] if cause == RESTORE else [])]
    )
    attributes = f'class="{css}" data-version="{number}"'
    if call is not None:
        attributes += f' data-call="call-{call + 1}"'
    return (
        f"<li {attributes}><details>"
        f'<summary class="head">{" ".join(head)}</summary>'
        f'<pre class="values">{_text(_json(values))}</pre>'
        "</details></li>"
    )


def _cause_text(cause: str) -> str:
    if cause == TOOL_INVOKED:
        return "result value"
    if cause == RESTORE:
        return "restored"
    if cause == UPDATE:
        return "updated"
    return cause.rpartition(":")[2] or cause  # an event: its class name


def _made_by(
    version: Mapping[str, Any], calls: list[dict[str, Any]], evaluations: list[_Evaluation]
) -> tuple[str, int | None]:
    """Which call (its index) or turn a version came from, in words.

    A tool call's result value names its call; any other change belongs to the
    innermost call running when it was committed, else to the evaluation turn.
    """
    moment = _time(version, "changed_at")
    call_id = version.get("call_id")
    if call_id is not None:
        matching = [index for index, call in enumerate(calls) if call.get("call_id") == call_id]
        earlier = [
            index
            for index in matching
            if moment is None or (_time(calls[index], "finished_at") or moment) <= moment
        ]
        chosen = earlier or matching
        found = chosen[-1] if chosen else None
        tool = str(version.get("tool", "?"))
        where = f"call-{found + 1} " if found is not None else ""
        return f"by {where}{tool} ({call_id})", found
    if moment is not None:
        running = [
            (started, index)
            for index, call in enumerate(calls)
            if (started := _time(call, "started_at")) is not None
            and (finished := _time(call, "finished_at")) is not None
            and started <= moment <= finished
        ]
        if running:
            index = max(running)[1]
            call = calls[index]
            return f"during call-{index + 1} {call.get('name', '?')} ({call.get('call_id')})", index
        stamp = {"started_at": version.get("changed_at")}
        holder = _innermost(evaluations, stamp, "started_at", same_prompt=False)
        if holder is not None:
            turn = f", turn {_turn_of(holder, stamp) + 1}" if holder.turns else ""
            return f"in evaluation {holder.number}{turn}", None
    return "outside tool calls", None


def _turn_holding(call: int, evaluations: list[_Evaluation]) -> str:
    """``", in evaluation 1, turn 2"`` for a call placed in a turn; else nothing."""
    for evaluation in evaluations:
        for number, turn in enumerate(evaluation.turns, 1):
            if call in turn:
                return f", in evaluation {evaluation.number}, turn {number}"
        if call in evaluation.unturned:
            return f", in evaluation {evaluation.number}"
    return ""


def _int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _last_values(versions: list[dict[str, Any]]) -> dict[str, tuple[int, Any]]:
    """Per slice type, the number of its last version on the page and its values."""
    last: dict[str, tuple[int, Any]] = {}
    for version in versions:
        name = str(version.get("slice_type", "?"))
        last[name] = (last.get(name, (0, None))[0] + 1, version.get("values"))
    return last


def _slice_list(
    slices: list[tuple[str, list[Any]]], empty: str, last_versions: dict[str, tuple[int, Any]]
) -> str:
    """Each slice folded to its name and size; a slice that ended as its last version
    on the page says so rather than showing the same values twice."""
    if not slices:
        return f'<p class="empty">{_text(empty)}</p>'
    parts = ['<div class="slices">']
    for name, items in slices:
        short = name.rpartition(":")[2] or name
        head = (
            f'<span class="slice-name">{_text(short)}</span> '
            f'<span class="timing">{_text(_count(len(items), "item"))}</span>'
        )
        number, values = last_versions.get(name, (0, None))
        if number and values == items:
            parts.append(
                f'<p class="slice" data-type="{_text(name)}">{head} '
                f'<span class="note">as version {number} above</span></p>'
            )
            continue
        parts.append(
            f'<details class="slice" data-type="{_text(name)}"><summary class="head">{head} '
            f'<span class="excerpt">{_text(_excerpt(_json_line(items)))}</span></summary>'
            f"<pre>{_text(_json(items))}</pre></details>"
        )
    parts.append("</div>")
    return "\n".join(parts)


def _folded(label: str, text: str) -> str:
    """``text`` closed under a summary of its label and first characters."""
    return (
        f'<details class="{_text(label)}"><summary class="head"><span class="label-name">'
        f'{_text(label)}</span> <span class="excerpt">{_text(_excerpt(text))}</span></summary>'
        f"<pre>{_text(text)}</pre></details>"
    )


def _excerpt(text: str) -> str:
    """``text`` on one line, cut to a summary's length."""
    line = " ".join(text.split())
    if len(line) <= _EXCERPT_LENGTH:
        return line
    return line[: _EXCERPT_LENGTH - 1] + "…"


def _json(value: object) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


def _json_line(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


def _time(call: Any, key: str) -> datetime | None:
    value = call.get(key) if isinstance(call, Mapping) else None
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def _ms(delta: Any) -> str:
    return f"{delta.total_seconds() * 1000:.1f} ms"


def _text(value: str) -> str:
    return html.escape(value, quote=True)
