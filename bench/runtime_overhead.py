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
`time.process_time()` deltas, wall p50/p99 per turn. Memory per idle agent is measured with
tracemalloc over `--agents` agents, each with the tool registered on its own layer.

Run: uv run python bench/runtime_overhead.py [--turns 1000] [--concurrency 1 50] [--quick]
Exit status: 0 goals met, 1 a goal missed, 2 a run failed its checks.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import multiprocessing
import os
import platform
import signal
import sys
import tempfile
import time
import tracemalloc
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass
from multiprocessing.queues import Queue
from multiprocessing.sharedctypes import Synchronized
from pathlib import Path
from typing import Any, TypeVar

import httpx
from pydantic import BaseModel

from starharness.app import profile_search_path
from starharness.mockllm import ChatRequest, MockLlmServer, Success, ToolCall, ToolCalls
from starharness.runtime.config import Patch, load_profile, start
from starharness.runtime.kernel import Context
from starharness.runtime.llm.types import UserMessage
from starharness.runtime.loop import AgentHandle
from starharness.runtime.session import event_types as ev
from starharness.runtime.tools import ToolDefinition, ToolRunContext, define_tool

GOAL_RATIO = 1.30
GOAL_AGENT_BYTES = 60 * 1024

MODEL = "mock-model"
SYSTEM = "You are an AI agent powered by star-harness."
"""The `task` profile's only system section; the floor sends the same text."""
PROMPT = "Greet the traveller who just walked in and offer them something."
SPEAK_ARGUMENTS = json.dumps(
    {
        "line": (
            "Welcome back, traveller. The weather turned while you were out on the ridge, so "
            "the kitchen kept a bowl of stew warm for you. Sit by the fire, dry your boots, and "
            "tell me whether you found the old mill before the rain came down."
        ),
        "mood": "warm",
        "options": ["Tell her about the mill", "Ask about the stew"],
    }
)
SPEAK_DESCRIPTION = "Say one line to the player, with a mood and reply options."
TOOL_RESULT = "said"
REPLY = "ok"


# -- the tool, as both variants run it ---------------------------------------------------------


class SpeakArgs(BaseModel):
    line: str
    mood: str
    options: list[str]


FLOOR_TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "speak",
            "description": SPEAK_DESCRIPTION,
            "parameters": {
                "properties": {
                    "line": {"type": "string"},
                    "mood": {"type": "string"},
                    "options": {"items": {"type": "string"}, "type": "array"},
                },
                "required": ["line", "mood", "options"],
                "type": "object",
            },
        },
    }
]
"""What the floor offers: written out by hand; the pre-flight check compares it with the loop's."""


class SpeakCounter:
    """Counts tool runs, so each variant can prove its tool ran exactly once per turn."""

    def __init__(self) -> None:
        self.calls = 0


def speak_tool(counter: SpeakCounter) -> ToolDefinition[SpeakArgs]:
    """The loop's tool, defined once per process: every agent registers this one object."""

    async def speak(args: SpeakArgs, run: ToolRunContext) -> str:
        counter.calls += 1
        return TOOL_RESULT

    return define_tool("speak", SPEAK_DESCRIPTION, SpeakArgs, speak)


# -- the mock LLM (its own process) ------------------------------------------------------------


_served: Any = None
"""In the mock process: the shared request counter."""
_TOOL_STEP: ToolCalls | None = None
_TEXT_STEP = Success(text=REPLY)


def _respond(request: ChatRequest) -> ToolCalls | Success:
    """Every conversation: a tool call for a user message, "ok" after the tool result."""
    if _served is not None:
        _served.value += 1
    assert _TOOL_STEP is not None
    return _TEXT_STEP if request.last_message.role == "tool" else _TOOL_STEP


def _set_tool_step(fragment_size: int) -> None:
    global _TOOL_STEP
    _TOOL_STEP = ToolCalls(
        calls=[ToolCall(name="speak", arguments=SPEAK_ARGUMENTS)], fragment_size=fragment_size
    )


def _pin(core: int) -> None:
    cores = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cores[core % len(cores)]})


