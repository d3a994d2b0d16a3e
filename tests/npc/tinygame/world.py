"""The tiny game's world: a small SQLite file with two places, two NPCs and two players."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from starharness.npc.world import AuditRecord, Meeting, NewsItem, NpcCard

_SCHEMA = """
CREATE TABLE actors (
    id TEXT PRIMARY KEY, name TEXT NOT NULL, kind TEXT NOT NULL CHECK (kind IN ('npc','player')),
    place TEXT NOT NULL, alive INTEGER NOT NULL DEFAULT 1,
    coins INTEGER NOT NULL CHECK (coins >= 0), loaves INTEGER NOT NULL CHECK (loaves >= 0),
    archetype TEXT NOT NULL, persona TEXT NOT NULL
) STRICT;
CREATE TABLE attitudes (
    npc TEXT NOT NULL, player TEXT NOT NULL, score INTEGER NOT NULL,
    PRIMARY KEY (npc, player)
) STRICT;
CREATE TABLE audit (
    seq INTEGER PRIMARY KEY, action TEXT NOT NULL, actor TEXT NOT NULL, target TEXT,
    args TEXT NOT NULL, ok INTEGER NOT NULL, reason TEXT, summary TEXT
) STRICT;
CREATE TABLE memories (
    seq INTEGER PRIMARY KEY, npc TEXT NOT NULL, player TEXT NOT NULL, text TEXT NOT NULL
) STRICT;
CREATE TABLE clock (id INTEGER PRIMARY KEY CHECK (id = 1), day INTEGER NOT NULL) STRICT;
CREATE TABLE switches (name TEXT PRIMARY KEY, value INTEGER NOT NULL) STRICT;
"""

SCENE_MARK = "Scene:"
"""Every scene starts with this, so the offline brain can tell it from the customer's words."""

SCENE_MEMORIES = 5
"""The scene names the most recent memories only, as a real game bounds what an NPC recalls:
unbounded, every encounter of a pair would lengthen every later prompt of that pair."""

_ACTORS = [
    ("n-baker", "Bea", "npc", "square", 1, 50, 12, "baker", "You are Bea, a cheerful baker."),
    ("n-smith", "Tor", "npc", "forge", 1, 80, 0, "smith", "You are Tor, a gruff smith."),
    ("p1", "Pat", "player", "square", 1, 20, 0, "player", ""),
    ("p2", "Sam", "player", "forge", 1, 5, 0, "player", ""),
]

_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class Tx:
    """What guards and `apply` get: the connection inside `BEGIN IMMEDIATE`."""

    db: sqlite3.Connection

    def value(self, sql: str, *args: Any) -> Any:
        row = self.db.execute(sql, args).fetchone()
        return None if row is None else row[0]

    def coins(self, actor: str) -> int:
        return int(self.value("SELECT coins FROM actors WHERE id = ?", actor))

    def loaves(self, actor: str) -> int:
        return int(self.value("SELECT loaves FROM actors WHERE id = ?", actor))

    def add(self, actor: str, coins: int = 0, loaves: int = 0) -> None:
        self.db.execute(
            "UPDATE actors SET coins = coins + ?, loaves = loaves + ? WHERE id = ?",
            (coins, loaves, actor),
        )

    def switch(self, name: str) -> bool:
        return bool(self.value("SELECT value FROM switches WHERE name = ?", name))


