"""The Omega station world: the framework's GameWorld and ActionHost over one SQLite file."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Generator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from starharness.npc.world import AuditRecord, NewsItem, NpcCard

from ..content import OMEGA_STATION, WorldSeed
from ..paths import default_world_path
from .clock import ClockRules, advance
from .connection import (
    DEFAULT_BUSY_TIMEOUT_S,
    connect,
    drop_all_tables,
    inspect,
    install_schema,
    read_snapshot,
    refuse_unless_ours,
    write_transaction,
)
from .errors import TransactionStateError, UnknownEntityError, WorldError
from .memory import MemoryBudget
from .reader import WorldReader
from .rows import Actor
from .scene import gather_scene, render_scene
from .seeding import insert_seed
from .transaction import WorldTx

HUD_NEWS = 8
"""How many of the latest headlines the HUD carries."""


class VoyageWorld:
    """One connection to a world file. Thread-safe: calls on one VoyageWorld take turns.

    Every method blocks on SQLite; async callers run them in a worker thread.
    """

    def __init__(
        self,
        conn: sqlite3.Connection,
        path: Path,
        *,
        memory_budget: MemoryBudget | None = None,
        clock_rules: ClockRules | None = None,
    ) -> None:
        self._conn = conn
        self._path = path
        self._lock = threading.RLock()
        self._closed = False
        self._memory_budget = memory_budget or MemoryBudget()
        self._clock_rules = clock_rules or ClockRules()

    @property
    def path(self) -> Path:
        return self._path

    def close(self) -> None:
        with self._lock:
            if not self._closed:
                self._closed = True
                self._conn.close()

    def __enter__(self) -> VoyageWorld:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # transactions

    @contextmanager
    def transaction(self) -> Generator[WorldTx, None, None]:
        """`BEGIN IMMEDIATE` ... `COMMIT`; an exception inside rolls every write back."""
        with self._lock:
            self._require_open()
            with write_transaction(self._conn):
                tx = WorldTx(self._conn, self)
                try:
                    yield tx
                finally:
                    tx.end()

    @contextmanager
    def snapshot(self) -> Generator[WorldReader, None, None]:
        """A read-only view in which every read sees the same moment."""
        with self._lock:
            self._require_open()
            with read_snapshot(self._conn):
                reader = WorldReader(self._conn, self)
                try:
                    yield reader
                finally:
                    reader.end()

    def is_alive(self, tx: Any, actor_id: str) -> bool:
        """Whether the actor lives, read inside the action's transaction."""
        return self._own_tx(tx).is_alive(actor_id)

    def audit(self, tx: Any | None, record: AuditRecord) -> None:
        """Store an audit row in tx, or in a transaction of its own when tx is None."""
        if tx is not None:
            self._own_tx(tx).record_audit(record)
            return
        with self.transaction() as own:
            own.record_audit(record)

    # the framework's read side

    def npc(self, npc_id: str) -> NpcCard | None:
        with self.snapshot() as reader:
            found = reader.actor(npc_id)
        return _card(found) if found is not None and found.kind == "npc" else None

    def npcs(self) -> Sequence[NpcCard]:
        with self.snapshot() as reader:
            return [_card(actor) for actor in reader.npcs()]

    def has_player(self, player_id: str) -> bool:
        with self.snapshot() as reader:
            found = reader.actor(player_id)
        return found is not None and found.kind == "player"

    def can_meet(self, npc_id: str, player_id: str) -> bool:
        """True when the NPC is alive and at the player's location."""
        with self.snapshot() as reader:
            npc = reader.actor(npc_id)
            player = reader.actor(player_id)
        return (
            npc is not None
            and npc.kind == "npc"
            and npc.alive
            and player is not None
            and player.kind == "player"
            and npc.location_id == player.location_id
        )

    def player_view(self, player_id: str) -> dict[str, Any]:
        """The HUD: credits, location, cargo, day and NPCs' attitudes, as JSON-able data."""
        with self.snapshot() as reader:
            player = reader.actor(player_id)
            if player is None or player.kind != "player":
                raise UnknownEntityError("player", player_id)
            location = reader.location(player.location_id)
            names = {good.id: good.name for good in reader.goods()}
            hold = reader.cargo(player_id)
            day = reader.day()
            attitudes = reader.attitudes_towards(player_id)
            news = reader.latest_news(HUD_NEWS)
        return {
            "playerId": player.id,
            "name": player.name,
            "credits": player.credits,
            "day": day,
            "location": {
                "id": player.location_id,
                "name": location.name if location else player.location_id,
            },
            "cargo": [
                {"goodId": good, "name": names.get(good, good), "qty": qty}
                for good, qty in hold.items()
            ],
            "attitudes": attitudes,
            # A page opened after the news keeps its ticker: welcome carries the latest.
            "news": [
                {"locationId": item.location_id, "day": item.day, "headline": item.headline}
                for item in news
            ],
        }

    def scene(self, npc_id: str, player_id: str) -> str:
        """What the NPC sees now, memories of the player folded to fit the budget."""
        with self.snapshot() as reader:
            data = gather_scene(reader, npc_id, player_id)
        return render_scene(data, self._memory_budget)

    def attitude(self, npc_id: str, player_id: str) -> int:
        with self.snapshot() as reader:
            return reader.attitude(npc_id, player_id)

    def tick(self, days: int) -> list[NewsItem]:
        """Advance the clock by days (1..365): prices drift, stock refills, news happens."""
        with self.transaction() as tx:
            return advance(tx, days, self._clock_rules)

    # helpers

    def _require_open(self) -> None:
        if self._closed:
            raise WorldError(f"the world at {self._path} is closed")

    def _own_tx(self, tx: object) -> WorldTx:
        if not isinstance(tx, WorldTx) or tx.owner is not self:
            raise TransactionStateError(
                f"expected a transaction of this VoyageWorld, got {type(tx).__name__}"
            )
        return tx


