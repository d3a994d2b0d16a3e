"""Code mode against model steps: N tool calls in one run_code program vs N model steps.

Both variants run the star-harness agent loop (the `task` profile, sessions in memory, the
sandbox on bubblewrap and the code-mode plugin) against the mock LLM over real HTTP; the mock
runs in its own process and counts the requests of each conversation.

- run_code: the model's first answer is one run_code call whose program calls the host tool
  `tally` N times (each call through the tool pipeline, logged as code/call and code/result);
  then the model answers "done". The program runs confined (bubblewrap, read-only, no network).
- model steps: the model answers N times with one `tally` call each, then "done".

Reported per variant (median of --repeat runs): model requests (counted at the mock), tool
calls, and total client CPU: this process's CPU plus that of the sandboxed processes it started
(bwrap as `getrusage` counts reaped children, and the program's interpreter as it reports its own
CPU time in code/done). The ratio model-steps/run_code of client CPU is printed against the goal
(run_code, measured in the same run, is the floor).

    uv run python bench/code_mode.py [--calls 200] [--repeat 3]

Exit status: 0 goal met, 1 goal missed, 2 a run failed its checks (or no bubblewrap).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import platform
import resource
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from multiprocessing.queues import Queue
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from starharness.composition import profile_search_path
from starharness.mockllm import MockLlmServer, ScriptedCall, Success, ToolCalls
from starharness.runtime.codemode import CODE_DONE
from starharness.runtime.config import Patch, load_profile, start
from starharness.runtime.kernel import Context
from starharness.runtime.loop import AGENTS, SESSION_EVENT, LoggedEvent
from starharness.runtime.sandbox import BubblewrapProvider
from starharness.runtime.tools import TOOLS, define_tool
from starharness.runtime.tools.run import ToolRunContext

GOAL_RATIO = 2.0
"""Model steps should cost at least twice the client CPU of one run_code doing the same."""
VARIANTS = ("run_code", "model steps")

PROGRAM = """
count = 0
for i in range({calls}):
    count = tools.tally(n=i)["count"]
