"""The world: one SQLite file with a market, the stall keeper and the customer."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable, Generator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from starharness.npc import AuditRecord, NewsItem, NpcCard

from .persona import MIRA_PERSONA

PLAYER_ID = "player-1"
"""The browser client's default player."""
KEEPER = "npc-mira"
MARKET = "market"
PRICE = 3
"""Coins a cup."""
FULL_POT = 12
SCENE_MARK = "Scene:"
"""Every scene starts with this, so the offline brain can tell it from the customer's words."""

_SCHEMA = """
CREATE TABLE places (id TEXT PRIMARY KEY, name TEXT NOT NULL) STRICT;
CREATE TABLE actors (
    id TEXT PRIMARY KEY, name TEXT NOT NULL, kind TEXT NOT NULL CHECK (kind IN ('npc','player')),
    place TEXT NOT NULL REFERENCES places (id), alive INTEGER NOT NULL DEFAULT 1,
    coins INTEGER NOT NULL CHECK (coins >= 0), cups INTEGER NOT NULL CHECK (cups >= 0),
    persona TEXT NOT NULL
) STRICT;
CREATE TABLE attitudes (
    npc TEXT NOT NULL, player TEXT NOT NULL,
    score INTEGER NOT NULL CHECK (score BETWEEN -10 AND 10), PRIMARY KEY (npc, player)
) STRICT;
CREATE TABLE memories (
    seq INTEGER PRIMARY KEY, npc TEXT NOT NULL, player TEXT NOT NULL, text TEXT NOT NULL
) STRICT;
CREATE TABLE audit (
    seq INTEGER PRIMARY KEY, action TEXT NOT NULL, actor TEXT NOT NULL, target TEXT,
    args TEXT NOT NULL, ok INTEGER NOT NULL, reason TEXT, summary TEXT
) STRICT;
CREATE TABLE clock (id INTEGER PRIMARY KEY CHECK (id = 1), day INTEGER NOT NULL) STRICT;
"""

_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class Tx:
    """What guards and `apply` get: the connection inside `BEGIN IMMEDIATE`."""

    db: sqlite3.Connection

    def coins(self, actor: str) -> int:
        return int(self.db.execute("SELECT coins FROM actors WHERE id = ?", (actor,)).fetchone()[0])

    def cups(self, actor: str) -> int:
        return int(self.db.execute("SELECT cups FROM actors WHERE id = ?", (actor,)).fetchone()[0])

    def move(self, actor: str, *, coins: int = 0, cups: int = 0) -> None:
        self.db.execute(
            "UPDATE actors SET coins = coins + ?, cups = cups + ? WHERE id = ?",
            (coins, cups, actor),
        )

    def warm(self, npc: str, player: str, by: int) -> None:
        self.db.execute(
            "INSERT INTO attitudes VALUES (?, ?, max(-10, min(10, ?))) ON CONFLICT (npc, player) "
            "DO UPDATE SET score = max(-10, min(10, score + ?))",
            (npc, player, by, by),
        )


