"""OpenTelemetry tracing of tool calls and evaluations, following the GenAI conventions.

Off until ``instrument()`` is called; it needs the ``otel`` extra
(``pip install -e '.[otel]'``, which brings ``opentelemetry-api``), and an
OpenTelemetry SDK (or another API implementation) configured by the application
to record anything. Without the extra, wink imports nothing and records nothing.

Once on, every ``ToolExecutor.execute`` is an ``execute_tool {tool}`` span
(kind ``INTERNAL``) with ``gen_ai.operation.name = "execute_tool"``,
``gen_ai.tool.name``, ``gen_ai.tool.call.id``, ``gen_ai.tool.description``,
``gen_ai.tool.type = "function"`` and ``wink.prompt.name``. A failed call sets
the span status to ``ERROR`` and ``error.type`` to one of:

- the exception's class name, when the handler raised or an exception propagated;
- ``policy_denied``, when a policy refused the call;
- ``tool_error``, for every other failed result (unknown tool, invalid arguments,
  ``ToolResult.error``, a result that could not be applied).

A policy's refusal is a ``wink.policy_denied`` event (attribute ``wink.reason``)
and each rollback a ``wink.rollback`` event. Every evaluation the shared loop
runs (``adapter.evaluate``) is a ``chat {model}`` span (``evaluation_span()``,
kind ``CLIENT``) with ``gen_ai.provider.name``, ``gen_ai.request.model``, the
token usage summed over its requests and, when it fails, ``error.type``; its
tool calls' spans, and a nested evaluation's, are its children.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from wink.errors import WinkError

if TYPE_CHECKING:
    from opentelemetry.trace import Span, Tracer, TracerProvider

    from wink.runtime.budget import TokenUsage
    from wink.runtime.call import ToolCall
    from wink.tools import Tool, ToolResult

__all__ = [
    "DENIED",
    "ROLLBACK",
    "EvaluationSpan",
    "ToolCallSpan",
    "add_event",
    "evaluation_span",
    "instrument",
    "is_instrumented",
    "note_error",
    "tool_call_span",
    "tracer",
    "uninstrument",
]

DENIED = "wink.policy_denied"
"""Name of the event recorded when a policy refuses a call."""
ROLLBACK = "wink.rollback"
"""Name of the event recorded when a failed call's state is restored."""

_SCOPE = "wink"


@dataclass(slots=True)
class _State:
    """Whether wink traces, and with which tracer."""

    enabled: bool = False
    trace: Any = None
    """The ``opentelemetry.trace`` module, imported by ``instrument``."""
    tracer: Any = None
    """The tracer once known: of the given provider, or of the global SDK provider
    (which OpenTelemetry never lets be replaced once set)."""


_state = _State()
# The span of the tool call running in this context: events go to it, never to a
# span wink did not open.
_current_tool_span: contextvars.ContextVar[Span | None] = contextvars.ContextVar(
    "wink_tool_span", default=None
)
_error_type: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "wink_error_type", default=None
)


def instrument(tracer_provider: TracerProvider | None = None) -> None:
    """Trace tool calls and evaluations from now on, with ``tracer_provider`` (default:
    the global provider, once an SDK has set one).

    Raises ``WinkError`` naming the extra to install when OpenTelemetry is missing.
    """
    try:
        from opentelemetry import trace
    except ImportError:
        raise WinkError(
            "wink.telemetry.instrument() needs OpenTelemetry; install the otel extra "
            "(pip install -e '.[otel]' from a clone) and an OpenTelemetry SDK"
        ) from None
    _state.trace = trace
    _state.tracer = (
        None if tracer_provider is None else tracer_provider.get_tracer(_SCOPE, _version())
    )
    _state.enabled = True


def uninstrument() -> None:
    """Stop tracing; calls cost nothing again."""
    _state.enabled = False
    _state.tracer = None


def is_instrumented() -> bool:
    """Whether ``instrument()`` is in effect."""
    return _state.enabled


def tracer() -> Tracer | None:
    """The tracer to record with, or ``None`` when tracing is off.

    Off means: not instrumented, or instrumented with the global provider while no
    SDK has set one (OpenTelemetry's proxy would only make spans that record
    nothing, at a cost).
    """
    if not _state.enabled:
        return None
    found: Tracer | None = _state.tracer
    if found is None:
        trace = _state.trace
        provider = trace.get_tracer_provider()
        if isinstance(provider, trace.ProxyTracerProvider):
            return None
        found = _state.tracer = provider.get_tracer(_SCOPE, _version())
    return found