print("tally", count)
"""


class TallyParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    n: int


@dataclass(frozen=True, slots=True)
class Run:
    variant: str
    cpu_ms: float
    sandbox_cpu_ms: float
    wall_ms: float
    tallied: int
    conversation: str


def _steps(variant: str, calls: int) -> list[ToolCalls | Success]:
    if variant == "run_code":
        program = PROGRAM.format(calls=calls)
        call = ScriptedCall(name="run_code", arguments=json.dumps({"program": program}))
        return [ToolCalls(calls=[call]), Success(text="done")]
    tally = [
        ToolCalls(calls=[ScriptedCall(name="tally", arguments=json.dumps({"n": n}))])
        for n in range(calls)
    ]
    return [*tally, Success(text="done")]


def _conversations(calls: int, repeat: int) -> dict[str, str]:
    """conversation id -> variant, in the order they run (variants alternate)."""
    ids: dict[str, str] = {}
    for index in range(repeat + 1):  # the first round warms up and is not shown
        for variant in VARIANTS:
            ids[f"{variant.replace(' ', '-')}-{index}"] = variant
    return ids


def _serve(calls: int, repeat: int, ports: Queue[int], counts: Queue[dict[str, int]]) -> None:
    """The mock process: scripts for every conversation; on "stop" it sends request counts."""
    asyncio.run(_serve_async(calls, repeat, ports, counts))


async def _serve_async(
    calls: int, repeat: int, ports: Queue[int], counts: Queue[dict[str, int]]
) -> None:
    conversations = _conversations(calls, repeat)
    async with MockLlmServer() as mock:
        for conversation, variant in conversations.items():
            mock.script(conversation, _steps(variant, calls))
        ports.put(mock.port)
        await asyncio.to_thread(counts.get)  # the client's "stop"
        counts.put({c: len(mock.requests_for(c)) for c in conversations})


def _rows(base_url: str, root: Path, calls: int) -> list[dict[str, Any]]:
    llm = {"provider": "openai-compatible", "model": "mock-model", "base_url": base_url}
    return [
        {"id": "llm", "config": llm},
        {"id": "sessions", "config": {"store": "memory"}},
        {"id": "agents", "merge": {"max_steps": min(calls + 2, 1000)}},
        {
            "id": "sandbox",
            "plugin": "starharness.runtime.sandbox:SandboxPlugin",
            "config": {"providers": ["bubblewrap"], "root": str(root), "guidance": False},
            "before": "agents",
        },
        {
            "id": "codemode",
            "plugin": "starharness.runtime.codemode:CodeModePlugin",
            "config": {"max_calls": max(calls, 1), "listed_calls": 5, "wall_s": 120},
            "before": "agents",
        },
    ]


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


async def _one(runtime: Any, conversation: str, variant: str) -> Run:
    tallied = 0

    def tally(args: TallyParams, run: ToolRunContext) -> dict[str, int]:
        nonlocal tallied
        tallied += 1
        return {"count": tallied}

    program_cpu_ms: list[float] = []

    def done(logged: LoggedEvent) -> None:
        if logged.event.type == CODE_DONE:
            program_cpu_ms.append(float(logged.event.data["cpu_ms"] or 0.0))

    def setup(ctx: Context) -> None:
        ctx.get(TOOLS).register(define_tool("tally", "Count one more.", TallyParams, tally))
        ctx.on(SESSION_EVENT, done)

    cpu, children, wall = time.process_time(), _children_cpu_s(), time.perf_counter()
    handle = await runtime.ctx.get(AGENTS).create(conversation, setup=setup)
    handle.agent.followup("count")
    await handle.agent.when_idle()
    await handle.dispose()
    # bwrap's inner processes are not all waited for by a process we wait for, so getrusage
    # misses some of them: the program reports its own CPU (code/done's cpu_ms) as well.
    sandbox = _children_cpu_s() - children + sum(program_cpu_ms) / 1000
    return Run(
        variant,
        cpu_ms=(time.process_time() - cpu + sandbox) * 1000,
        sandbox_cpu_ms=sandbox * 1000,
        wall_ms=(time.perf_counter() - wall) * 1000,
        tallied=tallied,
        conversation=conversation,
    )


async def _measure(base_url: str, home: Path, args: argparse.Namespace) -> list[Run]:
    resolved = load_profile(
        "task",
        [Patch.of("bench", _rows(base_url, home, args.calls))],
        search=profile_search_path(home),
        home=home,
    )
    runs: list[Run] = []
    async with await start(resolved) as runtime:
        for conversation, variant in _conversations(args.calls, args.repeat).items():
            runs.append(await _one(runtime, conversation, variant))
    return runs


def _median(runs: list[Run], variant: str, field: str) -> float:
    return statistics.median(getattr(r, field) for r in runs if r.variant == variant)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--calls", type=int, default=200, help="tool calls per run (200, <= 998)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of each variant (3)")
    args = parser.parse_args()
    missing = BubblewrapProvider().probe()
    if missing is not None:
        print(f"bubblewrap does not work here: {missing}")
        sys.exit(2)

    context = multiprocessing.get_context("spawn")
    ports: Queue[int] = context.Queue()
    counts: Queue[dict[str, int]] = context.Queue()
    mock = context.Process(target=_serve, args=(args.calls, args.repeat, ports, counts))
    mock.start()
    try:
        base_url = f"http://127.0.0.1:{ports.get(timeout=60)}/v1"
        with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
            os.environ["STAR_HARNESS_HOME"] = tmp
            all_runs = asyncio.run(_measure(base_url, Path(tmp), args))
        counts.put({})
        requests = counts.get(timeout=60)
    finally:
        mock.join(30)
        if mock.is_alive():
            mock.terminate()

    warm = {f"{v.replace(' ', '-')}-0" for v in VARIANTS}
    runs = [r for r in all_runs if r.conversation not in warm]
    checks = all(r.tallied == args.calls for r in all_runs)
    expected = {"run_code": 2, "model steps": args.calls + 1}
    checks = checks and all(requests[r.conversation] == expected[r.variant] for r in all_runs)

    print(
        f"code mode: {args.calls} tool calls per run, one run_code program vs {args.calls} "
        f"model steps; {args.repeat} runs of each (median shown) after a warm-up run"
    )
    print(
        f"python {platform.python_version()} | {os.cpu_count()} CPUs | sandbox bubblewrap | "
        f"load average {os.getloadavg()[0]:.2f} | mock in its own process"
    )
    print(
        f"  {'variant':12s} {'requests':>8s} {'tool calls':>10s} {'client CPU ms':>13s} "
        f"{'of it sandbox':>13s} {'wall ms':>9s}"
    )
    for variant in VARIANTS:
        mine = [r for r in runs if r.variant == variant]
        print(
            f"  {variant:12s} {requests[mine[0].conversation]:8d} {mine[0].tallied:10d} "
            f"{_median(runs, variant, 'cpu_ms'):13.1f} "
            f"{_median(runs, variant, 'sandbox_cpu_ms'):13.1f} "
            f"{_median(runs, variant, 'wall_ms'):9.1f}"
        )
    code_requests = requests[next(r.conversation for r in runs if r.variant == "run_code")]
    step_requests = requests[next(r.conversation for r in runs if r.variant == "model steps")]
    print(
        f"model requests: run_code {code_requests} (1 with the program + 1 final answer), "
        f"model steps {step_requests} ({args.calls} with a tool call + 1 final answer)"
    )
    floor = _median(runs, "run_code", "cpu_ms")
    ratio = _median(runs, "model steps", "cpu_ms") / floor
    met = ratio >= GOAL_RATIO
    print(
        f"ratio model-steps/run_code: client CPU {ratio:.2f}x (floor: run_code "
        f"{floor:.1f} ms, its sandboxed program included); goal >= {GOAL_RATIO:.1f}x: "
        f"{'met' if met else 'NOT met'}"
    )
    print(
        f"checks: {'ok' if checks else 'FAILED'} (every run tallied {args.calls}, "
        "requests as expected)"
    )
    if not checks:
        sys.exit(2)
    sys.exit(0 if met else 1)


if __name__ == "__main__":
    main()
