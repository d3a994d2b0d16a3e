"""The director's actions called directly, as its agent would: a property over asked prices
and units, and the audit each attempt leaves. No server."""

from __future__ import annotations

import asyncio
import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from starharness.npc.actions import ENCOUNTER, ActionAttempt, EncounterBinding
from starharness.runtime.kernel import Context
from starharness.runtime.llm.types import ToolCall
from starharness.runtime.tools import ToolRegistry, ToolSuccess
from starharness.voyage import VoyageWorld, open_world
from starharness.voyage.content.seed import LOCATIONS, MARKET
from starharness.voyage.director import (
    DIRECTOR_ACTIONS,
    DIRECTOR_NAME,
    OMEGA_BOUNDS,
    RESTOCK,
    SET_PRICE,
)

MARKETS = [(m.location_id, m.good_id) for m in MARKET]


@dataclass
class DirectorBench:
    """The director's agent layer: its three tools, bound to its name and no player."""

    world: VoyageWorld
    reports: list[ActionAttempt] = field(default_factory=list[ActionAttempt])

    def __post_init__(self) -> None:
        ctx = Context().child("agent")
        ctx.provide(ENCOUNTER, EncounterBinding(self.world, DIRECTOR_NAME, "", self.reports.append))
        self.registry = ToolRegistry().bind(ctx)
        for action in DIRECTOR_ACTIONS:
            self.registry.register(action.tool)

    def call(self, name: str, **arguments: Any) -> dict[str, Any]:
        call = ToolCall(f"call-{len(self.reports)}", name, json.dumps(arguments))
        outcome = asyncio.run(self.registry.execute(call))
        assert isinstance(outcome.result, ToolSuccess), outcome.content
        value = outcome.result.value
        assert isinstance(value, dict), value
        return value


def _state(world: VoyageWorld) -> tuple[Any, ...]:
    with world.snapshot() as reader:
        market = [q for place in reader.locations() for q in reader.market(place.id)]
        news = reader.latest_news(100)
    return tuple(market), tuple(news)


def _last_audit(world: VoyageWorld) -> tuple[str, str, str | None, bool, str | None]:
    with world.snapshot() as reader:
        row = reader.audit_log(1)[0]
    return row.action, row.actor_id, row.target_id, row.ok, row.reason


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(MARKETS), st.integers(1, 20_000), st.integers(0, 3))
def test_set_price_commits_exactly_what_the_bounds_allow(
    market: tuple[str, str], price: int, days: int
) -> None:
    with tempfile.TemporaryDirectory() as folder, open_world(Path(folder) / "w.db") as world:
        if days:
            world.tick(days)
        place, good = market
        with world.snapshot() as reader:
            going = reader.price(place, good)
        assert going is not None
        allowed = OMEGA_BOUNDS.allowed_today(good, going)
        assert allowed is not None  # the clock keeps prices within the director's band
        before = _state(world)
        result = DirectorBench(world).call(SET_PRICE, location_id=place, good_id=good, price=price)
        expected = allowed[0] <= price <= allowed[1] and price != going
        assert result["ok"] is expected, result
        with world.snapshot() as reader:
            assert reader.price(place, good) == (price if expected else going)
        if not expected:
            assert _state(world) == before  # a refusal writes nothing but its audit row
            assert result["reason"] in ("no_change", "price_out_of_bounds", "price_step_too_large")
        assert _last_audit(world) == (
            SET_PRICE, DIRECTOR_NAME, None, expected, None if expected else result["reason"]
        )  # fmt: skip


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(MARKETS), st.integers(1, 10_000))
def test_restock_commits_exactly_what_the_bounds_allow(market: tuple[str, str], units: int) -> None:
    with tempfile.TemporaryDirectory() as folder, open_world(Path(folder) / "w.db") as world:
        place, good = market
        with world.snapshot() as reader:
            quote = reader.quote(place, good)
        assert quote is not None
        room = OMEGA_BOUNDS.stock_cap(quote.target_stock) - quote.stock
        most = min(OMEGA_BOUNDS.max_restock(quote.target_stock), room)
        result = DirectorBench(world).call(RESTOCK, location_id=place, good_id=good, units=units)
        assert result["ok"] is (units <= most), result
        with world.snapshot() as reader:
            assert reader.stock(place, good) == quote.stock + (units if units <= most else 0)
        if units > most:
            assert result["facts"]["max_units"] == most


def test_a_place_or_good_the_world_does_not_have_is_refused(tmp_path: Path) -> None:
    with open_world(tmp_path / "w.db") as world:
        bench = DirectorBench(world)
        place = LOCATIONS[0].id
        unknown_good = bench.call(SET_PRICE, location_id=place, good_id="tea", price=10)
        unknown_place = bench.call(RESTOCK, location_id="atlantis", good_id="fuel", units=1)
    assert unknown_good["reason"] == "not_traded_here" and "it trades" in unknown_good["hint"]
    assert unknown_place["reason"] == "unknown_place" and place in unknown_place["hint"]
    assert [(a.name, a.ok) for a in bench.reports] == [(SET_PRICE, False), (RESTOCK, False)]
