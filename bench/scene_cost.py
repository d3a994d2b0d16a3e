"""What a scene read costs with 10 and with 100,000 memories of one NPC about the player.

Each memory is written as an action writes one (`WorldTx.remember`), so folding and witnessing
run as they do in play. The floor is the read at 10 memories, measured in the same run; the goal
is a ratio near 1 (old memories fold into totals, so a read never loads them all). It also prints
the memories' estimated tokens in the scene against the game's budget, and what a day of the
clock (gossip included) costs at each count.

Run: uv run python bench/scene_cost.py [--counts 10 100000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from starharness.npc.social import estimate_tokens
from starharness.voyage.content import PLAYER_ID, SMUGGLER
from starharness.voyage.content.social import MEMORY_TOKENS
from starharness.voyage.store import VoyageWorld, open_world
from starharness.voyage.store.scene import MEMORIES

GOAL_RATIO = 1.5
GOODS = ("fuel", "medgel", "spice")


def _fill(world: VoyageWorld, count: int) -> None:
    # Deals (which Brandt, at the same bar, witnesses as they happen) and every fifth an idle
    # visit, the mix a long game leaves.
    with world.transaction() as tx:
        for index in range(count):
            if index % 5 == 4:
                tx.remember(SMUGGLER, PLAYER_ID, "They came by and talked.", kind="visit")
                continue
            good = GOODS[index % 3]
            tx.remember(SMUGGLER, PLAYER_ID, f"They bought 1 {good}.", kind="trade",
                        action="bought", good_id=good, qty=1, price=100)  # fmt: skip


def _read_ms(world: VoyageWorld, reads: int = 200) -> float:
    times: list[float] = []
    for _ in range(reads):
        begun = time.perf_counter()
        world.scene(SMUGGLER, PLAYER_ID)
        times.append((time.perf_counter() - begun) * 1000)
    return statistics.median(times)


def _tick_ms(world: VoyageWorld, ticks: int = 20) -> float:
    """A day of the clock, gossip included (it weighs each NPC's newest memories only)."""
    times: list[float] = []
    for _ in range(ticks):
        begun = time.perf_counter()
        world.tick(1)
        times.append((time.perf_counter() - begun) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").partition("\n")[0])
    parser.add_argument("--counts", type=int, nargs="+", default=[10, 100_000])
    args = parser.parse_args()
    results: list[tuple[int, float]] = []
    tokens: list[int] = []
    ticks: list[float] = []
    with tempfile.TemporaryDirectory() as folder:
        for count in args.counts:
            with open_world(Path(folder) / f"w{count}.db") as world:
                _fill(world, count)
                results.append((count, _read_ms(world)))
                ticks.append(_tick_ms(world))
                scene = world.scene(SMUGGLER, PLAYER_ID)
                tokens.append(estimate_tokens(scene[scene.index(MEMORIES) + len(MEMORIES) :]))
    floor = results[0][1]
    load = os.getloadavg()[0]
    print(f"scene read (median of 200), load average {load:.1f} on {os.cpu_count()} cores:")
    for (count, ms), size in zip(results, tokens, strict=True):
        print(f"  {count:>7} memories: {ms:.2f} ms  ratio to {results[0][0]}: {ms / floor:.2f}"
              f"  (goal <= {GOAL_RATIO}); memories in the scene: ~{size} tokens"
              f" (budget {MEMORY_TOKENS})")  # fmt: skip
    print("a day of the clock with gossip (median of 20):")
    for (count, _), ms in zip(results, ticks, strict=True):
        print(f"  {count:>7} memories: {ms:.2f} ms  ratio to {results[0][0]}: {ms / ticks[0]:.2f}")


if __name__ == "__main__":
    main()
