"""What tracing costs per tool call and per evaluation turn: not instrumented,
instrumented without an SDK, and on.

The call is ``bench_executor``'s (``lookup_entity`` with two policies and a
filesystem), and so is the floor. "none" runs the executor's body without its
tracing check. The check costs tens of nanoseconds, far below the noise of whole
calls on a shared machine, so it is also timed alone (the check and the extra
call it adds, against a bare call) and given as a share of ``execute``. "On"
exports every span to an exporter that discards it: the figure is wink's and the
OpenTelemetry SDK's span work, not an exporter's I/O.

The evaluation rows run ``bench_adapters``' provider-free two-turn evaluation (a
tool call, then the answer) through ``FunctionAdapter``, per turn: on, each
evaluation is a ``chat`` span with its tool call's span inside. The span's
context manager, which the loop enters whether or not tracing is on, is also
timed alone when not instrumented, as a share of an evaluation turn.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

from benchmarks import bench_adapters
from benchmarks.bench_executor import ARGUMENTS, _executor
from benchmarks.bench_executor import _floor as _executor_floor
from benchmarks.timing import per_call_us
from wink import Prompt, telemetry
from wink.runtime import Session, ToolCall
from wink.testing import FunctionAdapter

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
    """``bench_executor``'s strict floor: ``validate_json`` + handler + ``json.dumps``."""
    return _executor_floor()


def _evaluation_turn_us(provider: TracerProvider) -> tuple[float, float, float]:
    """A two-turn evaluation per turn: (off, on), and ``evaluation_span`` alone when off."""
    prompt = Prompt(bench_adapters.template)
    adapter = FunctionAdapter(bench_adapters.scripted)
    session = Session()

    def evaluate() -> object:
        return adapter.evaluate(prompt, session=session)

    def span_alone() -> None:
        with telemetry.evaluation_span(prompt_name="lookup", provider="function", model=""):
            pass

    off = _interleaved({"off": evaluate}, number=300)["off"] / 2
    alone = _interleaved({"alone": span_alone}, number=100_000)["alone"]
    telemetry.instrument(tracer_provider=provider)
    try:
        on = _interleaved({"on": evaluate}, number=300)["on"] / 2
    finally:
        telemetry.uninstrument()
    return off, on, alone


def main() -> None:
    """Print the per-call cost with tracing none / off / on, next to the executor floor."""
    executor = _executor(Session())
    call = ToolCall("lookup_entity", ARGUMENTS, "call-1")
    body = executor._take_turn  # the executor without its tracing check
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
    turn_off, turn_on, span_alone = _evaluation_turn_us(provider)
    floor, none = calls["floor"], calls["none"]

    rows = [
        ("floor: strict validate_json + handler + json.dumps", f"{floor:8.2f} us/call"),
        ("execute, no tracing code (none)", f"{none:8.2f} us/call"),
        ("execute, not instrumented (off)", f"{calls['off']:8.2f} us/call"),
        ("execute, traced by the SDK (on)", f"{on:8.2f} us/call"),
        ("  on - none", f"{on - none:+8.2f} us ({(on - none) / none:+.0%})"),
        ("tracing check alone, not instrumented", f"{check_off * 1000:8.0f} ns/call"),
        ("  share of execute (aim < 2%)", f"{check_off / none:8.2%}"),
        ("tracing check alone, instrumented without an SDK", f"{check_no_sdk * 1000:8.0f} ns/call"),
        ("  share of execute", f"{check_no_sdk / none:8.2%}"),
        ("evaluation turn, not instrumented (off)", f"{turn_off:8.2f} us/turn"),
        ("evaluation turn, traced by the SDK (on)", f"{turn_on:8.2f} us/turn"),
        ("  on - off", f"{turn_on - turn_off:+8.2f} us ({(turn_on - turn_off) / turn_off:+.0%})"),
        ("evaluation_span alone, not instrumented", f"{span_alone * 1000:8.0f} ns/evaluation"),
        ("  share of the two-turn evaluation", f"{span_alone / (2 * turn_off):8.2%}"),
    ]
    for label, figure in rows:
        print(f"{label:<58}{figure}")
