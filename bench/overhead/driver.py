"""Driving turns and timing them: CPU from process_time, wall per turn, GC time, mock load."""

from __future__ import annotations

import asyncio
import gc
import time
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from .mock import MockProbe

S = TypeVar("S")


@dataclass(frozen=True, slots=True)
class Settings:
    turns: int
    warmup: int
    turns_per_session: int
    concurrency: tuple[int, ...]
    agents: int
    fragment_size: int
    repeat: int


@dataclass(slots=True)
class CellResult:
    """One timed run of one variant at one concurrency."""

    variant: str
    concurrency: int
    turns: int
    ok_turns: int
    tool_runs: int
    wall_s: float
    cpu_s: float
    p50_ms: float
    p99_ms: float
    requests: int
    mock_cpu_s: float
    gc_s: float

    @property
    def cpu_per_turn_ms(self) -> float:
        return self.cpu_s / self.turns * 1000

    @property
    def turns_per_s(self) -> float:
        return self.turns / self.wall_s

    @property
    def passed(self) -> bool:
        """Every turn checked out, the tool ran once per turn, the mock saw 2 requests each."""
        turns = self.turns
        return self.ok_turns == turns and self.tool_runs == turns and self.requests == 2 * turns


def plan(turns: int, per_session: int) -> list[int]:
    """Turns of each session: full sessions of `per_session`, the last one possibly shorter."""
    counts = [per_session] * (turns // per_session)
    if turns % per_session:
        counts.append(turns % per_session)
    return counts


class GcClock:
    """CPU time the garbage collector takes while installed (it is part of the measured CPU)."""

    def __init__(self) -> None:
        self.spent = 0.0
        self._began = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._began = time.process_time()
        else:
            self.spent += time.process_time() - self._began


@dataclass(slots=True)
class Timed:
    latencies: list[float]
    wall_s: float
    cpu_s: float
    requests: int
    mock_cpu_s: float
    gc_s: float

    def result(
        self, variant: str, concurrency: int, turns: int, ok_turns: int, tool_runs: int
    ) -> CellResult:
        return CellResult(
            variant,
            concurrency,
            turns,
            ok_turns,
            tool_runs,
            self.wall_s,
            self.cpu_s,
            _percentile(self.latencies, 0.5) * 1000,
            _percentile(self.latencies, 0.99) * 1000,
            self.requests,
            self.mock_cpu_s,
            self.gc_s,
        )


def _percentile(values: Sequence[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


async def drive(
    sessions: Sequence[S],
    counts: Sequence[int],
    concurrency: int,
    turn: Callable[[S], Awaitable[None]],
    probe: MockProbe | None = None,
) -> Timed:
    """Run every session's turns, `concurrency` sessions at a time, and time them."""
    queue = deque(zip(sessions, counts, strict=True))
    latencies: list[float] = []
    clock = time.perf_counter

    async def worker() -> None:
        while queue:
            session, count = queue.popleft()
            for _ in range(count):
                began = clock()
                await turn(session)
                latencies.append(clock() - began)

    gc.collect()
    gc_clock = GcClock()
    requests, mock_cpu = probe.sample() if probe is not None else (0, 0.0)
    gc.callbacks.append(gc_clock)
    cpu, wall = time.process_time(), clock()
    try:
        async with asyncio.TaskGroup() as group:
            for _ in range(concurrency):
                group.create_task(worker())
    finally:
        wall, cpu = clock() - wall, time.process_time() - cpu
        gc.callbacks.remove(gc_clock)
    if probe is not None:
        after_requests, after_cpu = probe.sample()
        requests, mock_cpu = after_requests - requests, after_cpu - mock_cpu
    return Timed(latencies, wall, cpu, requests, mock_cpu, gc_clock.spent)