class TinyWorld:
    """Implements `npc.world.World` over one SQLite connection shared by worker threads."""

    def __init__(self, path: Path | None) -> None:
        self._lock = threading.RLock()
        self._db = sqlite3.connect(
            str(path) if path else ":memory:", isolation_level=None, check_same_thread=False
        )
        # As docs/npc-framework.md asks of a world called on the event loop (the benches do so):
        # WAL, so a read takes no file lock of its own and a commit does not wait for the disk.
        self._db.execute("PRAGMA journal_mode = WAL")
        self._db.execute("PRAGMA synchronous = NORMAL")
        self.headline_size = 0
        """Pads every tick headline to this many characters (slow-reader tests)."""
        if self._value("SELECT count(*) FROM sqlite_master WHERE name = 'actors'") == 0:
            self._seed()

    def _seed(self) -> None:
        with self._lock:
            self._db.executescript(_SCHEMA)
            self._db.executemany("INSERT INTO actors VALUES (?,?,?,?,?,?,?,?,?)", _ACTORS)
            self._db.executemany(
                "INSERT INTO attitudes VALUES (?,?,?)",
                [("n-baker", "p1", 3), ("n-smith", "p1", -2), ("n-smith", "p2", 0)],
            )
            self._db.execute("INSERT INTO clock VALUES (1, 1)")

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _value(self, sql: str, *args: Any) -> Any:
        with self._lock:
            row = self._db.execute(sql, args).fetchone()
        return None if row is None else row[0]

    def _rows(self, sql: str, *args: Any) -> list[tuple[Any, ...]]:
        with self._lock:
            return self._db.execute(sql, args).fetchall()

    # -- GameWorld ---------------------------------------------------------------------------

    def npc(self, npc_id: str) -> NpcCard | None:
        rows = self._rows(
            "SELECT id, name, persona, archetype, alive, place FROM actors"
            " WHERE id = ? AND kind = 'npc'",
            npc_id,
        )
        if not rows:
            return None
        id_, name, persona, archetype, alive, place = rows[0]
        return NpcCard(id_, name, persona, archetype, bool(alive), place)

    def npcs(self) -> Sequence[NpcCard]:
        ids = [row[0] for row in self._rows("SELECT id FROM actors WHERE kind = 'npc' ORDER BY id")]
        return [card for card in map(self.npc, ids) if card is not None]

    def has_player(self, player_id: str) -> bool:
        return bool(self._value("SELECT 1 FROM actors WHERE id = ? AND kind = 'player'", player_id))

    def can_meet(self, npc_id: str, player_id: str) -> bool:
        return bool(
            self._value(
                "SELECT 1 FROM actors n JOIN actors p ON n.place = p.place"
                " WHERE n.id = ? AND p.id = ? AND n.alive = 1 AND p.kind = 'player'",
                npc_id,
                player_id,
            )
        )

    def meeting(self, npc_id: str, player_id: str) -> Meeting | None:
        """`npc.ReadsMeetings`: the card, the check and the attitude in one statement."""
        rows = self._rows(
            "SELECT n.id, n.name, n.persona, n.archetype, n.alive, n.place,"
            " n.alive = 1 AND EXISTS (SELECT 1 FROM actors p"
            "  WHERE p.id = ? AND p.kind = 'player' AND p.place = n.place),"
            " (SELECT score FROM attitudes WHERE npc = n.id AND player = ?)"
            " FROM actors n WHERE n.id = ? AND n.kind = 'npc'",
            player_id,
            player_id,
            npc_id,
        )
        if not rows:
            return None
        id_, name, persona, archetype, alive, place, can, score = rows[0]
        card = NpcCard(id_, name, persona, archetype, bool(alive), place)
        return Meeting(card, bool(can), int(score) if score is not None else 0)

    def player_view(self, player_id: str) -> Mapping[str, Any]:
        rows = self._rows("SELECT name, coins, loaves, place FROM actors WHERE id = ?", player_id)
        name, coins, loaves, place = rows[0]
        day = self._value("SELECT day FROM clock")
        return {"name": name, "coins": coins, "loaves": loaves, "place": place, "day": day}

    def scene(self, npc_id: str, player_id: str) -> str:
        # One statement for the day, both holdings and the attitude: a scene is read per turn.
        day, npc_coins, npc_loaves, player_coins, score = self._rows(
            "SELECT (SELECT day FROM clock), n.coins, n.loaves,"
            " (SELECT coins FROM actors WHERE id = ?),"
            " (SELECT score FROM attitudes WHERE npc = n.id AND player = ?)"
            " FROM actors n WHERE n.id = ?",
            player_id,
            player_id,
            npc_id,
        )[0]
        memories = [
            row[0]
            for row in self._rows(
                "SELECT text FROM (SELECT text, seq FROM memories WHERE npc = ? AND player = ? "
                "ORDER BY seq DESC LIMIT ?) ORDER BY seq",
                npc_id,
                player_id,
                SCENE_MEMORIES,
            )
        ]
        lines = [
            f"{SCENE_MARK} day {day}. You have {npc_coins} coins and {npc_loaves} loaves.",
            f"The customer has {player_coins} coins.",
            f"Attitude: {int(score) if score is not None else 0}.",
        ]
        if memories:
            lines.append("You remember: " + " ".join(memories))
        return "\n".join(lines)

    def attitude(self, npc_id: str, player_id: str) -> int:
        score = self._value(
            "SELECT score FROM attitudes WHERE npc = ? AND player = ?", npc_id, player_id
        )
        return int(score) if score is not None else 0

    def tick(self, days: int) -> Sequence[NewsItem]:
        events: list[NewsItem] = []
        with self.transaction() as tx:
            day = int(tx.value("SELECT day FROM clock"))
            for offset in range(1, days + 1):
                place = "square" if (day + offset) % 2 else "forge"
                headline = f"Day {day + offset} dawns."
                events.append(NewsItem(place, headline.ljust(self.headline_size, ".")))
            tx.db.execute("UPDATE clock SET day = ?", (day + days,))
        return events

    @contextmanager
    def reading(self) -> Iterator[None]:
        """`npc.ReadsTogether`: the reads inside share one read transaction (and the lock)."""
        with self._lock:
            if self._db.in_transaction:
                yield
                return
            self._db.execute("BEGIN")
            try:
                yield
            finally:
                self._db.execute("COMMIT")

    # -- ActionHost --------------------------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[Tx]:
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
        return bool(tx.value("SELECT alive FROM actors WHERE id = ?", actor_id))

    def audit(self, tx: Any | None, record: AuditRecord) -> None:
        if tx is None:
            with self.transaction() as own:
                self._write_audit(own, record)
        else:
            self._write_audit(tx, record)

    def _write_audit(self, tx: Tx, record: AuditRecord) -> None:
        tx.db.execute(
            "INSERT INTO audit (action, actor, target, args, ok, reason, summary)"
            " VALUES (?,?,?,?,?,?,?)",
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

    # -- for tests ---------------------------------------------------------------------------

    def audit_rows(self) -> list[dict[str, Any]]:
        rows = self._rows("SELECT action, actor, target, args, ok, reason, summary FROM audit")
        keys = ("action", "actor", "target", "args", "ok", "reason", "summary")
        return [dict(zip(keys, row, strict=True)) for row in rows]

    def holdings(self, actor: str) -> tuple[int, int]:
        coins, loaves = self._rows("SELECT coins, loaves FROM actors WHERE id = ?", actor)[0]
        return int(coins), int(loaves)

    def memories(self, npc: str, player: str) -> list[str]:
        rows = self._rows(
            "SELECT text FROM memories WHERE npc = ? AND player = ? ORDER BY seq", npc, player
        )
        return [row[0] for row in rows]

    def set(self, sql: str, *args: Any) -> None:
        with self.transaction() as tx:
            tx.db.execute(sql, args)

    def remember(self, npc: str, player: str, text: str) -> None:
        self.set("INSERT INTO memories (npc, player, text) VALUES (?,?,?)", npc, player, text)


def open_world(path: Path | None) -> TinyWorld:
    """Open (seeding on first use) the world at `path`, or a fresh in-memory one."""
    return TinyWorld(path)