def _serve(ports: Queue[int], served: Any, fragment_size: int) -> None:
    global _served
    _pin(0)
    _served = served
    _set_tool_step(fragment_size)
    asyncio.run(_serve_async(ports))


async def _serve_async(ports: Queue[int]) -> None:
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    async with MockLlmServer(responder=_respond) as mock:
        ports.put(mock.port)
        while not stop.is_set():
            # The mock records every request; nothing here reads them, so keep its heap small.
            mock.requests.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), 1.0)


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# -- the floor: bare httpx ---------------------------------------------------------------------


class FloorSession:
    """One conversation as bare code keeps it: headers and the message list."""

    __slots__ = ("headers", "messages", "ok_turns")

    def __init__(self, session_id: str) -> None:
        self.headers = {
            "accept": "text/event-stream",
            "content-type": "application/json",
            "X-Star-Harness-Session": session_id,
        }
        self.messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}]
        self.ok_turns = 0


async def floor_request(
    client: httpx.AsyncClient, url: str, session: FloorSession
) -> tuple[str, list[list[str]]]:
    """One streamed request: the text and the tool calls ([id, name, arguments]) it returned."""
    body = json.dumps(
        {
            "model": MODEL,
            "messages": session.messages,
            "tools": FLOOR_TOOLS,
            "tool_choice": "auto",
            "stream": True,
            "stream_options": {"include_usage": True},
        },
        separators=(",", ":"),
        ensure_ascii=False,
    ).encode()
    text: list[str] = []
    calls: list[list[str]] = []
    async with client.stream("POST", url, content=body, headers=session.headers) as response:
        if response.status_code != 200:
            raise RuntimeError(f"mock answered {response.status_code}")
        # Read to the end (past [DONE]) so the connection goes back to the pool.
        async for line in response.aiter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            choices = json.loads(line[6:])["choices"]
            if not choices:
                continue
            delta = choices[0]["delta"]
            content = delta.get("content")
            if content:
                text.append(content)
            for call in delta.get("tool_calls") or ():
                index = call["index"]
                if index == len(calls):
                    calls.append([call.get("id") or "", call["function"].get("name") or "", ""])
                calls[index][2] += call["function"].get("arguments") or ""
    return "".join(text), calls


async def _floor_speak(args: dict[str, Any], counter: SpeakCounter) -> str:
    if not isinstance(args.get("line"), str):
        raise ValueError("speak needs a line")
    counter.calls += 1
    return TOOL_RESULT


async def floor_turn(
    client: httpx.AsyncClient, url: str, session: FloorSession, counter: SpeakCounter
) -> None:
    messages = session.messages
    messages.append({"role": "user", "content": PROMPT})
    text, calls = await floor_request(client, url, session)
    messages.append(
        {
            "role": "assistant",
            "content": text or None,
            "tool_calls": [
                {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}
                for cid, name, args in calls
            ],
        }
    )
    for call_id, _name, arguments in calls:
        result = await _floor_speak(json.loads(arguments), counter)
        messages.append({"role": "tool", "tool_call_id": call_id, "content": result})
    reply, more = await floor_request(client, url, session)
    messages.append({"role": "assistant", "content": reply})
    if len(calls) == 1 and reply == REPLY and not more:
        session.ok_turns += 1


def floor_client() -> httpx.AsyncClient:
    # The same pool limits as the provider's own client, so neither side churns connections.
    return httpx.AsyncClient(
        limits=httpx.Limits(max_connections=200, max_keepalive_connections=100)
    )


# -- the loop ----------------------------------------------------------------------------------


def loop_patch(base_url: str) -> Patch:
    return Patch.of(
        "bench",
        [
            {
                "id": "llm",
                "config": {"provider": "openai-compatible", "model": MODEL, "base_url": base_url},
            },
            {"id": "sessions", "config": {"store": "memory"}},
        ],
    )


def _registrar(tool: ToolDefinition[SpeakArgs]) -> Callable[[Context], None]:
    def setup(agent_ctx: Context) -> None:
        agent_ctx.tools.register(tool)

    return setup


