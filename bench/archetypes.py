"""Archetype presets against per-encounter registration: heap and setup CPU per open encounter.

One process: the runtime, the NPC server and the tiny test game with 500 NPCs across five
archetypes (each its own actions and rules), all in one place with one player. Encounters are
opened in process through `Encounter.open` (the world's meeting checks, the agent and its
session, everything but the WebSocket), round-robin over the NPCs, in two ways measured in the
same run:

- presets (what the server does): each archetype's tools, protocol, rules, turn plan and the
  encounter listeners live once in a shared layer; an encounter registers its persona, scene
  and binding;
- per encounter (the floor, what every encounter did before presets): the same tools,
  sections, plan and listeners registered again on every encounter's own agent layer.

It prints, for each way, the Python heap per open encounter (tracemalloc, after a collection)
and the setup CPU per encounter (median of the rounds, tracemalloc off): the whole open (the
world's reads included) and, of it, creating the agent (where registration happens); then
the ratios.
Goals (issue 20): heap under a third of the 44 KB per encounter bench/encounters.py measured
before presets (that figure includes each encounter's WebSocket; this bench opens none, so it
prints only an estimate and bench/encounters.py judges that goal), and setup CPU at most half
the floor's (judged here).

Measured on the 2-core VM (load 3-5 from other work), after the meeting's reads came to share
one read transaction (docs/npc-framework.md): presets 129-154 us per open (creating the agent
50-61), the floor 149-173 (70-84), 0.85-0.94x; before, 253-283 against 278-305, 0.90-0.97x.
Presets save only the floor's registrations (about 20 us), so the CPU goal needs a whole open
with presets of about 20 us: the world's reads, the session and the agent cost more than that.

Run: uv run python bench/archetypes.py [--npcs 500] [--archetypes 5] [--encounters 1000]
     [--rounds 9]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent
_TESTS = _HERE.parent / "tests"
# The tiny test game and the shared in-process runtime live with the tests.
sys.path[:0] = [str(_HERE), str(_TESTS / "npc"), str(_TESTS)]

from cores import pin  # noqa: E402
from vendors import populate  # noqa: E402

BEFORE_KB_PER_ENCOUNTER = 44.0
"""bench/encounters.py's heap per open encounter before presets (WebSocket included)."""
GOAL_HEAP_SHARE = 1 / 3
GOAL_CPU_RATIO = 0.5
_RULES = (
    "Your kind keeps its word and its ledger; a deal is a deal once it is done.",
    "Your kind bakes to order and says when the oven is cold.",
    "Your kind only talks: it has nothing to sell, only news and opinions.",
    "Your kind trades in everything and haggles over everything.",
    "Your kind is new in town and careful with strangers.",
)
_ACTIONS: tuple[tuple[str, ...] | None, ...] = (("sell_bread",), ("bake",), (), None, None)


def _game(archetypes: int) -> Any:
    from starharness.npc import Archetype

    game = importlib.import_module("tinygame").GAME

    kinds = tuple(
        Archetype(f"kind-{i}", actions=_ACTIONS[i % len(_ACTIONS)], sections=(_RULES[i % 5],))
        for i in range(archetypes)
    )
    # The world's calls on the event loop, as the sample game ships (Game.world_calls_inline);
    # no memory written on close: closing is not what is measured.
    return replace(game, archetypes=kinds, world_calls_inline=True, on_encounter_end=None)


