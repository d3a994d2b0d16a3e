"""Lore in a database, searched with its own full-text search: SQLite FTS5, or a PostgreSQL
`tsvector` column with a GIN index. Nothing is downloaded and no model embeds anything.

The index is derived from the game's declaration: `install_lore` creates its two tables when
missing and rewrites them when the declaration changed (a digest says so), so a world file or
database made before the game had lore, or with older lore, gets the current lore on open.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from typing import Any, Final, Literal, Protocol

from .declaration import Lore, LoreEntry, LoreQuery, entry_from_row
from .words import fts5_match, websearch_text

INDEX_TABLE = "lore_index"
DIGEST_TABLE = "lore_digest"
TERMS_TABLE = "lore_terms"
"""PostgreSQL: how many entries hold each lexeme (`ts_stat`), for COMMON_MATCHES."""
_FORMAT = "2"
"""Part of the stored digest: a change to the tables' layout rebuilds them."""

Row = tuple[Any, ...]


class LoreDriver(Protocol):
    """One open transaction's statements, written with `?` placeholders (a world's driver)."""

    @property
    def dialect(self) -> Literal["sqlite", "postgresql"]: ...

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[Row]: ...

    def many(self, sql: str, seq: Iterable[Sequence[Any]]) -> None: ...


_SQLITE_TABLES = (
    # Porter stemming: "routes" finds "route". Tags weigh double in the ranking (see _SEARCH).
    f"CREATE VIRTUAL TABLE IF NOT EXISTS {INDEX_TABLE} USING fts5(body, tags, id UNINDEXED, "
    "knower UNINDEXED, tokenize = 'porter unicode61 remove_diacritics 2')",
    f"CREATE TABLE IF NOT EXISTS {DIGEST_TABLE} (id INTEGER PRIMARY KEY CHECK (id = 1), "
    "digest TEXT NOT NULL) STRICT",
)
_POSTGRES_TABLES = (
    f"CREATE TABLE IF NOT EXISTS {INDEX_TABLE} (id text PRIMARY KEY, body text NOT NULL, "
    "tags text NOT NULL, knower text NOT NULL, document tsvector GENERATED ALWAYS AS "
    "(setweight(to_tsvector('english', tags), 'A') || "
    "setweight(to_tsvector('english', body), 'B')) STORED)",
    f"CREATE INDEX IF NOT EXISTS {INDEX_TABLE}_document ON {INDEX_TABLE} USING gin (document)",
    f"CREATE TABLE IF NOT EXISTS {DIGEST_TABLE} (id integer PRIMARY KEY CHECK (id = 1), "
    "digest text NOT NULL)",
    f"CREATE TABLE IF NOT EXISTS {TERMS_TABLE} (term text PRIMARY KEY, entries integer NOT NULL)",
)
COMMON_MATCHES: Final = 100
"""A word in more entries than this is too common to rank by when the line has rarer ones."""
# Each word's matches, counted up to a cap (the cap keeps a common word's count cheap), for
# all the words in one statement: one round trip to a database server.
_SQLITE_COUNTS = (
    "SELECT word.value, (SELECT count(*) FROM (SELECT 1 FROM "
    f"{INDEX_TABLE} WHERE {INDEX_TABLE} MATCH '\"' || replace(word.value, '\"', '\"\"') || '\"' "
    "LIMIT ?)) FROM json_each(?) AS word"
)
# PostgreSQL: from the lexeme counts written with the lore (a bitmap scan per word costs
# more than the search); a word the configuration drops (a stop word) counts 0.
_POSTGRES_COUNTS = (
    f"SELECT word, coalesce((SELECT max(entries) FROM {TERMS_TABLE} WHERE term = ANY("
    "tsvector_to_array(to_tsvector('english', word)))), 0) FROM unnest(?::text[]) AS word"
)
_SQLITE_SEARCH = (
    f"SELECT id, body, tags, knower FROM {INDEX_TABLE} WHERE {INDEX_TABLE} MATCH ? "
    "AND knower IN (SELECT value FROM json_each(?)) "
    f"ORDER BY bm25({INDEX_TABLE}, 1.0, 2.0), id LIMIT ?"
)
_POSTGRES_SEARCH = (
    f"SELECT id, body, tags, knower FROM {INDEX_TABLE}, "
    "websearch_to_tsquery('english', ?) AS query "
    "WHERE document @@ query AND knower = ANY(?) "
    "ORDER BY ts_rank_cd(document, query) DESC, id LIMIT ?"
)


def lore_digest(lore: Lore) -> str:
    return f"{_FORMAT}:{lore.digest()}"