async def loop_turn(handle: AgentHandle) -> None:
    agent = handle.agent
    agent.followup(UserMessage(PROMPT))
    await agent.when_idle()


def loop_ok_turns(handle: AgentHandle) -> int:
    """Turns that completed with one successful tool call and the reply "ok"."""
    ok = 0
    tools_ok = 0
    last_text = None
    for event in handle.agent.session.events:
        if event.type == ev.TOOL_RESULT:
            tools_ok += 0 if event.data["is_error"] else 1
        elif event.type == ev.ASSISTANT_MESSAGE:
            last_text = event.data["text"]
        elif event.type == ev.TURN_END:
            if event.data["reason"] == "completed" and tools_ok == 1 and last_text == REPLY:
                ok += 1
            tools_ok, last_text = 0, None
    return ok


# -- driving turns -----------------------------------------------------------------------------

S = TypeVar("S")


@dataclass(slots=True)
class CellResult:
    variant: str
    concurrency: int
    turns: int
    ok_turns: int
    tool_runs: int
    wall_s: float
    cpu_s: float
    p50_ms: float
    p99_ms: float
    requests: int = 0
    mock_cpu_s: float = 0.0
    gc_s: float = 0.0

    @property
    def cpu_per_turn_ms(self) -> float:
        return self.cpu_s / self.turns * 1000

    @property
    def turns_per_s(self) -> float:
        return self.turns / self.wall_s


