"""The Omega station world: the framework's GameWorld and ActionHost over SQLite or PostgreSQL."""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Generator, Hashable, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any, TypeVar

from starharness.npc import AuditRecord, Meeting, NewsItem, NpcCard
from starharness.npc.lore import LoreEntry, LoreQuery, search_lore
from starharness.runtime.session.postgres import PostgresTarget

from ..content import OMEGA_STATION, WorldSeed
from ..content.social import MEMORY_TOKENS
from ..paths import default_world_path
from . import pg_conn, pg_schema
from .backends import Backend, PostgresBackend, SqliteBackend
from .clock import ClockRules, advance
from .driver import Driver
from .errors import (
    TransactionStateError,
    UnknownEntityError,
    WorldBusyError,
    WorldConflictError,
)
from .memory import MemoryBudget
from .reader import WorldReader
from .rows import Actor
from .scene import (
    NPC_SIDE_TABLES,
    NpcSide,
    gather_npc_side,
    gather_scene,
    render_opening,
    render_scene,
)
from .social import SocialRules
from .sqlite_conn import DEFAULT_BUSY_TIMEOUT_S
from .sqlite_open import open_sqlite, rebuild_sqlite
from .transaction import WorldTx

HUD_NEWS = 8
"""How many of the latest headlines the HUD carries."""
_FIRST_BACKOFF_S = 0.002
"""The wait after an action's first conflict; it doubles, jittered, with every further one."""

_log = logging.getLogger("starharness.voyage.store")
T = TypeVar("T")


