"""Client cost per turn of the agent loop against a bare-httpx floor, and memory per idle agent.

One turn: the user's line -> the model streams one `speak` tool call (a ~40-word line, a mood,
two options) -> the tool runs -> its result goes back -> the model streams "ok". That is two
streamed chat-completions requests and one tool call per turn, done the same way twice:

- floor: bare `httpx.AsyncClient`, requests built by hand, minimal SSE line parsing, tool
  arguments accumulated, the second request built with the tool result;
- loop: the star-harness agent loop, built from the `task` profile with its llm row pointed at
  the mock and sessions in memory, the tool registered in each agent's setup.

Both keep each session's history (`--turns-per-session` turns per session), and a check before
the timed runs asserts that both send the same messages, tools and options. The mock LLM runs in
its own process (pinned to one core); each timed cell runs in a fresh client process (pinned to
another core), which is the load generator and measures itself: CPU per turn from
`time.process_time()` deltas (and how much of it the garbage collector took), wall p50/p99 per
turn. Cells run `--repeat` times, floor and loop alternating; the median run is shown. Memory
per idle agent is measured with tracemalloc over `--agents` agents, each with the tool
registered on its own layer.

Run: uv run python bench/runtime_overhead.py [--turns 1000] [--concurrency 1 50] [--quick]
Exit status: 0 goals met, 1 a goal missed, 2 a run failed its checks.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import platform
import sys
import tempfile
from collections.abc import Callable
from multiprocessing.queues import Queue
from multiprocessing.sharedctypes import Synchronized
from pathlib import Path
from typing import Any

import httpx

from overhead.cells import cell_process, memory_process
from overhead.check import check_same_requests
from overhead.driver import CellResult, Settings
from overhead.mock import MockProbe, serve

GOAL_RATIO = 1.30
GOAL_AGENT_BYTES = 60 * 1024
VARIANTS = ("floor", "loop")


def _settings(args: argparse.Namespace) -> Settings:
    if args.quick:
        return Settings(
            turns=args.turns or 12,
            warmup=2,
            turns_per_session=args.turns_per_session or 3,
            concurrency=tuple(args.concurrency or (1, 4)),
            agents=args.agents or 10,
            fragment_size=args.fragment_size,
            repeat=args.repeat or 1,
        )
    return Settings(
        turns=args.turns or 1000,
        warmup=args.warmup,
        turns_per_session=args.turns_per_session or 10,
        concurrency=tuple(args.concurrency or (1, 50)),
        agents=args.agents or 1000,
        fragment_size=args.fragment_size,
        repeat=args.repeat or 3,
    )


def _run_in_process(target: Callable[..., None], *args: Any) -> dict[str, Any]:
    context = multiprocessing.get_context("spawn")
    out: Queue[dict[str, Any]] = context.Queue()
    process = context.Process(target=target, args=(*args, out), daemon=True)
    process.start()
    try:
        return out.get(timeout=600)
    finally:
        process.join(30)


def _measure(s: Settings) -> tuple[list[CellResult], dict[str, Any]]:
    """Every cell `s.repeat` times against one mock process, then the memory measurement."""
    context = multiprocessing.get_context("spawn")
    ports: Queue[int] = context.Queue()
    served: Synchronized[int] = context.Value("q", 0)  # type: ignore[assignment]
    mock = context.Process(target=serve, args=(ports, served, s.fragment_size), daemon=True)
    mock.start()
    runs: list[CellResult] = []
    try:
        base_url = f"http://127.0.0.1:{ports.get(timeout=60)}/v1"
        assert mock.pid is not None
        probe = MockProbe(mock.pid, served)
        # Floor and loop alternate, so a change in the machine's load touches both alike.
        for _ in range(s.repeat):
            for concurrency in s.concurrency:
                for variant in VARIANTS:
                    found = _run_in_process(cell_process, variant, base_url, s, concurrency, probe)
                    runs.append(CellResult(**found))
        memory = _run_in_process(memory_process, base_url, s)
    finally:
        mock.terminate()
        mock.join(10)
    return runs, memory


def _runs_of(runs: list[CellResult], variant: str, concurrency: int) -> list[CellResult]:
    mine = [r for r in runs if r.variant == variant and r.concurrency == concurrency]
    return sorted(mine, key=lambda r: r.cpu_per_turn_ms)


def _print_cells(cells: list[CellResult], runs: list[CellResult], repeat: int) -> None:
    print(
        f"  {'variant':8s} {'conc':>4s} {'wall p50 ms':>11s} {'wall p99 ms':>11s} "
        f"{'CPU/turn ms':>11s} {f'(of {repeat} runs)':>13s} {'of it GC':>8s} {'turns/s':>8s} "
        f"{'client CPU':>10s} {'mock CPU':>8s}  checks"
    )
    for c in cells:
        mine = _runs_of(runs, c.variant, c.concurrency)
        spread = f"{mine[0].cpu_per_turn_ms:.3f}-{mine[-1].cpu_per_turn_ms:.3f}"
        checks = "ok" if all(r.passed for r in mine) else "FAILED"
        checks += f" ({c.ok_turns}/{c.turns} turns, {c.tool_runs} tool runs, {c.requests} requests)"
        print(
            f"  {c.variant:8s} {c.concurrency:4d} {c.p50_ms:11.2f} {c.p99_ms:11.2f} "
            f"{c.cpu_per_turn_ms:11.3f} {spread if len(mine) > 1 else '-':>13s} "
            f"{c.gc_s / c.turns * 1000:8.3f} {c.turns_per_s:8.0f} {c.cpu_s / c.wall_s:10.0%} "
            f"{c.mock_cpu_s / c.wall_s:8.0%}  {checks}"
        )


def _print_ratios(cells: list[CellResult], s: Settings) -> bool:
    """One line per concurrency; True when every ratio meets the goal."""
    met = True
    for concurrency in s.concurrency:
        floor, loop = (
            next(c for c in cells if c.variant == v and c.concurrency == concurrency)
            for v in VARIANTS
        )
        ratio = loop.cpu_per_turn_ms / floor.cpu_per_turn_ms
        met = met and ratio <= GOAL_RATIO
        print(
            f"ratio loop/floor at concurrency {concurrency}: CPU per turn {ratio:.2f}x "
            f"(loop {loop.cpu_per_turn_ms:.3f} ms, floor {floor.cpu_per_turn_ms:.3f} ms; "
            f"{loop.cpu_per_turn_ms - floor.cpu_per_turn_ms:+.3f} ms), wall p50 "
            f"{loop.p50_ms / floor.p50_ms:.2f}x; goal <= {GOAL_RATIO:.2f}x: "
            f"{'met' if ratio <= GOAL_RATIO else 'NOT met'}"
        )
    return met


def _print_memory(memory: dict[str, Any]) -> bool:
    """True when memory per idle agent meets the goal and the tool schema was shared."""
    idle = memory["idle_bytes"]
    met = idle < GOAL_AGENT_BYTES and memory["shared"]
    print(
        f"memory per idle agent: {idle / 1024:.1f} KB ({memory['agents']} agents, tool on each "
        f"agent's own layer, schema shared: {'yes' if memory['shared'] else 'NO'}); "
        f"goal < {GOAL_AGENT_BYTES // 1024} KB: {'met' if met else 'NOT met'}"
    )
    print(
        f"  after one turn each: {memory['after_turn_bytes'] / 1024:.1f} KB per agent (session "
        f"log in memory included); creating an agent: {memory['create_ms']:.3f} ms CPU"
    )
    return met


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--turns", type=int, default=0, help="timed turns per cell (1000)")
    parser.add_argument("--warmup", type=int, default=50, help="untimed turns first (50)")
    parser.add_argument("--turns-per-session", type=int, default=0, help="(10)")
    parser.add_argument("--concurrency", type=int, nargs="+", help="(1 50)")
    parser.add_argument("--agents", type=int, default=0, help="idle agents for memory (1000)")
    parser.add_argument("--fragment-size", type=int, default=40, help="tool-argument chars/event")
    parser.add_argument("--repeat", type=int, default=0, help="runs of every cell (3)")
    parser.add_argument("--quick", action="store_true", help="a few turns only (smoke test)")
    s = _settings(parser.parse_args())

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["STAR_HARNESS_HOME"] = tmp
        mismatch = asyncio.run(check_same_requests(s.fragment_size, Path(tmp)))
    runs, memory = _measure(s)

    print(
        f"runtime overhead: {s.turns} turns per cell (1 tool call + 1 text reply = 2 streamed "
        f"requests per turn), {s.turns_per_session} turns per session, {s.warmup} warm-up turns"
    )
    print(
        f"python {platform.python_version()} | {os.cpu_count()} CPUs | httpx {httpx.__version__}"
        " | mock on core 0, each cell a fresh client process on core 1"
    )
    print(
        "requests: floor and loop send the same messages, tools and options: "
        + ("yes" if mismatch is None else f"NO\n{mismatch}")
    )
    # The run with the median CPU per turn stands for each cell.
    cells = [
        mine[(len(mine) - 1) // 2]
        for concurrency in s.concurrency
        for variant in VARIANTS
        if (mine := _runs_of(runs, variant, concurrency))
    ]
    _print_cells(cells, runs, s.repeat)
    met = _print_ratios(cells, s)
    met = _print_memory(memory) and met
    broken = mismatch is not None or not all(r.passed for r in runs)
    if broken or memory["ok_turns"] != memory["agents"]:
        print("a run FAILED its checks: the numbers above are not comparable")
        sys.exit(2)
    sys.exit(0 if met else 1)


if __name__ == "__main__":
    main()
