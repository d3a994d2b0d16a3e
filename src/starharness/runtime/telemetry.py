"""Telemetry: OpenTelemetry spans (API only, GenAI conventions) and in-process counters.

Without an OpenTelemetry SDK the span helpers cost a function call and hand back one shared
context whose recorder does nothing. Counters live in a `Telemetry` object that a server
exports to Prometheus.
"""

from __future__ import annotations

import threading
from collections.abc import Generator, Iterable, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from opentelemetry import trace
from opentelemetry.util.types import AttributeValue

from .kernel import Context, Disposer, NoConfig, Plugin, ServiceKey, once

if TYPE_CHECKING:
    from prometheus_client.metrics_core import Metric
    from prometheus_client.registry import CollectorRegistry

__all__ = [
    "COUNTERS",
    "TELEMETRY",
    "TRACER_NAME",
    "CounterSpec",
    "SpanRecorder",
    "Telemetry",
    "TelemetryPlugin",
    "request_span",
    "step_span",
    "tool_span",
    "tracing_enabled",
    "turn_span",
]

TRACER_NAME: Final = "starharness.runtime"

# GenAI semantic conventions (https://opentelemetry.io/docs/specs/semconv/gen-ai/).
OPERATION: Final = "gen_ai.operation.name"
PROVIDER: Final = "gen_ai.provider.name"
SYSTEM: Final = "gen_ai.system"
REQUEST_MODEL: Final = "gen_ai.request.model"
REQUEST_MAX_TOKENS: Final = "gen_ai.request.max_tokens"
FINISH_REASONS: Final = "gen_ai.response.finish_reasons"
INPUT_TOKENS: Final = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS: Final = "gen_ai.usage.output_tokens"
CACHE_READ_TOKENS: Final = "gen_ai.usage.cache_read.input_tokens"
CONVERSATION_ID: Final = "gen_ai.conversation.id"
AGENT_ID: Final = "gen_ai.agent.id"
TOOL_NAME: Final = "gen_ai.tool.name"
TOOL_CALL_ID: Final = "gen_ai.tool.call.id"
TOOL_TYPE: Final = "gen_ai.tool.type"
ERROR_TYPE: Final = "error.type"
TURN: Final = "starharness.turn"
STEP: Final = "starharness.step"


class SpanRecorder:
    """Sets attributes on a span only when it records (an SDK is installed and sampling)."""

    __slots__ = ("recording", "span")

    def __init__(self, span: trace.Span) -> None:
        self.span = span
        self.recording = span.is_recording()

    def set(self, key: str, value: AttributeValue | None) -> None:
        if self.recording and value is not None:
            self.span.set_attribute(key, value)

    def usage(
        self, input_tokens: int, output_tokens: int, cache_read_tokens: int | None = None
    ) -> None:
        """Token usage of a model response."""
        if self.recording:
            self.span.set_attribute(INPUT_TOKENS, input_tokens)
            self.span.set_attribute(OUTPUT_TOKENS, output_tokens)
            if cache_read_tokens is not None:
                self.span.set_attribute(CACHE_READ_TOKENS, cache_read_tokens)

    def finish(self, *reasons: str) -> None:
        """Why the model stopped (e.g. `stop`, `tool_calls`)."""
        self.set(FINISH_REASONS, list(reasons))

    def error(self, kind: str) -> None:
        """Mark the operation failed without an exception escaping (e.g. a tool error result)."""
        if self.recording:
            self.span.set_attribute(ERROR_TYPE, kind)
            self.span.set_status(trace.Status(trace.StatusCode.ERROR))


_NOOP: Final = SpanRecorder(trace.INVALID_SPAN)
# Shared by every span helper while tracing is off: no generator, no attribute dict per span.
_NO_SPAN: Final = nullcontext(_NOOP)


def tracing_enabled() -> bool:
    """True once an OpenTelemetry SDK (any real TracerProvider) has been installed."""
    return not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)


@contextmanager
def _span(
    name: str, kind: trace.SpanKind, attributes: Mapping[str, AttributeValue | None]
) -> Generator[SpanRecorder]:
    tracer = trace.get_tracer(TRACER_NAME)
    present = {key: value for key, value in attributes.items() if value is not None}
    with tracer.start_as_current_span(name, kind=kind, attributes=present) as span:
        recorder = SpanRecorder(span)
        try:
            yield recorder
        except BaseException as exc:
            recorder.set(ERROR_TYPE, type(exc).__name__)
            raise


def turn_span(
    session_id: str, turn: int, *, agent_id: str | None = None
) -> AbstractContextManager[SpanRecorder]:
    """A span for one agent turn (`invoke_agent`)."""
    if not tracing_enabled():
        return _NO_SPAN
    return _span(
        f"invoke_agent {agent_id}" if agent_id else "invoke_agent",
        trace.SpanKind.INTERNAL,
        {OPERATION: "invoke_agent", CONVERSATION_ID: session_id, AGENT_ID: agent_id, TURN: turn},
    )


def step_span(session_id: str, turn: int, step: int) -> AbstractContextManager[SpanRecorder]:
    """A span for one step: a model request plus the tool calls it asked for."""
    if not tracing_enabled():
        return _NO_SPAN
    return _span(
        "step",
        trace.SpanKind.INTERNAL,
        {CONVERSATION_ID: session_id, TURN: turn, STEP: step},
    )


