"""The Python heap and RSS an idle frame WebSocket costs the NPC server, stock and lean.

Two processes: the harness (this one: the NPC server serving Omega station, pinned to core 0;
no model is asked) and a client (core 1) that opens N WebSockets, says `hello` on each, reads
its `welcome` and then sends nothing. The harness traces its heap (tracemalloc) from before the
first connects to when all N are open and idle, after a full collection each time, and prints
the growth per connection, with the RSS growth per connection beside it, and against what it
was before issue 37 (uvicorn's protocol subclassed to keep less, compression negotiated).

It does so twice in the same run: with uvicorn's own protocol (`STAR_HARNESS_STOCK_TRANSPORTS=1`)
and with the lean one in `starharness._fastio.ws` (what the server runs on the uvicorn and
websockets releases it was tested on), and prints the lean one's saving; issue 37 keeps it only
while it saves at least 20%. The machine's noise does not touch the heap figure, only RSS a
little.

Run: uv run python bench/ws_heap.py [--connections 1000] [--rounds 3] [--top 15]
     [--compress-frames]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import multiprocessing
import os
import statistics
import sys
import tempfile
import tracemalloc
from collections.abc import Callable, Iterator
from multiprocessing.connection import Connection as Pipe
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(_HERE)]

from cores import pin  # noqa: E402

PLAYER = "player-1"
BEFORE_KB = {True: 56.4, False: 6.9}
"""Heap per idle connection with uvicorn's protocol subclassed (coalescing, light queue, slots,
handshake let go) and compression negotiated, before issue 37 (1,000 connections, 2026-12-05)."""
GOAL_SAVING = 0.20
"""Issue 37: a trick on a library's insides stays only while it wins at least this much."""
STOCK_ENV = "STAR_HARNESS_STOCK_TRANSPORTS"


@contextlib.contextmanager
def _stock(stock: bool) -> Iterator[None]:
    """With `stock`, STAR_HARNESS_STOCK_TRANSPORTS=1 while the server starts (it chooses then)."""
    before = os.environ.pop(STOCK_ENV, None)
    if stock:
        os.environ[STOCK_ENV] = "1"
    try:
        yield
    finally:
        os.environ.pop(STOCK_ENV, None)
        if before is not None:
            os.environ[STOCK_ENV] = before


def _client_process(url: str, count: int, compress: bool, pipe: Pipe) -> None:
    pin(1)
    asyncio.run(_clients(url, count, compress, pipe))


async def _clients(url: str, count: int, compress: bool, pipe: Pipe) -> None:
    from websockets.asyncio.client import ClientConnection, connect

    hello = json.dumps({"t": "hello", "playerId": PLAYER})
    opened: list[ClientConnection] = []
    try:
        for _ in range(count):
            ws = await connect(
                url,
                proxy=None,
                ping_interval=None,
                compression="deflate" if compress else None,
            )
            opened.append(ws)
            await ws.send(hello)
            while json.loads(await ws.recv())["t"] != "welcome":
                pass
        pipe.send("idle")
        await asyncio.get_running_loop().run_in_executor(None, pipe.recv)
    finally:
        await asyncio.gather(*(ws.close() for ws in opened), return_exceptions=True)


async def _harness(world: Path, compress_frames: bool) -> Any:
    from starharness.npc import ServerSettings, start_server
    from starharness.runtime.kernel import Context
    from starharness.runtime.llm import LlmConfig, LlmPlugin
    from starharness.runtime.loop import AgentsConfig, AgentsPlugin
    from starharness.runtime.prompt.plugin import PromptConfig, PromptPlugin
    from starharness.runtime.session import SessionsConfig, SessionsPlugin
    from starharness.runtime.tools import ToolsConfig, ToolsPlugin
    from starharness.voyage import GAME

    root = Context("root")
    llm = LlmConfig(provider="openai-compatible", base_url="http://127.0.0.1:9", model="none")
    rows: list[tuple[str, Any, Any]] = [
        ("sessions", SessionsPlugin(), SessionsConfig(store="memory")),
        ("llm", LlmPlugin(), llm),
        ("tools", ToolsPlugin(), ToolsConfig()),
        ("prompt", PromptPlugin(), PromptConfig()),
        ("agents", AgentsPlugin(), AgentsConfig()),
    ]
    for name, plugin, config in rows:
        await plugin.setup(root.fork(name), config)
    settings = ServerSettings(port=0, world=world, compress_frames=compress_frames)
    running = await start_server(root, GAME, settings)
    return root, running


def _rss_kb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return float(line.split()[1])
    return float("nan")


