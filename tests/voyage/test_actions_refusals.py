"""Every refusal is a value with a hint that says how the action could succeed; nothing changes."""

from __future__ import annotations

import pytest
from voyage_action_support import Bench, ledger

from starharness.voyage import VoyageWorld
from starharness.voyage.content import BROKER, DOCK_MASTER, KESSLER, PLAYER_ID


@pytest.fixture
def world(placed_world: VoyageWorld) -> VoyageWorld:
    """Every test here runs on SQLite and on PostgreSQL."""
    return placed_world


async def _refused(bench: Bench, name: str, why: str, **arguments: object) -> dict[str, object]:
    before = ledger(bench.world, bench.npc_id)
    result = await bench.call(name, **arguments)
    assert result["ok"] is False, result
    assert result["reason"] == why, result
    assert ledger(bench.world, bench.npc_id) == before
    return result


async def test_stock_refusal_names_what_the_npc_holds(world: VoyageWorld) -> None:
    result = await _refused(
        Bench(world), "player_buys", "insufficient_stock", good_id="fuel", qty=50, unit_price=450
    )
    assert result["hint"] == "you hold only 40 fuel cells; the player can buy at most 40"
    assert result["facts"] == {"good_id": "fuel", "have": 40, "want": 50}


async def test_funds_refusal_names_both_amounts_and_what_fits(world: VoyageWorld) -> None:
    result = await _refused(
        Bench(world), "player_buys", "insufficient_funds", good_id="spice", qty=5, unit_price=2_900
    )
    assert result["hint"] == "they have 12,000, the deal is 14,500; at 2,900 a unit that pays for 4"
    assert result["facts"] == {"payer": PLAYER_ID, "have": 12_000, "need": 14_500, "max_qty": 4}


async def test_attitude_refusal_names_the_score_and_the_threshold(world: VoyageWorld) -> None:
    result = await _refused(
        Bench(world), "sell_intel", "attitude_too_low", intel_id="intel-patrols"
    )
    assert "your attitude to them is 0" in str(result["hint"])
    assert "only at 20 or more" in str(result["hint"])
    assert result["facts"] == {"attitude": 0, "needed": 20}


@pytest.mark.parametrize("unit_price", [404, 563, 1])
async def test_price_band_refusal_names_the_band(world: VoyageWorld, unit_price: int) -> None:
    result = await _refused(
        Bench(world),
        "player_buys",
        "price_out_of_band",
        good_id="fuel",
        qty=1,
        unit_price=unit_price,
    )
    # An NPC sells from 90% to 125% of the going price (450).
    assert "between 405 and 562" in str(result["hint"])
    assert result["facts"] == {"going": 450, "low": 405, "high": 562, "asked": unit_price}


@pytest.mark.parametrize("unit_price", [1_124, 1_276])
async def test_an_npc_buys_only_below_what_it_sells_at(world: VoyageWorld, unit_price: int) -> None:
    with world.transaction() as tx:
        tx.add_cargo(PLAYER_ID, "parts", 3)
    result = await _refused(
        Bench(world), "player_sells", "price_out_of_band", good_id="parts", qty=1,
        unit_price=unit_price,
    )  # fmt: skip
    # The going price of drive parts is 1,500: the NPC pays from 75% to 85% of it.
    assert result["facts"] == {"going": 1_500, "low": 1_125, "high": 1_275, "asked": unit_price}


async def test_a_sale_at_the_going_price_is_refused_with_what_the_npc_pays(
    world: VoyageWorld,
) -> None:
    with world.transaction() as tx:
        tx.add_cargo(PLAYER_ID, "parts", 3)
    bench = Bench(world)
    await _refused(
        bench, "player_sells", "price_out_of_band", good_id="parts", qty=1, unit_price=1_500
    )
    # The player reads the band the NPC pays in, not "1,500 is out of the question: the going
    # price is 1,500".
    [refused] = bench.reports
    assert (
        refused.summary
        == "1,500 a unit is out of the question: 1,125 to 1,275 for drive parts here."
    )


@pytest.mark.parametrize("unit_price", [405, 562])
async def test_the_band_edges_are_allowed(world: VoyageWorld, unit_price: int) -> None:
    result = await Bench(world).call("player_buys", good_id="fuel", qty=1, unit_price=unit_price)
    assert result["ok"] is True, result


