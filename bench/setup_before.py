"""Setup CPU per open encounter: this checkout against the framework before archetype presets.

Issue 20 asks for setup CPU halved against per-encounter registration as it was when the issue
was filed. bench/archetypes.py measures presets against that registration rebuilt on today's
code, which isolates what the presets alone save; this bench measures the other question:
what one `Encounter.open` costs now against what it cost then, in the same run.

- before: the tree of `BEFORE` (the last commit before presets, taken with `git archive`
  into a temporary folder), where every encounter registered its tools, sections and plan;
- now: this checkout, with five archetypes as presets (as bench/archetypes.py).

Both run the same world: this checkout's tiny test game world (tests/npc/tinygame/world.py,
with WAL and its one-statement scene) is copied into the old tree, so only the framework
differs. What the framework does with the world (sharing one read transaction, say) counts.
Each way runs in its own process pinned to one core, the two alternating; each process opens
`--encounters` encounters over 500 NPCs for `--rounds` rounds after a warm-up and prints its
median CPU per open. The bench prints every process's median and the ratio of the medians.

Run: uv run python bench/setup_before.py [--runs 3] [--rounds 5] [--encounters 1000]
Needs the repository's history (a clone, not an export).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, NoReturn

_HERE = Path(__file__).resolve().parent
_REPO = _HERE.parent
BEFORE = "0f05aace8138b35f923a16d551e9561f40362a38"
"""The last commit before archetype presets (b123daf's parent)."""
GOAL_RATIO = 0.5
_NPCS = 500
_ARCHETYPES = 5


def _fail(message: str) -> NoReturn:
    """Exit 2: the bench could not measure (1 means it measured and a goal was missed)."""
    print(message, file=sys.stderr)
    sys.exit(2)


def _export(rev: str, into: Path) -> Path:
    """The tree of `rev` (src and tests) in `into`, with this checkout's tiny world."""
    done = subprocess.run(
        ["git", "-C", str(_REPO), "archive", "--format=tar", rev, "src", "tests"],
        check=False,
        capture_output=True,
    )
    if done.returncode != 0:
        _fail(
            f"cannot take commit {rev[:12]} from {_REPO} (this bench needs the repository's "
            f"history, a clone, not an export): {done.stderr.decode(errors='replace').strip()}"
        )
    archive = done.stdout
    with tempfile.TemporaryFile() as tar_file:
        tar_file.write(archive)
        tar_file.seek(0)
        with tarfile.open(fileobj=tar_file) as tar:
            tar.extractall(into, filter="data")
    world = Path("tests/npc/tinygame/world.py")
    shutil.copyfile(_REPO / world, into / world)
    return into


# --- the worker: one process, one tree -------------------------------------------------------


def _worker_paths(tree: Path) -> None:
    sys.path[:0] = [str(tree / "src"), str(tree / "tests" / "npc"), str(tree / "tests")]
    import starharness

    where = Path(starharness.__file__).resolve()
    if not where.is_relative_to(tree.resolve()):
        _fail(f"starharness came from {where}, not from {tree}")
    world_module: Any = importlib.import_module("starharness.npc.world")
    # The copied world names the news type as today's code does; the old code called it so.
    if not hasattr(world_module, "NewsItem"):
        world_module.NewsItem = world_module.WorldEvent


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


async def _worker_main(tree: Path, encounters: int, rounds: int) -> float:
    from vendors import populate

    _worker_paths(tree)
    npc: Any = importlib.import_module("starharness.npc")
    server_module: Any = importlib.import_module("starharness.npc.server")
    encounter_kind: Any = importlib.import_module("starharness.npc.encounter").Encounter
    frames: Any = importlib.import_module("starharness.npc.frames")
    start_runtime = importlib.import_module("stack_support").start_runtime
    game = _worker_game()
    ctx = await start_runtime("http://127.0.0.1:9")  # no model is asked
    spent: list[float] = []

    def sink(frame: object) -> None:
        del frame

    async def open_all(count: int, tag: str) -> list[Any]:
        opened: list[Any] = []
        for i in range(count):
            frame = frames.EncounterOpen(
                id=f"{tag}-{i}", npc_id=npc_ids[i % len(npc_ids)], player_id="p1"
            )
            opened.append(await encounter_kind.open(server, frame, sink))
        return opened

    async def close_all(opened: list[Any]) -> None:
        for encounter in opened:
            await encounter.close()
        gc.collect()

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "world.db"
        world = game.open_world(path)
        npc_ids = populate(world, _NPCS, _ARCHETYPES)
        settings = npc.ServerSettings(
            port=0, world=path, transcripts=npc.TranscriptSettings(keep=0)
        )
        server = server_module.NpcServer(ctx, game, world, settings)
        try:
            await close_all(await open_all(min(encounters, 50), "warm"))
            server_module.tune_gc_for_serving()
            for round_ in range(rounds):
                gc.collect()
                began = time.process_time()
                opened = await open_all(encounters, f"r{round_}")
                spent.append((time.process_time() - began) / encounters * 1e6)
                await close_all(opened)
        finally:
            await server.aclose()
            await ctx.dispose()
            world.close()
    return statistics.median(spent)


# --- the driver ------------------------------------------------------------------------------


def _run_worker(tree: Path, encounters: int, rounds: int) -> float:
    done = subprocess.run(
        [
            sys.executable,
            str(Path(__file__).resolve()),
            "--worker",
            str(tree),
            "--encounters",
            str(encounters),
            "--rounds",
            str(rounds),
        ],
        check=False,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        _fail(f"the worker for {tree} failed:\n{done.stderr}")
    return float(done.stdout.split()[-1])


def _drive(before: str, runs: int, rounds: int, encounters: int) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        old_tree = _export(before, Path(tmp))
        medians: dict[str, list[float]] = {"before": [], "now": []}
        for _ in range(runs):  # alternating, so a change in the machine's load hits both
            medians["before"].append(_run_worker(old_tree, encounters, rounds))
            medians["now"].append(_run_worker(_REPO, encounters, rounds))
    print(
        f"setup CPU per open encounter, {encounters} encounters over {_NPCS} NPCs, the same tiny "
        f"world; median of {rounds} rounds in each of {runs} processes per way"
    )
    for name, values in medians.items():
        label = f"before presets ({before[:7]})" if name == "before" else "now (presets)"
        listed = ", ".join(f"{value:.1f}" for value in values)
        print(f"  {label:<26} {statistics.median(values):6.1f} us (processes: {listed})")
    ratio = statistics.median(medians["now"]) / statistics.median(medians["before"])
    met = ratio <= GOAL_RATIO
    print(f"ratio now/before: {ratio:.2f}x (goal <= {GOAL_RATIO}x): {'met' if met else 'missed'}")
    return 0 if met else 1


def main() -> None:
    parser = argparse.ArgumentParser(description="Setup CPU per open encounter, now and before.")
    parser.add_argument("--before", default=BEFORE, help="the commit to compare with")
    parser.add_argument("--runs", type=int, default=3, help="processes per way")
    parser.add_argument("--rounds", type=int, default=5, help="rounds per process")
    parser.add_argument("--encounters", type=int, default=1000)
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    sys.path.insert(0, str(_HERE))
    from cores import pin

    if args.worker is not None:
        pin(0)
        print(f"{asyncio.run(_worker_main(args.worker, args.encounters, args.rounds)):.3f}")
        return
    sys.exit(_drive(args.before, args.runs, args.rounds, args.encounters))


if __name__ == "__main__":
    main()
