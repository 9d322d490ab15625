"""A saved session as one self-contained HTML page: its tool calls over time, and its state.

The page is built from a snapshot's JSON (``Snapshot.to_json``), so no slice type
needs importing: ``wink trace SNAPSHOT.json --html out.html`` renders a session
saved anywhere, and ``session.to_html()`` the live one. It has no scripts and loads
nothing: styles are inline, long values fold into ``<details>``.

Each ``ToolInvoked`` is one entry: tool, call id, when it started (from the first
call) and how long it took, its arguments, its outcome, its message and the value
the model saw. A failed call that had started is marked rolled back (the executor
restores state on every failure). Then every ``STATE`` slice as it ended, and
every other ``LOG`` slice (events) in order.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from wink.runtime._raw import decode
from wink.runtime.snapshot import SNAPSHOT_VERSION, SnapshotError, read_document

__all__ = ["TOOL_INVOKED", "render_snapshot_json", "render_snapshot_document"]

TOOL_INVOKED = "wink.runtime.events:ToolInvoked"
"""How a snapshot names the slice of tool calls."""

# (message prefix, outcome, whether the call started and so was rolled back): the
# executor's own wording of failures that are not the tool's or a policy's.
_KNOWN_FAILURES = (
    ("Unknown tool ", "unknown tool", False),
    ("Invalid arguments for tool ", "invalid arguments", False),
    ("Policy ", "denied", True),
)

_STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 60rem;
       color: #1d2330; padding: 0 1rem; }
h1 { font-size: 1.4rem; margin-bottom: .2rem; }
h2 { font-size: 1.1rem; margin-top: 2rem; border-bottom: 1px solid #d8dce6; }
.summary { color: #4a5368; margin-top: 0; }
ol.timeline { list-style: none; padding: 0; }
li.call { border-left: 4px solid #3b9c5a; margin: .8rem 0; padding: .3rem .8rem;
          background: #f6f8fb; }
li.call.failed { border-left-color: #c8463d; }
.head { display: flex; gap: .8rem; align-items: baseline; flex-wrap: wrap; }
.tool { font-weight: 600; font-family: ui-monospace, monospace; }
.outcome { font-size: .8rem; padding: 0 .4rem; border-radius: .3rem; background: #dcefe2; }
li.failed .outcome { background: #f6dcda; }
.rolled-back { font-size: .8rem; color: #c8463d; }
.timing, .call-id { color: #6b7489; font-size: .85rem; }
pre { background: #fff; border: 1px solid #e3e6ee; padding: .4rem .6rem; overflow-x: auto;
      margin: .3rem 0; white-space: pre-wrap; word-break: break-word; }
.message { margin: .3rem 0; white-space: pre-wrap; }
summary { cursor: pointer; color: #4a5368; }
"""


def render_snapshot_json(text: str | bytes, *, title: str = "wink session") -> str:
    """The page of a snapshot given as the JSON that ``Snapshot.to_json`` writes.

    Raises ``SnapshotError`` when ``text`` is not such a document.
    """
    return render_snapshot_document(read_document(text), title=title)


def render_snapshot_document(document: object, *, title: str = "wink session") -> str:
    """The page of a decoded snapshot document."""
    slices = _slices(document)
    calls = [item for kind, name, items in slices if name == TOOL_INVOKED for item in items]
    state = [(name, items) for kind, name, items in slices if kind == "state"]
    events = [
        (name, items) for kind, name, items in slices if kind == "log" and name != TOOL_INVOKED
    ]
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{_text(title)}</title>",
        f"<style>{_STYLE}</style></head><body>",
        f"<h1>{_text(title)}</h1>",
        _summary(calls),
        '<section id="calls"><h2>Tool calls</h2>',
        _timeline(calls),
        "</section>",
        '<section id="state"><h2>State at the end</h2>',
        _slice_list(state, "No state slices."),
        "</section>",
        '<section id="events"><h2>Other events</h2>',
        _slice_list(events, "No other events."),
        "</section>",
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


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


def _summary(calls: list[Any]) -> str:
    outcomes = [_outcome(call) for call in calls]
    failed = sum(1 for outcome, _ in outcomes if outcome != "ok")
    rolled_back = sum(1 for _, rolled in outcomes if rolled)
    times = [_time(call, key) for call in calls for key in ("started_at", "finished_at")]
    known = [moment for moment in times if moment is not None]
    span = f" over {_ms(max(known) - min(known))}" if known else ""
    text = (
        f"{len(calls)} tool call{'' if len(calls) == 1 else 's'}: {len(calls) - failed} ok, "
        f"{failed} failed ({rolled_back} rolled back){span}"
    )
    return f'<p class="summary">{_text(text)}</p>'


