"""``wink replay --html``: the replay report as one self-contained page.

Like ``wink trace``'s page it has no scripts and loads nothing; each call is a closed
``<details>`` whose one-line summary says its outcome, opened to show why or what
differs. Everything recorded is escaped, so a hostile name or value is shown as text.
"""

from __future__ import annotations

import html
import json

from wink.cli.replay_report import ABSENT, Difference, ReplayedCall, ReplayReport

__all__ = ["render_replay_html"]

_STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 60rem;
       color: #1d2330; padding: 0 1rem; }
h1 { font-size: 1.4rem; margin-bottom: .2rem; }
.summary { color: #4a5368; margin-top: 0; }
ol.calls { list-style: none; padding: 0; }
li.call { border-left: 4px solid #3b9c5a; margin: .3rem 0; padding: .15rem .8rem;
          background: #f6f8fb; }
li.call.differs { border-left-color: #c8463d; }
summary { cursor: pointer; }
.outcome { font-size: .8rem; padding: 0 .4rem; border-radius: .3rem; background: #dcefe2; }
li.differs .outcome { background: #f6dcda; }
.tool { font-weight: 600; font-family: ui-monospace, monospace; }
.reason { white-space: pre-wrap; color: #c8463d; margin: .3rem 0; }
table { border-collapse: collapse; margin: .3rem 0; font-size: .85rem; }
td, th { border: 1px solid #e3e6ee; padding: .2rem .5rem; text-align: left;
         vertical-align: top; font-family: ui-monospace, monospace; white-space: pre-wrap;
         word-break: break-word; }
th { font-family: system-ui, sans-serif; background: #fff; }
.note { color: #4a5368; font-style: italic; }
"""


def render_replay_html(report: ReplayReport) -> str:
    """The page of ``report``: its summary line, then one collapsed entry per call."""
    entries = "\n".join(_entry(call) for call in report.calls)
    title = f"wink replay: {report.session}"
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{_text(title)}</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n"
        f'<h1>{_text(title)}</h1>\n<p class="summary">{_text(report.summary())}</p>\n'
        f'<ol class="calls">\n{entries}\n</ol>\n</body>\n</html>\n'
    )


def _entry(call: ReplayedCall) -> str:
    differs = " differs" if call.outcome != "unchanged" else ""
    head = (
        f'<summary><span class="tool">{_text(call.label())}</span> '
        f'<span class="outcome">{_text(call.outcome)}</span></summary>'
    )
    body = []
    if call.reason:
        body.append(f'<p class="reason">{_text(call.reason)}</p>')
    if call.differences:
        rows = "".join(_row(difference) for difference in call.differences)
        body.append(f"<table><tr><th>where</th><th>recorded</th><th>now</th></tr>{rows}</table>")
    if call.more_differences:
        body.append(f'<p class="note">and {call.more_differences} more differences</p>')
    body.extend(f'<p class="note">{_text(note)}</p>' for note in call.notes)
    if not body:
        body.append('<p class="note">nothing compared differs</p>')
    return f'<li class="call{differs}"><details>{head}{"".join(body)}</details></li>'


def _row(difference: Difference) -> str:
    return (
        f"<tr><td>{_text(difference.path)}</td><td>{_value(difference.recorded)}</td>"
        f"<td>{_value(difference.now)}</td></tr>"
    )


def _value(value: object) -> str:
    if value is ABSENT:
        return '<span class="note">absent</span>'
    return _text(json.dumps(value, ensure_ascii=False, indent=1))


def _text(value: str) -> str:
    # Lone surrogates cannot be written as UTF-8: shown as their escapes.
    safe = value.encode("utf-8", "backslashreplace").decode("utf-8")
    return html.escape(safe, quote=True)
