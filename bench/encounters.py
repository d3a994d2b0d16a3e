"""Many open NPC encounters over real WebSockets: turns per second, overhead, memory, first delta.

Three processes: the harness (this one: the runtime, the NPC server and the tiny test game),
the mock LLM (instant answers: every request streams one speaking call), and the load
generator (one WebSocket and one encounter per simulated player; says at a fixed rate). For
each level (100, 500, 1,000 open encounters) it prints:

- turns per second completed, and says skipped because every encounter was busy;
- p50/p99 turn latency through the harness (say -> encounter.idle, measured by the generator)
  next to the floor: the same model request made directly to the mock by the generator at the
  same rate (httpx, streamed), and the ratio between the two;
- harness CPU per turn next to the direct client's CPU per request, and their ratio;
- memory per open encounter: Python heap (tracemalloc while the encounters open) and RSS growth;
- in-process: p50/p99 from a speaking fragment arriving to its first say.delta leaving.

Goals (2-core machine): 1,000 encounters under 100 KB each; harness CPU per turn at most 1.3x
the floor's at 200 says/s; the first say.delta within 1 ms of its fragment.

Run: uv run python bench/encounters.py [--levels 100 500 1000] [--rate 200] [--seconds 10]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import importlib
import json
import multiprocessing
import os
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Sequence
from multiprocessing.connection import Connection as Pipe
from pathlib import Path
from typing import Any

_TESTS = Path(__file__).resolve().parents[1] / "tests"
# The tiny test game and the shared in-process runtime live with the tests.
sys.path[:0] = [str(_TESTS / "npc"), str(_TESTS)]

LINE = "Fresh bread, still warm from the oven; two coins a loaf, three for five."
GOAL_KB_PER_ENCOUNTER = 100.0
GOAL_CPU_RATIO = 1.3
GOAL_FIRST_DELTA_MS = 1.0


def _pin(index: int) -> None:
    cores = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cores[index % len(cores)]})


def _percentile(values: Sequence[float], share: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


# -- the mock LLM process --------------------------------------------------------------------


def _mock_process(pipe: Pipe) -> None:
    _pin(1)
    asyncio.run(_mock(pipe))


async def _mock(pipe: Pipe) -> None:
    from starharness.mockllm import ChatRequest, MockLlmServer, Step, ToolCalls

    talk = importlib.import_module("tinygame.brain").talk

    answer = ToolCalls(calls=[talk(LINE, "happy")], fragment_size=8)

    def respond(request: ChatRequest) -> Step:
        return answer

    async with MockLlmServer(responder=respond) as mock:
        pipe.send(mock.base_url)
        await asyncio.get_running_loop().run_in_executor(None, pipe.recv)


# -- the load generator process --------------------------------------------------------------


def _load_process(pipe: Pipe, options: dict[str, Any]) -> None:
    _pin(1)
    asyncio.run(_load(pipe, options))


async def _load(pipe: Pipe, options: dict[str, Any]) -> None:
    from websockets.asyncio.client import ClientConnection, connect

    count: int = options["encounters"]
    rate: float = options["rate"]
    seconds: float = options["seconds"]
    idle: asyncio.Queue[int] = asyncio.Queue()
    started: dict[int, float] = {}
    latencies: list[float] = []
    opened = asyncio.Event()
    open_count = 0

    async def reader(index: int, ws: ClientConnection) -> None:
        nonlocal open_count
        async for raw in ws:
            if '"encounter.idle"' not in str(raw):
                continue
            begun = started.pop(index, None)
            if begun is None:
                open_count += 1
                if open_count == count:
                    opened.set()
            else:
                latencies.append(time.perf_counter() - begun)
            idle.put_nowait(index)

    sockets: list[ClientConnection] = []
    readers: list[asyncio.Task[None]] = []
    for start in range(0, count, 50):
        batch = await asyncio.gather(
            *(
                connect(options["url"], proxy=None, ping_interval=None, compression=None)
                for _ in range(start, min(count, start + 50))
            )
        )
        sockets.extend(batch)
    for index, ws in enumerate(sockets):
        readers.append(asyncio.create_task(reader(index, ws)))
        await ws.send(json.dumps({"t": "encounter.open", "id": "e", "npcId": "n-baker",
                                  "playerId": "p1"}))  # fmt: skip
    await opened.wait()
    pipe.send("open")
    await asyncio.get_running_loop().run_in_executor(None, pipe.recv)

    skipped = await _at_rate(rate, seconds, lambda: _say(idle, started, sockets))
    with contextlib.suppress(TimeoutError):
        await _until(lambda: not started, 10)
    turns = len(latencies)
    pipe.send("harness-done")

    floor, floor_cpu = await _floor(options, rate, seconds)
    for ws in sockets:
        await ws.close()
    for task in readers:
        task.cancel()
    pipe.send(
        {
            "turns": turns,
            "skipped": skipped,
            "latencies": latencies,
            "floor": floor,
            "floor_cpu_per_request": floor_cpu,
        }
    )


async def _until(done: Any, wait_s: float) -> None:
    async with asyncio.timeout(wait_s):
        for _ in iter(int, 1):
            if done():
                return
            await asyncio.sleep(0.01)


async def _say(idle: asyncio.Queue[int], started: dict[int, float], sockets: list[Any]) -> bool:
    if idle.empty():
        return False
    index = idle.get_nowait()
    started[index] = time.perf_counter()
    await sockets[index].send('{"t":"encounter.say","id":"e","text":"Any bread today?"}')
    return True


async def _at_rate(rate: float, seconds: float, fire: Any) -> int:
    """Call `fire()` `rate` times a second for `seconds`; returns how many found nothing to do."""
    skipped = 0
    interval = 1 / rate
    begin = time.perf_counter()
    due = begin
    while due - begin < seconds:
        if not await fire():
            skipped += 1
        due += interval
        await asyncio.sleep(max(0.0, due - time.perf_counter()))
    return skipped


async def _floor(options: dict[str, Any], rate: float, seconds: float) -> tuple[list[float], float]:
    """The same model request, made directly at the same rate; latencies and CPU per request."""
    import httpx

    body = options["floor_body"]
    latencies: list[float] = []
    tasks: set[asyncio.Task[None]] = set()
    async with httpx.AsyncClient(base_url=options["mock_url"], trust_env=False, timeout=30) as http:

        async def one(number: int) -> None:
            begun = time.perf_counter()
            headers = {"X-Star-Harness-Session": f"floor-{number}"}
            async with http.stream("POST", "/chat/completions", json=body, headers=headers) as r:
                async for line in r.aiter_lines():
                    if line == "data: [DONE]":
                        break
                    if line.startswith("data: "):
                        json.loads(line[6:])
            latencies.append(time.perf_counter() - begun)

        counter = iter(range(1_000_000))

        async def fire() -> bool:
            task = asyncio.create_task(one(next(counter)))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
            return True

        cpu = time.process_time()
        await _at_rate(rate, seconds, fire)
        await asyncio.gather(*tasks)
        cpu = time.process_time() - cpu
    return latencies, cpu / max(1, len(latencies))


# -- the harness (this process) ----------------------------------------------------------------


class _FirstDelta:
    """In-process probe: from a speaking fragment's chunk event to its first say.delta send."""

    def __init__(self) -> None:
        self.waiting: dict[int, float] = {}
        self.samples: list[float] = []

    def install(self) -> None:
        from starlette.websockets import WebSocket

        from starharness.npc.encounter import FrameMapper

        probe = self
        on_event = FrameMapper.on_event
        send_text = WebSocket.send_text

        def timed_on_event(mapper: Any, event: Any) -> None:
            if event.type == "assistant/chunk" and not mapper._line_open:
                ws = mapper._send.__self__._send_frame.__self__.websocket
                probe.waiting[id(ws)] = time.perf_counter()
            on_event(mapper, event)

        async def timed_send_text(ws: WebSocket, data: str) -> None:
            if data.startswith('{"t":"say.delta"'):
                begun = probe.waiting.pop(id(ws), None)
                if begun is not None:
                    probe.samples.append(time.perf_counter() - begun)
            await send_text(ws, data)

        FrameMapper.on_event = timed_on_event  # type: ignore[method-assign]
        WebSocket.send_text = timed_send_text  # type: ignore[method-assign]


