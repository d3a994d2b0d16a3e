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
One process per tree, both pinned to the same core, warm up and then take turns: a round opens
`--encounters` encounters over 500 NPCs and closes them, the one tree's round right after the
other's (the order swapped every pair). A shared VM's speed drifts by tens of percent within
seconds; a pair sees nearly the same machine, so the bench judges the median of the pairs'
ratios, and prints their spread.

`--instructions` counts instructions instead (valgrind's callgrind, each tree run with one and
with three rounds of opens, the difference divided by the opens): slow, but the same on any
machine, where CPU time depends on the machine's caches and neighbours. A counted run ends with
`os._exit` after its opens, so neither closing them nor the interpreter's teardown is counted;
a third run closes them, and what a close costs is printed apart (it is not the goal).

Run: uv run python bench/setup_before.py [--pairs 15] [--encounters 1000] [--instructions]
Needs the repository's history (a clone, not an export).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import importlib
import os
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
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
    known = subprocess.run(
        ["git", "-C", str(_REPO), "cat-file", "-e", f"{rev}^{{commit}}"],
        check=False,
        capture_output=True,
    )
    if known.returncode != 0:
        _fail(
            f"cannot take commit {rev[:12]} from {_REPO} (this bench needs the repository's "
            f"history, a clone, not an export): {known.stderr.decode(errors='replace').strip()}"
        )
    done = subprocess.run(
        ["git", "-C", str(_REPO), "archive", "--format=tar", rev, "src", "tests"],
        check=False,
        capture_output=True,
    )
    world = Path("tests/npc/tinygame/world.py")
    if done.returncode != 0:
        _fail(f"commit {rev[:12]} has no src and tests folders to run: pick a later one")
    with tempfile.TemporaryFile() as tar_file:
        tar_file.write(done.stdout)
        tar_file.seek(0)
        with tarfile.open(fileobj=tar_file) as tar:
            tar.extractall(into, filter="data")
    if not (into / world).parent.is_dir():
        _fail(f"commit {rev[:12]} has no tiny game ({world.parent}) to run: pick a later one")
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


# --- the driver ------------------------------------------------------------------------------


def _worker_command(tree: Path, encounters: int) -> list[str]:
    here = str(Path(__file__).resolve())
    return [sys.executable, here, "--worker", str(tree), "--encounters", str(encounters)]


