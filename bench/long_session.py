"""A long synthetic task against the mock LLM: does context management hold up over time?

One agent runs `--turns` turns. Each turn: the user's line -> the model calls `produce(size)`
-> the tool returns `size` characters (1 KB to 64 KB, log-spaced, repeating every 20 turns,
and 2 MB twice every 100 turns) -> the model answers. Spill keeps big results out of the
context, compaction (prune, then summarize) keeps each request under the window. The mock runs
in a process of its own; this process measures its own CPU per turn (`time.process_time()`).

Printed: the largest request (the mock's prompt-token count, 4 characters a token) against the
window; client CPU per turn, median of the first 20 turns (the floor, measured in the same
run) and of the last 20, and their ratio (goal <= 1.5); compactions: count, time, tokens saved.

Run: uv run python bench/long_session.py            (120 turns, about a minute)
     uv run python bench/long_session.py --turns 500 (the full run)
Exit status: 0 goals met, 1 a goal missed, 2 the run failed.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import multiprocessing
import statistics
import sys
import tempfile
import time
from multiprocessing.queues import Queue
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from starharness.composition import profile_search_path
from starharness.mockllm import ChatRequest, MockLlmServer, ScriptedCall, Step, Success, ToolCalls
from starharness.runtime.config import Patch, load_profile, start
from starharness.runtime.context.events import COMPACTION_END, COMPACTION_SUMMARY, SPILL_STORED
from starharness.runtime.kernel import Context
from starharness.runtime.loop import AGENTS
from starharness.runtime.session import event_types as ev
from starharness.runtime.tools import TOOLS, ToolRunContext, define_tool

GOAL_CPU_RATIO = 1.5
WINDOW_TURNS = 20
_PATTERN = [int(1024 * 64 ** (i / (WINDOW_TURNS - 1))) for i in range(WINDOW_TURNS)]


def size_of(turn: int) -> int:
    if turn % 100 in (37, 87):
        return 2 * 1024 * 1024
    return _PATTERN[turn % WINDOW_TURNS]


def responder(request: ChatRequest) -> Step:
    """The synthetic model: produce on a user line, answer on a tool result, summarize."""
    first = request.messages[0].text if request.messages else ""
    if "compact the history" in first:
        return Success(text="Summary: the user asked for results of many sizes; " * 8)
    last = request.messages[-1]
    if last.role == "tool":
        return Success(text=f"Produced it ({len(last.text)} characters shown).")
    tasks = [m.text for m in request.messages if m.role == "user" and m.text.startswith("turn ")]
    turn = int(tasks[-1].split()[1].rstrip(":"))
    args = json.dumps({"size": size_of(turn)})
    return ToolCalls(calls=[ScriptedCall(id=f"p{turn}", name="produce", arguments=args)])


def _serve(ports: Queue[int], stop: Any) -> None:
    async def main() -> None:
        async with MockLlmServer(responder=responder, keep_requests=0) as mock:
            ports.put(mock.port)
            await asyncio.get_running_loop().run_in_executor(None, stop.wait)

    asyncio.run(main())


class SizeArgs(BaseModel):
    size: int


_BLOBS: dict[int, str] = {}


def blob(size: int) -> str:
    text = _BLOBS.get(size)
    if text is None:
        line = "0123456789 a line of a synthetic tool result, long enough to be realistic.\n"
        text = _BLOBS[size] = (line * (size // len(line) + 1))[:size]
    return text


def _tools(ctx: Context) -> None:
    async def produce(args: SizeArgs, run: ToolRunContext) -> str:
        return blob(args.size)

    ctx.get(TOOLS).register(define_tool("produce", "Produce `size` characters.", SizeArgs, produce))


def _patch(base_url: str, window: int, store: str, db: Path) -> Patch:
    sessions: dict[str, Any] = {"store": store}
    if store == "sqlite":
        sessions["path"] = str(db)
    return Patch.of(
        "bench",
        [
            {
                "id": "llm",
                "config": {
                    "provider": "openai-compatible",
                    "model": "mock-model",
                    "base_url": base_url,
                },
            },
            {"id": "sessions", "config": sessions},
            {"id": "agents", "merge": {"log_chunks": True}},
            {
                "id": "spill",
                "plugin": "starharness.runtime.context:SpillPlugin",
                "before": "agents",
            },
            {
                "id": "compaction",
                "plugin": "starharness.runtime.context:CompactionPlugin",
                "config": {"context_window": window},
                "before": "agents",
            },
        ],
    )


async def run(args: argparse.Namespace, base_url: str, home: Path) -> int:
    resolved = load_profile(
        "task",
        [_patch(base_url, args.window, args.store, home / "long.db")],
        search=profile_search_path(home),
        home=home,
    )
    for turn in range(WINDOW_TURNS):
        blob(size_of(turn))
    blob(2 * 1024 * 1024)
    cpu: list[float] = []
    async with await start(resolved) as runtime:
        handle = await runtime.ctx.get(AGENTS).create("long", setup=_tools)
        agent = handle.agent
        for turn in range(1, args.turns + 1):
            before = time.process_time()
            agent.followup(f"turn {turn}: produce the next result, please.")
            await agent.when_idle()
            cpu.append(time.process_time() - before)
            if args.progress and turn % 50 == 0:
                print(f"  ... turn {turn}", file=sys.stderr, flush=True)
        events = list(agent.session.events)
        await handle.dispose()
    return report(args, events, cpu)


def report(args: argparse.Namespace, events: list[Any], cpu: list[float]) -> int:
    ends = [e for e in events if e.type == ev.TURN_END]
    failed = [e for e in ends if e.data["reason"] != "completed"]
    inputs = [
        e.data["usage"]["input"]
        for e in events
        if e.type == ev.ASSISTANT_MESSAGE and e.data.get("usage")
    ]
    spills = sum(1 for e in events if e.type == SPILL_STORED)
    compactions = [e for e in events if e.type == COMPACTION_END]
    summaries = sum(1 for e in events if e.type == COMPACTION_SUMMARY)
    print(f"{args.turns} turns, {len(inputs)} requests, {spills} results spilled,")
    print(f"window {args.window} tokens, store {args.store}")
    if failed:
        print(f"FAILED: {len(failed)} turns did not complete, first: {dict(failed[0].data)}")
        return 2
    biggest = max(inputs)
    under = all(tokens < args.window for tokens in inputs)
    verdict = "yes" if under else "NO"
    print(
        f"largest request: {biggest} prompt tokens of a {args.window}-token window"
        f" ({biggest / args.window:.0%}); under the window at every turn: {verdict}"
    )
    first = statistics.median(cpu[:WINDOW_TURNS]) * 1000
    last = statistics.median(cpu[-WINDOW_TURNS:]) * 1000
    ratio = last / first
    print(
        f"client CPU per turn: first {WINDOW_TURNS} turns {first:.2f} ms (floor),"
        f" last {WINDOW_TURNS} turns {last:.2f} ms"
    )
    print(f"ratio last/first: {ratio:.2f}x (goal <= {GOAL_CPU_RATIO}x)")
    times = [e.data.get("duration_ms", 0.0) for e in compactions]
    saved = sum(e.data["tokens_before"] - e.data.get("tokens_after", 0) for e in compactions)
    if compactions:
        print(
            f"compactions: {len(compactions)} ({summaries} summarized), time per compaction:"
            f" median {statistics.median(times):.1f} ms, max {max(times):.1f} ms"
            f" (summary request included), tokens saved: {saved} in all,"
            f" {saved // len(compactions)} per compaction"
        )
    else:
        print("compactions: 0")
    return 0 if under and ratio <= GOAL_CPU_RATIO else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--turns", type=int, default=120)
    parser.add_argument("--window", type=int, default=32_000)
    parser.add_argument("--store", choices=("memory", "sqlite"), default="memory")
    parser.add_argument("--progress", action="store_true")
    args = parser.parse_args()
    if args.turns < 2 * WINDOW_TURNS:
        parser.error(f"--turns must be at least {2 * WINDOW_TURNS}")
    context = multiprocessing.get_context("spawn")
    ports: Queue[int] = context.Queue()
    stop = context.Event()
    server = context.Process(target=_serve, args=(ports, stop), daemon=True)
    server.start()
    try:
        port = ports.get(timeout=30)
        gc.collect()
        with tempfile.TemporaryDirectory() as home:
            return asyncio.run(run(args, f"http://127.0.0.1:{port}/v1", Path(home)))
    finally:
        stop.set()
        server.join(10)
        if server.is_alive():
            server.kill()


if __name__ == "__main__":
    sys.exit(main())