class VoyageWorld:
    """One world, in a SQLite file or a PostgreSQL database. Thread-safe.

    Every method blocks; async callers run them in a worker thread (on SQLite, calls take turns
    on one connection; on PostgreSQL, each runs on a connection of a small pool).
    """

    def __init__(
        self,
        backend: Backend,
        *,
        memory_budget: MemoryBudget | None = None,
        clock_rules: ClockRules | None = None,
        social: SocialRules | None = None,
    ) -> None:
        self._backend = backend
        self._memory_budget = memory_budget or MemoryBudget(tokens=MEMORY_TOKENS)
        self._clock_rules = clock_rules or ClockRules()
        self._social = social or SocialRules()
        self._local = threading.local()
        # Scenes' NPC sides read at the world state named by the token (see `scene`).
        self._npc_sides: dict[str, NpcSide] = {}
        self._npc_sides_token: Hashable | None = None

    @property
    def path(self) -> Path | None:
        """The world file; None for a world in PostgreSQL."""
        return self._backend.path if isinstance(self._backend, SqliteBackend) else None

    @property
    def where(self) -> str:
        """The file path or the database's host:port/db, for messages."""
        return self._backend.where

    @property
    def blocks_on_network(self) -> bool:
        """True on PostgreSQL: never call this world on an event loop (see `npc.calls_inline`)."""
        return self._backend.blocks_on_network

    def close(self) -> None:
        self._backend.close()

    def __enter__(self) -> VoyageWorld:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # transactions

    @contextmanager
    def transaction(self) -> Generator[WorldTx, None, None]:
        """One write transaction (SQLite: `BEGIN IMMEDIATE`; PostgreSQL: SERIALIZABLE);
        an exception inside rolls every write back.

        On PostgreSQL a conflict with another writer raises WorldConflictError: use
        `run_action` for work that should simply run again.
        """
        with self._write(alone=False) as tx:
            yield tx

    @contextmanager
    def _write(self, *, alone: bool) -> Generator[WorldTx, None, None]:
        if getattr(self._local, "open", False):
            raise TransactionStateError("a transaction is already open on this World")
        self._local.open = True
        try:
            with self._backend.write(alone=alone) as driver:
                tx = WorldTx(driver, self, self._social)
                try:
                    yield tx
                finally:
                    tx.end()
        finally:
            self._local.open = False

    def run_action(self, work: Callable[[WorldTx], T]) -> T:
        """Run work in a write transaction; on a conflict, roll back and run all of it again.

        At most `attempts` runs (8 on PostgreSQL, jittered exponential backoff from 2 ms; SQLite
        never conflicts, so one); then WorldBusyError, with nothing of the work written. After
        the optimistic tries (3 on PostgreSQL) the work waits to run alone among the world's
        writers, so a hot row cannot starve it; only writers outside star-harness can still
        make it lose.
        """
        attempts = self._backend.attempts
        for attempt in range(1, attempts + 1):
            try:
                with self._write(alone=attempt > self._backend.optimistic_attempts) as tx:
                    return work(tx)
            except WorldConflictError as error:
                if attempt == attempts:
                    raise WorldBusyError(
                        f"the world is busy: {attempts} attempts conflicted with other writers;"
                        " try again"
                    ) from error
                _log.debug("conflict on attempt %d, running again: %s", attempt, error)
                delay = _FIRST_BACKOFF_S * 2 ** (attempt - 1)
                time.sleep(random.uniform(delay / 2, delay * 1.5))
        raise AssertionError("unreachable: attempts is at least 1")

    def snapshot(self) -> AbstractContextManager[WorldReader]:
        """A read-only view in which every read sees the same moment (PostgreSQL:
        REPEATABLE READ READ ONLY, which never blocks or aborts writers)."""
        return self._reading(self._backend.read)

    def _single_read(self) -> AbstractContextManager[WorldReader]:
        """Like `snapshot`, for a single statement (SQLite runs it without BEGIN/ROLLBACK)."""
        return self._reading(self._backend.single_read)

    @contextmanager
    def reading(self) -> Generator[WorldReader, None, None]:
        """Inside, this thread's reads (the framework's, `snapshot`) share one read snapshot:
        one lock and one BEGIN on SQLite instead of one per call. Nests; writing inside raises.

        The framework's `ReadsTogether`: a meeting's checks and scene are read through it.
        """
        shared: WorldReader | None = getattr(self._local, "shared", None)
        if shared is not None:
            yield shared
            return
        with self._reading(self._backend.read) as reader:
            self._local.shared = reader
            try:
                yield reader
            finally:
                self._local.shared = None

    @contextmanager
    def _reading(
        self, open_driver: Callable[[], AbstractContextManager[Driver]]
    ) -> Generator[WorldReader, None, None]:
        shared: WorldReader | None = getattr(self._local, "shared", None)
        if shared is not None:  # inside `reading()`: its snapshot serves every read
            yield shared
            return
        if getattr(self._local, "open", False):
            raise TransactionStateError("a transaction is already open on this World")
        self._local.open = True
        try:
            with open_driver() as driver:
                reader = WorldReader(driver, self)
                try:
                    yield reader
                finally:
                    reader.end()
        finally:
            self._local.open = False

    def is_alive(self, tx: Any, actor_id: str) -> bool:
        """Whether the actor lives, read inside the action's transaction."""
        return self._own_tx(tx).is_alive(actor_id)

    def audit(self, tx: Any | None, record: AuditRecord) -> None:
        """Store an audit row in tx, or in a transaction of its own when tx is None."""
        if tx is not None:
            self._own_tx(tx).record_audit(record)
            return
        self.run_action(lambda own: own.record_audit(record))

    # the framework's read side

    def npc(self, npc_id: str) -> NpcCard | None:
        with self._single_read() as reader:
            found = reader.actor(npc_id)
        return _card(found) if found is not None and found.kind == "npc" else None

    def npcs(self) -> Sequence[NpcCard]:
        with self.snapshot() as reader:
            return [_card(actor) for actor in reader.npcs()]

    def has_player(self, player_id: str) -> bool:
        with self._single_read() as reader:
            found = reader.actor(player_id)
        return found is not None and found.kind == "player"

    def can_meet(self, npc_id: str, player_id: str) -> bool:
        """True when the NPC is alive and at the player's location."""
        with self._single_read() as reader:
            found = reader.actors((npc_id, player_id))
        npc, player = found.get(npc_id), found.get(player_id)
        return (
            npc is not None
            and npc.kind == "npc"
            and npc.alive
            and player is not None
            and player.kind == "player"
            and npc.location_id == player.location_id
        )

    def meeting(self, npc_id: str, player_id: str) -> Meeting | None:
        """`npc.ReadsMeetings`: `npc`, `can_meet` and `attitude` in one statement."""
        with self._single_read() as reader:
            found = reader.meeting(npc_id, player_id)
        if found is None:
            return None
        npc, player_place, attitude = found
        return Meeting(_card(npc), npc.alive and player_place == npc.location_id, attitude)

    def player_view(self, player_id: str) -> dict[str, Any]:
        """The HUD: credits, location, cargo, day and NPCs' attitudes, as JSON-able data."""
        with self.snapshot() as reader:
            player = reader.actor(player_id)
            if player is None or player.kind != "player":
                raise UnknownEntityError("player", player_id)
            location = reader.location(player.location_id)
            people = [
                {"id": npc.id, "name": npc.name}
                for npc in reader.npcs()
                if npc.location_id == player.location_id and npc.alive
            ]
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
                "description": location.description if location else "",
                "people": people,
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
            data = gather_scene(reader, npc_id, player_id, self._npc_side(reader, npc_id))
        return render_scene(data, self._memory_budget)

    def scene_opening(self, npc_id: str) -> str:
        """The framework's `SharesSceneOpening`: what every player's scene with this NPC
        begins with now (see `render_scene`)."""
        with self.snapshot() as reader:
            return render_opening(self._npc_side(reader, npc_id))

    def _npc_side(self, reader: WorldReader, npc_id: str) -> NpcSide:
        # Every player's scene with an NPC shares its NPC side: read it again only after a
        # commit that may have changed a table it reads (ours, or any by another connection:
        # the token changes), or on every call when the backend cannot tell (PostgreSQL).
        # Memories are read per pair in `gather_scene`, so the memory row every closing
        # encounter commits keeps the cache. The lock of `snapshot` covers the cache on SQLite.
        token = self._backend.state_token(NPC_SIDE_TABLES)
        if token is None:
            return gather_npc_side(reader, npc_id)
        if token != self._npc_sides_token:
            self._npc_sides = {}
            self._npc_sides_token = token
        side = self._npc_sides.get(npc_id)
        if side is None:
            side = self._npc_sides[npc_id] = gather_npc_side(reader, npc_id)
        return side

    def attitude(self, npc_id: str, player_id: str) -> int:
        with self._single_read() as reader:
            return reader.attitude(npc_id, player_id)

    def search_lore(self, query: LoreQuery) -> list[LoreEntry]:
        """The framework's `SearchesLore`: the game's lore, searched in this world's database
        (FTS5 in the file, a tsvector column in PostgreSQL), which every open keeps current."""
        with self._backend.single_read() as driver:
            return search_lore(driver, query)

    def tick(self, days: int) -> list[NewsItem]:
        """Advance the clock by days (1..365): prices drift, stock refills, news happens."""
        return self.run_action(lambda tx: self.pass_days(tx, days))

    def pass_days(self, tx: object, days: int) -> list[NewsItem]:
        """`tick`'s clock inside a transaction already open (a voyage that takes days)."""
        return advance(self._own_tx(tx), days, self._clock_rules)

    # helpers

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
    conn = open_sqlite(path, seed, busy_timeout_s)
    return VoyageWorld(
        SqliteBackend(conn, path), memory_budget=memory_budget, clock_rules=clock_rules
    )


