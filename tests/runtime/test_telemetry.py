"""Telemetry: GenAI-convention spans through the OpenTelemetry API, and exportable counters."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry, generate_latest

from starharness.runtime.config import Patch, load_profile, start
from starharness.runtime.telemetry import (
    TELEMETRY,
    Telemetry,
    request_span,
    tool_span,
    tracing_enabled,
    turn_span,
)

# Runs in a fresh interpreter because an OpenTelemetry tracer provider can be set only once
# per process. The provider below is a minimal recording one written against the API alone.
_TRACED_SCRIPT = textwrap.dedent(
    """
    import json
    from contextlib import contextmanager
    from opentelemetry import trace
    from starharness.runtime.telemetry import (
        request_span, step_span, tool_span, tracing_enabled, turn_span,
    )

    finished = []

    class Span(trace.Span):
        def __init__(self, name, kind, attributes, parent):
            self.name, self.kind, self.parent = name, kind, parent
            self.attributes = dict(attributes or {})
            self.status = "unset"
            self.exceptions = []
            self._context = trace.SpanContext(1, len(finished) + 100, False)
        def end(self, end_time=None):
            finished.append({
                "name": self.name, "kind": self.kind.name, "parent": self.parent,
                "attributes": self.attributes, "status": self.status,
                "exceptions": self.exceptions,
            })
        def get_span_context(self): return self._context
        def set_attributes(self, attributes): self.attributes.update(attributes)
        def set_attribute(self, key, value): self.attributes[key] = value
        def add_event(self, name, attributes=None, timestamp=None): pass
        def update_name(self, name): self.name = name
        def is_recording(self): return True
        def set_status(self, status, description=None):
            code = status.status_code if isinstance(status, trace.Status) else status
            self.status = code.name.lower()
        def record_exception(self, exception, attributes=None, timestamp=None, escaped=False):
            self.exceptions.append(type(exception).__name__)

    class Tracer(trace.Tracer):
        def start_span(self, name, context=None, kind=trace.SpanKind.INTERNAL,
                       attributes=None, links=None, start_time=None,
                       record_exception=True, set_status_on_exception=True):
            current = trace.get_current_span(context)
            parent = getattr(current, "name", None)
            return Span(name, kind, attributes, parent)

        @contextmanager
        def start_as_current_span(self, name, context=None, kind=trace.SpanKind.INTERNAL,
                                  attributes=None, links=None, start_time=None,
                                  record_exception=True, set_status_on_exception=True,
                                  end_on_exit=True):
            span = self.start_span(name, context, kind, attributes)
            with trace.use_span(span, end_on_exit=end_on_exit,
                                record_exception=record_exception,
                                set_status_on_exception=set_status_on_exception) as used:
                yield used

    class Provider(trace.TracerProvider):
        def get_tracer(self, *args, **kwargs): return Tracer()

    before = tracing_enabled()
    trace.set_tracer_provider(Provider())
    with turn_span("s-1", 1, agent_id="helper"):
        with step_span("s-1", 1, 1):
            with request_span("deepseek", "m-1", session_id="s-1", max_tokens=64) as request:
                request.usage(120, 30, cache_read_tokens=100)
                request.finish("tool_calls")
            with tool_span("lookup", "call-1", session_id="s-1") as tool:
                tool.error("tool_error")
    try:
        with tool_span("explode", "call-2"):
            raise ValueError("boom")
    except ValueError:
        pass
    print(json.dumps({"before": before, "after": tracing_enabled(), "spans": finished}))
    """
)


def test_spans_follow_the_genai_conventions() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _TRACED_SCRIPT], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["before"] is False
    assert result["after"] is True
    spans = {span["name"]: span for span in result["spans"]}
    assert set(spans) == {
        "invoke_agent helper",
        "step",
        "chat m-1",
        "execute_tool lookup",
        "execute_tool explode",
    }

    turn = spans["invoke_agent helper"]
    assert turn["attributes"] == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.conversation.id": "s-1",
        "gen_ai.agent.id": "helper",
        "starharness.turn": 1,
    }
    assert spans["step"]["parent"] == "invoke_agent helper"
    assert spans["step"]["attributes"]["starharness.step"] == 1

    chat = spans["chat m-1"]
    assert chat["kind"] == "CLIENT"
    assert chat["parent"] == "step"
    assert chat["attributes"] == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "deepseek",
        "gen_ai.system": "deepseek",
        "gen_ai.request.model": "m-1",
        "gen_ai.request.max_tokens": 64,
        "gen_ai.conversation.id": "s-1",
        "gen_ai.usage.input_tokens": 120,
        "gen_ai.usage.output_tokens": 30,
        "gen_ai.usage.cache_read.input_tokens": 100,
        "gen_ai.response.finish_reasons": ["tool_calls"],
    }

    lookup = spans["execute_tool lookup"]
    assert lookup["parent"] == "step"
    assert lookup["attributes"]["gen_ai.tool.name"] == "lookup"
    assert lookup["attributes"]["gen_ai.tool.call.id"] == "call-1"
    assert lookup["attributes"]["error.type"] == "tool_error"
    assert lookup["status"] == "error"

    explode = spans["execute_tool explode"]
    assert explode["parent"] is None
    assert explode["attributes"]["error.type"] == "ValueError"
    assert explode["exceptions"] == ["ValueError"]
    assert explode["status"] == "error"


def test_without_an_sdk_spans_record_nothing_and_exceptions_pass() -> None:
    assert not tracing_enabled()
    with turn_span("s", 1) as turn, request_span("p", "m") as request:
        assert not turn.recording
        request.usage(1, 2, 3)
        request.finish("stop")
        request.error("x")
        assert not request.span.is_recording()
    with pytest.raises(KeyError), tool_span("t", "c"):
        raise KeyError("passes through")


def test_counters_add_up_by_label() -> None:
    telemetry = Telemetry()
    telemetry.record_request("deepseek", "m1")
    telemetry.record_request("deepseek", "m1")
    telemetry.record_request("openai", "m2")
    telemetry.record_usage(
        "deepseek", "m1", input_tokens=100, output_tokens=7, cache_read_tokens=80
    )
    telemetry.record_usage("deepseek", "m1", input_tokens=50, output_tokens=3)
    telemetry.record_retry("deepseek", "m1")
    telemetry.record_error("rate_limited")
    telemetry.record_error("rate_limited")
    telemetry.record_error("tool")

    assert telemetry.value("requests", "deepseek", "m1") == 2
    assert telemetry.value("requests") == 3
    assert telemetry.value("input_tokens", "deepseek", "m1") == 150
    assert telemetry.value("output_tokens") == 10
    assert telemetry.value("cache_read_tokens") == 80
    assert telemetry.value("retries", "deepseek", "m1") == 1
    assert telemetry.value("errors", "rate_limited") == 2
    assert telemetry.snapshot()["errors"] == {("rate_limited",): 2, ("tool",): 1}


def test_counters_export_to_prometheus() -> None:
    telemetry = Telemetry()
    registry = CollectorRegistry()
    dispose = telemetry.export_prometheus(registry)
    telemetry.record_request("deepseek", "m1")
    telemetry.record_usage("deepseek", "m1", input_tokens=12, output_tokens=4, cache_read_tokens=9)
    telemetry.record_error("timeout")

    text = generate_latest(registry).decode()

    assert 'star_harness_llm_requests_total{model="m1",provider="deepseek"} 1.0' in text
    assert 'star_harness_llm_input_tokens_total{model="m1",provider="deepseek"} 12.0' in text
    assert 'star_harness_llm_output_tokens_total{model="m1",provider="deepseek"} 4.0' in text
    assert 'star_harness_llm_cache_read_tokens_total{model="m1",provider="deepseek"} 9.0' in text
    assert 'star_harness_errors_total{kind="timeout"} 1.0' in text
    assert "# TYPE star_harness_llm_retries_total counter" in text

    dispose()
    assert "star_harness" not in generate_latest(registry).decode()


async def test_the_plugin_provides_telemetry(tmp_path: Path) -> None:
    profile_file = tmp_path / "t.yml"
    profile_file.write_text("bundles: [{name: b, rows: []}]\n", encoding="utf-8")
    add = Patch.of(
        "t", [{"id": "telemetry", "plugin": "starharness.runtime.telemetry:TelemetryPlugin"}]
    )
    async with await start(load_profile(profile_file, [add], home=tmp_path)) as runtime:
        telemetry = runtime.ctx.get(TELEMETRY)
        assert isinstance(telemetry, Telemetry)
        assert runtime.ctx.get(TELEMETRY) is telemetry
    assert not runtime.ctx.has(TELEMETRY)
