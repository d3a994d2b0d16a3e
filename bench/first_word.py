"""First word on a local model: how long a player waits for an NPC's first `say.delta`.

Omega station runs in this process (the NPC server, the runtime with the `llama-cpp` provider
profile, so the decide-act-speak turn plan) against a llama.cpp server: one already running
(`--base-url`, e.g. from `star-harness models serve-local`) or one this bench starts through
the same code as `models serve-local` (`--model PATH`, with the server options below). One
scripted player talks to the NPCs over a real WebSocket:

- a **greeting** (`encounter.open`) to each NPC not met yet, and
- **warm says**: lines said in encounters already open, alternating between the open NPCs
  (two conversations, so one NPC's prompt must survive the other's turns).

For each turn it prints the first `say.delta` as the player saw it and the **server's floor**:
every request body the harness sent is recorded, and after the harness's turns the bench puts
the server back in the state the turn began from (the request sent just before the turn, again,
with max_tokens 1) and sends the request whose stream carried the first word straight to the
server, streamed, timing the first generated content or tool-call argument byte (`ttft`). The
ratio harness / ttft is the harness's share. A second floor (`plan`, with `--model`) is the
server's own compute for the turn up to the first word, from its log (llama.cpp's prompt and
generation times of the decision, then the speech request's prompt time, unless the line
began with the game's words for an offer, which the server streams before that prompt), so
harness / plan is
what the harness adds beyond the model calls its turn plan makes. A server the bench started is
restarted for the floor, so its prompt-state cache (`--cache-mb`) holds none of the harness's
prompts; against a server already running (`--base-url`) with that cache on, the floors are
lower bounds.

Goals (issue 33, 2 cores, the 1.5B development model): warm first word median < 3 s and
p90 < 6 s; a greeting to an NPC not met yet < 8 s. The load average is printed at the start and
the end: the machine is shared, and every number depends on it.

With `--model`, the bench also reads the server's own log: for each request, the prompt tokens
it evaluated (those past the prefix it reused) and the tokens it generated, with their times,
so the report says where a turn's seconds go. `--warm` lets the NPC server warm the model
server first (each NPC's static prefix and the opening of its scene, with max_tokens 1) and
waits for it, as a player arriving after the warm-up would, and reports what that costs.

`--pause S` waits S seconds between a turn's end and the next say, as a player reading the
line's end and answering does; `serve-local` uses that time (it evaluates the end of the
answer and the opening of the player's next message), so with a pause each warm say has fewer
tokens to wait for. Without it (the default) every say follows the last turn at once.

Run: uv run --group local-model python bench/first_word.py --model PATH [--says 6]
     [--npcs npc-karsk npc-brandt] [--cache-mb MB] [--n-batch N] [--warm] [--pause 2]
     or  --base-url http://127.0.0.1:8000/v1 against a server already running
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starharness.localmodel import DEFAULT_BATCH_TOKENS, DEFAULT_STATE_CACHE_MB

_HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(_HERE.parent / "tests")]  # stack_support: the runtime as the tests build it

GOAL_WARM_MEDIAN_S = 3.0
GOAL_WARM_P90_S = 6.0
GOAL_GREETING_S = 8.0
_JSON = {"content-type": "application/json"}
LINES = (
    "What do you have for sale today?",
    "How much for medical gel?",
    "Any news from Kessler's Hollow?",
    "I might need passage to Ceres Deep.",
    "What do you think of the station master?",
    "Is the fuel any good here?",
    "Tell me something I don't know.",
    "Who else should I talk to?",
)


@dataclass(slots=True)
class Sent:
    """One request body the harness sent, when, and for which session."""

    at: float
    session: str
    body: bytes


@dataclass(slots=True)
class Turn:
    kind: str
    """"greeting" (an NPC not met yet) or "warm" (a say in an open encounter)."""
    npc: str
    started: float
    first_delta_s: float | None
    turn_s: float
    requests: range
    """Indices (into the recorded bodies) of the requests sent during the turn."""
    before: int | None
    """The index of the last request sent before the turn (the state it began from)."""
    errors: list[str] = field(default_factory=list)
    first_word: int | None = None
    """The index of the request whose stream carried the first say.delta."""
    ttft_s: float | None = None
    plan_s: float | None = None
    """The server's own compute for the turn up to the first word, from its log: every earlier
    request's prompt and generation, and the first-word request's prompt."""
    steps: list[str] = field(default_factory=list)

    def phases(self, sent: list[Sent]) -> tuple[float, float, float] | None:
        """Seconds before the first request, in the requests before the first-word one, and
        from that one's sending to the first word."""
        if self.first_word is None or self.first_delta_s is None:
            return None
        first, word = sent[self.requests.start].at, sent[self.first_word].at
        heard = self.started + self.first_delta_s
        return first - self.started, word - first, heard - word