class _Worker:
    """One tree's worker process, driven a round at a time over its stdin and stdout."""

    def __init__(self, tree: Path, encounters: int) -> None:
        self.tree = tree
        self._process = subprocess.Popen(
            _worker_command(tree, encounters),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self._expect("ready")

    def round(self) -> float:
        stdin = self._process.stdin
        assert stdin is not None
        try:
            stdin.write("round\n")
            stdin.flush()
        except BrokenPipeError:
            self._died()
        return float(self._expect(None))

    def close(self) -> None:
        if self._process.stdin is not None:
            with contextlib.suppress(BrokenPipeError):
                self._process.stdin.close()
        try:
            self._process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()

    def _expect(self, word: str | None) -> str:
        stdout = self._process.stdout
        assert stdout is not None
        line = stdout.readline().strip()
        if not line or (word is not None and line != word):
            self._died(line)
        return line

    def _died(self, line: str = "") -> NoReturn:
        self._process.kill()
        _, err = self._process.communicate()
        said = f" (it printed {line!r})" if line else ""
        _fail(f"the worker for {self.tree} failed{said}:\n{err}")


def _label(name: str, before: str) -> str:
    if name == "now":
        return "now (presets)"
    return f"before presets ({before[:7]})" if before == BEFORE else f"before ({before[:12]})"


def _middle_half(values: list[float]) -> tuple[float, float]:
    if len(values) < 4:
        return min(values), max(values)
    quartiles = statistics.quantiles(values, n=4)
    return quartiles[0], quartiles[2]


def _drive(before: str, pairs: int, encounters: int) -> int:
    spent: dict[str, list[float]] = {"before": [], "now": []}
    ratios: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        old_tree = _export(before, Path(tmp))
        workers = {"before": _Worker(old_tree, encounters), "now": _Worker(_REPO, encounters)}
        try:
            for pair in range(pairs):
                order = ("before", "now") if pair % 2 == 0 else ("now", "before")
                got = {name: workers[name].round() for name in order}
                for name, value in got.items():
                    spent[name].append(value)
                ratios.append(got["now"] / got["before"])
        finally:
            for worker in workers.values():
                worker.close()
    rounds = f"{pairs} pair{'s' if pairs != 1 else ''} of rounds"
    print(
        f"setup CPU per open encounter, {encounters} encounters over {_NPCS} NPCs, the same tiny "
        f"world; {rounds}, the two trees' processes taking turns on one core"
    )
    for name, values in spent.items():
        label = _label(name, before)
        low, high = _middle_half(values)
        print(
            f"  {label:<26} {statistics.median(values):6.1f} us "
            f"(median of rounds; middle half {low:.1f}-{high:.1f})"
        )
    low, high = _middle_half(ratios)
    ratio = statistics.median(ratios)
    print(f"  now/before per pair: middle half {low:.2f}-{high:.2f}x")
    met = ratio <= GOAL_RATIO
    print(
        f"ratio now/before: {ratio:.2f}x, median of the pairs (goal <= {GOAL_RATIO}x): "
        f"{'met' if met else 'missed'}"
    )
    return 0 if met else 1


_COLLECTED = re.compile(r"Collected : (\d+)")


def _instructions(valgrind: str, tree: Path, encounters: int, commands: str) -> int:
    """Instructions a worker runs (callgrind's count) for warm-up plus `commands` (its stdin)."""
    worker = _worker_command(tree, encounters)
    done = subprocess.run(
        [valgrind, "--tool=callgrind", "--callgrind-out-file=/dev/null", *worker],
        input=commands,
        capture_output=True,
        text=True,
        check=False,
        # The same string hashes, so the same dict and set layouts, in every run.
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )
    found = _COLLECTED.search(done.stderr)
    if done.returncode != 0 or found is None:
        _fail(f"the worker for {tree} failed under valgrind:\n{done.stderr[-4000:]}")
    return int(found.group(1))


_RUNS = {"one": "keep\n", "three": "keep\n" * 3, "closed": "keep\n" * 3 + "close\n"}
"""Each tree's counted runs: opens kept (one round or three), then the three rounds closed."""


def _count(before: str, encounters: int) -> int:
    """Instructions per open, each tree: (3 rounds - 1 round) / 2, so start-up cancels out;
    and per close, (three rounds closed - three rounds kept) / 3, for information."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        _fail("--instructions needs valgrind (Debian: apt-get install -y valgrind)")
    with tempfile.TemporaryDirectory() as tmp:
        old_tree = _export(before, Path(tmp))
        trees = {"before": old_tree, "now": _REPO}
        jobs = [(name, run) for name in trees for run in _RUNS]
        with ThreadPoolExecutor(2) as pool:  # each valgrind is one process: two at a time
            counts = list(
                pool.map(
                    lambda job: _instructions(valgrind, trees[job[0]], encounters, _RUNS[job[1]]),
                    jobs,
                )
            )
    total = dict(zip(jobs, counts, strict=True))
    per_open = {
        name: (total[(name, "three")] - total[(name, "one")]) / (2 * encounters) for name in trees
    }
    per_close = {
        name: (total[(name, "closed")] - total[(name, "three")]) / (3 * encounters)
        for name in trees
    }
    print(
        f"instructions per open encounter (callgrind, {encounters} encounters a round, opens only,"
        f" the difference of 3 rounds and 1), the same tiny world; closing them (with the"
        f" collection after), apart"
    )
    for name in trees:
        label = _label(name, before)
        print(f"  {label:<26} {per_open[name]:10.0f}   closing {per_close[name]:10.0f}")
    ratio = per_open["now"] / per_open["before"]
    met = ratio <= GOAL_RATIO
    print(f"closing now/before: {per_close['now'] / per_close['before']:.2f}x (not the goal)")
    print(
        f"ratio now/before: {ratio:.2f}x in instructions (goal <= {GOAL_RATIO}x): "
        f"{'met' if met else 'missed'}"
    )
    return 0 if met else 1


def main() -> None:
    parser = argparse.ArgumentParser(description="Setup CPU per open encounter, now and before.")
    parser.add_argument("--before", default=BEFORE, help="the commit to compare with")
    parser.add_argument("--pairs", type=int, default=15, help="rounds per tree, taken in turns")
    parser.add_argument(
        "--encounters",
        type=int,
        help="encounters per round (default 1000; 200 with --instructions)",
    )
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="count instructions under valgrind instead of timing (slow; needs valgrind)",
    )
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.encounters is None:
        args.encounters = 200 if args.instructions else 1000
    if args.pairs < 1 or args.encounters < 1:
        parser.error("--pairs and --encounters must be at least 1")
    sys.path.insert(0, str(_HERE))
    if args.worker is not None:
        with tempfile.TemporaryDirectory(prefix="setup-before-") as scratch:
            # Every temporary file of the worker (the world, the runtime's empty home) lands
            # here, so a counted run that ends with os._exit leaves nothing behind either.
            tempfile.tempdir = scratch
            asyncio.run(_worker_main(args.worker, args.encounters, Path(scratch)))
        return
    if args.instructions:  # counted, not timed: the two valgrind runs may use both cores
        sys.exit(_count(args.before, args.encounters))
    from cores import pin

    pin(0)  # both timed workers inherit it: they take turns on one core
    sys.exit(_drive(args.before, args.pairs, args.encounters))


if __name__ == "__main__":
    main()
