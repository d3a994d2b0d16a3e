"""Session store write cost: SQLite (the floor, measured in the same run) against PostgreSQL.

S sessions stream E events each (chunk-sized data, as a streaming turn writes) through one
SessionService; prints events per second until durable, the flush latency after each round
(p50/p99), and the PostgreSQL/SQLite ratio. PostgreSQL: --url (no password in it) and
--password-env, or STAR_HARNESS_TEST_PG / STAR_HARNESS_TEST_PG_PASSWORD as `.ci/postgres` sets.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from starharness.runtime.session import SessionService, SessionStore, SqliteStore
from starharness.runtime.session import event_types as ev
from starharness.runtime.session.postgres import PostgresStore, PostgresTarget


@dataclass(frozen=True)
class Figures:
    events: int
    seconds: float
    flushes: list[float]

    @property
    def per_second(self) -> float:
        return self.events / self.seconds

    def line(self, name: str) -> str:
        ordered = sorted(self.flushes)
        p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
        return (
            f"  {name:<10} {self.per_second:>10,.0f} events/s durable"
            f"   flush p50 {statistics.median(ordered) * 1000:6.1f} ms"
            f"   p99 {p99 * 1000:6.1f} ms   ({self.events} events)"
        )


async def _run(store: SessionStore, sessions: int, rounds: int, per_round: int) -> Figures:
    service = SessionService(store)
    run = uuid.uuid4().hex[:8]  # a shared store may hold earlier runs' sessions
    live = [service.create(f"bench-{run}-{n}") for n in range(sessions)]
    flushes: list[float] = []
    started = time.perf_counter()
    for turn in range(rounds):
        for session in live:
            for step in range(per_round):
                chunk = {"type": "text-delta", "text": "word " * (1 + step % 12)}
                session.append(ev.ASSISTANT_CHUNK, {"turn": turn, "step": 1, "chunk": chunk})
        asked = time.perf_counter()
        await service.flush()
        flushes.append(time.perf_counter() - asked)
    seconds = time.perf_counter() - started
    for session in live:
        service.close(session.id)
        store.delete(session.id)
    await service.aclose()
    return Figures(sessions * rounds * per_round, seconds, flushes)


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--per-round", type=int, default=25, help="events per session per round")
    parser.add_argument("--url", default=os.environ.get("STAR_HARNESS_TEST_PG"))
    parser.add_argument("--password-env", default="STAR_HARNESS_TEST_PG_PASSWORD")
    args = parser.parse_args()
    if not args.url:
        print("no PostgreSQL: pass --url or run under `bash .ci/postgres`", file=sys.stderr)
        return 2
    target = PostgresTarget(args.url, args.password_env or None)
    shape = (args.sessions, args.rounds, args.per_round)
    print(
        f"{args.sessions} sessions x {args.rounds} rounds x {args.per_round} events,"
        f" a flush after each round; PostgreSQL at {target.describe()}"
    )
    with tempfile.TemporaryDirectory() as home:
        sqlite = await _run(await SqliteStore.open(Path(home) / "s.db"), *shape)
    with target.connect() as conn:
        fsync = conn.execute("SHOW fsync").fetchone()
    postgres_store = await PostgresStore.open(target)
    postgres = await _run(postgres_store, *shape)
    print(sqlite.line("sqlite"))
    print(postgres.line("postgresql"))
    print(
        f"ratio postgresql/sqlite: {postgres.per_second / sqlite.per_second:.2f}x events/s"
        f" (floor: SQLite in this run), {postgres_store.transactions} transactions"
    )
    if fsync is not None and fsync[0] == "off":
        print("note: this server runs with fsync=off (a test cluster): its commits skip the disk")
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