@dataclass(slots=True)
class Evaluated:
    """What the server's log says one request cost it: prompt tokens reused and evaluated."""

    reused: int | None
    """Prompt tokens found in the context or the state cache; None: none (a full evaluation)."""
    evaluated: int | None
    state_cache_hit: bool
    prompt_s: float | None = None
    """llama.cpp's own timing of the prompt evaluation (its perf lines), when printed."""
    generated: int | None = None
    generate_s: float | None = None


def _start_runtime() -> Any:
    """`start_runtime` of tests/stack_support.py (tests/ is on sys.path; pyright cannot see)."""
    return importlib.import_module("stack_support").start_runtime


def _record_requests() -> list[Sent]:
    from starharness.runtime.llm import OpenAICompatibleProvider

    sent: list[Sent] = []
    body = OpenAICompatibleProvider._body  # pyright: ignore[reportPrivateUsage]

    def recorded(provider: Any, plan: Any) -> bytes:
        data = body(provider, plan)
        sent.append(Sent(time.perf_counter(), plan.request.session_id, data))
        return data

    OpenAICompatibleProvider._body = recorded  # type: ignore[method-assign]
    return sent


def _percentile(values: Sequence[float], share: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


def _forced(body: bytes) -> str:
    choice = json.loads(body).get("tool_choice")
    name = str(choice["function"]["name"]) if isinstance(choice, dict) else "open"
    return f"{name} (begun)" if _begun(body) else name


# -- the harness's turns ------------------------------------------------------------------------


async def _play(
    ws_url: str,
    npcs: Sequence[str],
    says: int,
    sent: list[Sent],
    timeout_s: float,
    pause_s: float,
):
    from starharness.eval import scripted_player
    from starharness.npc import GameKit
    from starharness.voyage import GAME, PLAYER_ID

    turns: list[Turn] = []
    kit = GameKit.of(GAME)

    async def turn(kind: str, npc: str, run: Any) -> None:
        first = len(sent)
        started = time.perf_counter()
        played = await run
        requests = range(first, len(sent))
        found = Turn(
            kind,
            npc,
            started,
            played.first_delta_s,
            played.turn_s,
            requests,
            first - 1 if first else None,
            [str(f.get("code")) for f in played.of_type("error")],
        )
        if played.first_delta_s is not None:
            heard = started + played.first_delta_s
            before_word = [i for i in requests if sent[i].at <= heard]
            found.first_word = before_word[-1] if before_word else None
        found.steps = [_forced(sent[i].body) for i in requests]
        turns.append(found)
        word = f"{found.first_delta_s:6.2f} s" if found.first_delta_s is not None else "  none  "
        print(
            f"  {kind:8} {npc:10} first word {word}  turn {found.turn_s:6.2f} s  "
            f"requests {' > '.join(found.steps) or '-'}"
            f"{'  errors ' + ','.join(found.errors) if found.errors else ''}  load {_load()}",
            flush=True,
        )

    async with scripted_player(ws_url, kit.protocol, PLAYER_ID) as player:
        opened: list[tuple[str, str]] = []
        pending = list(npcs)
        # Meet two NPCs, then alternate says between them; the rest are greeted at the end.
        for _ in range(min(2, len(pending))):
            npc = pending.pop(0)
            encounter = f"e{len(opened) + 1}"
            await turn("greeting", npc, player.open(encounter, npc, timeout_s=timeout_s))
            opened.append((encounter, npc))
        for number in range(says):
            encounter, npc = opened[number % len(opened)]
            line = LINES[number % len(LINES)]
            await asyncio.sleep(pause_s)  # the player reads the last line's end, then answers
            await turn("warm", npc, player.say(encounter, line, timeout_s=timeout_s))
        for npc in pending:
            encounter = f"e{len(opened) + 1}"
            await turn("greeting", npc, player.open(encounter, npc, timeout_s=timeout_s))
            opened.append((encounter, npc))
    return turns


# -- the server's log -------------------------------------------------------------------------

_PREFIX = re.compile(r"Llama\.generate: (\d+) prefix-match hit, remaining (\d+) prompt tokens")


_PROMPT_TIME = re.compile(r"prompt eval time =\s*([\d.]+) ms /\s*(\d+) tokens")
_GENERATION_TIME = re.compile(r"\Weval time =\s*([\d.]+) ms /\s*(\d+) runs")


def _evaluated(log: str) -> list[Evaluated]:
    """One entry per chat completion in `log` (llama-cpp-python's verbose output), in order."""
    found: list[Evaluated] = []
    for block in log.split('"POST /v1/chat/completions')[1:]:
        match = _PREFIX.search(block)
        prompt, generation = _PROMPT_TIME.search(block), _GENERATION_TIME.search(block)
        found.append(
            Evaluated(
                int(match.group(1)) if match else None,
                int(match.group(2)) if match else None,
                # llama-cpp-python's own cache, or serve-local's (`prompt_states`).
                "_create_completion: cache hit" in block or "star-harness state restored" in block,
                float(prompt.group(1)) / 1000 if prompt else None,
                int(generation.group(2)) if generation else None,
                float(generation.group(1)) / 1000 if generation else None,
            )
        )
    return found


# -- the server's floor -------------------------------------------------------------------------


async def _post(client: Any, url: str, body: dict[str, Any], *, word: bool) -> float:
    """Send `body` streamed; seconds to its first generated byte when `word`, else to its end."""
    started = time.perf_counter()
    async with client.stream("POST", url, json=body) as response:
        response.raise_for_status()
        async for line in response.aiter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            if word and _generated(json.loads(line[6:])):
                return time.perf_counter() - started
    return time.perf_counter() - started


def _generated(chunk: dict[str, Any]) -> bool:
    for choice in chunk.get("choices") or []:
        delta = choice.get("delta") or {}
        if delta.get("content"):
            return True
        for call in delta.get("tool_calls") or []:
            if (call.get("function") or {}).get("arguments"):
                return True
    return False


async def _prime(client: Any, url: str, body: bytes) -> None:
    """Evaluate `body`'s prompt (one token generated): the state a turn after it begins from."""
    data = json.loads(body)
    data.update(stream=False, max_tokens=1)
    (await client.post(url, json=data)).raise_for_status()


def _plans(turns: list[Turn], evaluated: list[Evaluated], sent: list[Sent]) -> None:
    for turn in turns:
        if turn.first_word is None or turn.first_word >= len(evaluated):
            continue
        before = [evaluated[i] for i in range(turn.requests.start, turn.first_word)]
        # A line begun with the offer's words is streamed before its prompt is evaluated.
        begun = _begun(sent[turn.first_word].body)
        last = 0.0 if begun else evaluated[turn.first_word].prompt_s
        parts = [e.prompt_s for e in before] + [e.generate_s for e in before] + [last]
        if all(part is not None for part in parts):
            turn.plan_s = sum(part or 0.0 for part in parts)


def _begun(body: bytes) -> bool:
    """Whether the request begins the forced call for the server to continue (a last assistant
    message holding it): its first words are sent before its prompt is evaluated."""
    messages = json.loads(body).get("messages") or []
    return (
        bool(messages)
        and messages[-1].get("role") == "assistant"
        and bool(messages[-1].get("tool_calls"))
    )


async def _floors(base_url: str, turns: list[Turn], sent: list[Sent]) -> None:
    import httpx

    url = base_url.rstrip("/") + "/chat/completions"
    async with httpx.AsyncClient(timeout=600, trust_env=False) as client:
        for turn in turns:
            if turn.first_word is None:
                continue
            # Only this request: a replay of the turn's earlier ones would leave their states
            # in the server's cache, and this one would find its prompt there.
            if turn.before is not None:
                await _prime(client, url, sent[turn.before].body)
            body = json.loads(sent[turn.first_word].body)
            body["stream"] = True
            turn.ttft_s = await _post(client, url, body, word=True)
            print(
                f"  floor    {turn.npc:10} ttft {turn.ttft_s:6.2f} s  load {_load()}",
                flush=True,
            )


# -- warming the server: each NPC's static prefix ------------------------------------------------


async def _prefixes(npcs: Sequence[str]) -> list[bytes]:
    """Each NPC's warming request as the NPC server sends it (its static prefix, then the
    opening every player's scene with it shares), from the game served against the mock LLM
    playing llama.cpp: what the floor's fresh server is warmed with."""
    from starharness.mockllm import SESSION_HEADER, MockLlmServer
    from starharness.mockllm.capabilities import LLAMA_CPP
    from starharness.npc import ServerSettings, start_server
    from starharness.voyage import GAME

    with tempfile.TemporaryDirectory(prefix="first-word-prefix-") as tmp:
        async with MockLlmServer(responder=GAME.offline_responder, plays=LLAMA_CPP) as mock:
            ctx = await _start_runtime()(mock.base_url, max_attempts=1, provider="llama-cpp")
            try:
                settings = ServerSettings(port=0, world=Path(tmp) / "world.db")
                running = await start_server(ctx, GAME, settings)
                try:
                    await running.server.prefix_warmer.wait()
                finally:
                    await running.stop()
            finally:
                await ctx.dispose()
    found: list[bytes] = []
    for npc in npcs:
        first = next(
            sent.body
            for sent in mock.requests
            if sent.headers.get(SESSION_HEADER) == f"prefix-warming:{npc}"
        )
        found.append(json.dumps({**first, "stream": False}).encode())
    return found


async def _await_warming(running: Any) -> None:
    """Until the NPC server has warmed every NPC (as a player arriving after it would find)."""
    warmer = running.server.prefix_warmer
    began = time.perf_counter()
    await warmer.wait()
    print(
        f"  warm-up  the NPC server warmed {len(warmer.warmed)} NPCs (prefix and scene "
        f"opening) in {time.perf_counter() - began:6.2f} s  load {_load()}",
        flush=True,
    )


async def _warm(base_url: str, npcs: Sequence[str], bodies: list[bytes]) -> None:
    import httpx

    url = base_url.rstrip("/") + "/chat/completions"
    async with httpx.AsyncClient(timeout=600, trust_env=False) as client:
        for npc, body in zip(npcs, bodies, strict=True):
            began = time.perf_counter()
            (await client.post(url, content=body, headers=_JSON)).raise_for_status()
            print(
                f"  warm-up  {npc:10} prefix and scene opening evaluated in "
                f"{time.perf_counter() - began:6.2f} s  load {_load()}",
                flush=True,
            )


# -- the report ---------------------------------------------------------------------------------


def _median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def _report(turns: list[Turn], sent: list[Sent], evaluated: list[Evaluated] | None) -> bool:
    met = True
    for kind in ("warm", "greeting"):
        chosen = [t for t in turns if t.kind == kind and t.first_delta_s is not None]
        silent = [t for t in turns if t.kind == kind and t.first_delta_s is None]
        print(f"\n{kind} ({len(chosen)} turns spoke, {len(silent)} silent):")
        if not chosen:
            met = False
            continue
        words = [t.first_delta_s for t in chosen if t.first_delta_s is not None]
        med, p90 = statistics.median(words), _percentile(words, 0.9)
        print(f"  first say.delta  median {med:6.2f} s  p90 {p90:6.2f} s  max {max(words):6.2f} s")
        ttft = [t.ttft_s for t in chosen if t.ttft_s is not None]
        if ttft:
            ratios = [t.first_delta_s / t.ttft_s for t in chosen if t.first_delta_s and t.ttft_s]
            print(
                f"  server ttft      median {_median(ttft):6.2f} s  p90 "
                f"{_percentile(ttft, 0.9):6.2f} s   (the first-word request alone)"
            )
            print(f"  harness / ttft   median {_median(ratios):5.2f}x")
        plan = [t.plan_s for t in chosen if t.plan_s is not None]
        if plan:
            plan_ratios = [
                t.first_delta_s / t.plan_s for t in chosen if t.first_delta_s and t.plan_s
            ]
            print(
                f"  server plan      median {_median(plan):6.2f} s  p90 "
                f"{_percentile(plan, 0.9):6.2f} s   (its log: the decision, then the speech's "
                "prompt)"
            )
            print(f"  harness / plan   median {_median(plan_ratios):5.2f}x")
        phases = [p for t in chosen if (p := t.phases(sent)) is not None]
        print(
            f"  where it went (medians): {_median([p[0] for p in phases]):5.2f} s before the "
            f"first request, {_median([p[1] for p in phases]):5.2f} s in the requests before "
            f"the speech (the decision), {_median([p[2] for p in phases]):5.2f} s from the "
            "speech request to its first word"
        )
        if evaluated is not None:
            _report_tokens(chosen, sent, evaluated)
        if kind == "warm":
            ok = med < GOAL_WARM_MEDIAN_S and p90 < GOAL_WARM_P90_S
            goal = f"median < {GOAL_WARM_MEDIAN_S:g} s and p90 < {GOAL_WARM_P90_S:g} s"
        else:
            ok = max(words) < GOAL_GREETING_S
            goal = f"every greeting < {GOAL_GREETING_S:g} s"
        print(f"  goal: {goal}: {'met' if ok else 'missed'}")
        met = met and ok and not silent
    return met


def _report_tokens(chosen: list[Turn], sent: list[Sent], evaluated: list[Evaluated]) -> None:
    """Prompt tokens the server evaluated per request, by the tool the request forced."""
    by_step: dict[str, list[Evaluated]] = {}
    for turn in chosen:
        for index in turn.requests:
            if index < len(evaluated):
                by_step.setdefault(_forced(sent[index].body), []).append(evaluated[index])
    for step, seen in by_step.items():
        counted = [e.evaluated for e in seen if e.evaluated is not None]
        full = sum(1 for e in seen if e.evaluated is None)
        hits = sum(1 for e in seen if e.state_cache_hit)
        print(
            f"  {step:10} requests: prompt tokens evaluated median {_median(counted):5.0f} "
            f"(max {max(counted, default=0)}), reused median "
            f"{_median([e.reused for e in seen if e.reused is not None]):5.0f}; "
            f"{full} evaluated whole, {hits} restored from the state cache"
        )
        timed = [e for e in seen if e.prompt_s is not None and e.generate_s is not None]
        if timed:
            print(
                f"  {'':10} server time: prompt median "
                f"{_median([e.prompt_s or 0.0 for e in timed]):5.2f} s, generated tokens median "
                f"{_median([float(e.generated or 0) for e in timed]):3.0f} in "
                f"{_median([e.generate_s or 0.0 for e in timed]):5.2f} s (whole answers)"
            )


async def _main(args: argparse.Namespace) -> int:
    from starharness.localmodel import LocalModelServer, LocalServerSettings, resolve_model
    from starharness.npc import ServerSettings, TranscriptSettings, TurnSettings, start_server
    from starharness.voyage import GAME

    print(f"load average at start: {_load()} ({os.cpu_count()} cores)", flush=True)
    tmp = tempfile.TemporaryDirectory(prefix="first-word-")
    log = args.server_log or Path(tmp.name) / "server.log"
    settings: LocalServerSettings | None = None
    server: LocalModelServer | None = None
    base_url: str = args.base_url
    if args.model is not None:
        settings = LocalServerSettings(
            resolve_model(args.model), port=0, log_file=log, **_server_options(args)
        )
        server = LocalModelServer(settings)
        began = time.perf_counter()
        await server.start()
        base_url = server.base_url
        print(
            f"model server ready in {time.perf_counter() - began:.1f} s: "
            f"{' '.join(_flags(settings.command(0)))}",
            flush=True,
        )
    sent = _record_requests()
    evaluated: list[Evaluated] | None = None
    try:
        warm = await _prefixes(args.npcs) if args.warm else []
        ctx = await _start_runtime()(
            base_url, max_attempts=1, first_byte_s=args.turn_timeout, provider="llama-cpp"
        )
        try:
            running = await start_server(
                ctx,
                GAME,
                ServerSettings(
                    port=0,
                    world=Path(tmp.name) / "world.db",
                    turn=TurnSettings(timeout_s=args.turn_timeout),
                    transcripts=TranscriptSettings(keep=0),
                ),
            )
            try:
                if args.warm:
                    await _await_warming(running)
                sent.clear()
                logged = log.stat().st_size if server is not None else 0
                print(
                    f"turns ({args.says} warm says, npcs {' '.join(args.npcs)}, "
                    f"{args.pause:g} s from a turn's end to the next say):",
                    flush=True,
                )
                turns = await _play(
                    running.ws_url, args.npcs, args.says, sent, args.turn_timeout, args.pause
                )
            finally:
                await running.stop()
        finally:
            await ctx.dispose()
        if server is not None:
            await asyncio.sleep(1.0)  # the server's last lines reach its log
            with log.open("rb") as handle:
                handle.seek(logged)
                evaluated = _evaluated(handle.read().decode("utf-8", "replace"))
            # The warm-up's access line can reach the log after its size was taken: a block
            # with nothing evaluated before the first request is that line, not a request.
            while evaluated and evaluated[0].evaluated is None and evaluated[0].prompt_s is None:
                evaluated.pop(0)
            _plans(turns, evaluated, sent)
        if not args.no_floor:
            if server is not None and settings is not None and settings.state_cache_mb:
                # A fresh server: its state cache holds none of the harness's prompts.
                await server.stop()
                server = LocalModelServer(settings)
                await server.start()
                base_url = server.base_url
                print("the server's floor (a fresh server; the same bodies, sent straight):")
                if warm:
                    await _warm(base_url, args.npcs, warm)  # the state the harness began from
            else:
                print("the server's floor (the same bodies, sent straight to the server):")
            await _floors(base_url, turns, sent)
    finally:
        if server is not None:
            await server.stop()
        tmp.cleanup()
    if args.bodies is not None:
        kept = [{"session": x.session, "body": json.loads(x.body)} for x in sent]
        args.bodies.write_text(json.dumps(kept, indent=1))
    met = _report(turns, sent, evaluated)
    print(f"\nload average at end: {_load()}")
    print("all goals met" if met else "some goals missed (see above)")
    return 0 if met else 1


def _flags(command: list[str]) -> list[str]:
    """The server's flags after its model path."""
    return command[command.index("--model") + 2 :]


def _server_options(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "state_cache_mb": args.cache_mb or None,
        "batch_tokens": args.n_batch or None,
        "threads": args.threads,
        "server_command": tuple(args.server_command.split()) if args.server_command else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--model", type=Path, help="a GGUF file: the bench starts its server")
    where.add_argument("--base-url", help="a llama.cpp server already running (…/v1)")
    parser.add_argument("--says", type=int, default=6, help="warm says in all")
    parser.add_argument(
        "--npcs",
        nargs="+",
        default=["npc-karsk", "npc-brandt"],
        help="NPCs to greet (at the player's place)",
    )
    parser.add_argument("--turn-timeout", type=float, default=180.0)
    parser.add_argument(
        "--pause",
        type=float,
        default=0.0,
        help="seconds from a turn's end to the next say (a player reading, then answering); "
        "the model server works ahead between turns (serve-local's idle work)",
    )
    parser.add_argument(
        "--cache-mb",
        type=int,
        default=DEFAULT_STATE_CACHE_MB,
        help="with --model: the prompt-state cache's budget (0: off)",
    )
    parser.add_argument(
        "--n-batch", type=int, default=DEFAULT_BATCH_TOKENS, help="with --model (0: 512)"
    )
    parser.add_argument("--threads", type=int, default=None, help="with --model")
    parser.add_argument("--server-log", type=Path, help="with --model: keep its log here")
    parser.add_argument("--bodies", type=Path, help="write every request body sent here (JSON)")
    parser.add_argument(
        "--server-command",
        help="with --model: what runs the server before its flags (tests: a fake server)",
    )
    parser.add_argument(
        "--warm", action="store_true", help="first evaluate each NPC's static prefix"
    )
    parser.add_argument("--no-floor", action="store_true", help="skip the server's floor")
    args = parser.parse_args()
    if args.pause < 0:
        parser.error("--pause must be at least 0 seconds")
    if args.says < 0 or not args.npcs:
        parser.error("--says must be at least 0 and --npcs name at least one NPC")
    if args.base_url is not None and args.server_log is not None:
        parser.error("--server-log goes with --model (the bench reads the log of its server)")
    sys.exit(asyncio.run(_main(args)))


if __name__ == "__main__":
    main()
