"""What running ``evaluate_python`` in a worker process costs, next to evaluating in-process.

The floor is what the sandbox did before it had a worker: a fresh ``asteval``
interpreter in this process evaluating the same small program. The figure is a
whole ``evaluate_python`` call through the executor: the request to the worker,
its fresh interpreter, the answer, and the session update. Both are measured in
the same run; a third row shows a call whose session keeps a 100,000-item list
(defined from the worker's cache, checked unchanged, not written out again).
"""

from __future__ import annotations

import io
import json

import asteval

from benchmarks.timing import once_ms, per_call_us
from wink import Prompt, PromptTemplate, Session
from wink.contrib.asteval import AstevalSection
from wink.runtime import ToolCall, ToolExecutor

NUMBER = 200
REPEAT = 3
KEPT_ITEMS = 100_000

CODE = "total = 0\nfor n in range(20):\n    total += n * n\ntotal"


def _in_process() -> object:
    interpreter = asteval.Interpreter(writer=io.StringIO(), use_numpy=False)
    return interpreter.eval(CODE, show_errors=False)


def _executor(section: AstevalSection, session: Session) -> ToolExecutor:
    template = PromptTemplate(ns="bench", key="sandbox", sections=[section])
    return ToolExecutor(prompt=Prompt(template), session=session)


def main() -> None:
    """Print the worker round trip next to the in-process floor."""
    section = AstevalSection()
    call = ToolCall("evaluate_python", json.dumps({"code": CODE}))
    try:
        first = once_ms(lambda: _executor(section, Session()).execute(call))
        executor = _executor(section, Session())
        floor = per_call_us(_in_process, number=NUMBER, repeat=REPEAT)
        worker = per_call_us(lambda: executor.execute(call), number=NUMBER, repeat=REPEAT)
        kept = _executor(section, Session())
        define = ToolCall("evaluate_python", json.dumps({"code": f"a = list(range({KEPT_ITEMS}))"}))
        assert kept.execute(define).success
        with_kept = per_call_us(lambda: kept.execute(call), number=NUMBER // 10 or 1, repeat=REPEAT)
    finally:
        section.close()
    rows = [
        ("floor: fresh asteval interpreter in-process", f"{floor:10.1f} us/call"),
        ("evaluate_python through the worker process", f"{worker:10.1f} us/call"),
        ("  / floor", f"{worker / floor:10.2f}x"),
        ("  overhead per call", f"{worker - floor:10.1f} us"),
        (f"  with a kept {KEPT_ITEMS:,}-item list in the session", f"{with_kept:10.1f} us/call"),
        ("first call (starts the worker)", f"{first * 1e3:10.1f} us"),
    ]
    for label, figure in rows:
        print(f"{label:<58}{figure}")


if __name__ == "__main__":
    main()