async def test_the_npc_cannot_pay_for_what_it_buys(world: VoyageWorld) -> None:
    with world.transaction() as tx:
        tx.move_actor(PLAYER_ID, KESSLER)
        tx.add_cargo(PLAYER_ID, "spice", 10)
    bench = Bench(world, npc_id=BROKER)
    result = await _refused(
        bench, "player_sells", "insufficient_funds", good_id="spice", qty=10, unit_price=1_700
    )
    assert result["hint"] == "you have 15,000, the deal is 17,000; at 1,700 a unit that pays for 8"


async def test_the_player_cannot_sell_what_they_do_not_hold(world: VoyageWorld) -> None:
    result = await _refused(
        Bench(world), "player_sells", "insufficient_cargo", good_id="parts", qty=3, unit_price=1_275
    )
    assert result["hint"] == "they hold no drive parts; they have nothing of it to sell"


async def test_goods_the_npc_does_not_trade_are_refused_with_what_it_does(
    world: VoyageWorld,
) -> None:
    result = await _refused(
        Bench(world), "player_buys", "not_for_sale", good_id="ore", qty=1, unit_price=380
    )
    assert result["hint"] == (
        "you do not sell titanium ore; you sell fuel cells, medical gel, nebula spice"
    )
    result = await _refused(
        Bench(world), "player_sells", "not_wanted", good_id="ore", qty=1, unit_price=300
    )
    assert result["hint"] == (
        "you do not buy titanium ore; you buy real coffee, medical gel, drive parts, nebula spice"
    )


async def test_a_player_elsewhere_cannot_trade(world: VoyageWorld) -> None:
    with world.transaction() as tx:
        tx.move_actor(PLAYER_ID, KESSLER)
    result = await _refused(
        Bench(world), "player_buys", "not_here", good_id="fuel", qty=1, unit_price=450
    )
    assert result["hint"] == (
        "they are at Kessler's Hollow and you are at Omega station; they must travel here first"
    )


async def test_a_job_is_refused_until_its_condition_holds(world: VoyageWorld) -> None:
    bench = Bench(world)
    await _refused(bench, "complete_quest", "not_their_job", quest_id="quest-medgel")
    assert (await bench.call("offer_quest", quest_id="quest-medgel"))["ok"] is True
    result = await _refused(bench, "complete_quest", "condition_unmet", quest_id="quest-medgel")
    assert result["hint"] == (
        "the job needs 10 medical gel and they hold 0; it completes when they bring 10 more"
    )


async def test_a_hostile_npc_keeps_its_jobs(world: VoyageWorld) -> None:
    with world.transaction() as tx:
        tx.move_actor(PLAYER_ID, KESSLER)
    result = await _refused(
        Bench(world, npc_id=BROKER), "offer_quest", "attitude_too_low", quest_id="quest-parts"
    )
    assert "your attitude to them is -30" in str(result["hint"])


@pytest.mark.parametrize(
    ("delta", "hint"), [(-25, "use -10 instead of -25"), (0, "changes nothing")]
)
async def test_attitude_moves_a_bounded_step(world: VoyageWorld, delta: int, hint: str) -> None:
    result = await _refused(
        Bench(world), "change_attitude", "step_out_of_bounds", delta=delta, reason="lowball"
    )
    assert hint in str(result["hint"])


async def test_passage_is_sold_only_where_the_npc_sells_it(world: VoyageWorld) -> None:
    result = await _refused(
        Bench(world, npc_id=DOCK_MASTER), "book_passage", "no_passage", destination="mars"
    )
    assert "Ceres Deep [ceres-deep] for 1,800" in str(result["hint"])
    with world.transaction() as tx:
        tx.add_credits(PLAYER_ID, -11_000)
    result = await _refused(
        Bench(world, npc_id=DOCK_MASTER), "book_passage", "insufficient_funds", destination=KESSLER
    )
    assert result["hint"] == "they have 1,000, the deal is 2,500"


async def test_intel_is_sold_once(world: VoyageWorld) -> None:
    with world.transaction() as tx:
        tx.set_attitude(DOCK_MASTER, PLAYER_ID, 50)
    bench = Bench(world, npc_id=DOCK_MASTER)
    assert (await bench.call("sell_intel", intel_id="intel-hiring"))["ok"] is True
    result = await _refused(bench, "sell_intel", "already_sold", intel_id="intel-hiring")
    assert "already bought" in str(result["hint"])
    await _refused(bench, "sell_intel", "unknown_intel", intel_id="intel-patrols")