def _rss_kb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return float(line.split()[1])
    return float("nan")


async def _warm_up(ws_url: str, ctx: Any) -> dict[str, Any]:
    """One encounter of three turns; returns the last request body, for the floor to replay."""
    from websockets.asyncio.client import connect

    from starharness.runtime.llm import OPENAI_COMPATIBLE, to_wire_messages, to_wire_tools
    from starharness.runtime.llm.types import ToolSchema
    from starharness.runtime.session import rebuild_requests

    async with connect(ws_url, proxy=None) as ws:
        await ws.send('{"t":"encounter.open","id":"w","npcId":"n-baker","playerId":"p1"}')
        for text in ("one", "two", "three", None):
            while '"encounter.idle"' not in str(await ws.recv()):
                pass
            if text is not None:
                await ws.send(json.dumps({"t": "encounter.say", "id": "w", "text": text}))
        (session,) = ctx.sessions.live()
        header, messages = rebuild_requests(session.events)[0]
    assert header is not None
    tools = [ToolSchema(t["name"], t["description"], t["parameters"]) for t in header["tools"]]
    return {
        "model": "mock-model",
        "stream": True,
        "stream_options": {"include_usage": True},
        "messages": to_wire_messages(header["system"], messages, profile=OPENAI_COMPATIBLE),
        "tools": to_wire_tools(tools, profile=OPENAI_COMPATIBLE),
    }


