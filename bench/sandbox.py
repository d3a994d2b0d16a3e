"""Cost of confinement: one confined `true` against an unconfined `true`, per backend.

Both go through the harness's own spawn path (ProcessOwner, run_once); confined and bare runs
alternate call by call, so both see the same machine load. Reported per backend: the median
wall time of a bare and a confined `true`, the extra milliseconds and the ratio. Goal:
bubblewrap adds under 10 ms per command (network off, as commands run by default).

    uv run python bench/sandbox.py [--calls 200]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from starharness.runtime.sandbox import (
    BubblewrapProvider,
    LandlockProvider,
    ProcessOwner,
    SandboxPolicy,
    SandboxProvider,
    Tier,
    confined_env,
    run_once,
)

GOAL_EXTRA_MS = 10.0


async def _timed(owner: ProcessOwner, argv: list[str], env: dict[str, str], cwd: Path) -> float:
    start = time.perf_counter()
    result = await run_once(owner, argv, env, cwd, timeout_s=30, budget=4096)
    elapsed = time.perf_counter() - start
    if result.exit_code != 0:
        raise SystemExit(f"{argv[0]} failed ({result.exit_code}): {result.output}")
    return elapsed * 1000


async def _measure(
    provider: SandboxProvider, policy: SandboxPolicy, calls: int
) -> tuple[float, float]:
    owner = ProcessOwner()
    env = confined_env(policy)
    bare_argv = ["true"]
    confined_argv = provider.confine(bare_argv, policy)
    bare: list[float] = []
    confined: list[float] = []
    for _ in range(max(calls // 10, 3)):  # warm up page cache and the reaper
        await _timed(owner, confined_argv, env, policy.workspace)
    for _ in range(calls):
        bare.append(await _timed(owner, bare_argv, env, policy.workspace))
        confined.append(await _timed(owner, confined_argv, env, policy.workspace))
    await owner.aclose()
    return statistics.median(bare), statistics.median(confined)


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as workspace, tempfile.TemporaryDirectory() as temp:
        cases: list[tuple[str, SandboxProvider, bool]] = [
            ("bubblewrap", BubblewrapProvider(), False),
            ("bubblewrap (network approved)", BubblewrapProvider(), True),
            ("landlock", LandlockProvider(), False),
        ]
        met = True
        print(f"confined vs bare `true`, median of {args.calls} alternating calls each:")
        for name, provider, network in cases:
            why = await asyncio.to_thread(provider.probe)
            if why is not None:
                print(f"  {name:30} unavailable: {why}")
                continue
            policy = SandboxPolicy(
                tier=Tier.WORKSPACE_WRITE,
                workspace=Path(workspace),
                temp_dir=Path(temp),
                network=network,
            )
            bare, confined = await _measure(provider, policy, args.calls)
            extra = confined - bare
            note = ""
            if name == "bubblewrap":
                ok = extra < GOAL_EXTRA_MS
                met = met and ok
                note = f"  (goal < {GOAL_EXTRA_MS:g} ms extra: {'met' if ok else 'MISSED'})"
            print(
                f"  {name:30} bare {bare:6.2f} ms  confined {confined:6.2f} ms  "
                f"extra {extra:6.2f} ms  ratio {confined / bare:5.2f}x{note}"
            )
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
