"""A prompt through `star-harness rpc` (the SDK driving a child process over stdio) against the
same turn run in-process, both against the mock LLM over real HTTP.

One turn: the user's line -> the model streams a ~120-word answer -> turn end. In-process, the
bench creates an agent from the `task` profile and awaits `followup` + `when_idle`; through rpc,
the SDK sends `prompt` and iterates every streamed update (each text delta crosses the pipe as a
`session/update` notification) until the answer. The mock runs in its own process. Both ways
run side by side and alternate turn by turn (these machines are noisy; both see the same load);
per way: the median per-turn wall time (median over rounds), and CPU per turn (this process;
for rpc plus the child's, from /proc).

Run: uv run python bench/rpc_roundtrip.py [--turns 200] [--rounds 5] [--quick]
Exit status: 0 goal met (rpc/in-process wall per turn < 1.2x), 1 missed, 2 a run failed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from starharness.runtime.loop import AGENTS

GOAL_RATIO = 1.2
ANSWER = " ".join(f"word{i % 37}" for i in range(120)) + "."


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _serve_mock(port: int) -> None:
    from starharness.mockllm import MockLlmServer

    async def main() -> None:
        async with MockLlmServer(port=port, keep_requests=0) as mock:
            mock.script_each([{"behaviour": "success", "text": ANSWER}], repeat_last=True)
            await asyncio.Event().wait()

    asyncio.run(main())


def _patch(folder: Path, base_url: str) -> Path:
    rows: list[dict[str, Any]] = [
        {
            "id": "llm",
            "config": {
                "provider": "openai-compatible",
                "model": "mock-model",
                "base_url": base_url,
            },
        },
        {"id": "sessions", "config": {"store": "memory"}},
        {"id": "telemetry", "remove": True},
    ]
    path = folder / "bench.patch.yml"
    path.write_text(json.dumps(rows), encoding="utf-8")
    return path


def _child_cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


async def _run(patch: Path, turns: int) -> dict[str, Any]:
    """Both ways at once, turn by turn in alternating order, so both see the same load."""
    from starharness import composition
    from starharness.runtime.config import start
    from starharness.sdk import Client, TextDelta

    resolved = composition.load("task", [patch])
    async with await start(resolved) as runtime:
        handle = await runtime.ctx.get(AGENTS).create(f"bench-{time.monotonic_ns()}")
        agent = handle.agent
        client = await Client.spawn("task", patches=[patch])
        transport: Any = client.transport
        pid: int = transport.process.pid
        async with client:
            session = await client.create_session()

            async def local_turn(n: int) -> str:
                agent.followup(f"line {n}")
                await agent.when_idle()
                message = agent.session.events[-3:]
                return next(
                    (e.data["text"] for e in reversed(message) if e.type == "assistant/message"),
                    "",
                )

            async def remote_turn(n: int) -> tuple[str, int]:
                stream = session.prompt(f"line {n}")
                deltas = 0
                async for update in stream:
                    deltas += isinstance(update, TextDelta)
                assert stream.result is not None and stream.result.reason == "completed"
                return stream.result.text, deltas

            await local_turn(-1)
            await remote_turn(-1)
            walls: dict[str, list[float]] = {"local": [], "rpc": []}
            cpu = {"local": 0.0, "client": 0.0, "server": 0.0}
            deltas = 0
            texts: set[str] = set()
            for n in range(turns):
                for way in ("local", "rpc") if n % 2 == 0 else ("rpc", "local"):
                    cpu0, child0 = time.process_time(), _child_cpu_s(pid)
                    started = time.perf_counter()
                    if way == "local":
                        texts.add(await local_turn(n))
                    else:
                        text, count = await remote_turn(n)
                        texts.add(text)
                        deltas += count
                    walls[way].append(time.perf_counter() - started)
                    spent = time.process_time() - cpu0
                    if way == "local":
                        cpu["local"] += spent
                    else:
                        cpu["client"] += spent
                        cpu["server"] += _child_cpu_s(pid) - child0
            code = await client.shutdown()
        await handle.dispose()
    if code != 0:
        raise RuntimeError(f"star-harness rpc exited with {code}")
    return {
        "local_wall": statistics.median(walls["local"]),
        "rpc_wall": statistics.median(walls["rpc"]),
        "local_cpu": cpu["local"] / turns,
        "client_cpu": cpu["client"] / turns,
        "server_cpu": cpu["server"] / turns,
        "deltas": deltas // turns,
        "same_text": len(texts) == 1,
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="a few turns (a smoke run)")
    args = parser.parse_args(argv)
    turns, rounds = (10, 2) if args.quick else (args.turns, args.rounds)
    port = _free_port()
    mock = multiprocessing.get_context("spawn").Process(target=_serve_mock, args=(port,))
    mock.start()
    try:
        _wait_for(port)
        with tempfile.TemporaryDirectory() as scratch:
            os.environ["STAR_HARNESS_HOME"] = scratch
            patch = _patch(Path(scratch), f"http://127.0.0.1:{port}/v1")
            runs = [asyncio.run(_run(patch, turns)) for _ in range(rounds)]
    finally:
        mock.kill()
        mock.join()
    if not all(run["same_text"] for run in runs):
        print("the two ways answered differently", file=sys.stderr)
        return 2

    def median(key: str) -> float:
        return statistics.median(run[key] for run in runs)

    local_wall, rpc_wall = median("local_wall"), median("rpc_wall")
    local_cpu = median("local_cpu")
    client_cpu, server_cpu = median("client_cpu"), median("server_cpu")
    rpc_cpu = client_cpu + server_cpu
    ratio = rpc_wall / local_wall
    print(
        f"{rounds} rounds of {turns} turns each way, alternating turn by turn; one turn: a "
        f"streamed ~120-word answer ({runs[0]['deltas']} text deltas per turn through rpc)"
    )
    print(
        f"  in-process  wall per turn (median) {local_wall * 1000:7.2f} ms   "
        f"CPU per turn {local_cpu * 1000:6.2f} ms (the agent loop; mock excluded)"
    )
    print(
        f"  rpc         wall per turn (median) {rpc_wall * 1000:7.2f} ms   "
        f"CPU per turn {rpc_cpu * 1000:6.2f} ms (SDK client {client_cpu * 1000:.2f} + "
        f"rpc server {server_cpu * 1000:.2f})"
    )
    print(
        f"ratio rpc/in-process: wall per turn {ratio:.2f}x (goal < {GOAL_RATIO}x), "
        f"CPU per turn {rpc_cpu / local_cpu:.2f}x"
    )
    return 0 if ratio < GOAL_RATIO else 1


def _wait_for(port: int) -> None:
    for _ in range(2000):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            return
        except OSError:
            time.sleep(0.01)
    raise RuntimeError("the mock LLM did not start")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
