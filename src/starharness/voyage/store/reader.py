"""Reads of the world, valid inside one snapshot or transaction."""

from __future__ import annotations

import json
from typing import Any, cast

from .errors import TransactionStateError, UnknownEntityError
from .memory_reads import MemoryReads, Row
from .rows import (
    Actor,
    AuditEntry,
    Good,
    Intel,
    Location,
    MarketQuote,
    NewsItem,
    Quest,
    Route,
    TradeLine,
)


class WorldReader(MemoryReads):
    """Typed reads over one connection; every read sees the state of the enclosing transaction."""

    # clock

    def day(self) -> int:
        """The current day of the world clock."""
        row = self._row("SELECT day FROM clock WHERE id = 1")
        if row is None:
            raise TransactionStateError("the world has no clock row; rebuild it with seed")
        return int(row[0])

    # actors

    def actor(self, actor_id: str) -> Actor | None:
        row = self._row(
            "SELECT id, name, kind, archetype, location_id, alive, credits, persona "
            "FROM actors WHERE id = ?",
            (actor_id,),
        )
        return _actor(row) if row else None

    def actors(self, actor_ids: tuple[str, ...]) -> dict[str, Actor]:
        """The actors of these ids that exist, by id, in one statement."""
        marks = ",".join("?" * len(actor_ids))
        rows = self._rows(
            "SELECT id, name, kind, archetype, location_id, alive, credits, persona "
            f"FROM actors WHERE id IN ({marks})",
            actor_ids,
        )
        return {str(row[0]): _actor(row) for row in rows}

    def meeting(self, npc_id: str, player_id: str) -> tuple[Actor, str | None, int] | None:
        """The NPC (None: no such NPC), where the player is (None: no such player) and the
        NPC's attitude to them, in one statement."""
        row = self._row(
            "SELECT n.id, n.name, n.kind, n.archetype, n.location_id, n.alive, n.credits, "
            "n.persona, (SELECT p.location_id FROM actors p WHERE p.id = ? AND p.kind = 'player'), "
            "(SELECT a.score FROM attitudes a WHERE a.npc_id = n.id AND a.target_id = ?) "
            "FROM actors n WHERE n.id = ? AND n.kind = 'npc'",
            (player_id, player_id, npc_id),
        )
        if row is None:
            return None
        place = None if row[8] is None else str(row[8])
        return _actor(row), place, 0 if row[9] is None else int(row[9])

    def require_actor(self, actor_id: str) -> Actor:
        """The actor, or UnknownEntityError."""
        found = self.actor(actor_id)
        if found is None:
            raise UnknownEntityError("actor", actor_id)
        return found

    def npcs(self) -> list[Actor]:
        rows = self._rows(
            "SELECT id, name, kind, archetype, location_id, alive, credits, persona "
            "FROM actors WHERE kind = 'npc' ORDER BY id"
        )
        return [_actor(row) for row in rows]

    def credits(self, actor_id: str) -> int:
        return self.require_actor(actor_id).credits

    def location_of(self, actor_id: str) -> str:
        return self.require_actor(actor_id).location_id

    def is_alive(self, actor_id: str) -> bool:
        """False for the dead and for ids that name nobody."""
        found = self.actor(actor_id)
        return found is not None and found.alive

    # places and goods

    def location(self, location_id: str) -> Location | None:
        row = self._row("SELECT id, name, description FROM locations WHERE id = ?", (location_id,))
        return Location(str(row[0]), str(row[1]), str(row[2])) if row else None

    def locations(self) -> list[Location]:
        rows = self._rows("SELECT id, name, description FROM locations ORDER BY id")
        return [Location(str(r[0]), str(r[1]), str(r[2])) for r in rows]

    def good(self, good_id: str) -> Good | None:
        row = self._row(
            "SELECT id, name, base_price, contraband FROM goods WHERE id = ?", (good_id,)
        )
        return _good(row) if row else None

    def goods(self) -> list[Good]:
        rows = self._rows("SELECT id, name, base_price, contraband FROM goods ORDER BY id")
        return [_good(row) for row in rows]

    # holds and markets

    def cargo_qty(self, actor_id: str, good_id: str) -> int:
        """Units of a good in an actor's hold (0 when none)."""
        row = self._row(
            "SELECT qty FROM cargo WHERE actor_id = ? AND good_id = ?", (actor_id, good_id)
        )
        return int(row[0]) if row else 0

    def cargo(self, actor_id: str) -> dict[str, int]:
        """The actor's hold: good id to units, only goods it holds, sorted by good id."""
        rows = self._rows(
            "SELECT good_id, qty FROM cargo WHERE actor_id = ? AND qty > 0 ORDER BY good_id",
            (actor_id,),
        )
        return {str(r[0]): int(r[1]) for r in rows}

    def quote(self, location_id: str, good_id: str) -> MarketQuote | None:
        row = self._row(
            "SELECT location_id, good_id, price, stock, target_stock FROM market "
            "WHERE location_id = ? AND good_id = ?",
            (location_id, good_id),
        )
        return _quote(row) if row else None

    def price(self, location_id: str, good_id: str) -> int | None:
        """The going price of a good at a location, or None when it is not traded there."""
        found = self.quote(location_id, good_id)
        return found.price if found else None

    def stock(self, location_id: str, good_id: str) -> int:
        """Units a location's exchange holds (0 when it does not trade the good)."""
        found = self.quote(location_id, good_id)
        return found.stock if found else 0

    def market(self, location_id: str) -> list[MarketQuote]:
        rows = self._rows(
            "SELECT location_id, good_id, price, stock, target_stock FROM market "
            "WHERE location_id = ? ORDER BY good_id",
            (location_id,),
        )
        return [_quote(row) for row in rows]

    def trade_line(self, npc_id: str, good_id: str) -> TradeLine | None:
        row = self._row(
            "SELECT npc_id, good_id, sells, buys, restock_to FROM trade_lines "
            "WHERE npc_id = ? AND good_id = ?",
            (npc_id, good_id),
        )
        return _trade_line(row) if row else None

    def trade_lines(self, npc_id: str | None = None) -> list[TradeLine]:
        """One NPC's trade lines, or every NPC's when npc_id is None."""
        sql = "SELECT npc_id, good_id, sells, buys, restock_to FROM trade_lines"
        if npc_id is None:
            rows = self._rows(sql + " ORDER BY npc_id, good_id")
        else:
            rows = self._rows(sql + " WHERE npc_id = ? ORDER BY good_id", (npc_id,))
        return [_trade_line(row) for row in rows]

    # relations

    def attitude(self, npc_id: str, target_id: str) -> int:
        """How the NPC feels about the target, -100..100 (0 when they never met)."""
        row = self._row(
            "SELECT score FROM attitudes WHERE npc_id = ? AND target_id = ?", (npc_id, target_id)
        )
        return int(row[0]) if row else 0

    def attitudes_towards(self, target_id: str) -> dict[str, int]:
        """Every NPC's attitude to the target that has one, by NPC id."""
        rows = self._rows(
            "SELECT npc_id, score FROM attitudes WHERE target_id = ? ORDER BY npc_id",
            (target_id,),
        )
        return {str(row[0]): int(row[1]) for row in rows}

    # travel, intel, quests

    def route(self, from_id: str, to_id: str) -> Route | None:
        row = self._row(
            "SELECT from_id, to_id, seller_id, fare, days FROM routes "
            "WHERE from_id = ? AND to_id = ?",
            (from_id, to_id),
        )
        return _route(row) if row else None

    def routes_from(self, location_id: str) -> list[Route]:
        rows = self._rows(
            "SELECT from_id, to_id, seller_id, fare, days FROM routes "
            "WHERE from_id = ? ORDER BY to_id",
            (location_id,),
        )
        return [_route(row) for row in rows]

    def intel(self, intel_id: str) -> Intel | None:
        row = self._row(
            "SELECT id, npc_id, kind, title, text, price, min_attitude FROM intel WHERE id = ?",
            (intel_id,),
        )
        return _intel(row) if row else None

    def intel_of(self, npc_id: str) -> list[Intel]:
        rows = self._rows(
            "SELECT id, npc_id, kind, title, text, price, min_attitude FROM intel "
            "WHERE npc_id = ? ORDER BY id",
            (npc_id,),
        )
        return [_intel(row) for row in rows]

    def quest(self, quest_id: str) -> Quest | None:
        row = self._row(_QUEST_SELECT + " WHERE id = ?", (quest_id,))
        return _quest(row) if row else None

    def quests_given_by(self, giver_id: str) -> list[Quest]:
        rows = self._rows(_QUEST_SELECT + " WHERE giver_id = ? ORDER BY id", (giver_id,))
        return [_quest(row) for row in rows]

    def quests_of(self, player_id: str) -> list[Quest]:
        rows = self._rows(_QUEST_SELECT + " WHERE player_id = ? ORDER BY id", (player_id,))
        return [_quest(row) for row in rows]

    # news

    def news(self, location_id: str, *, since_day: int = 1, limit: int = 10) -> list[NewsItem]:
        """World events at a location from since_day on, newest first."""
        rows = self._rows(
            "SELECT id, day, location_id, kind, headline FROM world_events "
            "WHERE location_id = ? AND day >= ? ORDER BY id DESC LIMIT ?",
            (location_id, since_day, limit),
        )
        return [NewsItem(int(r[0]), int(r[1]), str(r[2]), str(r[3]), str(r[4])) for r in rows]

    def latest_news(self, limit: int = 8) -> list[NewsItem]:
        """The latest world events anywhere, newest first (what a news ticker shows)."""
        rows = self._rows(
            "SELECT id, day, location_id, kind, headline FROM world_events "
            "ORDER BY id DESC LIMIT ?",
            (limit,),
        )
        return [NewsItem(int(r[0]), int(r[1]), str(r[2]), str(r[3]), str(r[4])) for r in rows]

    def count_committed(self, action: str, day: int, **arguments: str) -> int:
        """How many `action`s committed on `day` whose arguments hold these values."""
        sql = "SELECT count(*) FROM audit WHERE action = ? AND day = ? AND ok = 1"
        params: list[Any] = [action, day]
        postgres = self._conn.dialect == "postgresql"
        for name, value in sorted(arguments.items()):
            if postgres:
                sql += " AND (args::jsonb ->> ?) = ?"
                params += [name, value]
            else:
                sql += " AND json_extract(args, ?) = ?"
                params += [f"$.{name}", value]
        row = self._row(sql, tuple(params))
        return int(row[0]) if row else 0

    def audit_log(self, limit: int = 100) -> list[AuditEntry]:
        """The latest audit rows, newest first."""
        rows = self._rows(
            "SELECT id, day, at, action, actor_id, target_id, args, ok, reason, summary "
            "FROM audit ORDER BY id DESC LIMIT ?",
            (limit,),
        )
        return [_audit(row) for row in rows]


