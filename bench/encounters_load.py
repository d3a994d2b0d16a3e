"""The other processes of bench/encounters.py: the mock LLM and the load generator.

The load generator opens one WebSocket and one encounter per simulated player, then runs
rounds: says at a fixed rate through the harness, then the model requests the harness sent
in that round made again directly to the mock at the same rate (the floor). Rounds alternate
so that both see the same noise.

Cores: the harness has core 0 to itself; the mock and the generator share core 1. For the floor
the generator moves to core 0 (the harness is idle then), so the direct client, like the
harness, has a core to itself and talks to the mock across cores; both pay the same for a
wake-up that crosses cores, which costs more than one on the same core.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import time
from collections.abc import Awaitable, Callable, Sequence
from multiprocessing.connection import Connection as Pipe
from typing import Any

from cores import pin

HARNESS_CORE = 0
LOAD_CORE = 1
"""The mock and the generator; the generator moves to HARNESS_CORE for the floor."""

LINE = "Fresh bread, still warm from the oven; two coins a loaf, three for five."
SAY = '{"t":"encounter.say","id":"e","text":"Any bread today?"}'
OPEN = '{"t":"encounter.open","id":"e","npcId":"n-baker","playerId":"p1"}'


# -- the mock LLM ------------------------------------------------------------------------------


def mock_process(pipe: Pipe) -> None:
    pin(LOAD_CORE)
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


# -- the load generator --------------------------------------------------------------------------


def load_process(pipe: Pipe, options: dict[str, Any]) -> None:
    pin(LOAD_CORE)
    asyncio.run(_load(pipe, options))


class _Players:
    """One WebSocket and one open encounter per player; times say -> encounter.idle."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.idle: asyncio.Queue[int] = asyncio.Queue()
        self.started: dict[int, float] = {}
        self.latencies: list[float] = []
        self.opened = asyncio.Event()
        self._open_count = 0
        self.sockets: list[Any] = []
        self._readers: list[asyncio.Task[None]] = []

    async def connect(self, url: str) -> None:
        from websockets.asyncio.client import connect

        for start in range(0, self.count, 50):
            batch = await asyncio.gather(
                *(
                    connect(url, proxy=None, ping_interval=None, compression=None)
                    for _ in range(start, min(self.count, start + 50))
                )
            )
            self.sockets.extend(batch)
        for index, ws in enumerate(self.sockets):
            self._readers.append(asyncio.create_task(self._read(index, ws)))
            await ws.send(OPEN)
        await self.opened.wait()

    async def _read(self, index: int, ws: Any) -> None:
        async for raw in ws:
            if '"encounter.idle"' not in str(raw):
                continue
            begun = self.started.pop(index, None)
            if begun is None:
                self._open_count += 1
                if self._open_count == self.count:
                    self.opened.set()
            else:
                self.latencies.append(time.perf_counter() - begun)
            self.idle.put_nowait(index)

    async def say(self) -> bool:
        if self.idle.empty():
            return False
        index = self.idle.get_nowait()
        self.started[index] = time.perf_counter()
        await self.sockets[index].send(SAY)
        return True

    async def close(self) -> None:
        for ws in self.sockets:
            await ws.close()
        for task in self._readers:
            task.cancel()
        await asyncio.gather(*self._readers, return_exceptions=True)


async def _load(pipe: Pipe, options: dict[str, Any]) -> None:
    rate: float = options["rate"]
    seconds: float = options["seconds"]
    players = _Players(options["encounters"])
    await players.connect(options["url"])
    loop = asyncio.get_running_loop()
    rounds: list[dict[str, Any]] = []
    for _ in range(options["rounds"]):
        pipe.send("ready")
        await loop.run_in_executor(None, pipe.recv)
        players.latencies = []
        skipped = await at_rate(rate, seconds, players.say)
        with contextlib.suppress(TimeoutError):
            await _until(lambda: not players.started, 10)
        pipe.send({"turns": len(players.latencies), "skipped": skipped})
        sent: list[tuple[str, bytes]] = await loop.run_in_executor(None, pipe.recv)
        pin(HARNESS_CORE)  # the floor runs where the harness ran (see the module's docstring)
        floor, floor_cpu = await _floor(options["mock_url"], sent, rate, seconds)
        pin(LOAD_CORE)
        rounds.append(
            {"latencies": players.latencies, "floor": floor, "floor_cpu_per_request": floor_cpu}
        )
    await players.close()
    pipe.send(rounds)


async def _until(done: Callable[[], bool], wait_s: float) -> None:
    async with asyncio.timeout(wait_s):
        while not done():  # noqa: ASYNC110 (polls plain counters)
            await asyncio.sleep(0.01)


async def at_rate(rate: float, seconds: float, fire: Callable[[], Awaitable[bool]]) -> int:
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


async def _floor(
    mock_url: str, sent: Sequence[tuple[str, bytes]], rate: float, seconds: float
) -> tuple[list[float], float]:
    """The requests the harness just sent, made again directly at the same rate.

    Same bodies, in the same order, under the same session ids: conversations grow over a
    run, and the floor must pay for the same history as the harness did.
    """
    import httpx

    latencies: list[float] = []
    tasks: set[asyncio.Task[None]] = set()
    requests = iter(sent)
    headers = {"content-type": "application/json", "accept": "text/event-stream"}
    async with httpx.AsyncClient(base_url=mock_url, trust_env=False, timeout=30) as http:

        async def one(session: str, body: bytes) -> None:
            begun = time.perf_counter()
            ours = {**headers, "X-Star-Harness-Session": session}
            async with http.stream("POST", "/chat/completions", content=body, headers=ours) as r:
                async for line in r.aiter_lines():
                    if line == "data: [DONE]":
                        break
                    if line.startswith("data: "):
                        json.loads(line[6:])
            latencies.append(time.perf_counter() - begun)

        async def fire() -> bool:
            request = next(requests, None)
            if request is None:
                return False
            task = asyncio.create_task(one(*request))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
            return True

        cpu = time.process_time()
        await at_rate(rate, seconds, fire)
        await asyncio.gather(*tasks)
        cpu = time.process_time() - cpu
    return latencies, cpu / max(1, len(latencies))


def median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    if not ordered:
        return float("nan")
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2