def _timeline(calls: list[Any]) -> str:
    if not calls:
        return '<p class="empty">No tool calls.</p>'
    starts = [_time(call, "started_at") for call in calls]
    origin = min((moment for moment in starts if moment is not None), default=None)
    entries = [_call_entry(index, call, origin) for index, call in enumerate(calls, 1)]
    return '<ol class="timeline">\n' + "\n".join(entries) + "\n</ol>"


def _call_entry(index: int, call: Any, origin: datetime | None) -> str:
    data = _raw_values_read(call) if isinstance(call, dict) else {}
    name = str(data.get("name", "?"))
    outcome, rolled_back = _outcome(data)
    css = "call" if outcome == "ok" else "call failed"
    started, finished = _time(data, "started_at"), _time(data, "finished_at")
    timing = []
    if started is not None and origin is not None:
        timing.append(f"+{_ms(started - origin)}")
    if started is not None and finished is not None:
        timing.append(f"took {_ms(finished - started)}")
    result = data.get("result")
    if not isinstance(result, dict):
        result = {}
    call_id = data.get("call_id")
    head = [
        f'<span class="tool">{_text(name)}</span>',
        f'<span class="outcome">{_text(outcome)}</span>',
    ]
    if rolled_back:
        head.append('<span class="rolled-back">rolled back</span>')
    if call_id is not None:
        head.append(f'<span class="call-id">{_text(str(call_id))}</span>')
    if timing:
        head.append(f'<span class="timing">{_text(" · ".join(timing))}</span>')
    body = [
        f'<div class="head">{" ".join(head)}</div>',
        _folded("arguments", _arguments(data.get("arguments"))),
        f'<p class="message">{_text(str(result.get("message", "")))}</p>',
    ]
    rendered = data.get("rendered_output")
    if isinstance(rendered, str) and rendered:
        body.append(_folded("value", rendered))
    attributes = (
        f'class="{css}" id="call-{index}" data-tool="{_text(name)}" data-outcome="{_text(outcome)}"'
    )
    return f"<li {attributes}>" + "".join(body) + "</li>"


def _raw_values_read(call: dict[str, Any]) -> dict[str, Any]:
    """The call with what it keeps as received (escaped where JSON cannot carry it)
    read back, and shown as text: bytes as UTF-8, a lone surrogate as its escape."""
    data = dict(call)
    for key in ("name", "call_id", "arguments", "rendered_output"):
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


def _outcome(call: Any) -> tuple[str, bool]:
    """(outcome, whether it was rolled back) of a recorded call."""
    result = call.get("result") if isinstance(call, dict) else None
    if not isinstance(result, dict) or result.get("success", True):
        return "ok", False
    message = str(result.get("message", ""))
    for prefix, outcome, started in _KNOWN_FAILURES:
        if message.startswith(prefix):
            return outcome, started
    if " raised " in message.split("\n", 1)[0] and message.startswith("Tool "):
        return "raised", True
    # A policy's denial and the tool's own error read alike once recorded.
    return "denied or failed", True


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


def _slice_list(slices: list[tuple[str, list[Any]]], empty: str) -> str:
    if not slices:
        return f'<p class="empty">{_text(empty)}</p>'
    parts = ['<div class="slices">']
    for name, items in slices:
        short = name.rpartition(":")[2] or name
        count = f"{len(items)} item{'' if len(items) == 1 else 's'}"
        parts.append(
            f'<div class="slice" data-type="{_text(name)}"><h3>{_text(short)} '
            f'<span class="timing">{_text(count)}</span></h3>'
            + _folded("items", json.dumps(items, indent=2, ensure_ascii=False), open_=True)
            + "</div>"
        )
    parts.append("</div>")
    return "\n".join(parts)


def _folded(label: str, text: str, *, open_: bool = False) -> str:
    opened = " open" if open_ or text.count("\n") < 12 else ""
    return (
        f'<details class="{_text(label)}"{opened}><summary>{_text(label)}</summary>'
        f"<pre>{_text(text)}</pre></details>"
    )


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
