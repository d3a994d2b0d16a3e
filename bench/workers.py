"""N `serve` workers on one PostgreSQL world against the mock LLM: turns per second and p99 first
`say.delta`, with 1, 2 and 3 workers, and one worker on SQLite for comparison.

Processes: the mock LLM (bench/speaking_mock.py: every request waits `--service-ms`, then streams
one speaking call), PostgreSQL (the server `.ci/postgres` starts, or `--pg`), the workers (real
`star-harness serve` processes, each with `--world postgresql://...`, `--fanout` on the same
database and its sessions there too) and the load generator (this process). For each setup a
fresh world is made; `--encounters` encounters with the sample game's smuggler are spread over
the workers (a few per WebSocket), each greeted, then each says a line as soon as its last turn
ended (a closed loop) for `--seconds`. It prints, per setup:

- turns per second completed in the window, and turns that ended in an error;
- p50/p99 from a `say` to its first `say.delta`;
- CPU seconds spent in the window by the workers, PostgreSQL, the mock and the load generator,
  against the machine's cores: the component with the largest share is the next bottleneck;

then the scaling ratio (turns per second with N workers over 1 worker on PostgreSQL) and 1
worker on PostgreSQL over 1 on SQLite. On fewer than 4 cores nothing is pinned: every process
shares the same cores, so scaling there is bounded by the machine, and the CPU split says so.

Run: bash .ci/postgres uv run python bench/workers.py [--workers 1 2 3] [--encounters 48]
     [--seconds 8] [--service-ms 50]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(_HERE)]

from speaking_mock import speaking_mock_process  # noqa: E402

PG_URL_ENV = "STAR_HARNESS_TEST_PG"
PG_PASSWORD_ENV = "STAR_HARNESS_TEST_PG_PASSWORD"
TOKEN_ENV = "STAR_HARNESS_BENCH_SERVER_TOKEN"
TOKEN = "workers-bench-server-token-0001"
KEY_ENV = "STAR_HARNESS_BENCH_KEY"
PER_CONNECTION = 4
SMUGGLER = "npc-karsk"
PLAYER = "player-1"
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


@dataclass
class Setup:
    store: str
    workers: int

    @property
    def label(self) -> str:
        return f"{self.workers} worker{'s' if self.workers > 1 else ''} on {self.store}"


@dataclass
class Result:
    setup: Setup
    turns: int = 0
    errors: int = 0
    firsts: list[float] = field(default_factory=list[float])
    seconds: float = 0.0
    cpu: dict[str, float] = field(default_factory=dict[str, float])

    @property
    def turns_per_s(self) -> float:
        return self.turns / self.seconds if self.seconds else 0.0


# -- processes and their CPU -----------------------------------------------------------------


def _cpu_of(pid: int) -> float:
    """CPU seconds (user + system) a process has used, 0 if it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS


def _postgres_pids() -> list[int]:
    pids: list[int] = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if (entry / "comm").read_text().strip() == "postgres":
                    pids.append(int(entry.name))
    return pids


def _cpu_snapshot(workers: Sequence[subprocess.Popen[str]], mock_pid: int) -> dict[str, float]:
    return {
        "workers": sum(_cpu_of(proc.pid) for proc in workers),
        "postgresql": sum(_cpu_of(pid) for pid in _postgres_pids()),
        "mock": _cpu_of(mock_pid),
        "load": time.process_time(),
    }


@contextlib.contextmanager
def _database(url: str) -> Iterator[str]:
    """A fresh database on the server at `url`, dropped afterwards; yields its URL."""
    import psycopg
    from psycopg import sql
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    password = os.environ.get(PG_PASSWORD_ENV, "")
    name = f"bench_workers_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(make_conninfo(url, password=password), autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    params = conninfo_to_dict(url)
    try:
        yield f"postgresql://{params.get('user', '')}@{params['host']}:{params['port']}/{name}"
    finally:
        with psycopg.connect(make_conninfo(url, password=password), autocommit=True) as admin:
            admin.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


def _patch(folder: Path, database: str | None) -> Path:
    rows = [
        "- id: server",
        "  merge:",
        "    limits: {says_per_second: 1000, say_burst: 1000, opens_per_second: 1000,",
        "             open_burst: 1000}",
        "    transcripts: {keep: 0}",
        "- id: llm",
        f"  merge: {{api_key_env: {KEY_ENV}}}",
    ]
    if database is not None:
        rows += [
            "- id: sessions",
            f"  merge: {{store: postgresql, url: '{database}', password_env: {PG_PASSWORD_ENV}}}",
        ]
    path = folder / "patch.yml"
    path.write_text("\n".join(rows) + "\n")
    return path