def request_span(
    provider: str,
    model: str,
    *,
    session_id: str | None = None,
    max_tokens: int | None = None,
) -> AbstractContextManager[SpanRecorder]:
    """A client span for one streamed model request (`chat {model}`)."""
    if not tracing_enabled():
        return _NO_SPAN
    return _span(
        f"chat {model}",
        trace.SpanKind.CLIENT,
        {
            OPERATION: "chat",
            PROVIDER: provider,
            SYSTEM: provider,
            REQUEST_MODEL: model,
            REQUEST_MAX_TOKENS: max_tokens,
            CONVERSATION_ID: session_id,
        },
    )


def tool_span(
    name: str, call_id: str, *, session_id: str | None = None
) -> AbstractContextManager[SpanRecorder]:
    """A span for one tool execution (`execute_tool {name}`)."""
    if not tracing_enabled():
        return _NO_SPAN
    return _span(
        f"execute_tool {name}",
        trace.SpanKind.INTERNAL,
        {
            OPERATION: "execute_tool",
            TOOL_NAME: name,
            TOOL_CALL_ID: call_id,
            TOOL_TYPE: "function",
            CONVERSATION_ID: session_id,
        },
    )


# -- counters ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CounterSpec:
    """One counter: its Prometheus name (without `_total`), help text and label names."""

    metric: str
    documentation: str
    labels: tuple[str, ...]


_LLM_LABELS = ("provider", "model")

COUNTERS: Final[Mapping[str, CounterSpec]] = {
    "requests": CounterSpec("star_harness_llm_requests", "Model requests sent.", _LLM_LABELS),
    "input_tokens": CounterSpec(
        "star_harness_llm_input_tokens", "Prompt tokens reported by providers.", _LLM_LABELS
    ),
    "output_tokens": CounterSpec(
        "star_harness_llm_output_tokens", "Completion tokens reported by providers.", _LLM_LABELS
    ),
    "cache_read_tokens": CounterSpec(
        "star_harness_llm_cache_read_tokens",
        "Prompt tokens served from the provider's prefix cache.",
        _LLM_LABELS,
    ),
    "retries": CounterSpec(
        "star_harness_llm_retries", "Model requests retried after a failure.", _LLM_LABELS
    ),
    "errors": CounterSpec("star_harness_errors", "Failures by kind.", ("kind",)),
}


class Telemetry:
    """In-process counters (`ctx.get(TELEMETRY)`): cheap to bump, safe to read from any thread."""

    __slots__ = ("_counts", "_lock")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[str, dict[tuple[str, ...], float]] = {name: {} for name in COUNTERS}

    def _add(self, counter: str, labels: tuple[str, ...], amount: float) -> None:
        if amount <= 0:
            return
        with self._lock:
            series = self._counts[counter]
            series[labels] = series.get(labels, 0) + amount

    def record_request(self, provider: str, model: str) -> None:
        self._add("requests", (provider, model), 1)

    def record_usage(
        self,
        provider: str,
        model: str,
        *,
        input_tokens: int = 0,
        output_tokens: int = 0,
        cache_read_tokens: int = 0,
    ) -> None:
        labels = (provider, model)
        self._add("input_tokens", labels, input_tokens)
        self._add("output_tokens", labels, output_tokens)
        self._add("cache_read_tokens", labels, cache_read_tokens)

    def record_retry(self, provider: str, model: str) -> None:
        self._add("retries", (provider, model), 1)

    def record_error(self, kind: str) -> None:
        """Count a failure; `kind` is a short stable word (`rate_limited`, `tool`, ...)."""
        self._add("errors", (kind,), 1)

    def value(self, counter: str, *labels: str) -> float:
        """One series' value; without labels, the sum over all series of `counter`."""
        with self._lock:
            series = self._counts[counter]
            return series.get(labels, 0) if labels else sum(series.values())

    def snapshot(self) -> dict[str, dict[tuple[str, ...], float]]:
        """A copy of every series, by counter name."""
        with self._lock:
            return {name: dict(series) for name, series in self._counts.items()}

    def collect(self) -> Iterable[Metric]:
        """Prometheus collector protocol: the counters as metric families."""
        from prometheus_client.metrics_core import CounterMetricFamily

        for name, series in self.snapshot().items():
            spec = COUNTERS[name]
            family = CounterMetricFamily(spec.metric, spec.documentation, labels=spec.labels)
            for labels, amount in sorted(series.items()):
                family.add_metric(list(labels), amount)
            yield family

    def export_prometheus(self, registry: CollectorRegistry) -> Disposer:
        """Serve these counters from `registry`; the disposer unregisters them."""
        registry.register(self)
        return once(lambda: registry.unregister(self))


TELEMETRY: ServiceKey[Telemetry] = ServiceKey(
    "telemetry",
    "add the telemetry plugin",
    provider="starharness.runtime.telemetry:TelemetryPlugin",
)


class TelemetryPlugin(Plugin[NoConfig]):
    """Provides `ctx.get(TELEMETRY)`, the process's counters."""

    provides = (TELEMETRY,)

    async def setup(self, ctx: Context, config: NoConfig) -> None:
        ctx.provide(TELEMETRY, Telemetry())
