"""What each client process runs: one timed cell of a variant, or the memory measurement."""

from __future__ import annotations

import asyncio
import gc
import os
import tempfile
import time
import tracemalloc
from dataclasses import asdict
from multiprocessing.queues import Queue
from pathlib import Path
from typing import Any

from cores import pin
from starharness.runtime.config import ResolvedProfile, start
from starharness.runtime.loop import AGENTS
from starharness.runtime.tools import TOOLS

from .driver import CellResult, Settings, drive, plan
from .floor import FloorSession, floor_client, floor_turn
from .loop import loop_ok_turns, loop_turn, registrar, task_profile
from .mock import MockProbe
from .workload import SpeakCounter, speak_tool


def cell_process(
    variant: str,
    base_url: str,
    s: Settings,
    concurrency: int,
    probe: MockProbe,
    out: Queue[dict[str, Any]],
) -> None:
    """A fresh client process on core 1: warm up, then time `s.turns` turns of `variant`."""
    pin(1)
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["STAR_HARNESS_HOME"] = tmp
        if variant == "floor":
            result = asyncio.run(_floor_cell(base_url, s, concurrency, probe))
        else:
            profile = task_profile(base_url, Path(tmp))
            result = asyncio.run(_loop_cell(profile, s, concurrency, probe))
    out.put(asdict(result))


async def _floor_cell(base_url: str, s: Settings, concurrency: int, probe: MockProbe) -> CellResult:
    url = base_url + "/chat/completions"
    counter = SpeakCounter()
    async with floor_client() as client:

        async def turn(session: FloorSession) -> None:
            await floor_turn(client, url, session, counter)

        warm_counts = plan(s.warmup, 1)
        warm = [FloorSession(f"floor-warm-{i}") for i in range(len(warm_counts))]
        await drive(warm, warm_counts, concurrency, turn)
        runs_before = counter.calls
        counts = plan(s.turns, s.turns_per_session)
        sessions = [FloorSession(f"floor-{i}") for i in range(len(counts))]
        timed = await drive(sessions, counts, concurrency, turn, probe)
    ok = sum(x.ok_turns for x in sessions)
    return timed.result("floor", concurrency, s.turns, ok, counter.calls - runs_before)


async def _loop_cell(
    profile: ResolvedProfile, s: Settings, concurrency: int, probe: MockProbe
) -> CellResult:
    counter = SpeakCounter()
    setup = registrar(speak_tool(counter))
    async with await start(profile) as runtime:
        agents = runtime.ctx.get(AGENTS)
        warm_counts = plan(s.warmup, 1)
        warm = [await agents.create(f"loop-warm-{i}", setup=setup) for i in range(len(warm_counts))]
        await drive(warm, warm_counts, concurrency, loop_turn)
        runs_before = counter.calls
        # Agents (and their sessions) exist before the clock starts, as the floor's do.
        counts = plan(s.turns, s.turns_per_session)
        handles = [await agents.create(f"loop-{i}", setup=setup) for i in range(len(counts))]
        timed = await drive(handles, counts, concurrency, loop_turn, probe)
        ok = sum(loop_ok_turns(h) for h in handles)
    return timed.result("loop", concurrency, s.turns, ok, counter.calls - runs_before)


def memory_process(base_url: str, s: Settings, out: Queue[dict[str, Any]]) -> None:
    """A fresh process: memory per idle agent, then per agent after one turn each."""
    pin(1)
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["STAR_HARNESS_HOME"] = tmp
        out.put(asyncio.run(_memory(task_profile(base_url, Path(tmp)), s)))


async def _memory(profile: ResolvedProfile, s: Settings) -> dict[str, Any]:
    counter = SpeakCounter()
    tool = speak_tool(counter)
    setup = registrar(tool)
    async with await start(profile) as runtime:
        agents = runtime.ctx.get(AGENTS)
        # One agent first, so lazily built shared state is not charged to the measured ones.
        first = await agents.create("memory-first", setup=setup)
        await loop_turn(first)
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        cpu = time.process_time()
        handles = [await agents.create(f"memory-{i}", setup=setup) for i in range(s.agents)]
        create_cpu = time.process_time() - cpu
        gc.collect()
        idle = tracemalloc.get_traced_memory()[0] - before
        for handle in handles:
            await loop_turn(handle)
        gc.collect()
        after_turn = tracemalloc.get_traced_memory()[0] - before
        tracemalloc.stop()
        shared = all(h.agent.ctx.get(TOOLS).schemas()[0] is tool.schema for h in handles)
        ok = sum(loop_ok_turns(h) for h in handles)
    return {
        "agents": s.agents,
        "idle_bytes": idle / s.agents,
        "after_turn_bytes": after_turn / s.agents,
        "create_ms": create_cpu / s.agents * 1000,
        "shared": shared,
        "ok_turns": ok,
    }