async def _round(
    url: str, count: int, compress: bool, server: Any, top: int = 0
) -> tuple[float, float]:
    """Heap and RSS growth per idle connection (bytes, KB) for one round of `count`; with
    `top`, print the lines that allocated most of it."""
    spawn = multiprocessing.get_context("spawn")
    loop = asyncio.get_running_loop()
    pipe, end = spawn.Pipe()
    gc.collect()
    heap_before = tracemalloc.get_traced_memory()[0]
    before = tracemalloc.take_snapshot() if top else None
    rss_before = _rss_kb()
    client = spawn.Process(target=_client_process, args=(url, count, compress, end), daemon=True)
    client.start()
    try:
        await loop.run_in_executor(None, pipe.recv)
        await _until(lambda: len(server.connections) >= count)
        await asyncio.sleep(0.2)  # the last welcomes' writes and timers settle
        gc.collect()
        heap = tracemalloc.get_traced_memory()[0] - heap_before
        rss = _rss_kb() - rss_before
        if before is not None:
            grown = tracemalloc.take_snapshot().compare_to(before, "lineno")
            for stat in grown[:top]:
                print(f"    {stat.size_diff / count:8.0f} B  {stat.traceback[0]}")
    finally:
        pipe.send("close")
        await loop.run_in_executor(None, client.join, 30)
    await _until(lambda: not server.connections)
    return heap / count, rss / count


async def _until(check: Callable[[], bool], wait_s: float = 60.0) -> None:
    """Poll `check` every 10 ms until it holds."""
    for _ in range(int(wait_s * 100)):
        if check():
            return
        await asyncio.sleep(0.01)
    raise TimeoutError(f"the server's connections did not settle within {wait_s:g} s")


async def _measure(args: argparse.Namespace, stock: bool) -> dict[bool, float]:
    """Median heap per idle connection (KB) for each client compression, on one server."""
    medians: dict[bool, float] = {}
    with tempfile.TemporaryDirectory() as folder:
        with _stock(stock):
            from starharness._fastio.ws import STOCK_PROTOCOL, websocket_protocol

            chosen = websocket_protocol()
            root, running = await _harness(Path(folder) / "world.db", args.compress_frames)
        name = chosen if isinstance(chosen, str) else f"{chosen.__module__}.{chosen.__name__}"
        lean_fell_back = not stock and chosen == STOCK_PROTOCOL
        print(
            f" {'stock' if stock else 'lean'}: the server runs {name}"
            + (" (the lean protocol is not tested on these releases)" if lean_fell_back else "")
        )
        try:
            for compress in (True, False):
                # Warm-up: the first use of each path (and of compression) is not counted.
                await _round(running.ws_url, 20, compress, running.server)
            tracemalloc.start()
            for compress, label in ((True, "deflate offered, as browsers do"), (False, "none")):
                heaps: list[float] = []
                rsses: list[float] = []
                for _ in range(args.rounds):
                    top = args.top if not heaps else 0
                    url = running.ws_url
                    heap, rss = await _round(url, args.connections, compress, running.server, top)
                    heaps.append(heap)
                    rsses.append(rss)
                rounds = ", ".join(f"{h / 1024:.2f}" for h in heaps)
                median_kb = statistics.median(heaps) / 1024
                medians[compress] = median_kb
                before = BEFORE_KB[compress]
                print(
                    f"  client compression {label}: heap per idle connection median "
                    f"{median_kb:.2f} KB (rounds: {rounds}); RSS growth per connection "
                    f"{rsses[0]:.1f} KB (first round); before issue 37 {before:.1f} KB "
                    f"({median_kb / before:.2f}x)"
                )
            tracemalloc.stop()
        finally:
            await running.stop()
            await root.dispose()
    return medians


async def _main(args: argparse.Namespace) -> None:
    pin(0)
    print(
        f"ws_heap: {args.connections:,} idle WebSockets (hello answered), {args.rounds} rounds; "
        f"the server {'offers' if args.compress_frames else 'does not offer'} compression; "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    stock = await _measure(args, stock=True)
    lean = await _measure(args, stock=False)
    for compress, label in ((True, "deflate offered"), (False, "no compression")):
        saving = 1 - lean[compress] / stock[compress]
        verdict = "kept" if saving >= GOAL_SAVING else "under the 20% a kept trick must win"
        print(
            f" {label}: stock {stock[compress]:.2f} KB, lean {lean[compress]:.2f} KB per idle "
            f"connection: the lean protocol saves {saving:.0%} ({verdict})"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").partition("\n")[0])
    parser.add_argument("--connections", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--top", type=int, default=0, help="print the N lines allocating most")
    parser.add_argument(
        "--compress-frames", action="store_true", help="the server offers permessage-deflate"
    )
    asyncio.run(_main(parser.parse_args()))


if __name__ == "__main__":
    main()