async def _level(
    running: Any, ctx: Any, options: dict[str, Any], count: int, probe: _FirstDelta
) -> dict[str, Any]:
    spawn = multiprocessing.get_context("spawn")
    ours, theirs = spawn.Pipe()
    generator = spawn.Process(
        target=_load_process, args=(theirs, {**options, "encounters": count}), daemon=True
    )
    gc.collect()
    rss_before = _rss_kb()
    tracemalloc.start()
    heap_before = tracemalloc.get_traced_memory()[0]
    generator.start()
    loop = asyncio.get_running_loop()
    assert await loop.run_in_executor(None, ours.recv) == "open"
    gc.collect()
    heap = (tracemalloc.get_traced_memory()[0] - heap_before) / count / 1024
    tracemalloc.stop()
    rss = (_rss_kb() - rss_before) / count
    probe.samples.clear()
    cpu = time.process_time()
    ours.send("go")
    assert await loop.run_in_executor(None, ours.recv) == "harness-done"
    cpu = time.process_time() - cpu
    result: dict[str, Any] = await loop.run_in_executor(None, ours.recv)
    await loop.run_in_executor(None, generator.join, 30)
    await _until(lambda: not running.server.encounters, 30)
    result.update(
        count=count,
        heap_kb=heap,
        rss_kb=rss,
        harness_cpu_per_turn=cpu / max(1, result["turns"]),
        first_delta=list(probe.samples),
    )
    return result


