"""What a turn's lore costs at 10,000 entries, against the same search over 10 entries.

A turn's lore is `npc.lore.recall`: the player's line cut to search words, one full-text search
in the database (SQLite FTS5 here), the knowers filter and the budget. The entries are made up
from a fixed vocabulary (seeded; content words Zipf-distributed), a tenth for one faction or
one NPC; the player lines use the same words. The floor is the same recall over 10 entries,
measured in the same run; a bare SQLite primary-key lookup is printed beside it for scale.
Indexed search reads only the rows that share a word with the line, and words too common to
tell entries apart are not ranked (`npc.lore.index.COMMON_MATCHES`), so the ratio stays far
below the 1,000x a scan would cost.

Run: uv run python bench/lore.py [--entries 10 10000] [--lines 200]
With `--postgres URL [--password-env NAME]` the same runs on PostgreSQL (a tsvector column with
a GIN index, in a schema `lore_bench` it creates and drops), e.g. against a throwaway server:
`bash .ci/postgres sh -c 'uv run python bench/lore.py --postgres "$STAR_HARNESS_TEST_PG"
--password-env STAR_HARNESS_TEST_PG_PASSWORD'`.
"""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Literal

from starharness.npc.lore import (
    Lore,
    LoreEntry,
    LoreQuery,
    MemoryLoreIndex,
    install_lore,
    recall,
    search_lore,
)
from starharness.runtime.session.postgres import PostgresTarget

GOAL_RATIO = 10.0
"""The most a recall at the largest count may cost against the floor."""
_SEED = 34
_VOCABULARY = 3_000
_FACTIONS = ("crew", "authority", "coop", "navy")
_NPCS = tuple(f"npc-{n}" for n in range(12))


_STOPWORD_RANKS = 60
"""Prose's most frequent words are function words, which a game's stopwords remove: the
content words here follow Zipf's law from the rank after them."""
_WEIGHTS = [1 / rank for rank in range(_STOPWORD_RANKS + 1, _STOPWORD_RANKS + 1 + _VOCABULARY)]
_VOCAB = [f"w{n}" for n in range(_VOCABULARY)]


def _words(rng: random.Random, count: int) -> list[str]:
    return rng.choices(_VOCAB, weights=_WEIGHTS, k=count)


def _lore(count: int) -> Lore:
    rng = random.Random(_SEED)
    entries: list[LoreEntry] = []
    for index in range(count):
        kind = index % 10
        entries.append(
            LoreEntry(
                f"e{index}",
                " ".join(_words(rng, rng.randint(12, 25))) + ".",
                tuple(dict.fromkeys(_words(rng, 3))),
                faction=_FACTIONS[index % len(_FACTIONS)] if kind == 8 else None,
                npc=_NPCS[index % len(_NPCS)] if kind == 9 else None,
            )
        )
    factions = {npc: (_FACTIONS[n % len(_FACTIONS)],) for n, npc in enumerate(_NPCS)}
    return Lore(entries, factions=factions, stopwords=frozenset())


def _lines(count: int) -> list[str]:
    rng = random.Random(_SEED + 1)
    return [" ".join(_words(rng, 8)) + "?" for _ in range(count)]


def _median_us(run: Callable[[str], object], lines: list[str], rounds: int = 5) -> float:
    times: list[float] = []
    for _ in range(rounds):
        for line in lines:
            begun = time.perf_counter()
            run(line)
            times.append((time.perf_counter() - begun) * 1e6)
    return statistics.median(times)


def _bare_lookup_us(lines: list[str]) -> float:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE t (id TEXT PRIMARY KEY, body TEXT NOT NULL)")
    conn.executemany("INSERT INTO t VALUES (?, ?)", [(f"e{n}", "x") for n in range(10)])
    return _median_us(
        lambda _: conn.execute("SELECT body FROM t WHERE id = 'e3'").fetchall(), lines
    )


Search = Callable[[LoreQuery], Sequence[LoreEntry]]


class _PgDriver:
    """`LoreDriver` over one psycopg connection in autocommit (`?` placeholders as `%s`)."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn

    @property
    def dialect(self) -> Literal["postgresql"]:
        return "postgresql"

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        cursor = self.conn.execute(sql.replace("?", "%s").encode(), tuple(params) or None)
        return list(cursor.fetchall()) if cursor.description else []

    def many(self, sql: str, seq: Iterable[Sequence[Any]]) -> None:
        with self.conn.cursor() as cursor:
            cursor.executemany(sql.replace("?", "%s").encode(), [tuple(p) for p in seq])


@contextmanager
def _sqlite_index(lore: Lore) -> Iterator[Search]:
    index = MemoryLoreIndex(lore)
    try:
        yield index.search
    finally:
        index.close()


@contextmanager
def _postgres_index(target: PostgresTarget, lore: Lore) -> Iterator[Search]:
    with target.connect(autocommit=True) as conn:
        driver = _PgDriver(conn)
        driver.rows("DROP SCHEMA IF EXISTS lore_bench CASCADE")
        driver.rows("CREATE SCHEMA lore_bench")
        try:
            driver.rows("SET search_path TO lore_bench")
            with conn.transaction():
                install_lore(driver, lore)
            driver.rows("ANALYZE lore_bench.lore_index")
            yield lambda query: search_lore(driver, query)
        finally:
            driver.rows("DROP SCHEMA lore_bench CASCADE")


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").partition("\n")[0])
    parser.add_argument("--entries", type=int, nargs="+", default=[10, 10_000])
    parser.add_argument("--lines", type=int, default=200)
    parser.add_argument("--postgres", metavar="URL", help="run on this PostgreSQL database")
    parser.add_argument("--password-env", metavar="NAME", help="the variable holding its password")
    args = parser.parse_args()
    if min(args.entries) < 1 or args.lines < 1:
        parser.error("--entries and --lines must be at least 1")
    target = None if args.postgres is None else PostgresTarget(args.postgres, args.password_env)
    lines = _lines(args.lines)
    results: list[tuple[int, float, float]] = []
    for count in args.entries:
        lore = _lore(count)
        index = _sqlite_index(lore) if target is None else _postgres_index(target, lore)
        with index as search:
            given: list[int] = []

            def turn(
                line: str, lore: Lore = lore, search: Search = search, given: list[int] = given
            ) -> None:
                given.append(len(recall(lore, search, _NPCS[0], line)))

            results.append((count, _median_us(turn, lines), statistics.mean(given)))
    floor = results[0][1]
    load = os.getloadavg()[0]
    where = f"SQLite {sqlite3.sqlite_version}" if target is None else target.describe()
    print(f"lore recall per turn (median of {5 * args.lines}), {where},"
          f" load average {load:.1f} on {os.cpu_count()} cores:")  # fmt: skip
    print(f"  bare SQLite primary-key lookup: {_bare_lookup_us(lines):.1f} us (for scale)")
    worst = 0.0
    for count, us, mean_given in results:
        ratio = us / floor
        worst = max(worst, ratio)
        print(f"  {count:>6} entries: {us:8.1f} us  {mean_given:.1f} entries given"
              f"  ratio to {results[0][0]}: {ratio:.2f}  (goal <= {GOAL_RATIO})")  # fmt: skip
    return 0 if worst <= GOAL_RATIO else 1


if __name__ == "__main__":
    sys.exit(main())
