"""What tracing costs per tool call: not instrumented, instrumented without an SDK, and on.

The call is ``bench_executor``'s (``lookup_entity`` with two policies and a
filesystem), and so is the floor. "none" runs the executor's body without its
tracing check. The check costs tens of nanoseconds, far below the noise of whole
calls on a shared machine, so it is also timed alone (the check and the extra
call it adds, against a bare call) and given as a share of ``execute``. "On"
exports every span to an exporter that discards it: the figure is wink's and the
OpenTelemetry SDK's span work, not an exporter's I/O.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult
from pydantic import TypeAdapter

from benchmarks.bench_executor import ARGUMENTS, LookupParams, _executor, lookup_handler
from benchmarks.timing import per_call_us
from wink import ToolContext, telemetry
from wink.runtime import Session, ToolCall

ROUNDS = 5


class _Discard(SpanExporter):
    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return SpanExportResult.SUCCESS


def _interleaved(functions: dict[str, Callable[[], object]], number: int) -> dict[str, float]:
    """Best per-call time of each function over rounds that take turns, in microseconds."""
    best = dict.fromkeys(functions, float("inf"))
    for _ in range(ROUNDS):
        for name, function in functions.items():
            best[name] = min(best[name], per_call_us(function, number=number, repeat=3))
    return best


def _check_us() -> tuple[float, float]:
    """The tracing check alone: (not instrumented, instrumented without an SDK), each
    with the extra call ``execute`` makes, less a bare call."""

    def bare() -> None:
        return None

    def checked() -> None:
        if telemetry.tracer() is None:
            return bare()
        return None

    def off() -> None:
        checked()

    def instrumented_no_sdk() -> None:
        checked()

    plain = _interleaved({"bare": bare}, number=200_000)["bare"]
    not_instrumented = _interleaved({"off": off}, number=200_000)["off"]
    telemetry.instrument()  # the global provider: no SDK installed in this process
    try:
        no_sdk = _interleaved({"no_sdk": instrumented_no_sdk}, number=200_000)["no_sdk"]
    finally:
        telemetry.uninstrument()
    return not_instrumented - plain, no_sdk - plain


def _floor() -> Callable[[], str]:
    """``bench_executor``'s floor: ``validate_json`` + handler + ``json.dumps``."""
    adapter = TypeAdapter(LookupParams)
    context = ToolContext(session=Session())

    def floor() -> str:
        params = adapter.validate_json(ARGUMENTS)
        result = lookup_handler(params, context=context)
        return json.dumps(dataclasses.asdict(result.value))

    return floor


def main() -> None:
    """Print the per-call cost with tracing none / off / on, next to the executor floor."""
    executor = _executor(Session())
    call = ToolCall("lookup_entity", ARGUMENTS, "call-1")
    body = executor._execute  # the executor without its tracing check
    calls = _interleaved(
        {"floor": _floor(), "none": lambda: body(call), "off": lambda: executor.execute(call)},
        number=2000,
    )
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(_Discard()))
    telemetry.instrument(tracer_provider=provider)
    try:
        on = _interleaved({"on": lambda: executor.execute(call)}, number=2000)["on"]
    finally:
        telemetry.uninstrument()
    check_off, check_no_sdk = _check_us()
    floor, none = calls["floor"], calls["none"]

    rows = [
        ("floor: validate_json + handler + json.dumps", f"{floor:8.2f} us/call"),
        ("execute, no tracing code (none)", f"{none:8.2f} us/call"),
        ("execute, not instrumented (off)", f"{calls['off']:8.2f} us/call"),
        ("execute, traced by the SDK (on)", f"{on:8.2f} us/call"),
        ("  on - none", f"{on - none:+8.2f} us ({(on - none) / none:+.0%})"),
        ("tracing check alone, not instrumented", f"{check_off * 1000:8.0f} ns/call"),
        ("  share of execute (aim < 2%)", f"{check_off / none:8.2%}"),
        ("tracing check alone, instrumented without an SDK", f"{check_no_sdk * 1000:8.0f} ns/call"),
        ("  share of execute", f"{check_no_sdk / none:8.2%}"),
    ]
    for label, figure in rows:
        print(f"{label:<58}{figure}")