def open_world(
    path: Path | None = None,
    *,
    seed: WorldSeed = OMEGA_STATION,
    busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S,
    memory_budget: MemoryBudget | None = None,
    clock_rules: ClockRules | None = None,
) -> VoyageWorld:
    """Open the world at path (default: `default_world_path()`), creating and seeding it once."""
    path = path or default_world_path()
    conn = connect(path, busy_timeout_s)
    try:
        state = inspect(conn)
        if state.is_empty:
            with write_transaction(conn):
                # Another process may have seeded the file since we looked.
                state = inspect(conn)
                if state.is_empty:
                    install_schema(conn)
                    insert_seed(conn, seed)
        if not state.is_empty:
            refuse_unless_ours(state, path)
    except BaseException:
        conn.close()
        raise
    return VoyageWorld(conn, path, memory_budget=memory_budget, clock_rules=clock_rules)


def seed_world(
    path: Path | None = None,
    *,
    seed: WorldSeed = OMEGA_STATION,
    busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S,
) -> Path:
    """Rebuild a fresh world at path; refuses files that are not Omega station worlds."""
    path = path or default_world_path()
    conn = connect(path, busy_timeout_s)
    try:
        state = inspect(conn)
        if not state.is_empty:
            refuse_unless_ours(state, path, allow_older=True)
        with write_transaction(conn):
            # Deferred checks let old tables go in any order; the fresh seed is checked at commit.
            conn.execute("PRAGMA defer_foreign_keys = ON")
            drop_all_tables(conn)
            install_schema(conn)
            insert_seed(conn, seed)
    finally:
        conn.close()
    return path


def _card(actor: Actor) -> NpcCard:
    return NpcCard(
        id=actor.id,
        name=actor.name,
        persona=actor.persona,
        archetype=actor.archetype,
        alive=actor.alive,
        location_id=actor.location_id,
    )
