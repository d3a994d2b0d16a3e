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
import contextlib
import os
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NoReturn

from setup_worker import NPCS, fail

_HERE = Path(__file__).resolve().parent
_REPO = _HERE.parent
BEFORE = "0f05aace8138b35f923a16d551e9561f40362a38"
"""The last commit before archetype presets (b123daf's parent)."""
GOAL_RATIO = 0.5


def _export(rev: str, into: Path) -> Path:
    """The tree of `rev` (src and tests) in `into`, with this checkout's tiny world."""
    known = subprocess.run(
        ["git", "-C", str(_REPO), "cat-file", "-e", f"{rev}^{{commit}}"],
        check=False,
        capture_output=True,
    )
    if known.returncode != 0:
        fail(
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
        fail(f"commit {rev[:12]} has no src and tests folders to run: pick a later one")
    with tempfile.TemporaryFile() as tar_file:
        tar_file.write(done.stdout)
        tar_file.seek(0)
        with tarfile.open(fileobj=tar_file) as tar:
            tar.extractall(into, filter="data")
    if not (into / world).parent.is_dir():
        fail(f"commit {rev[:12]} has no tiny game ({world.parent}) to run: pick a later one")
    shutil.copyfile(_REPO / world, into / world)
    return into


# --- the driver ------------------------------------------------------------------------------


def _worker_command(tree: Path, encounters: int) -> list[str]:
    worker = str(_HERE / "setup_worker.py")
    return [sys.executable, worker, str(tree), "--encounters", str(encounters)]


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
        fail(f"the worker for {self.tree} failed{said}:\n{err}")


def _label(name: str, before: str) -> str:
    if name == "now":
        return "now (presets)"
    return f"before presets ({before[:7]})" if before == BEFORE else f"before ({before[:12]})"


def _middle_half(values: list[float]) -> tuple[float, float]:
    if len(values) < 4:
        return min(values), max(values)
    quartiles = statistics.quantiles(values, n=4)
    return quartiles[0], quartiles[2]


def _shown(ratio: float) -> str:
    """The ratio with two decimals, or as many more as it takes for the figure to read as its
    verdict (0.504 is missed, and printed 0.50 it would look met)."""
    for places in range(2, 7):
        text = f"{ratio:.{places}f}"
        if (float(text) <= GOAL_RATIO) == (ratio <= GOAL_RATIO):
            return text
    return repr(ratio)


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
        f"setup CPU per open encounter, {encounters} encounters over {NPCS} NPCs, the same tiny "
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
        f"ratio now/before: {_shown(ratio)}x, median of the pairs (goal <= {GOAL_RATIO}x): "
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
        fail(f"the worker for {tree} failed under valgrind:\n{done.stderr[-4000:]}")
    return int(found.group(1))


_RUNS = {"one": "keep\n", "three": "keep\n" * 3, "closed": "keep\n" * 3 + "close\n"}
"""Each tree's counted runs: opens kept (one round or three), then the three rounds closed."""


def _count(before: str, encounters: int) -> int:
    """Instructions per open, each tree: (3 rounds - 1 round) / 2, so start-up cancels out;
    and per close, (three rounds closed - three rounds kept) / 3, for information."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        fail("--instructions needs valgrind (Debian: apt-get install -y valgrind)")
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
        f"ratio now/before: {_shown(ratio)}x in instructions (goal <= {GOAL_RATIO}x): "
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
    args = parser.parse_args()
    if args.encounters is None:
        args.encounters = 200 if args.instructions else 1000
    if args.pairs < 1 or args.encounters < 1:
        parser.error("--pairs and --encounters must be at least 1")
    sys.path.insert(0, str(_HERE))
    if args.instructions:  # counted, not timed: the two valgrind runs may use both cores
        sys.exit(_count(args.before, args.encounters))
    from cores import pin

    pin(0)  # both timed workers inherit it: they take turns on one core
    sys.exit(_drive(args.before, args.pairs, args.encounters))


if __name__ == "__main__":
    main()
