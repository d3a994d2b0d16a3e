"""The world clock drifts prices, restocks and makes news, the same way every time."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from starharness.voyage import VoyageWorld, open_world
from starharness.voyage.content import OMEGA, SMUGGLER
from starharness.voyage.store import ClockRules, MarketQuote


@pytest.fixture
def world(placed_world: VoyageWorld) -> VoyageWorld:
    """Every test here runs on SQLite and on PostgreSQL."""
    return placed_world


def _market(world: VoyageWorld) -> list[MarketQuote]:
    with world.snapshot() as r:
        return [quote for location in r.locations() for quote in r.market(location.id)]


def test_tick_drifts_prices_and_makes_news(world: VoyageWorld) -> None:
    before = _market(world)
    events = world.tick(5)
    after = _market(world)
    assert world.player_view("player-1")["day"] == 6
    changed = [(a.price, b.price) for a, b in zip(before, after, strict=True) if a.price != b.price]
    assert len(changed) > len(before) // 2
    assert events
    with world.snapshot() as r:
        stored = [n.headline for loc in r.locations() for n in r.news(loc.id)]
    assert sorted(stored) == sorted(event.headline for event in events)
    here = [event.headline for event in events if event.location_id == OMEGA]
    scene = world.scene(SMUGGLER, "player-1")
    assert all(headline in scene for headline in here[-3:])


def test_one_long_tick_equals_many_short_ones(tmp_path: Path) -> None:
    with open_world(tmp_path / "a.db") as once, open_world(tmp_path / "b.db") as daily:
        long_events = once.tick(12)
        short_events = [event for _ in range(12) for event in daily.tick(1)]
        assert long_events == short_events
        assert _market(once) == _market(daily)
        with once.snapshot() as a, daily.snapshot() as b:
            assert a.cargo(SMUGGLER) == b.cargo(SMUGGLER)


def test_the_seed_changes_the_outcome(tmp_path: Path) -> None:
    with (
        open_world(tmp_path / "a.db") as plain,
        open_world(tmp_path / "b.db", clock_rules=ClockRules(seed="another galaxy")) as other,
    ):
        plain.tick(10)
        other.tick(10)
        assert _market(plain) != _market(other)


def test_traders_restock_from_the_local_exchange(world: VoyageWorld) -> None:
    with world.transaction() as tx:
        tx.add_cargo(SMUGGLER, "fuel", -40)
        exchange = tx.stock(OMEGA, "fuel")
    events = world.tick(1)
    assert not any(event.location_id == OMEGA for event in events)
    with world.snapshot() as r:
        restocked = r.cargo_qty(SMUGGLER, "fuel")
        assert restocked == math.ceil(40 * ClockRules().trader_refill)
        assert r.stock(OMEGA, "fuel") == exchange - restocked


def test_a_year_of_ticks_keeps_prices_within_bounds(world: VoyageWorld) -> None:
    events = world.tick(365)
    rules = ClockRules()
    with world.snapshot() as r:
        bases = {good.id: good.base_price for good in r.goods()}
        assert r.day() == 366
    for quote in _market(world):
        base = bases[quote.good_id]
        assert base * rules.floor - 1 <= quote.price <= base * rules.ceiling + 1
        assert quote.stock >= 0
    assert len(events) > 100


@pytest.mark.parametrize("days", [0, -1, 366])
def test_tick_refuses_a_bad_number_of_days(world: VoyageWorld, days: int) -> None:
    with pytest.raises(ValueError, match="days must be between 1 and 365"):
        world.tick(days)
    assert world.player_view("player-1")["day"] == 1