def _start_workers(
    setup: Setup, folder: Path, mock_url: str, database: str | None
) -> tuple[list[subprocess.Popen[str]], list[dict[str, Any]]]:
    patch = _patch(folder, database)
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env |= {TOKEN_ENV: TOKEN, KEY_ENV: "bench-key", "STAR_HARNESS_HOME": str(folder / "home")}
    if database is None:
        world = ["--world", str(folder / "world.db")]
    else:
        world = ["--world", database, "--world-password-env", PG_PASSWORD_ENV]
        world += ["--fanout", database, "--fanout-password-env", PG_PASSWORD_ENV]
    procs: list[subprocess.Popen[str]] = []
    for index in range(setup.workers):
        name = f"w{index + 1}"
        log = (folder / f"{name}.log").open("w")
        command = [
            sys.executable, "-m", "starharness.cli", "serve", "--port", "0", *world,
            "--worker-id", name, "--base-url", mock_url, "--model", "bench",
            "--patch", str(patch), "--auth-token-env", TOKEN_ENV,
            "--ready-file", str(folder / f"{name}.json"),
        ]  # fmt: skip
        procs.append(
            subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, text=True)
        )
    ready: list[dict[str, Any]] = []
    for index, proc in enumerate(procs):
        path = folder / f"w{index + 1}.json"
        deadline = time.monotonic() + 120
        while not path.exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                _stop(procs)
                log = (folder / f"w{index + 1}.log").read_text()
                raise SystemExit(f"worker w{index + 1} did not start:\n{log}")
            time.sleep(0.05)
        ready.append(json.loads(path.read_text()))
    return procs, ready


def _stop(procs: Sequence[subprocess.Popen[Any]]) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.terminate()
    for proc in procs:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=30)


# -- the load ------------------------------------------------------------------------------


async def _until_ready(url: str) -> None:
    import httpx

    async with httpx.AsyncClient(base_url=url, trust_env=False) as http:
        for _ in range(1500):
            if (await http.get("/readyz")).status_code == 200:
                return
            await asyncio.sleep(0.02)
    raise SystemExit(f"{url}/readyz never answered 200")


async def _load(
    ready: Sequence[dict[str, Any]],
    encounters: int,
    seconds: float,
    snapshot: Callable[[], dict[str, float]],
) -> Result:
    """Greet every encounter, then run the closed loop for `seconds`; the window's figures
    (CPU from `snapshot()` at the window's start and end)."""
    from websockets.asyncio.client import connect

    headers = {"Authorization": f"Bearer {TOKEN}"}
    sockets_needed = math.ceil(encounters / PER_CONNECTION)
    sockets = [
        await connect(
            ready[i % len(ready)]["ws"], proxy=None, ping_interval=None, additional_headers=headers
        )
        for i in range(sockets_needed)
    ]
    result = Result(Setup("", len(ready)))
    window: list[float] = []  # [start, end] once the loop runs
    idle_events: dict[str, asyncio.Event] = {}
    said: dict[str, float] = {}
    first_seen: set[str] = set()
    failed: set[str] = set()

    async def read(ws: Any) -> None:
        async for raw in ws:
            frame = json.loads(raw)
            kind, key = frame["t"], frame.get("id")
            if kind == "say.delta" and key in said and key not in first_seen:
                first_seen.add(key)
                if window and said[key] >= window[0]:
                    result.firsts.append(time.perf_counter() - said[key])
            elif kind == "error" and key in idle_events:
                failed.add(key)
            elif kind == "encounter.idle" and key in idle_events:
                idle_events[key].set()

    readers = [asyncio.create_task(read(ws)) for ws in sockets]

    async def run(index: int) -> None:
        ws = sockets[index // PER_CONNECTION]
        key = f"e{index}"
        idle = idle_events[key] = asyncio.Event()
        await ws.send(
            json.dumps({"t": "encounter.open", "id": key, "npcId": SMUGGLER, "playerId": PLAYER})
        )
        await asyncio.wait_for(idle.wait(), 120)  # the greeting
        await started.wait()
        while time.perf_counter() < window[1]:
            idle.clear()
            first_seen.discard(key)
            failed.discard(key)
            said[key] = time.perf_counter()
            await ws.send(json.dumps({"t": "encounter.say", "id": key, "text": "Any news?"}))
            await asyncio.wait_for(idle.wait(), 120)
            if time.perf_counter() <= window[1]:
                if key in failed:
                    result.errors += 1
                else:
                    result.turns += 1

    started = asyncio.Event()
    runners = [asyncio.create_task(run(i)) for i in range(encounters)]
    while sum(1 for event in idle_events.values() if event.is_set()) < encounters:
        if any(task.done() for task in runners):
            break
        await asyncio.sleep(0.05)
    before = snapshot()
    now = time.perf_counter()
    window.extend([now, now + seconds])
    started.set()
    await asyncio.sleep(seconds)
    after = snapshot()
    result.cpu = {name: after[name] - before[name] for name in before}
    try:
        await asyncio.gather(*runners)
    finally:
        for ws in sockets:
            await ws.close()
        for task in readers:
            task.cancel()
        await asyncio.gather(*readers, return_exceptions=True)
    result.seconds = seconds
    return result


async def _measure(
    setup: Setup, mock_url: str, mock_pid: int, args: argparse.Namespace, pg: str | None
) -> Result:
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        folder = Path(tmp)
        database = stack.enter_context(_database(pg)) if pg and setup.store != "sqlite" else None
        procs, ready = _start_workers(setup, folder, mock_url, database)
        try:
            for worker in ready:
                await _until_ready(worker["url"])
            result = await _load(
                ready, args.encounters, args.seconds, lambda: _cpu_snapshot(procs, mock_pid)
            )
        finally:
            _stop(procs)
        result.setup = setup
        return result


def _percentile(values: Sequence[float], share: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(share * len(ordered)) - 1)]