_QUEST_SELECT = (
    "SELECT id, giver_id, player_id, kind, title, good_id, qty, reward, min_attitude, status, "
    "accepted_day, closed_day FROM quests"
)


def _optional_int(value: Any) -> int | None:
    return None if value is None else int(value)


def _optional_str(value: Any) -> str | None:
    return None if value is None else str(value)


def _actor(row: Row) -> Actor:
    return Actor(
        id=str(row[0]),
        name=str(row[1]),
        kind=str(row[2]),
        archetype=str(row[3]),
        location_id=str(row[4]),
        alive=bool(row[5]),
        credits=int(row[6]),
        persona=str(row[7]),
    )


def _good(row: Row) -> Good:
    return Good(str(row[0]), str(row[1]), int(row[2]), bool(row[3]))


def _quote(row: Row) -> MarketQuote:
    return MarketQuote(str(row[0]), str(row[1]), int(row[2]), int(row[3]), int(row[4]))


def _trade_line(row: Row) -> TradeLine:
    return TradeLine(str(row[0]), str(row[1]), bool(row[2]), bool(row[3]), int(row[4]))


def _route(row: Row) -> Route:
    return Route(str(row[0]), str(row[1]), str(row[2]), int(row[3]), int(row[4]))


def _intel(row: Row) -> Intel:
    return Intel(
        str(row[0]), str(row[1]), str(row[2]), str(row[3]), str(row[4]), int(row[5]), int(row[6])
    )


def _quest(row: Row) -> Quest:
    return Quest(
        id=str(row[0]),
        giver_id=str(row[1]),
        player_id=_optional_str(row[2]),
        kind=str(row[3]),
        title=str(row[4]),
        good_id=str(row[5]),
        qty=int(row[6]),
        reward=int(row[7]),
        min_attitude=int(row[8]),
        status=str(row[9]),
        accepted_day=_optional_int(row[10]),
        closed_day=_optional_int(row[11]),
    )


def _audit(row: Row) -> AuditEntry:
    decoded: object = json.loads(str(row[6]))
    arguments = cast(dict[str, object], decoded) if isinstance(decoded, dict) else {}
    return AuditEntry(
        id=int(row[0]),
        day=int(row[1]),
        at=float(row[2]),
        action=str(row[3]),
        actor_id=str(row[4]),
        target_id=_optional_str(row[5]),
        arguments=arguments,
        ok=bool(row[7]),
        reason=_optional_str(row[8]),
        summary=_optional_str(row[9]),
    )