def _per_encounter_class() -> type[Any]:
    """An encounter that registers everything on its own layer, as before presets."""
    from starharness.npc.actions import ENCOUNTER, EncounterBinding
    from starharness.npc.encounter import Encounter
    from starharness.npc.encounter.encounter import PERSONA_ORDER, PERSONA_SECTION, SCENE_CONTEXT
    from starharness.npc.encounter.plans import TURN_PLAN
    from starharness.npc.encounter.presets import (
        ARCHETYPE_ORDER,
        ARCHETYPE_SECTION,
        IDENTITY_ORDER,
        IDENTITY_SECTION,
        PROTOCOL_ORDER,
        PROTOCOL_SECTION,
    )
    from starharness.runtime.kernel import Context
    from starharness.runtime.loop import AGENTS, REQUEST, SESSION_EVENT
    from starharness.runtime.prompt import PROMPT
    from starharness.runtime.tools import TOOL_POST_EXECUTE, TOOLS

    class PerEncounter(Encounter):
        async def _create_agent(self) -> None:
            host = self._host  # pyright: ignore[reportPrivateUsage]
            preset = self.preset
            kit = preset.kit
            binding = EncounterBinding(
                host.world,
                self.npc.id,
                self.player_id,
                self._on_attempt,  # pyright: ignore[reportPrivateUsage]
                calls=self._calls,  # pyright: ignore[reportPrivateUsage]
            )

            def setup(layer: Context) -> None:
                prompt = layer.get(PROMPT)
                prompt.section(IDENTITY_SECTION, IDENTITY_ORDER, "")
                prompt.section(PROTOCOL_SECTION, PROTOCOL_ORDER, kit.protocol_text)
                if kit.shared_text:
                    prompt.section(ARCHETYPE_SECTION, ARCHETYPE_ORDER, kit.shared_text)
                prompt.section(PERSONA_SECTION, PERSONA_ORDER, self.npc.persona)
                prompt.context(SCENE_CONTEXT, 0, self._scene_text)  # pyright: ignore[reportPrivateUsage]
                tools = layer.get(TOOLS)
                for tool in preset.plan_tools():
                    tools.register(tool)
                layer.provide(ENCOUNTER, binding)
                layer.provide(TURN_PLAN, self.plan)
                layer.on(SESSION_EVENT, self.on_logged)
                layer.on_waterfall(REQUEST, self.shape_request)
                layer.on_waterfall(TOOL_POST_EXECUTE, self.post_execute)

            self._handle = await host.ctx.get(AGENTS).create(  # pyright: ignore[reportPrivateUsage]
                self.session_id,
                setup=setup,
                options=host.agent_options,
                meta=self._meta(),  # pyright: ignore[reportPrivateUsage]
            )

    return PerEncounter


class _AgentSetupClock:
    """CPU spent creating each encounter's agent (its registrations included), summed."""

    def __init__(self) -> None:
        self.spent = 0.0

    def install(self, *kinds: type[Any]) -> None:
        for kind in kinds:
            kind._create_agent = self._timed(kind._create_agent)

    def _timed(self, create: Any) -> Any:
        async def timed(encounter: Any) -> None:
            began = time.process_time()
            try:
                await create(encounter)
            finally:
                self.spent += time.process_time() - began

        return timed


async def _open_all(
    kind: type[Any], host: Any, npc_ids: Sequence[str], count: int, tag: str
) -> list[Any]:
    from starharness.npc.frames import EncounterOpen

    def sink(frame: object) -> None:
        del frame

    opened: list[Any] = []
    for i in range(count):
        frame = EncounterOpen(id=f"{tag}-{i}", npc_id=npc_ids[i % len(npc_ids)], player_id="p1")
        opened.append(await kind.open(host, frame, sink))
    return opened


async def _close_all(encounters: list[Any]) -> None:
    for encounter in encounters:
        await encounter.close()
    encounters.clear()
    gc.collect()


async def _heap_kb(open_: Callable[[str], Any], count: int) -> float:
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    encounters = await open_("heap")
    gc.collect()
    heap = (tracemalloc.get_traced_memory()[0] - before) / count / 1024
    tracemalloc.stop()
    await _close_all(encounters)
    return heap


async def _cpu_us(
    open_: Callable[[str], Any], count: int, tag: str, clock: _AgentSetupClock
) -> tuple[float, float]:
    """CPU per encounter for the whole open, and for creating the agent alone (us)."""
    gc.collect()
    clock.spent = 0.0
    cpu = time.process_time()
    encounters = await open_(tag)
    spent = time.process_time() - cpu
    await _close_all(encounters)
    return spent / count * 1e6, clock.spent / count * 1e6


