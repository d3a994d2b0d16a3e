"""What a scene read costs with 10 and with 100,000 memories of one NPC about the player.

Each memory is written as an action writes one (`WorldTx.remember`), so folding runs as it does
in play. The floor is the read at 10 memories, measured in the same run; the goal is a ratio
near 1 (old memories fold into totals, so a read never loads them all).

Run: uv run python bench/scene_cost.py [--counts 10 100000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from starharness.voyage.content import PLAYER_ID, SMUGGLER
from starharness.voyage.store import VoyageWorld, open_world

GOAL_RATIO = 1.5
GOODS = ("fuel", "medgel", "spice")


def _fill(world: VoyageWorld, count: int) -> None:
    with world.transaction() as tx:
        for index in range(count):
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


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").partition("\n")[0])
    parser.add_argument("--counts", type=int, nargs="+", default=[10, 100_000])
    args = parser.parse_args()
    results: list[tuple[int, float]] = []
    with tempfile.TemporaryDirectory() as folder:
        for count in args.counts:
            with open_world(Path(folder) / f"w{count}.db") as world:
                _fill(world, count)
                results.append((count, _read_ms(world)))
    floor = results[0][1]
    load = os.getloadavg()[0]
    print(f"scene read (median of 200), load average {load:.1f} on {os.cpu_count()} cores:")
    for count, ms in results:
        print(f"  {count:>7} memories: {ms:.2f} ms  ratio to {results[0][0]}: {ms / floor:.2f}"
              f"  (goal <= {GOAL_RATIO})")  # fmt: skip


if __name__ == "__main__":
    main()
