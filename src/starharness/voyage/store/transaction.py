"""The write side of one transaction: typed helpers that refuse impossible states loudly."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence

from starharness.npc import AuditRecord, NewsItem
from starharness.npc.social import witnesses

from ..content.social import WITNESSED_MEMORY
from .driver import Driver
from .errors import (
    InsufficientCargoError,
    InsufficientCreditsError,
    InsufficientStockError,
    UnknownEntityError,
)
from .folding import fold_old_memories
from .memory_reads import MEMORY_COLUMNS, memory_row
from .reader import WorldReader
from .rows import QUEST_STATUSES, Actor, MarketQuote, Memory, Quest
from .social import SocialRules, witness_text

ATTITUDE_MIN = -100
ATTITUDE_MAX = 100


class WorldTx(WorldReader):
    """Reads and writes inside one write transaction of a World (SQLite: `BEGIN IMMEDIATE`;
    PostgreSQL: SERIALIZABLE, where the read-then-write helpers lock the row they read).

    A helper that would break a rule (negative credits, stock or cargo) raises before writing;
    the exception propagates out of `World.transaction()`, which rolls back every earlier write.
    """

    def __init__(self, conn: Driver, owner: object, social: SocialRules | None = None) -> None:
        super().__init__(conn, owner)
        self.social = social or SocialRules()
        """What memories weigh, who witnesses them and how word travels."""

    # reads that a write follows: on PostgreSQL they lock the row, so two concurrent trades of
    # one row wait for each other instead of aborting each other at commit

    def credits(self, actor_id: str) -> int:
        row = self._row("SELECT credits FROM actors WHERE id = ?" + self._for_update(), (actor_id,))
        if row is None:
            raise UnknownEntityError("actor", actor_id)
        return int(row[0])

    def cargo_qty(self, actor_id: str, good_id: str) -> int:
        row = self._row(
            "SELECT qty FROM cargo WHERE actor_id = ? AND good_id = ?" + self._for_update(),
            (actor_id, good_id),
        )
        return int(row[0]) if row else 0

    def _for_update(self) -> str:
        return " FOR UPDATE" if self._conn.dialect == "postgresql" else ""

    # credits

    def add_credits(self, actor_id: str, delta: int) -> int:
        """Add (or with a negative delta, take) credits; returns the new balance."""
        have = self.credits(actor_id)
        if have + delta < 0:
            raise InsufficientCreditsError(
                f"{actor_id} has {have:,} credits, {-delta:,} were asked for",
                have=have,
                need=-delta,
            )
        self._rows("UPDATE actors SET credits = ? WHERE id = ?", (have + delta, actor_id))
        return have + delta

    def transfer_credits(self, payer_id: str, payee_id: str, amount: int) -> None:
        """Move credits from payer to payee (amount >= 0)."""
        _require_non_negative("amount", amount)
        self.add_credits(payer_id, -amount)
        self.add_credits(payee_id, amount)

    # cargo

    def add_cargo(self, actor_id: str, good_id: str, delta: int) -> int:
        """Add (or take) units of a good to an actor's hold; returns the new quantity."""
        self.require_actor(actor_id)
        self._require_good(good_id)
        have = self.cargo_qty(actor_id, good_id)
        if have + delta < 0:
            raise InsufficientCargoError(
                f"{actor_id} holds {have} {good_id}, {-delta} were asked for",
                have=have,
                need=-delta,
            )
        if have + delta == 0:
            self._rows("DELETE FROM cargo WHERE actor_id = ? AND good_id = ?", (actor_id, good_id))
        else:
            self._rows(
                "INSERT INTO cargo (actor_id, good_id, qty) VALUES (?, ?, ?) "
                "ON CONFLICT (actor_id, good_id) DO UPDATE SET qty = excluded.qty",
                (actor_id, good_id, have + delta),
            )
        return have + delta

    def move_cargo(self, from_id: str, to_id: str, good_id: str, qty: int) -> None:
        """Move qty units (qty >= 0) of a good from one hold to another."""
        _require_non_negative("qty", qty)
        self.add_cargo(from_id, good_id, -qty)
        self.add_cargo(to_id, good_id, qty)

    # markets

    def set_stock(self, location_id: str, good_id: str, stock: int) -> None:
        """Set a location's exchange stock of a good it trades."""
        _require_non_negative("stock", stock)
        self._require_quote(location_id, good_id)
        self._rows(
            "UPDATE market SET stock = ? WHERE location_id = ? AND good_id = ?",
            (stock, location_id, good_id),
        )

    def adjust_stock(self, location_id: str, good_id: str, delta: int) -> int:
        """Add (or take) exchange stock; returns the new stock."""
        have = self._require_quote(location_id, good_id).stock
        if have + delta < 0:
            raise InsufficientStockError(
                f"{location_id} stocks {have} {good_id}, {-delta} were asked for",
                have=have,
                need=-delta,
            )
        self.set_stock(location_id, good_id, have + delta)
        return have + delta

    def set_price(self, location_id: str, good_id: str, price: int) -> None:
        """Set the going price of a good at a location (price > 0)."""
        if price <= 0:
            raise ValueError(f"price must be positive, got {price}")
        self._require_quote(location_id, good_id)
        self._rows(
            "UPDATE market SET price = ? WHERE location_id = ? AND good_id = ?",
            (price, location_id, good_id),
        )

    # attitudes

    def set_attitude(self, npc_id: str, target_id: str, score: int) -> int:
        """Set the NPC's attitude to the target, clamped to -100..100; returns the stored score."""
        self.require_actor(npc_id)
        self.require_actor(target_id)
        clamped = max(ATTITUDE_MIN, min(ATTITUDE_MAX, score))
        self._rows(
            "INSERT INTO attitudes (npc_id, target_id, score) VALUES (?, ?, ?) "
            "ON CONFLICT (npc_id, target_id) DO UPDATE SET score = excluded.score",
            (npc_id, target_id, clamped),
        )
        return clamped

    def adjust_attitude(self, npc_id: str, target_id: str, delta: int) -> int:
        """Shift the NPC's attitude by delta, clamped to -100..100; returns the new score."""
        return self.set_attitude(npc_id, target_id, self.attitude(npc_id, target_id) + delta)

    # memories

    def remember(
        self,
        npc_id: str,
        about_id: str,
        text: str,
        *,
        kind: str = "note",
        action: str | None = None,
        good_id: str | None = None,
        qty: int | None = None,
        price: int | None = None,
        ref: str | None = None,
        importance: int | None = None,
        present: Sequence[str] | None = None,
    ) -> Memory:
        """Store a memory of the NPC about someone, stamped with today's day.

        Trades use kind "trade", action "bought" or "sold" (what the other party did), the good,
        qty and price (the total), so old deals fold into totals in the scene. importance
        defaults to the kind's (`social.importance_of`). When the kind happens in the open
        (`social.witnesses`) and the other party is a player, every other NPC present keeps a
        "witnessed" memory of it too: `present` names them (a group scene's members), else
        they are the living NPCs at the NPC's place.
        """
        found = self.actors((npc_id, about_id))  # both in one statement: every close writes one
        for actor_id in (npc_id, about_id):
            if actor_id not in found:
                raise UnknownEntityError("actor", actor_id)
        if good_id is not None:
            self._require_good(good_id)
        if not text.strip():
            raise ValueError("a memory needs some text")
        weight = self.social.importance_of(kind) if importance is None else importance
        memory = self._insert_memory(
            Memory(
                0,
                npc_id,
                about_id,
                self.day(),
                kind,
                text,
                action,
                good_id,
                qty,
                price,
                ref,
                importance=weight,
            )
        )
        if self.social.witnesses.witnessed(kind) and found[about_id].kind == "player":
            self._witness(found[npc_id], memory, present)
        return memory

    def remember_heard(self, memory: Memory) -> Memory:
        """Store a memory as given (its id is ignored): one an NPC heard or witnessed, with its
        source, hops and origin; no one else witnesses it."""
        self.require_actor(memory.npc_id)
        self.require_actor(memory.about_id)
        return self._insert_memory(memory)

    def present_with(self, npc_id: str) -> list[str]:
        """The other living NPCs at the NPC's place: who sees what it does there."""
        rows = self._rows(
            "SELECT id FROM actors WHERE kind = 'npc' AND alive = 1 AND id <> ? AND "
            "location_id = (SELECT location_id FROM actors WHERE id = ?) ORDER BY id",
            (npc_id, npc_id),
        )
        return [str(row[0]) for row in rows]

    def _witness(self, party: Actor, memory: Memory, present: Sequence[str] | None) -> None:
        seen = self.present_with(party.id) if present is None else present
        good = self.good(memory.good_id) if memory.good_id is not None else None
        text = witness_text(party.name, memory, good.name if good else None)
        importance = self.social.witnesses.importance(memory.importance)
        for witness_id in witnesses(party.id, seen):
            self.require_actor(witness_id)
            self._insert_memory(
                Memory(
                    0,
                    witness_id,
                    memory.about_id,
                    memory.day,
                    WITNESSED_MEMORY,
                    text,
                    memory.action,
                    memory.good_id,
                    memory.qty,
                    memory.price,
                    None,
                    importance=importance,
                    source_id=party.id,
                    origin_id=memory.id,
                )
            )

    def _insert_memory(self, m: Memory) -> Memory:
        inserted = self._rows(
            "INSERT INTO memories (npc_id, about_id, day, kind, text, action, good_id, qty, "
            "price, ref, importance, source_id, hops, origin_id) "
            f"VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING {MEMORY_COLUMNS}",
            (
                m.npc_id,
                m.about_id,
                m.day,
                m.kind,
                m.text,
                m.action,
                m.good_id,
                m.qty,
                m.price,
                m.ref,
                m.importance,
                m.source_id,
                m.hops,
                m.origin_id,
            ),
        )
        fold_old_memories(self._conn, m.npc_id, m.about_id)
        return memory_row(inserted[0])

    # world

    def add_world_event(self, location_id: str, headline: str, *, kind: str = "news") -> NewsItem:
        """Record news at a location for today; later scenes there show it."""
        if self.location(location_id) is None:
            raise UnknownEntityError("location", location_id)
        self._rows(
            "INSERT INTO world_events (day, location_id, kind, headline) VALUES (?, ?, ?, ?)",
            (self.day(), location_id, kind, headline),
        )
        return NewsItem(location_id=location_id, headline=headline)

    def move_actor(self, actor_id: str, location_id: str) -> None:
        """Put an actor at another location."""
        self.require_actor(actor_id)
        if self.location(location_id) is None:
            raise UnknownEntityError("location", location_id)
        self._rows("UPDATE actors SET location_id = ? WHERE id = ?", (location_id, actor_id))

    def set_alive(self, actor_id: str, alive: bool) -> None:
        self.require_actor(actor_id)
        self._rows("UPDATE actors SET alive = ? WHERE id = ?", (int(alive), actor_id))

    def set_day(self, day: int) -> None:
        """Set the clock; the world clock module is the one caller that should move time."""
        if day < self.day():
            raise ValueError(f"the clock only moves forward: day {self.day()} -> {day}")
        self._rows("UPDATE clock SET day = ? WHERE id = 1", (day,))

    # quests

    def accept_quest(self, quest_id: str, player_id: str) -> Quest:
        """Give an open quest to a player."""
        quest = self._require_quest(quest_id)
        self.require_actor(player_id)
        if quest.status != "open":
            raise ValueError(f"quest {quest_id!r} is {quest.status}, not open")
        self._rows(
            "UPDATE quests SET player_id = ?, status = 'accepted', accepted_day = ? WHERE id = ?",
            (player_id, self.day(), quest_id),
        )
        return self._require_quest(quest_id)

    def set_quest_status(self, quest_id: str, status: str) -> Quest:
        """Move a quest to another status; "open" puts it back on the giver's board."""
        if status not in QUEST_STATUSES:
            raise ValueError(f"quest status must be one of {QUEST_STATUSES}, got {status!r}")
        self._require_quest(quest_id)
        if status == "open":
            self._rows(
                "UPDATE quests SET status = 'open', player_id = NULL, accepted_day = NULL, "
                "closed_day = NULL WHERE id = ?",
                (quest_id,),
            )
        else:
            closed = self.day() if status in ("completed", "failed") else None
            self._rows(
                "UPDATE quests SET status = ?, closed_day = ? WHERE id = ?",
                (status, closed, quest_id),
            )
        return self._require_quest(quest_id)

    # audit

    def record_audit(self, record: AuditRecord) -> None:
        """Store one attempted action; unknown ids are recorded as given."""
        args = json.dumps(dict(record.arguments), sort_keys=True, default=repr)
        self._rows(
            "INSERT INTO audit (day, at, action, actor_id, target_id, args, ok, reason, summary) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                self.day(),
                time.time(),
                record.action,
                record.actor_id,
                record.target_id,
                args,
                int(record.ok),
                record.reason,
                record.summary,
            ),
        )

    # helpers

    def _require_good(self, good_id: str) -> None:
        if self.good(good_id) is None:
            raise UnknownEntityError("good", good_id)

    def _require_quote(self, location_id: str, good_id: str) -> MarketQuote:
        row = self._row(
            "SELECT location_id, good_id, price, stock, target_stock FROM market "
            "WHERE location_id = ? AND good_id = ?" + self._for_update(),
            (location_id, good_id),
        )
        if row is None:
            raise UnknownEntityError("market", f"{location_id}/{good_id}")
        return MarketQuote(str(row[0]), str(row[1]), int(row[2]), int(row[3]), int(row[4]))

    def _require_quest(self, quest_id: str) -> Quest:
        found = self.quest(quest_id)
        if found is None:
            raise UnknownEntityError("quest", quest_id)
        return found


def _require_non_negative(name: str, value: int) -> None:
    if value < 0:
        raise ValueError(f"{name} must be zero or more, got {value}")