class StarterWorld:
    """Implements the framework's `World` over one SQLite connection."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._db = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode = WAL")
        if not self._value("SELECT count(*) FROM sqlite_master WHERE name = 'actors'"):
            self._seed()

    def _seed(self) -> None:
        with self.transaction() as tx:
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    tx.db.execute(statement)
            tx.db.execute("INSERT INTO places VALUES (?, ?)", (MARKET, "the market"))
            tx.db.executemany(
                "INSERT INTO actors (id, name, kind, place, coins, cups, persona) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (KEEPER, "Mira", "npc", MARKET, 0, FULL_POT, MIRA_PERSONA),
                    (PLAYER_ID, "Sam", "player", MARKET, 20, 0, ""),
                ],
            )
            tx.db.execute("INSERT INTO clock VALUES (1, 1)")

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _value(self, sql: str, *args: Any) -> Any:
        with self._lock:
            row = self._db.execute(sql, args).fetchone()
        return None if row is None else row[0]

    # -- what the framework reads ------------------------------------------------------------

    def npc(self, npc_id: str) -> NpcCard | None:
        with self._lock:
            row = self._db.execute(
                "SELECT id, name, persona, alive, place FROM actors WHERE id = ? AND kind = 'npc'",
                (npc_id,),
            ).fetchone()
        if row is None:
            return None
        return NpcCard(row[0], row[1], row[2], "tea seller", bool(row[3]), row[4])

    def npcs(self) -> Sequence[NpcCard]:
        with self._lock:
            ids = [r[0] for r in self._db.execute("SELECT id FROM actors WHERE kind = 'npc'")]
        return [card for card in map(self.npc, ids) if card is not None]

    def has_player(self, player_id: str) -> bool:
        return bool(self._value("SELECT 1 FROM actors WHERE id = ? AND kind = 'player'", player_id))

    def can_meet(self, npc_id: str, player_id: str) -> bool:
        return bool(
            self._value(
                "SELECT 1 FROM actors n JOIN actors p ON n.place = p.place "
                "WHERE n.id = ? AND p.id = ? AND n.alive = 1 AND p.kind = 'player'",
                npc_id,
                player_id,
            )
        )

    def player_view(self, player_id: str) -> Mapping[str, Any]:
        with self._lock:
            name, coins, cups, place = self._db.execute(
                "SELECT name, coins, cups, place FROM actors WHERE id = ?", (player_id,)
            ).fetchone()
            place_name = self._db.execute(
                "SELECT name FROM places WHERE id = ?", (place,)
            ).fetchone()[0]
            attitudes = dict(
                self._db.execute("SELECT npc, score FROM attitudes WHERE player = ?", (player_id,))
            )
        return {
            "playerId": player_id,
            "name": name,
            "coins": coins,
            "cups": cups,
            "day": self._value("SELECT day FROM clock"),
            "location": {"id": place, "name": place_name},
            "attitudes": attitudes,
        }

    def scene(self, npc_id: str, player_id: str) -> str:
        with self._lock:
            tea = self._db.execute("SELECT cups FROM actors WHERE id = ?", (npc_id,)).fetchone()
            coins = self._db.execute("SELECT coins FROM actors WHERE id = ?", (player_id,))
            remembered = [
                r[0]
                for r in self._db.execute(
                    "SELECT text FROM memories WHERE npc = ? AND player = ? ORDER BY seq DESC "
                    "LIMIT 3",
                    (npc_id, player_id),
                )
            ]
            player_coins = coins.fetchone()[0]
        lines = [
            f"{SCENE_MARK} day {self._value('SELECT day FROM clock')} at the market.",
            f"You have {tea[0]} cups of tea; a cup costs {PRICE} coins.",
            f"The customer has {player_coins} coins.",
            f"Your attitude to the customer: {self.attitude(npc_id, player_id)}.",
        ]
        if remembered:
            lines.append("You remember: " + " ".join(reversed(remembered)))
        return "\n".join(lines)

    def attitude(self, npc_id: str, player_id: str) -> int:
        score = self._value(
            "SELECT score FROM attitudes WHERE npc = ? AND player = ?", npc_id, player_id
        )
        return int(score) if score is not None else 0

    def tick(self, days: int) -> Sequence[NewsItem]:
        with self.transaction() as tx:
            tx.db.execute("UPDATE clock SET day = day + ?", (days,))
            tx.db.execute(
                "UPDATE actors SET cups = min(?, cups + ?) WHERE id = ?",
                (FULL_POT, 4 * days, KEEPER),
            )
        return [NewsItem(MARKET, "Mira brews a fresh pot of tea.")]

    def remember(self, npc_id: str, player_id: str, text: str) -> None:
        with self.transaction() as tx:
            tx.db.execute(
                "INSERT INTO memories (npc, player, text) VALUES (?, ?, ?)",
                (npc_id, player_id, text),
            )

    # -- how actions write -------------------------------------------------------------------

    @contextmanager
    def reading(self) -> Generator[None, None, None]:
        """Reads inside share one read transaction: the framework opens an encounter in one."""
        with self._lock:
            if self._db.in_transaction:
                yield
                return
            self._db.execute("BEGIN")
            try:
                yield
            finally:
                self._db.execute("COMMIT")

    @contextmanager
    def transaction(self) -> Generator[Tx]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield Tx(self._db)
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def run_action(self, work: Callable[[Tx], _T]) -> _T:
        """One transaction: SQLite's `BEGIN IMMEDIATE` never conflicts, so work runs once."""
        with self.transaction() as tx:
            return work(tx)

    def is_alive(self, tx: Any, actor_id: str) -> bool:
        row = tx.db.execute("SELECT alive FROM actors WHERE id = ?", (actor_id,)).fetchone()
        return bool(row and row[0])

    def audit(self, tx: Any | None, record: AuditRecord) -> None:
        if tx is None:
            with self.transaction() as own:
                self._audit(own, record)
        else:
            self._audit(tx, record)

    def _audit(self, tx: Tx, record: AuditRecord) -> None:
        tx.db.execute(
            "INSERT INTO audit (action, actor, target, args, ok, reason, summary) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                record.action,
                record.actor_id,
                record.target_id,
                json.dumps(dict(record.arguments), sort_keys=True),
                int(record.ok),
                record.reason,
                record.summary,
            ),
        )
