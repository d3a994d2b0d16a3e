"""A prompt through `star-harness rpc` (the SDK driving a child process over stdio) against the
same turn run in-process, both against the mock LLM over real HTTP.

One turn: the user's line -> the model streams a ~120-word answer -> turn end. In-process, the
bench creates an agent from the `task` profile and awaits `followup` + `when_idle`; through rpc,
the SDK sends `prompt` and iterates every streamed update (each text delta crosses the pipe as a
`session/update` notification) until the answer. The mock runs in its own process. Rounds
alternate the two ways; per way, the median over rounds of the per-turn wall time is shown, and
CPU per turn (this process, plus the rpc child's from /proc for the rpc way).

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


async def _in_process(patch: Path, turns: int) -> tuple[float, float, str]:
    from starharness import app as composition
    from starharness.runtime.config import start

    resolved = composition.load("task", [patch])
    async with await start(resolved) as runtime:
        handle = await runtime.ctx.agents.create(f"bench-{time.monotonic_ns()}")
        agent = handle.agent
        agent.followup("warm up")
        await agent.when_idle()
        walls: list[float] = []
        cpu0 = time.process_time()
        for n in range(turns):
            started = time.perf_counter()
            agent.followup(f"line {n}")
            await agent.when_idle()
            walls.append(time.perf_counter() - started)
        cpu = (time.process_time() - cpu0) / turns
        text = next(
            e.data["text"] for e in reversed(agent.session.events) if e.type == "assistant/message"
        )
        await handle.dispose()
    return statistics.median(walls), cpu, text


async def _through_rpc(patch: Path, turns: int) -> tuple[float, float, str, int]:
    from starharness.sdk import Client, TextDelta

    client = await Client.spawn("task", patches=[patch])
    transport: Any = client.transport
    pid: int = transport.process.pid
    async with client:
        session = await client.create_session()
        await session.prompt("warm up").finish()
        walls: list[float] = []
        deltas = 0
        text = ""
        cpu0 = time.process_time()
        child0 = _child_cpu_s(pid)
        for n in range(turns):
            started = time.perf_counter()
            stream = session.prompt(f"line {n}")
            async for update in stream:
                if isinstance(update, TextDelta):
                    deltas += 1
            walls.append(time.perf_counter() - started)
            assert stream.result is not None and stream.result.reason == "completed"
            text = stream.result.text
        client_cpu = (time.process_time() - cpu0) / turns
        server_cpu = (_child_cpu_s(pid) - child0) / turns
        code = await client.shutdown()
    if code != 0:
        raise RuntimeError(f"star-harness rpc exited with {code}")
    print(
        f"    (rpc round: client {client_cpu * 1000:.2f} ms + server {server_cpu * 1000:.2f} ms "
        "CPU per turn)"
    )
    return statistics.median(walls), client_cpu + server_cpu, text, deltas // turns


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
            local: list[tuple[float, float]] = []
            remote: list[tuple[float, float]] = []
            deltas = 0
            for _ in range(rounds):
                wall, cpu, local_text = asyncio.run(_in_process(patch, turns))
                local.append((wall, cpu))
                wall, cpu, remote_text, deltas = asyncio.run(_through_rpc(patch, turns))
                remote.append((wall, cpu))
                if remote_text != local_text:
                    print("the two ways answered differently", file=sys.stderr)
                    return 2
    finally:
        mock.kill()
        mock.join()
    local_wall = statistics.median(w for w, _ in local)
    remote_wall = statistics.median(w for w, _ in remote)
    local_cpu = statistics.median(c for _, c in local)
    remote_cpu = statistics.median(c for _, c in remote)
    ratio = remote_wall / local_wall
    print(
        f"{rounds} rounds of {turns} turns; one turn: a streamed ~120-word answer "
        f"({deltas} text deltas per turn through rpc)"
    )
    print(
        f"  in-process  wall per turn (median) {local_wall * 1000:7.2f} ms   "
        f"CPU per turn {local_cpu * 1000:6.2f} ms (bench process, mock excluded)"
    )
    print(
        f"  rpc         wall per turn (median) {remote_wall * 1000:7.2f} ms   "
        f"CPU per turn {remote_cpu * 1000:6.2f} ms (SDK client + rpc server)"
    )
    print(
        f"ratio rpc/in-process: wall per turn {ratio:.2f}x (goal < {GOAL_RATIO}x), "
        f"CPU per turn {remote_cpu / local_cpu:.2f}x"
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