def lore_is_current(driver: LoreDriver, lore: Lore) -> bool:
    """Whether the index holds exactly this declaration (False when it has no tables yet)."""
    table = _digest_table_exists(driver)
    if not table:
        return False
    found = driver.rows(f"SELECT digest FROM {DIGEST_TABLE} WHERE id = 1")
    return bool(found) and found[0][0] == lore_digest(lore)


def install_lore(driver: LoreDriver, lore: Lore) -> bool:
    """Create the tables if missing and make them hold `lore`; call in a write transaction.
    Returns whether anything was written."""
    tables = _SQLITE_TABLES if driver.dialect == "sqlite" else _POSTGRES_TABLES
    for statement in tables:
        driver.rows(statement)
    if lore_is_current(driver, lore):
        return False
    driver.rows(f"DELETE FROM {INDEX_TABLE}")
    driver.many(
        f"INSERT INTO {INDEX_TABLE} (id, body, tags, knower) VALUES (?, ?, ?, ?)",
        [(e.id, e.text, " ".join(e.tags), e.knower) for e in lore.entries],
    )
    if driver.dialect == "postgresql":
        driver.rows(f"DELETE FROM {TERMS_TABLE}")
        driver.rows(
            f"INSERT INTO {TERMS_TABLE} (term, entries) "
            f"SELECT word, ndoc FROM ts_stat('SELECT document FROM {INDEX_TABLE}')"
        )
    driver.rows(f"DELETE FROM {DIGEST_TABLE}")
    driver.rows(f"INSERT INTO {DIGEST_TABLE} (id, digest) VALUES (1, ?)", (lore_digest(lore),))
    return True


def search_lore(driver: LoreDriver, query: LoreQuery) -> list[LoreEntry]:
    """The entries matching the query's words that its knowers may know, best first.

    Ranking costs a little per matching entry, so words found in more than COMMON_MATCHES
    entries are left out when the line has rarer ones (they tell entries apart too little to
    be worth ranking thousands); a line of only common words finds the entries with all of
    them. Either way a turn ranks a bounded number of entries however large the lore.
    """
    words, every = _telling(driver, query.words)
    if not words:
        return []
    if driver.dialect == "sqlite":
        params: tuple[Any, ...] = (fts5_match(words, every), json.dumps(query.knowers))
        rows = driver.rows(_SQLITE_SEARCH, (*params, query.limit))
    else:
        text = websearch_text(words, every)
        rows = driver.rows(_POSTGRES_SEARCH, (text, list(query.knowers), query.limit))
    return [entry_from_row(str(r[0]), str(r[1]), str(r[2]), str(r[3])) for r in rows]


def _telling(driver: LoreDriver, words: tuple[str, ...]) -> tuple[tuple[str, ...], bool]:
    """The words to search for, and whether an entry must have all of them: the words that
    match at most COMMON_MATCHES entries, else (all common) every word that matches any."""
    if not words:
        return (), False
    counts = dict.fromkeys(words, 0)
    if driver.dialect == "sqlite":
        found = driver.rows(_SQLITE_COUNTS, (COMMON_MATCHES + 1, json.dumps(words)))
    else:
        found = driver.rows(_POSTGRES_COUNTS, (list(words),))
    for word, count in found:
        counts[str(word)] = int(count)
    rare = tuple(w for w in words if 0 < counts[w] <= COMMON_MATCHES)
    if rare:
        return rare, False
    return tuple(w for w in words if counts[w] > 0), True


def _digest_table_exists(driver: LoreDriver) -> bool:
    if driver.dialect == "sqlite":
        sql = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?"
    else:
        sql = "SELECT 1 FROM pg_tables WHERE schemaname = current_schema() AND tablename = ?"
    return bool(driver.rows(sql, (DIGEST_TABLE,)))


class SqliteLoreDriver:
    """`LoreDriver` over a bare sqlite3 connection."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    @property
    def dialect(self) -> Literal["sqlite"]:
        return "sqlite"

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        return self.conn.execute(sql, tuple(params)).fetchall()

    def many(self, sql: str, seq: Iterable[Sequence[Any]]) -> None:
        self.conn.executemany(sql, [tuple(p) for p in seq])


class MemoryLoreIndex:
    """The lore in an in-memory SQLite FTS5 index of its own, for a world that holds none
    (`SearchesLore`). Thread-safe: searches take turns on one connection."""

    def __init__(self, lore: Lore) -> None:
        conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        self._driver = SqliteLoreDriver(conn)
        self._lock = threading.Lock()
        conn.execute("BEGIN")
        install_lore(self._driver, lore)
        conn.execute("COMMIT")

    def search(self, query: LoreQuery) -> list[LoreEntry]:
        with self._lock:
            return search_lore(self._driver, query)

    def close(self) -> None:
        with self._lock:
            self._driver.conn.close()