def _plan(turns: int, per_session: int) -> list[int]:
    """Turns of each session: full sessions of `per_session`, the last one possibly shorter."""
    counts = [per_session] * (turns // per_session)
    if turns % per_session:
        counts.append(turns % per_session)
    return counts


@dataclass(frozen=True, slots=True)
class MockProbe:
    """Reads the mock process's request counter and CPU time from the client side."""

    pid: int
    served: Any

    def sample(self) -> tuple[int, float]:
        return int(self.served.value), _cpu_seconds(self.pid)


@dataclass(slots=True)
class Timed:
    latencies: list[float]
    wall_s: float
    cpu_s: float
    requests: int
    mock_cpu_s: float
    gc_s: float


class GcClock:
    """CPU time spent in the garbage collector while installed (part of the measured CPU)."""

    def __init__(self) -> None:
        self.spent = 0.0
        self._began = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._began = time.process_time()
        else:
            self.spent += time.process_time() - self._began


async def drive(
    sessions: Sequence[S],
    counts: Sequence[int],
    concurrency: int,
    turn: Callable[[S], Awaitable[None]],
    probe: MockProbe | None = None,
) -> Timed:
    """Run every session's turns, `concurrency` sessions at a time, and time them."""
    queue = deque(zip(sessions, counts, strict=True))
    latencies: list[float] = []
    clock = time.perf_counter

    async def worker() -> None:
        while queue:
            session, count = queue.popleft()
            for _ in range(count):
                began = clock()
                await turn(session)
                latencies.append(clock() - began)

    gc.collect()
    gc_clock = GcClock()
    requests, mock_cpu = probe.sample() if probe is not None else (0, 0.0)
    gc.callbacks.append(gc_clock)
    cpu, wall = time.process_time(), clock()
    try:
        async with asyncio.TaskGroup() as group:
            for _ in range(concurrency):
                group.create_task(worker())
    finally:
        wall, cpu = clock() - wall, time.process_time() - cpu
        gc.callbacks.remove(gc_clock)
    if probe is not None:
        after_requests, after_cpu = probe.sample()
        requests, mock_cpu = after_requests - requests, after_cpu - mock_cpu
    return Timed(latencies, wall, cpu, requests, mock_cpu, gc_clock.spent)


def _percentile(values: Sequence[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


@dataclass(frozen=True, slots=True)
class Settings:
    turns: int
    warmup: int
    turns_per_session: int
    concurrency: tuple[int, ...]
    agents: int
    fragment_size: int
    repeat: int


def _cell_result(
    variant: str, concurrency: int, turns: int, ok: int, tools: int, t: Timed
) -> CellResult:
    return CellResult(
        variant,
        concurrency,
        turns,
        ok,
        tools,
        t.wall_s,
        t.cpu_s,
        _percentile(t.latencies, 0.5) * 1000,
        _percentile(t.latencies, 0.99) * 1000,
        t.requests,
        t.mock_cpu_s,
        t.gc_s,
    )


async def _floor_cell(base_url: str, s: Settings, concurrency: int, probe: MockProbe) -> CellResult:
    url = base_url + "/chat/completions"
    counter = SpeakCounter()
    async with floor_client() as client:

        async def turn(session: FloorSession) -> None:
            await floor_turn(client, url, session, counter)

        warm_counts = _plan(s.warmup, 1)
        warm = [FloorSession(f"floor-warm-{i}") for i in range(len(warm_counts))]
        await drive(warm, warm_counts, concurrency, turn)
        runs_before = counter.calls
        counts = _plan(s.turns, s.turns_per_session)
        sessions = [FloorSession(f"floor-{i}") for i in range(len(counts))]
        timed = await drive(sessions, counts, concurrency, turn, probe)
    ok = sum(x.ok_turns for x in sessions)
    return _cell_result("floor", concurrency, s.turns, ok, counter.calls - runs_before, timed)


async def _loop_cell(
    base_url: str, s: Settings, concurrency: int, probe: MockProbe, home: Path
) -> CellResult:
    resolved = load_profile(
        "task", [loop_patch(base_url)], search=profile_search_path(home), home=home
    )
    counter = SpeakCounter()
    setup = _registrar(speak_tool(counter))
    async with await start(resolved) as runtime:
        agents = runtime.ctx.agents
        warm_counts = _plan(s.warmup, 1)
        warm = [await agents.create(f"loop-warm-{i}", setup=setup) for i in range(len(warm_counts))]
        await drive(warm, warm_counts, concurrency, loop_turn)
        runs_before = counter.calls
        counts = _plan(s.turns, s.turns_per_session)
        handles = [await agents.create(f"loop-{i}", setup=setup) for i in range(len(counts))]
        timed = await drive(handles, counts, concurrency, loop_turn, probe)
        ok = sum(loop_ok_turns(h) for h in handles)
    return _cell_result("loop", concurrency, s.turns, ok, counter.calls - runs_before, timed)


def _cell_process(
    variant: str,
    base_url: str,
    s: Settings,
    concurrency: int,
    probe: MockProbe,
    out: Queue[dict[str, Any]],
) -> None:
    _pin(1)
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        os.environ["STAR_HARNESS_HOME"] = tmp
        if variant == "floor":
            result = asyncio.run(_floor_cell(base_url, s, concurrency, probe))
        else:
            result = asyncio.run(_loop_cell(base_url, s, concurrency, probe, home))
    out.put(asdict(result))


# -- memory per idle agent ---------------------------------------------------------------------


async def _memory(base_url: str, s: Settings, home: Path) -> dict[str, Any]:
    resolved = load_profile(
        "task", [loop_patch(base_url)], search=profile_search_path(home), home=home
    )
    counter = SpeakCounter()
    tool = speak_tool(counter)
    setup = _registrar(tool)
    async with await start(resolved) as runtime:
        agents = runtime.ctx.agents
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
        shared = all(h.agent.ctx.tools.schemas() == (tool.schema,) for h in handles)
        shared = shared and all(h.agent.ctx.tools.schemas()[0] is tool.schema for h in handles)
        ok = sum(loop_ok_turns(h) for h in handles)
    return {
        "agents": s.agents,
        "idle_bytes": idle / s.agents,
        "after_turn_bytes": after_turn / s.agents,
        "create_ms": create_cpu / s.agents * 1000,
        "shared": shared,
        "ok_turns": ok,
    }


def _memory_process(base_url: str, s: Settings, out: Queue[dict[str, Any]]) -> None:
    _pin(1)
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["STAR_HARNESS_HOME"] = tmp
        out.put(asyncio.run(_memory(base_url, s, Path(tmp))))


# -- the pre-flight check: both variants send the same requests ---------------------------------


def _normalised(body: Any) -> Any:
    """A recorded request body with tool-call ids renamed in order of appearance."""
    names: dict[str, str] = {}

    def rename(call_id: str) -> str:
        return names.setdefault(call_id, f"call-{len(names)}")

    messages = []
    for message in body["messages"]:
        message = dict(message)
        if message.get("tool_calls"):
            message["tool_calls"] = [
                {**call, "id": rename(call["id"])} for call in message["tool_calls"]
            ]
        if "tool_call_id" in message:
            message["tool_call_id"] = rename(message["tool_call_id"])
        messages.append(message)
    return {**body, "messages": messages}


async def check_same_requests(fragment_size: int, home: Path) -> str | None:
    """Two turns of one session through each variant; None when the requests match."""
    _set_tool_step(fragment_size)
    async with MockLlmServer(responder=_respond) as mock:
        counter = SpeakCounter()
        async with floor_client() as client:
            session = FloorSession("check-floor")
            for _ in range(2):
                await floor_turn(client, mock.base_url + "/chat/completions", session, counter)
        resolved = await asyncio.to_thread(
            load_profile,
            "task",
            [loop_patch(mock.base_url)],
            search=profile_search_path(home),
            home=home,
        )
        async with await start(resolved) as runtime:
            handle = await runtime.ctx.agents.create(
                "check-loop", setup=_registrar(speak_tool(counter))
            )
            for _ in range(2):
                await loop_turn(handle)
        floor = [_normalised(r.body) for r in mock.requests_for("check-floor")]
        loop = [_normalised(r.body) for r in mock.requests_for("check-loop")]
    if len(floor) != 4 or len(loop) != 4:
        return f"expected 4 requests each, floor sent {len(floor)} and the loop {len(loop)}"
    for index, (a, b) in enumerate(zip(floor, loop, strict=True)):
        if a != b:
            return f"request {index + 1} differs:\n  floor {json.dumps(a)}\n  loop  {json.dumps(b)}"
    if session.ok_turns != 2 or counter.calls != 4:
        return "the check conversation did not complete its turns"
    return None


# -- orchestration -----------------------------------------------------------------------------


def _run_in_process(target: Callable[..., None], *args: Any) -> dict[str, Any]:
    context = multiprocessing.get_context("spawn")
    out: Queue[dict[str, Any]] = context.Queue()
    process = context.Process(target=target, args=(*args, out), daemon=True)
    process.start()
    try:
        return out.get(timeout=600)
    finally:
        process.join(30)


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


def _passed(c: CellResult) -> bool:
    return c.ok_turns == c.turns and c.tool_runs == c.turns and c.requests == 2 * c.turns


def _median(runs: list[CellResult], variant: str, concurrency: int) -> CellResult:
    """The run of a cell with the median CPU per turn."""
    mine = sorted(
        (r for r in runs if r.variant == variant and r.concurrency == concurrency),
        key=lambda r: r.cpu_per_turn_ms,
    )
    return mine[(len(mine) - 1) // 2]


def _spread(runs: list[CellResult], cell: CellResult) -> str:
    mine = [
        r.cpu_per_turn_ms
        for r in runs
        if r.variant == cell.variant and r.concurrency == cell.concurrency
    ]
    return f"{min(mine):.3f}-{max(mine):.3f}" if len(mine) > 1 else "-"


def _print_cells(cells: list[CellResult], runs: list[CellResult]) -> None:
    repeat = len(runs) // len(cells)
    print(
        f"  {'variant':8s} {'conc':>4s} {'wall p50 ms':>11s} {'wall p99 ms':>11s} "
        f"{'CPU/turn ms':>11s} {f'(of {repeat} runs)':>13s} {'of it GC':>8s} {'turns/s':>8s} "
        f"{'client CPU':>10s} {'mock CPU':>8s}  checks"
    )
    for c in cells:
        mine = [r for r in runs if r.variant == c.variant and r.concurrency == c.concurrency]
        checks = "ok" if all(_passed(r) for r in mine) else "FAILED"
        checks += f" ({c.ok_turns}/{c.turns} turns, {c.tool_runs} tool runs, {c.requests} requests)"
        print(
            f"  {c.variant:8s} {c.concurrency:4d} {c.p50_ms:11.2f} {c.p99_ms:11.2f} "
            f"{c.cpu_per_turn_ms:11.3f} {_spread(runs, c):>13s} {c.gc_s / c.turns * 1000:8.3f} "
            f"{c.turns_per_s:8.0f} {c.cpu_s / c.wall_s:10.0%} {c.mock_cpu_s / c.wall_s:8.0%}  "
            f"{checks}"
        )


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
    args = parser.parse_args()
    s = _settings(args)

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["STAR_HARNESS_HOME"] = tmp
        mismatch = asyncio.run(check_same_requests(s.fragment_size, Path(tmp)))

    context = multiprocessing.get_context("spawn")
    ports: Queue[int] = context.Queue()
    served: Synchronized[int] = context.Value("q", 0)  # type: ignore[assignment]
    mock = context.Process(target=_serve, args=(ports, served, s.fragment_size), daemon=True)
    mock.start()
    runs: list[CellResult] = []
    try:
        base_url = f"http://127.0.0.1:{ports.get(timeout=60)}/v1"
        assert mock.pid is not None
        probe = MockProbe(mock.pid, served)
        # Floor and loop alternate, so a change in the machine's load touches both alike.
        for _ in range(s.repeat):
            for concurrency in s.concurrency:
                for variant in ("floor", "loop"):
                    found = _run_in_process(_cell_process, variant, base_url, s, concurrency, probe)
                    runs.append(CellResult(**found))
        memory = _run_in_process(_memory_process, base_url, s)
    finally:
        mock.terminate()
        mock.join(10)

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
    cells = [_median(runs, variant, c) for c in s.concurrency for variant in ("floor", "loop")]
    _print_cells(cells, runs)
    broken = mismatch is not None
    broken = broken or not all(_passed(c) for c in runs)
    met = True
    for concurrency in s.concurrency:
        floor = next(c for c in cells if c.variant == "floor" and c.concurrency == concurrency)
        loop = next(c for c in cells if c.variant == "loop" and c.concurrency == concurrency)
        ratio = loop.cpu_per_turn_ms / floor.cpu_per_turn_ms
        p50 = loop.p50_ms / floor.p50_ms
        verdict = "met" if ratio <= GOAL_RATIO else "NOT met"
        met = met and ratio <= GOAL_RATIO
        print(
            f"ratio loop/floor at concurrency {concurrency}: CPU per turn {ratio:.2f}x "
            f"(loop {loop.cpu_per_turn_ms:.3f} ms, floor {floor.cpu_per_turn_ms:.3f} ms; "
            f"+{loop.cpu_per_turn_ms - floor.cpu_per_turn_ms:.3f} ms), wall p50 {p50:.2f}x; "
            f"goal <= {GOAL_RATIO:.2f}x: {verdict}"
        )
    idle = memory["idle_bytes"]
    memory_met = idle < GOAL_AGENT_BYTES and memory["shared"]
    met = met and memory_met
    broken = broken or memory["ok_turns"] != memory["agents"]
    print(
        f"memory per idle agent: {idle / 1024:.1f} KB ({memory['agents']} agents, tool on each "
        f"agent's own layer, schema shared: {'yes' if memory['shared'] else 'NO'}); "
        f"goal < {GOAL_AGENT_BYTES // 1024} KB: {'met' if memory_met else 'NOT met'}"
    )
    print(
        f"  after one turn each: {memory['after_turn_bytes'] / 1024:.1f} KB per agent (session "
        f"log in memory included); creating an agent: {memory['create_ms']:.3f} ms CPU"
    )
    if broken:
        print("a run FAILED its checks: the numbers above are not comparable")
        sys.exit(2)
    sys.exit(0 if met else 1)


if __name__ == "__main__":
    main()
