"""Prometheus metrics of one NPC server (its own registry, so servers never share counters)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.metrics_core import Metric

WORKER_LABEL = "worker"

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

_TURN_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120)


class ServerMetrics:
    """Open encounters, connections, turn latency, tokens, cache-hit share, errors by code,
    ticks; every sample labelled with the worker, so N workers' series stay apart."""

    def __init__(self, worker: str) -> None:
        self.worker = worker
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.open_encounters = Gauge(
            "star_harness_npc_open_encounters", "Encounters open right now.", registry=r
        )
        self.connections = Gauge(
            "star_harness_npc_connections", "Engine connections open right now.", registry=r
        )
        self.dropped = Counter(
            "star_harness_npc_dropped_connections",
            "Connections dropped because they stopped reading.",
            registry=r,
        )
        self.turn_seconds = Histogram(
            "star_harness_npc_turn_seconds",
            "Wall time of one NPC turn, from the say to encounter.idle.",
            ["reason"],
            buckets=_TURN_BUCKETS,
            registry=r,
        )
        self.tokens = Counter(
            "star_harness_npc_tokens",
            "Model tokens by kind: input, output, cache_read (input served from the cache).",
            ["kind"],
            registry=r,
        )
        self.cache_hit_share = Gauge(
            "star_harness_npc_cache_hit_share",
            "Share of input tokens served from the provider's prefix cache so far.",
            registry=r,
        )
        self.errors = Counter(
            "star_harness_npc_errors", "Error frames sent, by code.", ["code"], registry=r
        )
        self.shed = Counter(
            "star_harness_npc_shed_sockets",
            "Sockets closed at the gate, by reason: header_timeout, header_too_large, "
            "over_cap (one address over its cap), at_capacity (the descriptor budget).",
            ["reason"],
            registry=r,
        )
        self.ticks = Counter(
            "star_harness_npc_ticks", "World clock advances this worker ran.", registry=r
        )
        self.world_down = Gauge(
            "star_harness_npc_world_down",
            "1 while the world's database is out of reach (frames needing it get busy), else 0.",
            registry=r,
        )
        self._input = 0
        self._cached = 0

    def usage(self, usage: Mapping[str, Any]) -> None:
        """Count one response's usage (the logged `usage` of an assistant message)."""
        prompt = int(usage.get("input", 0) or 0)
        cached = int(usage.get("cache_read", 0) or 0)
        self.tokens.labels("input").inc(prompt)
        self.tokens.labels("output").inc(int(usage.get("output", 0) or 0))
        self.tokens.labels("cache_read").inc(cached)
        self._input += prompt
        self._cached += cached
        if self._input:
            self.cache_hit_share.set(self._cached / self._input)

    def render(self) -> bytes:
        """The text exposition format."""
        return generate_latest(_Labelled(self.registry, self.worker))


class _Labelled(CollectorRegistry):
    """A registry's metrics with one more label on every sample (a constant label)."""

    def __init__(self, registry: CollectorRegistry, worker: str) -> None:
        super().__init__()
        self._registry = registry
        self._worker = worker

    def collect(self) -> Iterable[Metric]:
        for metric in self._registry.collect():
            labelled = Metric(metric.name, metric.documentation, metric.type, metric.unit)
            labelled.samples = [
                s._replace(labels={WORKER_LABEL: self._worker, **s.labels}) for s in metric.samples
            ]
            yield labelled