def _report(result: dict[str, Any], seconds: float) -> bool:
    latency, floor = result["latencies"], result["floor"]
    p50, p99 = _percentile(latency, 0.5), _percentile(latency, 0.99)
    f50, f99 = _percentile(floor, 0.5), _percentile(floor, 0.99)
    cpu, floor_cpu = result["harness_cpu_per_turn"], result["floor_cpu_per_request"]
    cpu_ratio = cpu / floor_cpu if floor_cpu else float("nan")
    d50, d99 = (_percentile(result["first_delta"], q) * 1000 for q in (0.5, 0.99))
    print(f"\n{result['count']} open encounters:")
    print(
        f"  turns/s {result['turns'] / seconds:7.1f}   says skipped (all busy) {result['skipped']}"
    )
    print(
        f"  turn latency p50 {p50 * 1000:7.2f} ms  p99 {p99 * 1000:7.2f} ms  |  floor (direct "
        f"request) p50 {f50 * 1000:6.2f} ms  p99 {f99 * 1000:6.2f} ms  |  ratio p50 "
        f"{p50 / f50:4.2f}x  p99 {p99 / f99:4.2f}x  overhead p50 {(p50 - f50) * 1000:6.2f} ms"
    )
    print(
        f"  CPU per turn: harness {cpu * 1000:6.2f} ms, direct client {floor_cpu * 1000:6.2f} ms"
        f" per request: {cpu_ratio:4.2f}x (goal <= {GOAL_CPU_RATIO}x)"
    )
    print(
        f"  memory per open encounter: heap {result['heap_kb']:6.1f} KB, RSS "
        f"{result['rss_kb']:6.1f} KB (goal < {GOAL_KB_PER_ENCOUNTER:g} KB)"
    )
    print(
        f"  first say.delta after its fragment: p50 {d50:5.3f} ms  p99 {d99:5.3f} ms "
        f"(goal <= {GOAL_FIRST_DELTA_MS:g} ms, {len(result['first_delta'])} turns)"
    )
    return (
        result["heap_kb"] < GOAL_KB_PER_ENCOUNTER
        and cpu_ratio <= GOAL_CPU_RATIO
        and d99 <= GOAL_FIRST_DELTA_MS
    )


async def _main(levels: Sequence[int], rate: float, seconds: float) -> int:
    from starharness.npc import LimitsSettings, ServerSettings, TranscriptSettings, start_server

    game = importlib.import_module("tinygame").GAME
    start_runtime = importlib.import_module("stack_support").start_runtime

    _pin(0)
    spawn = multiprocessing.get_context("spawn")
    mock_pipe, mock_end = spawn.Pipe()
    mock = spawn.Process(target=_mock_process, args=(mock_end,), daemon=True)
    mock.start()
    loop = asyncio.get_running_loop()
    mock_url: str = await loop.run_in_executor(None, mock_pipe.recv)
    probe = _FirstDelta()
    probe.install()
    ctx = await start_runtime(mock_url, first_byte_s=60)
    limits = LimitsSettings(says_per_second=1000, say_burst=1000, max_encounters=2)
    with tempfile.TemporaryDirectory() as tmp:
        settings = ServerSettings(
            port=0,
            world=Path(tmp) / "world.db",
            limits=limits,
            transcripts=TranscriptSettings(keep=0),
        )
        running = await start_server(ctx, game, settings)
        all_met = True
        try:
            body = await _warm_up(running.ws_url, ctx)
            options = {
                "url": running.ws_url,
                "mock_url": mock_url,
                "rate": rate,
                "seconds": seconds,
                "floor_body": body,
            }
            print(f"rate {rate:g} says/s for {seconds:g} s per level; mock at {mock_url}")
            for count in levels:
                result = await _level(running, ctx, options, count, probe)
                all_met = _report(result, seconds) and all_met
        finally:
            await running.stop()
            await ctx.dispose()
            mock_pipe.send("stop")
            mock.join(10)
    print("\nall goals met" if all_met else "\nsome goals missed (see above)")
    return 0 if all_met else 1


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--levels", type=int, nargs="+", default=[100, 500, 1000])
    parser.add_argument("--rate", type=float, default=200.0, help="says per second")
    parser.add_argument("--seconds", type=float, default=10.0, help="per level and phase")
    args = parser.parse_args()
    sys.exit(asyncio.run(_main(args.levels, args.rate, args.seconds)))


if __name__ == "__main__":
    main()