@contextmanager
def tool_call_span(
    tracer: Tracer, call: ToolCall, tool: Tool[Any, Any] | None, prompt_name: str
) -> Iterator[ToolCallSpan]:
    """The ``execute_tool`` span of one call; ``finish(result)`` records its outcome."""
    from opentelemetry import trace

    attributes: dict[str, str] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": call.name,
        "gen_ai.tool.type": "function",
        "wink.prompt.name": prompt_name,
    }
    if call.call_id is not None:
        attributes["gen_ai.tool.call.id"] = call.call_id
    if tool is not None:
        attributes["gen_ai.tool.description"] = tool.description
    span = tracer.start_span(
        f"execute_tool {call.name}", kind=trace.SpanKind.INTERNAL, attributes=attributes
    )
    span_token = _current_tool_span.set(span)
    error_token = _error_type.set(None)
    try:
        with trace.use_span(
            span, end_on_exit=True, record_exception=False, set_status_on_exception=False
        ):
            try:
                yield ToolCallSpan(span)
            except BaseException as error:
                noted = _error_type.get()
                if noted is None:  # not the handler's exception, already recorded
                    span.record_exception(error)
                _fail(span, noted or type(error).__qualname__, str(error))
                raise
    finally:
        _error_type.reset(error_token)
        _current_tool_span.reset(span_token)


@dataclass(frozen=True, slots=True)
class ToolCallSpan:
    """The span of a running tool call."""

    span: Span

    def finish(self, result: ToolResult[Any]) -> None:
        """Record the call's outcome: an error status and ``error.type`` for a failure."""
        if not result.success:
            _fail(self.span, _error_type.get() or "tool_error", result.message)


def add_event(name: str, attributes: Mapping[str, str] | None = None) -> None:
    """Record an event on the running tool call's span; nothing when none is traced."""
    span = _current_tool_span.get()
    if span is not None:
        if name == DENIED:
            _error_type.set("policy_denied")
        span.add_event(name, attributes=attributes)


def note_error(error: BaseException) -> None:
    """Name the exception a traced call failed with (its ``error.type``)."""
    if _current_tool_span.get() is not None:
        _error_type.set(type(error).__qualname__)
        span = _current_tool_span.get()
        if span is not None:
            span.record_exception(error)


@dataclass(slots=True)
class EvaluationSpan:
    """The span of one evaluation; add up its token usage with ``record_usage``."""

    span: Span | None
    input_tokens: int = 0
    output_tokens: int = 0

    def record_usage(self, usage: TokenUsage) -> None:
        """Add one model request's usage to ``gen_ai.usage.input_tokens`` / ``output_tokens``."""
        self.input_tokens += usage.input_tokens or 0
        self.output_tokens += usage.output_tokens or 0
        if self.span is not None:
            self.span.set_attribute("gen_ai.usage.input_tokens", self.input_tokens)
            self.span.set_attribute("gen_ai.usage.output_tokens", self.output_tokens)

    def set_response_model(self, model: str) -> None:
        """Record the model that answered (``gen_ai.response.model``)."""
        if self.span is not None:
            self.span.set_attribute("gen_ai.response.model", model)


def evaluation_span(
    *, prompt_name: str, provider: str, model: str
) -> AbstractContextManager[EvaluationSpan]:
    """Trace one evaluation of a prompt as a ``chat {model}`` span (kind ``CLIENT``).

    ``provider`` is the ``gen_ai.provider.name`` (``openai``, ``anthropic``,
    ``gcp.gemini``...); an empty ``model`` names the span ``chat`` and leaves
    ``gen_ai.request.model`` out. Tool calls executed inside are children of this
    span. An exception leaving the block sets ``error.type`` to its class name. When
    tracing is off, the block runs with an ``EvaluationSpan`` that records nothing.
    """
    active = tracer()
    if active is None:  # every evaluation enters this: no generator when off
        return nullcontext(EvaluationSpan(None))
    return _evaluation_span(active, prompt_name, provider, model)


@contextmanager
def _evaluation_span(
    active: Tracer, prompt_name: str, provider: str, model: str
) -> Iterator[EvaluationSpan]:
    from opentelemetry import trace

    attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": provider,
        "wink.prompt.name": prompt_name,
    }
    if model:
        attributes["gen_ai.request.model"] = model
    with active.start_as_current_span(
        f"chat {model}" if model else "chat",
        kind=trace.SpanKind.CLIENT,
        attributes=attributes,
        record_exception=True,
        set_status_on_exception=False,
    ) as span:
        try:
            yield EvaluationSpan(span)
        except BaseException as error:
            _fail(span, type(error).__qualname__, str(error))
            raise


def _fail(span: Span, error_type: str, description: str) -> None:
    from opentelemetry.trace import Status, StatusCode

    span.set_attribute("error.type", error_type)
    span.set_status(Status(StatusCode.ERROR, description))


def _version() -> str:
    import importlib.metadata  # only when instrumenting: it is slow to import

    try:
        return importlib.metadata.version("wink")
    except importlib.metadata.PackageNotFoundError:  # running from a source tree
        return "0"
