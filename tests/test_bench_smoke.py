"""The bench scripts run end to end with tiny counts (no timing is asserted)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from starharness.runtime.sandbox import BubblewrapProvider
from starharness.runtime.session.postgres import PostgresTarget

BENCH = Path(__file__).resolve().parents[1] / "bench" / "runtime_overhead.py"


@pytest.mark.slow
def test_runtime_overhead_bench_completes_and_prints_the_ratio(tmp_path: Path) -> None:
    out = _run_bench(BENCH, ["--quick", "--turns", "6", "--agents", "4"], tmp_path)
    assert "floor and loop send the same messages, tools and options: yes" in out
    ratios = re.findall(
        r"^ratio loop/floor at concurrency (\d+): CPU per turn (\d+\.\d+)x", out, re.M
    )
    assert [concurrency for concurrency, _ in ratios] == ["1", "4"], out
    assert all(float(ratio) > 0 for _, ratio in ratios)
    rows = [line for line in out.splitlines() if re.match(r"^  (floor|loop) ", line)]
    assert len(rows) == 4, out
    assert all("ok (6/6 turns, 6 tool runs, 12 requests)" in row for row in rows), out
    assert re.search(r"^memory per idle agent: \d+\.\d KB \(4 agents", out, re.M), out
    assert "schema shared: yes" in out


ENCOUNTERS = BENCH.parent / "encounters.py"


@pytest.mark.slow
def test_encounters_bench_completes_with_every_figure(tmp_path: Path) -> None:
    tiny = ["--levels", "4", "--seconds", "0.5", "--rounds", "2", "--rate", "30"]
    out = _run_bench(ENCOUNTERS, tiny, tmp_path)
    assert "4 open encounters (2 rounds of 0.5 s):" in out, out
    turns = re.search(r"turns/s +(\d+\.\d)", out)
    assert turns is not None and float(turns.group(1)) > 0, out
    rounds = re.search(r"rounds \(harness/floor\): (.+)$", out, re.M)
    assert rounds is not None and len(rounds.group(1).split(", ")) == 2, out
    assert re.search(r"CPU per turn \(median of rounds\): harness +\d+\.\d+ ms", out), out
    assert re.search(r"memory per open encounter: heap +\d+\.\d KB", out), out
    delta = re.search(
        r"first say\.delta after its fragment: .*\((goal <= 1 ms, )(\d+) turns\)", out
    )
    assert delta is not None and int(delta.group(2)) > 0, out
    # uvicorn's own WebSocket protocol against the served (lean) one, in the same run.
    assert re.search(
        r"^heap per open encounter at 4: uvicorn's WebSocket protocol +\d+\.\d KB, the served "
        r"one \(lean\) +\d+\.\d KB: saves -?\d+%",
        out,
        re.M,
    ), out


def _run_bench(script: Path, args: list[str], cwd: Path, *, timeout: float = 300) -> str:
    """Run a bench script; its stdout. Exit 0 (goals met) or 1 (a goal missed) both pass."""
    done = subprocess.run(
        [sys.executable, str(script), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
    )
    # 1 is likely with so few turns; 2 or a crash means the bench is broken.
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return done.stdout


SETUP_BEFORE = BENCH.parent / "setup_before.py"
SETUP_WORKER = BENCH.parent / "setup_worker.py"


def _setup_before_cannot_measure(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """Run bench/setup_before.py expecting exit 2 (it could not measure); its stderr."""
    done = subprocess.run(
        [sys.executable, str(SETUP_BEFORE), *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env=env,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    return done.stderr


@pytest.mark.slow
def test_setup_before_bench_runs_both_trees_and_prints_the_ratio(tmp_path: Path) -> None:
    out = _run_bench(SETUP_BEFORE, ["--pairs", "3", "--encounters", "20"], tmp_path)
    figures = r" +(\d+\.\d) us \(median of rounds; middle half (\d+\.\d)-(\d+\.\d)\)$"
    before = re.search(r"^  before presets \(0f05aac\)" + figures, out, re.M)
    now = re.search(r"^  now \(presets\)" + figures, out, re.M)
    assert before is not None and now is not None, out
    for found in (before, now):
        median, low, high = (float(found.group(i)) for i in (1, 2, 3))
        assert 0 < low <= median <= high, out
    spread = re.search(r"^  now/before per pair: middle half (\d+\.\d\d)-(\d+\.\d\d)x$", out, re.M)
    ratio = re.search(
        r"^ratio now/before: (\d+\.\d{2,6})x, median of the pairs \(goal <= 0\.5x\): (met|missed)$",
        out,
        re.M,
    )
    assert spread is not None and ratio is not None, out
    assert float(spread.group(1)) <= float(ratio.group(1)) <= float(spread.group(2)), out
    assert (ratio.group(2) == "met") == (float(ratio.group(1)) <= 0.5), out


def test_the_setup_bench_prints_each_ratio_so_that_it_reads_as_its_verdict() -> None:
    # 0.504 is missed; printed with two decimals it read 0.50, which looks met.
    values = [0.5, 0.5000001, 0.50049, 0.504, 0.505, 0.4951, 0.49999, 0.495, 1 / 3, 0.0, 2.0]
    probe = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); from setup_before import _shown; "
        "print(json.dumps([_shown(v) for v in json.loads(sys.argv[2])]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(SETUP_BEFORE.parent), json.dumps(values)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    shown: list[str] = json.loads(done.stdout)
    for value, text in zip(values, shown, strict=True):
        assert (float(text) <= 0.5) == (value <= 0.5), (value, text)
        assert len(text.split(".")[1]) >= 2, text
        assert abs(float(text) - value) <= 0.005 + 1e-9, (value, text)  # rounding, at most
    assert shown[0] == "0.50" and shown[3] == "0.504" and shown[8] == "0.33", shown


@pytest.mark.slow
def test_setup_before_bench_counts_instructions_under_valgrind(tmp_path: Path) -> None:
    if shutil.which("valgrind") is None:
        reason = "valgrind is not installed (Debian: apt-get install -y valgrind)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason}; CI must install it")
        pytest.skip(reason)
    # Six runs under valgrind, two at a time: about 150 s on an idle 2-core VM.
    out = _run_bench(SETUP_BEFORE, ["--instructions", "--encounters", "5"], tmp_path, timeout=900)
    before = re.search(r"^  before presets \(0f05aac\) +(\d+)   closing +(\d+)$", out, re.M)
    now = re.search(r"^  now \(presets\) +(\d+)   closing +(\d+)$", out, re.M)
    closing = re.search(r"^closing now/before: (\d+\.\d\d)x \(not the goal\)$", out, re.M)
    ratio = re.search(
        r"^ratio now/before: (\d+\.\d{2,6})x in instructions \(goal <= 0\.5x\): (met|missed)$",
        out,
        re.M,
    )
    assert before is not None and now is not None and ratio is not None, out
    assert closing is not None, out
    # Thousands of instructions per open and per close at the least: a start-up that did not
    # cancel out, or rounds that opened or closed nothing, would show here.
    for tree in (before, now):
        assert int(tree.group(1)) > 10_000 and int(tree.group(2)) > 10_000, out
    expected = int(now.group(1)) / int(before.group(1))
    assert abs(float(ratio.group(1)) - expected) < 0.01, out
    expected_closing = int(now.group(2)) / int(before.group(2))
    assert abs(float(closing.group(1)) - expected_closing) < 0.01, out


def test_setup_worker_closes_on_command_and_a_counted_run_leaves_no_files(
    tmp_path: Path,
) -> None:
    # A counted run ends with os._exit (no teardown to count): its world, and the runtime's
    # empty home, must still be gone, and a `close` between rounds must work.
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    worker = [str(SETUP_WORKER), str(SETUP_WORKER.parents[1]), "--encounters", "3"]
    done = subprocess.run(
        [sys.executable, *worker],
        input="keep\nclose\nkeep\n",
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**os.environ, "TMPDIR": str(scratch)},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.split() == ["ready"], done.stdout
    assert list(scratch.iterdir()) == [], done.stderr


def test_setup_before_bench_without_valgrind_says_what_to_install(tmp_path: Path) -> None:
    # A PATH with git alone: the export works, the count cannot.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    git = shutil.which("git")
    assert git is not None
    (bin_dir / "git").symlink_to(git)
    said = _setup_before_cannot_measure(
        tmp_path, "--instructions", env={**os.environ, "PATH": str(bin_dir)}
    )
    assert "--instructions needs valgrind (Debian: apt-get install -y valgrind)" in said


def test_setup_before_bench_refuses_a_count_below_one(tmp_path: Path) -> None:
    said = _setup_before_cannot_measure(tmp_path, "--pairs", "0")
    assert "--pairs and --encounters must be at least 1" in said


def test_setup_before_bench_names_a_commit_it_cannot_take(tmp_path: Path) -> None:
    said = _setup_before_cannot_measure(tmp_path, "--before", "0" * 40, "--pairs", "1")
    assert "cannot take commit 000000000000" in said
    assert "needs the repository's history" in said


LONG_SESSION = BENCH.parent / "long_session.py"


@pytest.mark.slow
def test_long_session_bench_completes_and_prints_its_figures(tmp_path: Path) -> None:
    out = _run_bench(LONG_SESSION, ["--turns", "40"], tmp_path)
    assert re.search(r"^40 turns, 80 requests, \d+ results spilled,", out, re.M), out
    assert "under the window at every turn: yes" in out, out
    assert re.search(r"^ratio last/first: \d+\.\d\dx \(goal <= 1\.5x\)", out, re.M), out
    assert re.search(r"^compactions: \d+ \(\d+ summarized\), time per compaction", out, re.M), out


RPC_ROUNDTRIP = BENCH.parent / "rpc_roundtrip.py"


@pytest.mark.slow
def test_rpc_roundtrip_bench_completes_and_prints_the_ratio(tmp_path: Path) -> None:
    out = _run_bench(RPC_ROUNDTRIP, ["--quick"], tmp_path)
    ratio = re.search(r"^ratio rpc/in-process: wall per turn (\d+\.\d+)x", out, re.M)
    assert ratio is not None and float(ratio.group(1)) > 0, out
    assert re.search(r"^  rpc +wall per turn \(median\) +\d+\.\d+ ms", out, re.M), out


CODE_MODE = BENCH.parent / "code_mode.py"


@pytest.mark.slow
def test_code_mode_bench_counts_requests_at_the_mock_and_prints_the_ratio(tmp_path: Path) -> None:
    missing = BubblewrapProvider().probe()
    if missing is not None and os.environ.get("CI") != "true":
        pytest.skip(f"bubblewrap does not work here: {missing}")
    out = _run_bench(CODE_MODE, ["--calls", "12", "--repeat", "1"], tmp_path)
    assert re.search(r"^  run_code +2 +12 ", out, re.M), out
    assert re.search(r"^  model steps +13 +12 ", out, re.M), out
    assert "model requests: run_code 2 (1 with the program + 1 final answer), model steps 13" in out
    ratio = re.search(
        r"^ratio model-steps/run_code: client CPU (\d+\.\d\d)x \(floor: run_code", out, re.M
    )
    assert ratio is not None and float(ratio.group(1)) > 0, out
    assert "checks: ok" in out, out


ARCHETYPES = BENCH.parent / "archetypes.py"


@pytest.mark.slow
def test_archetypes_bench_completes_and_prints_both_ways_and_the_ratios(tmp_path: Path) -> None:
    tiny = ["--npcs", "10", "--archetypes", "5", "--encounters", "20", "--rounds", "2"]
    out = _run_bench(ARCHETYPES, tiny, tmp_path)
    assert "10 NPCs across 5 archetypes, 20 encounters open" in out, out
    for way in ("per encounter", "presets"):
        found = re.search(
            rf"^  {way} +heap +(\d+\.\d\d) KB per encounter, setup CPU +(\d+\.\d) us", out, re.M
        )
        assert found is not None and float(found.group(1)) > 0, out
    ratio = re.search(
        r"^ratio presets/per encounter: heap (\d+\.\d\d)x .* setup CPU (\d+\.\d\d)x", out, re.M
    )
    assert ratio is not None and float(ratio.group(2)) > 0, out


STORM = BENCH.parent / "storm.py"


@pytest.mark.slow
def test_storm_bench_finishes_every_greeting_on_at_most_c_new_connections(tmp_path: Path) -> None:
    concurrency = 32  # above httpcore's keep-alive limit of 20 that closed reused connections
    tiny = ["--levels", "64", "128", "--concurrency", str(concurrency), "--service-ms", "20"]
    out = _run_bench(STORM, tiny, tmp_path)
    levels = re.findall(
        r"^  N=\s*(\d+): finished (\d+)/\d+ .* new TCP connections (\d+) \(\d+\.\d\d/greeting\)",
        out,
        re.M,
    )
    assert [(n, done) for n, done, _ in levels] == [("64", "64"), ("128", "128")], out
    assert sum(int(new) for _, _, new in levels) <= concurrency, out
    assert "bystander hello round trip" in out, out


WORKERS = BENCH.parent / "workers.py"


@pytest.mark.slow
def test_workers_bench_serves_turns_on_sqlite_and_postgresql(
    tmp_path: Path, pg_target: PostgresTarget
) -> None:
    tiny = ["--workers", "1", "2", "--encounters", "4", "--seconds", "1", "--pg", pg_target.url]
    out = _run_bench(WORKERS, tiny, tmp_path)
    rows = re.findall(r"^(\d) workers? on (sqlite|postgresql)\s+(\d+\.\d) +0 ", out, re.M)
    assert [(n, store) for n, store, _ in rows] == [
        ("1", "sqlite"),
        ("1", "postgresql"),
        ("2", "postgresql"),
    ], out
    assert all(float(turns) > 0 for _, _, turns in rows), out
    assert re.search(r"^scaling 2 workers / 1 worker on PostgreSQL: \d+\.\d\dx", out, re.M), out
    assert "every setup completed turns" in out, out


BYSTANDER = BENCH.parent / "bystander.py"


@pytest.mark.slow
def test_bystander_bench_prints_the_flood_ratios_and_the_silent_sockets(tmp_path: Path) -> None:
    out = _run_bench(BYSTANDER, ["--seconds", "1", "--silent", "20"], tmp_path)
    assert re.search(r"^  at rest: +p50 +\d+\.\d+ ms +p99 +\d+\.\d+ ms \(floor\)$", out, re.M), out
    ratios = re.findall(
        r"^  flood, (small|60 KB) frames: .* ratio (\d+\.\d+)x the floor", out, re.M
    )
    assert [kind for kind, _ in ratios] == ["small", "60 KB"], out
    assert re.search(r"goal < 5 ms (met|missed)", out), out
    assert re.search(r"^  20 silent sockets: RSS .* all shed", out, re.M), out


WS_HEAP = BENCH.parent / "ws_heap.py"


@pytest.mark.slow
def test_ws_heap_bench_prints_the_heap_per_idle_connection_both_ways(tmp_path: Path) -> None:
    out = _run_bench(WS_HEAP, ["--connections", "10", "--rounds", "2", "--top", "3"], tmp_path)
    heaps = re.findall(
        r"^  client compression (deflate offered|none).*: heap per idle connection median "
        r"(\d+\.\d\d) KB \(rounds: [\d., ]+\)",
        out,
        re.M,
    )
    # uvicorn's own protocol, then the lean one, in the same run.
    assert [kind for kind, _ in heaps] == ["deflate offered", "none"] * 2, out
    assert all(float(kb) > 0 for _, kb in heaps), out
    assert re.search(r"^ stock: the server runs websockets-sansio$", out, re.M), out
    assert re.search(r"^ lean: the server runs starharness\._fastio\.ws_lean\.", out, re.M), out
    savings = re.findall(
        r"^ (deflate offered|no compression): stock \d+\.\d\d KB, lean \d+\.\d\d KB per idle "
        r"connection: the lean protocol saves -?\d+%",
        out,
        re.M,
    )
    assert savings == ["deflate offered", "no compression"], out
