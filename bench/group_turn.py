"""A group turn against the mock LLM: the harness's CPU per NPC line in a two-NPC scene against
a single-NPC turn, measured in the same run.

Two processes: the harness (this one: the runtime, the NPC server with Omega station, and one
WebSocket player) and the mock LLM (every request streams one speaking call whose line names
the other NPC at the bar). The player opens the bar scene (Jonah Karsk and Ilse Brandt) and a
plain encounter with Karsk, then, in rounds, says `--turns` lines in each:

- a **group turn**: "Karsk, any news?" in the scene; Karsk answers and names Brandt, so Brandt
  answers him (the framework's floor rule), and the server's bound (`scene.max_npc_lines`,
  default 2) returns the floor: two NPC lines, two model requests, one `encounter.idle`;
- a **single turn**: the same words in the plain encounter: one line, one request.

It prints the process CPU per NPC line of each (median over the rounds; the first round warms up
and is left out) and the ratio group / single. A group line costs a single turn's line plus what
the scene adds: routing the line, `speakerId` on each frame, the floor rule over each line, and
each NPC's `npc.heard` context (one more logged message per line). The player's client runs in
this process too, so both figures include its share. Both kinds of turn run in every round, so
both see the same noise and the same growth of their histories.

Measured on the 2-core VM (load 3.6 from other work): group 2,170 us per line, single 2,475 us,
0.88x (rounds 0.77-0.95). A group line costs less: the line answering another NPC is not a
player's say, so no lore search and no check for a spoken acceptance runs for it.

Run: uv run python bench/group_turn.py [--rounds 6] [--turns 10]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from multiprocessing.connection import Connection as Pipe
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent
# The in-process runtime the tests start lives with them.
sys.path[:0] = [str(_HERE), str(_HERE.parent / "tests")]

from cores import pin  # noqa: E402

HARNESS_CORE = 0
MOCK_CORE = 1
SCENE = "bar"
SINGLE = "karsk"
SAID = "Karsk, any news?"
LINES = {"Jonah Karsk": "Quiet week on the ring. Brandt?", "": "Ships late again. Karsk knows."}
"""What each NPC says (by a name its persona holds; "" for the other): each names the other."""


def mock_process(pipe: Pipe) -> None:
    """Serve the mock LLM until `pipe` says stop; its base URL is sent on it first."""
    pin(MOCK_CORE)
    asyncio.run(_mock(pipe))


async def _mock(pipe: Pipe) -> None:
    from starharness.mockllm import ChatRequest, MockLlmServer, ScriptedCall, Step, ToolCalls
    from starharness.voyage.actions import DEFAULT_MOOD, SPEECH

    def answer(line: str) -> ToolCalls:
        arguments = {
            SPEECH.line_field: line,
            SPEECH.mood_field: DEFAULT_MOOD,
            SPEECH.options_field: [],
        }
        call = ScriptedCall(name=SPEECH.tool_name, arguments=json.dumps(arguments))
        return ToolCalls(calls=[call], fragment_size=16)

    karsk, other = answer(LINES["Jonah Karsk"]), answer(LINES[""])

    def respond(request: ChatRequest) -> Step:
        system = "".join(m.text for m in request.messages if m.role == "system")
        return karsk if "Jonah Karsk" in system else other

    async with MockLlmServer(responder=respond, keep_requests=0) as mock:
        pipe.send(mock.base_url)
        await asyncio.get_running_loop().run_in_executor(None, pipe.recv)


class _Player:
    """One WebSocket client speaking frames as dicts."""

    def __init__(self, connection: Any) -> None:
        self._connection = connection

    async def send(self, frame: dict[str, Any]) -> None:
        await self._connection.send_text(json.dumps(frame))

    async def until_idle(self, encounter_id: str) -> list[dict[str, Any]]:
        frames: list[dict[str, Any]] = []
        while True:
            frame: dict[str, Any] = json.loads(await self._connection.receive_text(60))
            frames.append(frame)
            if frame["t"] == "error":
                raise RuntimeError(f"the server answered with an error: {frame}")
            if frame["t"] == "encounter.idle" and frame["id"] == encounter_id:
                return frames

    async def turn(self, encounter_id: str) -> int:
        """Say the line; the NPC lines that answered it."""
        await self.send({"t": "encounter.say", "id": encounter_id, "text": SAID})
        return sum(1 for f in await self.until_idle(encounter_id) if f["t"] == "say.end")


async def _block(player: _Player, encounter_id: str, turns: int) -> tuple[float, int]:
    """CPU seconds and NPC lines of `turns` turns in one encounter."""
    begun = time.process_time()
    lines = 0
    for _ in range(turns):
        lines += await player.turn(encounter_id)
    return time.process_time() - begun, lines


async def _main(rounds: int, turns: int) -> None:
    from starharness.npc import LimitsSettings, ServerSettings, TranscriptSettings, start_server
    from starharness.npc.client import connect
    from starharness.npc.server import tune_gc_for_serving
    from starharness.voyage import GAME
    from starharness.voyage.content import DOCK_MASTER, PLAYER_ID, SMUGGLER

    start_runtime = importlib.import_module("stack_support").start_runtime
    pin(HARNESS_CORE)
    spawn = multiprocessing.get_context("spawn")
    mock_pipe, mock_end = spawn.Pipe()
    mock = spawn.Process(target=mock_process, args=(mock_end,), daemon=True)
    mock.start()
    loop = asyncio.get_running_loop()
    mock_url: str = await loop.run_in_executor(None, mock_pipe.recv)
    ctx = await start_runtime(mock_url, first_byte_s=60)
    limits = LimitsSettings(says_per_second=1000, say_burst=1000)
    group: list[float] = []
    single: list[float] = []
    counted: list[tuple[int, int]] = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            settings = ServerSettings(
                port=0,
                world=Path(tmp) / "world.db",
                limits=limits,
                transcripts=TranscriptSettings(keep=0),
            )
            running = await start_server(ctx, GAME, settings)
            try:
                async with connect(running.ws_url, open_timeout=60) as connection:
                    player = _Player(connection)
                    await player.send({"t": "hello", "playerId": PLAYER_ID})
                    await player.send(
                        {
                            "t": "encounter.open",
                            "id": SCENE,
                            "npcId": SMUGGLER,
                            "npcIds": [SMUGGLER, DOCK_MASTER],
                            "playerId": PLAYER_ID,
                        }
                    )
                    await player.until_idle(SCENE)
                    single_open = {"t": "encounter.open", "id": SINGLE, "npcId": SMUGGLER}
                    await player.send({**single_open, "playerId": PLAYER_ID})
                    await player.until_idle(SINGLE)
                    tune_gc_for_serving()  # as `serve` and `play` do once they are up
                    for index in range(rounds + 1):
                        scene_cpu, scene_lines = await _block(player, SCENE, turns)
                        single_cpu, single_lines = await _block(player, SINGLE, turns)
                        if index == 0:
                            continue  # warm-up: first use of every code path
                        group.append(scene_cpu / max(1, scene_lines))
                        single.append(single_cpu / max(1, single_lines))
                        counted.append((scene_lines, single_lines))
            finally:
                await running.stop()
    finally:
        await ctx.dispose()
        mock_pipe.send(None)
        mock.join(10)
    _report(group, single, counted, turns)


def _report(
    group: list[float], single: list[float], counted: list[tuple[int, int]], turns: int
) -> None:
    scene_lines = sum(lines for lines, _ in counted)
    single_lines = sum(lines for _, lines in counted)
    expected = 2 * turns * len(counted)
    load = os.getloadavg()[0]
    print(f"group turn against the mock LLM, load average {load:.1f} on {os.cpu_count()} cores")
    print(
        f"  {len(counted)} rounds of {turns} turns each (after one warm-up round): "
        f"{scene_lines} scene lines ({'ok' if scene_lines == expected else 'expected'} "
        f"{expected}: two NPC lines per group turn), {single_lines} single-NPC lines"
    )
    group_us = statistics.median(group) * 1e6
    single_us = statistics.median(single) * 1e6
    print(f"  group turn:  CPU per NPC line {group_us:8.0f} us (median of the rounds)")
    print(f"  single turn: CPU per NPC line {single_us:8.0f} us (median of the rounds)")
    each = ", ".join(f"{g / s:.2f}" for g, s in zip(group, single, strict=True))
    print(f"ratio group/single: CPU per NPC line {group_us / single_us:.2f}x (rounds: {each})")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").partition("\n")[0])
    parser.add_argument("--rounds", type=int, default=6, help="measured rounds (one more warms)")
    parser.add_argument("--turns", type=int, default=10, help="turns of each kind per round")
    args = parser.parse_args()
    if args.rounds < 1 or args.turns < 1:
        parser.error("--rounds and --turns must be at least 1")
    asyncio.run(_main(args.rounds, args.turns))


if __name__ == "__main__":
    main()
