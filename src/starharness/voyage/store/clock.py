"""The world clock: each day prices drift, exchanges and traders restock, news happens and
NPCs who meet pass on what they know about players (store/gossip.py).

Randomness is seeded by the day (and the market row), so the same world ticked the same number
of days always ends the same way, whether in one tick or several.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from starharness.npc import NewsItem

from .gossip import spread_gossip
from .rows import MarketQuote
from .transaction import WorldTx

MAX_DAYS_PER_TICK = 365


@dataclass(frozen=True, slots=True)
class ClockRules:
    """How fast the economy moves; the defaults are the game's rules."""

    seed: str = "omega-station"
    drift: float = 0.08
    """Largest random price move per day, as a share of the price."""
    pull: float = 0.15
    """Share of the gap to the base price closed each day, so prices do not wander off."""
    floor: float = 0.4
    ceiling: float = 2.5
    """Prices stay within these multiples of the base price."""
    exchange_refill: float = 0.25
    """Share of the gap to target stock an exchange refills each day."""
    trader_refill: float = 0.25
    """Share of its restock level a trader's hold refills each day, from the local exchange."""
    event_chance: float = 0.6


def advance(tx: WorldTx, days: int, rules: ClockRules | None = None) -> list[NewsItem]:
    """Advance the clock by days inside tx; returns the day's news in order."""
    if not 1 <= days <= MAX_DAYS_PER_TICK:
        raise ValueError(f"days must be between 1 and {MAX_DAYS_PER_TICK}, got {days}")
    rules = rules or ClockRules()
    events: list[NewsItem] = []
    for _ in range(days):
        day = tx.day() + 1
        tx.set_day(day)
        _drift_markets(tx, day, rules)
        _restock_traders(tx, rules)
        event = _maybe_event(tx, day, rules)
        if event is not None:
            events.append(event)
        spread_gossip(tx, day)
    return events


def _quotes(tx: WorldTx) -> list[MarketQuote]:
    return [quote for location in tx.locations() for quote in tx.market(location.id)]


def _bounded(price: float, base: int, rules: ClockRules) -> int:
    low = max(1, math.ceil(base * rules.floor))
    high = max(low, math.floor(base * rules.ceiling))
    return max(low, min(high, round(price)))


def _drift_markets(tx: WorldTx, day: int, rules: ClockRules) -> None:
    bases = {good.id: good.base_price for good in tx.goods()}
    for quote in _quotes(tx):
        rng = random.Random(f"{rules.seed}:{day}:{quote.location_id}:{quote.good_id}")
        base = bases[quote.good_id]
        moved = (
            quote.price
            + (base - quote.price) * rules.pull
            + quote.price * rng.uniform(-rules.drift, rules.drift)
        )
        price = _bounded(moved, base, rules)
        if price != quote.price:
            tx.set_price(quote.location_id, quote.good_id, price)
        gap = quote.target_stock - quote.stock
        if gap > 0:
            tx.set_stock(
                quote.location_id,
                quote.good_id,
                quote.stock + math.ceil(gap * rules.exchange_refill),
            )


def _restock_traders(tx: WorldTx, rules: ClockRules) -> None:
    for line in tx.trade_lines():
        if not line.sells or line.restock_to == 0:
            continue
        trader = tx.require_actor(line.npc_id)
        if not trader.alive:
            continue
        missing = line.restock_to - tx.cargo_qty(line.npc_id, line.good_id)
        available = tx.stock(trader.location_id, line.good_id)
        units = min(missing, available, max(1, math.ceil(line.restock_to * rules.trader_refill)))
        if units > 0:
            tx.adjust_stock(trader.location_id, line.good_id, -units)
            tx.add_cargo(line.npc_id, line.good_id, units)


def _maybe_event(tx: WorldTx, day: int, rules: ClockRules) -> NewsItem | None:
    rng = random.Random(f"{rules.seed}:{day}:event")
    if rng.random() >= rules.event_chance:
        return None
    location = rng.choice(tx.locations())
    quotes = tx.market(location.id)
    if not quotes:
        return None
    goods = {good.id: good for good in tx.goods()}
    kind = rng.choice(("shortage", "raid", "convoy"))
    raided = [quote for quote in quotes if goods[quote.good_id].contraband]
    if kind == "raid" and not raided:
        kind = "shortage"
    quote = rng.choice(raided if kind == "raid" else quotes)
    base, name = goods[quote.good_id].base_price, goods[quote.good_id].name
    if kind == "raid":
        price = _bounded(quote.price * 1.5, base, rules)
        tx.set_stock(location.id, quote.good_id, quote.stock // 2)
        headline = f"Customs raid: {name} seized, the price jumps to {price:,}."
    elif kind == "shortage":
        price = _bounded(quote.price * 1.35, base, rules)
        tx.set_stock(location.id, quote.good_id, quote.stock // 4)
        headline = f"Shortage of {name}: the price climbs to {price:,}."
    else:
        price = _bounded(quote.price * 0.75, base, rules)
        tx.set_stock(location.id, quote.good_id, quote.stock + max(1, quote.target_stock // 2))
        headline = f"A convoy unloads {name}: the price drops to {price:,}."
    tx.set_price(location.id, quote.good_id, price)
    # Headlines leave the place out: every client shows them under the place's name already.
    return tx.add_world_event(location.id, headline, kind=kind)