async def _main(npcs: int, archetypes: int, count: int, rounds: int, scratch: str | None) -> int:
    from starharness.npc import ServerSettings, TranscriptSettings
    from starharness.npc.encounter import Encounter
    from starharness.npc.server import NpcServer, tune_gc_for_serving

    start_runtime = importlib.import_module("stack_support").start_runtime
    pin(0)
    game = _game(archetypes)
    # No model is asked: the game does not greet first, and no encounter says anything.
    ctx = await start_runtime("http://127.0.0.1:9")
    per_encounter = _per_encounter_class()
    clock = _AgentSetupClock()
    clock.install(Encounter, per_encounter)
    with tempfile.TemporaryDirectory(dir=scratch) as tmp:
        path = Path(tmp) / "world.db"
        world = game.open_world(path)
        npc_ids = populate(world, npcs, archetypes)
        settings = ServerSettings(port=0, world=path, transcripts=TranscriptSettings(keep=0))
        server = NpcServer(ctx, game, world, settings)
        host = server.open_encounters  # what encounters see of the server
        ways: dict[str, type[Any]] = {"presets": Encounter, "per encounter": per_encounter}

        def opener(kind: type[Any]) -> Callable[[str], Any]:
            return lambda tag: _open_all(kind, host, npc_ids, count, tag)

        try:
            for name, kind in ways.items():  # warm-up: first use of every path and preset
                await _close_all(await _open_all(kind, host, npc_ids, min(count, 50), f"w{name}"))
            tune_gc_for_serving()  # as `serve` and `play` do once they are up
            heap = {name: await _heap_kb(opener(kind), count) for name, kind in ways.items()}
            cpu: dict[str, list[float]] = {name: [] for name in ways}
            agent: dict[str, list[float]] = {name: [] for name in ways}
            for round_ in range(rounds):
                for name, kind in ways.items():
                    whole, own = await _cpu_us(opener(kind), count, f"r{round_}{name}", clock)
                    cpu[name].append(whole)
                    agent[name].append(own)
        finally:
            await server.aclose()
            await ctx.dispose()
            world.close()
    return _report(npcs, archetypes, count, rounds, heap, cpu, agent)


def _report(
    npcs: int,
    archetypes: int,
    count: int,
    rounds: int,
    heap: dict[str, float],
    cpu: dict[str, list[float]],
    agent: dict[str, list[float]],
) -> int:
    median = {name: statistics.median(values) for name, values in cpu.items()}
    agent_median = {name: statistics.median(values) for name, values in agent.items()}
    print(
        f"{npcs} NPCs across {archetypes} archetypes, {count} encounters open "
        f"(in process, no WebSocket; CPU: median of {rounds} rounds)"
    )
    for name in ("per encounter", "presets"):
        each = ", ".join(f"{value:.0f}" for value in cpu[name])
        print(
            f"  {name:<14} heap {heap[name]:6.2f} KB per encounter, setup CPU "
            f"{median[name]:6.1f} us per encounter (rounds: {each}), of it creating the agent "
            f"{agent_median[name]:6.1f} us"
        )
    heap_ratio = heap["presets"] / heap["per encounter"]
    cpu_ratio = median["presets"] / median["per encounter"]
    agent_ratio = agent_median["presets"] / agent_median["per encounter"]
    saved = heap["per encounter"] - heap["presets"]
    with_socket = BEFORE_KB_PER_ENCOUNTER - saved
    goal_kb = BEFORE_KB_PER_ENCOUNTER * GOAL_HEAP_SHARE
    share = with_socket / BEFORE_KB_PER_ENCOUNTER
    print(
        f"ratio presets/per encounter: heap {heap_ratio:.2f}x (saves {saved:.2f} KB per "
        f"encounter), setup CPU {cpu_ratio:.2f}x (goal <= {GOAL_CPU_RATIO}x), creating the "
        f"agent {agent_ratio:.2f}x"
    )
    print(
        f"estimate only, not a verdict ({BEFORE_KB_PER_ENCOUNTER:g} KB, bench/encounters.py "
        f"before presets, minus what presets save here): about {with_socket:.1f} KB, "
        f"{share:.2f} of it (goal < {goal_kb:.1f} KB, a third); it misses every cut outside "
        "registration: bench/encounters.py at 1,000 encounters measures it with a WebSocket "
        "each and judges that goal"
    )
    met = cpu_ratio <= GOAL_CPU_RATIO
    print("setup CPU goal met" if met else "setup CPU goal missed (see above)")
    return 0 if met else 1


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--npcs", type=int, default=500)
    parser.add_argument("--archetypes", type=int, default=5)
    parser.add_argument("--encounters", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    if min(args.npcs, args.archetypes, args.encounters, args.rounds) < 1:
        parser.error("--npcs, --archetypes, --encounters and --rounds must be at least 1")
    # The world file in memory where there is a tmpfs: the disk is not what is measured.
    scratch = "/dev/shm" if Path("/dev/shm").is_dir() else None
    sys.exit(asyncio.run(_main(args.npcs, args.archetypes, args.encounters, args.rounds, scratch)))


if __name__ == "__main__":
    main()