def open_server_world(
    target: PostgresTarget,
    *,
    seed: WorldSeed = OMEGA_STATION,
    pool_size: int = pg_conn.DEFAULT_POOL_SIZE,
    memory_budget: MemoryBudget | None = None,
    clock_rules: ClockRules | None = None,
) -> VoyageWorld:
    """Open the world in a PostgreSQL database, creating and seeding schema `voyage` once
    (several processes may start at once); refuses another application's or version's."""
    conn = pg_conn.connect(target)
    try:
        pg_schema.check_or_create(conn, target, seed)
    except BaseException:
        conn.close()
        raise
    pool = pg_conn.ConnectionPool(target, pool_size)
    pool.give(conn)
    return VoyageWorld(PostgresBackend(pool), memory_budget=memory_budget, clock_rules=clock_rules)


def seed_world(
    path: Path | None = None,
    *,
    seed: WorldSeed = OMEGA_STATION,
    busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S,
) -> Path:
    """Rebuild a fresh world at path; refuses files that are not Omega station worlds."""
    path = path or default_world_path()
    rebuild_sqlite(path, seed, busy_timeout_s)
    return path


def seed_server_world(target: PostgresTarget, *, seed: WorldSeed = OMEGA_STATION) -> str:
    """Rebuild a fresh world in a PostgreSQL database in one transaction (a failure keeps the
    old one); refuses a schema `voyage` that is not an Omega station world. Returns where."""
    conn = pg_conn.connect(target)
    try:
        pg_schema.rebuild(conn, target, seed)
    finally:
        conn.close()
    return target.describe()


def _card(actor: Actor) -> NpcCard:
    return NpcCard(
        id=actor.id,
        name=actor.name,
        persona=actor.persona,
        archetype=actor.archetype,
        alive=actor.alive,
        location_id=actor.location_id,
    )