def _report(results: Sequence[Result], cores: int) -> None:
    print(
        f"\n{'setup':<24} {'turns/s':>8} {'errors':>6} {'p50 ms':>8} {'p99 ms':>8}"
        "   CPU ms per turn"
    )
    for result in results:
        turns = max(1, result.turns)
        cpu = ", ".join(f"{name} {spent / turns * 1000:.2f}" for name, spent in result.cpu.items())
        print(
            f"{result.setup.label:<24} {result.turns_per_s:8.1f} {result.errors:6d} "
            f"{_percentile(result.firsts, 0.5) * 1000:8.1f} "
            f"{_percentile(result.firsts, 0.99) * 1000:8.1f}   {cpu}"
        )
    postgres = [r for r in results if r.setup.store == "postgresql"]
    one = next((r for r in postgres if r.setup.workers == 1), None)
    sqlite = next((r for r in results if r.setup.store == "sqlite"), None)
    if one is not None and one.turns_per_s:
        for result in postgres:
            if result is not one:
                print(
                    f"scaling {result.setup.workers} workers / 1 worker on PostgreSQL: "
                    f"{result.turns_per_s / one.turns_per_s:.2f}x turns/s"
                )
        if sqlite is not None and sqlite.turns_per_s:
            print(
                "1 worker PostgreSQL / 1 worker SQLite: "
                f"{one.turns_per_s / sqlite.turns_per_s:.2f}x turns/s"
            )
    for result in results:
        available = cores * result.seconds
        used = sum(result.cpu.values())
        top = max(result.cpu.items(), key=lambda item: item[1])
        print(
            f"{result.setup.label}: the processes used {used:.1f} of {available:.1f} CPU seconds"
            f" ({used / available:.0%} of {cores} cores); largest share: {top[0]} "
            f"({top[1] / used:.0%})"
            + ("; the cores are the bottleneck" if used > 0.85 * available else "")
        )


async def _main(args: argparse.Namespace) -> int:
    pg = args.pg or os.environ.get(PG_URL_ENV)
    if not pg:
        print(
            f"no PostgreSQL: set {PG_URL_ENV} (and {PG_PASSWORD_ENV}) or pass --pg; "
            "`bash .ci/postgres uv run python bench/workers.py` starts a throwaway server",
            file=sys.stderr,
        )
        return 2
    cores = len(os.sched_getaffinity(0))
    spawn = multiprocessing.get_context("spawn")
    ours, theirs = spawn.Pipe()
    # Pinned only where the machine has cores to spare for the mock.
    mock = spawn.Process(
        target=speaking_mock_process,
        args=(theirs, args.service_ms, cores - 1 if cores >= 4 else None),
        daemon=True,
    )
    mock.start()
    loop = asyncio.get_running_loop()
    mock_url: str = await loop.run_in_executor(None, ours.recv)
    setups = [Setup("sqlite", 1)] + [Setup("postgresql", n) for n in args.workers]
    pinned = "the mock pinned" if cores >= 4 else "nothing pinned"
    print(
        f"{args.encounters} encounters, closed loop for {args.seconds:g} s per setup, mock "
        f"service {args.service_ms:g} ms, {cores} cores ({pinned})"
    )
    results: list[Result] = []
    try:
        for setup in setups:
            result = await _measure(setup, mock_url, mock.pid or 0, args, pg)
            print(
                f"  {setup.label}: {result.turns_per_s:.1f} turns/s, p99 first say.delta "
                f"{_percentile(result.firsts, 0.99) * 1000:.1f} ms",
                flush=True,
            )
            results.append(result)
    finally:
        ours.send(None)
        mock.join(10)
    _report(results, cores)
    finished = all(r.turns > 0 for r in results)
    print("every setup completed turns" if finished else "a setup completed no turns")
    return 0 if finished else 1


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--encounters", type=int, default=48)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--service-ms", type=float, default=50.0)
    parser.add_argument("--pg", help=f"a PostgreSQL server URL (default: ${PG_URL_ENV})")
    args = parser.parse_args()
    if min(args.workers) < 1 or args.encounters < 1 or args.seconds <= 0:
        parser.error("--workers and --encounters must be at least 1, --seconds above 0")
    sys.exit(asyncio.run(_main(args)))


if __name__ == "__main__":
    main()
