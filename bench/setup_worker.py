"""One tree's worker for bench/setup_before.py: opens encounters when its stdin says so.

Run by the driver as `python bench/setup_worker.py TREE --encounters N`. It warms up, prints
`ready`, then reads commands a line at a time:

- `round`: open N encounters, print the CPU per open in microseconds, close them;
- `keep`: open N encounters and keep them (counted by instructions, nothing printed);
- `close`: close the kept ones (counted apart from the opens).

A run that kept or closed ends with `os._exit` after its last command, so the instruction count
holds no teardown. Every temporary file goes in one folder the worker removes either way.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib
import os
import shutil
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, NoReturn

NPCS = 500
_ARCHETYPES = 5


def fail(message: str) -> NoReturn:
    """Exit 2: the bench could not measure (1 means it measured and a goal was missed)."""
    print(message, file=sys.stderr)
    sys.exit(2)


def _worker_paths(tree: Path) -> None:
    sys.path[:0] = [str(tree / "src"), str(tree / "tests" / "npc"), str(tree / "tests")]
    import starharness

    where = Path(starharness.__file__).resolve()
    if not where.is_relative_to(tree.resolve()):
        fail(f"starharness came from {where}, not from {tree}")
    world_module: Any = importlib.import_module("starharness.npc.world")
    # The copied world names the news type as today's code does; the old code called it so.
    if not hasattr(world_module, "NewsItem"):
        world_module.NewsItem = world_module.WorldEvent
    # It also offers `meeting` (`ReadsMeetings`), which the old code never calls: any type will
    # do for the name it imports.
    if not hasattr(world_module, "Meeting"):
        world_module.Meeting = tuple


def _worker_game() -> Any:
    npc: Any = importlib.import_module("starharness.npc")
    game = importlib.import_module("tinygame").GAME
    game = replace(game, world_calls_inline=True, on_encounter_end=None)
    archetype = getattr(npc, "Archetype", None)
    if archetype is None:  # before presets: nothing to declare
        return game
    actions: tuple[tuple[str, ...] | None, ...] = (("sell_bread",), ("bake",), (), None, None)
    kinds = tuple(
        archetype(f"kind-{i}", actions=actions[i], sections=(f"Your kind is kind {i}.",))
        for i in range(_ARCHETYPES)
    )
    return replace(game, archetypes=kinds)


async def _worker_main(tree: Path, encounters: int, scratch: Path) -> None:
    """Warm up, print `ready`, then run one round per `round` line on stdin, printing its CPU
    per open in microseconds; ends at end of input. Its temporary files go in `scratch`."""
    from vendors import populate

    _worker_paths(tree)
    npc: Any = importlib.import_module("starharness.npc")
    server_module: Any = importlib.import_module("starharness.npc.server")
    encounter_kind: Any = importlib.import_module("starharness.npc.encounter").Encounter
    frames: Any = importlib.import_module("starharness.npc.frames")
    start_runtime = importlib.import_module("stack_support").start_runtime
    game = _worker_game()
    ctx = await start_runtime("http://127.0.0.1:9")  # no model is asked

    def sink(frame: object) -> None:
        del frame

    async def open_all(count: int, tag: str) -> list[Any]:
        opened: list[Any] = []
        for i in range(count):
            frame = frames.EncounterOpen(
                id=f"{tag}-{i}", npc_id=npc_ids[i % len(npc_ids)], player_id="p1"
            )
            opened.append(await encounter_kind.open(host, frame, sink))
        return opened

    async def close_all(opened: list[Any]) -> None:
        for encounter in opened:
            await encounter.close()
        gc.collect()

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "world.db"
        world = game.open_world(path)
        npc_ids = populate(world, NPCS, _ARCHETYPES)
        settings = npc.ServerSettings(
            port=0, world=path, transcripts=npc.TranscriptSettings(keep=0)
        )
        server = server_module.NpcServer(ctx, game, world, settings)
        # What encounters see of the server: its own part now, the server itself in old trees.
        host = getattr(server, "open_encounters", server)
        try:
            await close_all(await open_all(min(encounters, 50), "warm"))
            server_module.tune_gc_for_serving()
            print("ready", flush=True)
            kept: list[Any] = []
            # Blocking reads between rounds: nothing else runs on this loop in a bench.
            counted = False
            for round_, line in enumerate(sys.stdin):
                command = line.strip()
                counted = counted or command in ("keep", "close")
                if command == "keep":  # opens only, counted by instructions
                    kept += await open_all(encounters, f"k{round_}")
                    continue
                if command == "close":  # closes what was kept, counted apart from the opens
                    await close_all(kept)
                    kept = []
                    continue
                if command != "round":
                    break
                gc.collect()
                began = time.process_time()
                opened = await open_all(encounters, f"r{round_}")
                spent = (time.process_time() - began) / encounters * 1e6
                await close_all(opened)
                print(f"{spent:.3f}", flush=True)
            if counted:
                _end_counted_run(world, scratch)
        finally:
            await server.aclose()
            await ctx.dispose()
            world.close()


def _end_counted_run(world: Any, scratch: Path) -> NoReturn:
    """End a counted run at once: closing the encounters it kept, and the interpreter's
    teardown over them, grow with the rounds, so they would be counted as opens."""
    world.close()
    shutil.rmtree(scratch, ignore_errors=True)
    sys.stdout.flush()
    os._exit(0)


def main() -> None:
    parser = argparse.ArgumentParser(description="One tree's worker for setup_before.py.")
    parser.add_argument("tree", type=Path, help="the checkout whose src and tests to run")
    parser.add_argument("--encounters", type=int, required=True, help="encounters per round")
    args = parser.parse_args()
    if args.encounters < 1:
        parser.error("--encounters must be at least 1")
    with tempfile.TemporaryDirectory(prefix="setup-before-") as scratch:
        # Every temporary file of the worker (the world, the runtime's empty home) lands here,
        # so a counted run that ends with os._exit leaves nothing behind either.
        tempfile.tempdir = scratch
        asyncio.run(_worker_main(args.tree, args.encounters, Path(scratch)))


if __name__ == "__main__":
    main()
