"""Counter-offers: a refused trade comes back as the deal the rules allow, offered, never done.

A small model gets the good right and the number or the direction wrong; the guard that says no
knows the deal that fits. The player still accepts it or not: nothing moves on the counter.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel
from voyage_action_support import Bench, ledger

from starharness.npc.actions import (
    OFFERED,
    CounterOffer,
    OfferTerms,
    Refusal,
    Role,
    define_game_action,
)
from starharness.npc.actions.offers import OFFER_NOTE, PITCH
from starharness.runtime.tools import ToolFailure
from starharness.voyage import VoyageWorld
from starharness.voyage.content import PLAYER_ID, SMUGGLER


def _give_player(world: VoyageWorld, good_id: str, qty: int) -> None:
    with world.transaction() as tx:
        tx.move_cargo(SMUGGLER, PLAYER_ID, good_id, qty)


def _audit(world: VoyageWorld, n: int) -> list[tuple[str, bool, str | None, dict[str, Any]]]:
    with world.snapshot() as reader:
        rows = reader.audit_log(n)
    return [(r.action, r.ok, r.reason, dict(r.arguments)) for r in reversed(rows)]


async def test_a_sale_of_gel_the_player_does_not_hold_is_offered_as_their_purchase(
    world: VoyageWorld,
) -> None:
    # "Three medical gel, please." decided as the player selling gel to Karsk.
    bench = Bench(world, accept=False)
    before = ledger(world)
    value = await bench.call("player_sells", good_id="medgel", qty=3)
    # The model reads the deal it meant, as if it had called it: no refusal to read aloud.
    assert value == {
        "ok": True,
        "action": "player_buys",
        OFFERED: "offer-1",
        "offer": "Buy 3 medical gel at 1,100 (3,300 cr)",
        "status": OFFER_NOTE,
        PITCH: "I sell you 3 medical gel at 1,100 (3,300 cr)",
    }
    # Nothing moved; the player is shown the offer, not a refusal of what they never asked.
    assert ledger(world) == before
    assert bench.reports == []
    [offer] = bench.offers.values()
    assert offer.draft.action == "player_buys"
    settled = await bench.settle(offer.id)
    assert settled.ok, settled.result
    after = ledger(world)
    assert after.credits[PLAYER_ID] == before.credits[PLAYER_ID] - 3_300
    assert after.cargo[PLAYER_ID].get("medgel") == 3
    assert [(a, ok, why) for a, ok, why, _ in _audit(world, 2)] == [
        ("player_sells", False, "insufficient_cargo"),
        ("player_buys", True, None),
    ]


async def test_fuel_offered_to_karsk_who_only_sells_it_is_offered_as_a_purchase(
    world: VoyageWorld,
) -> None:
    # Karsk sells fuel and never buys it: "Five fuel cells." can only mean the player buys.
    bench = Bench(world, accept=False)
    value = await bench.call("player_sells", good_id="fuel", qty=5, unit_price=300)
    assert (value["ok"], value["action"]) == (True, "player_buys")
    assert _audit(world, 1)[0][:3] == ("player_sells", False, "not_wanted")
    [offer] = bench.offers.values()
    # The mirror is at the going price, not at the price the model named for the other side.
    assert offer.label == "Buy 5 fuel cells at 450"


async def test_more_than_karsk_holds_is_offered_as_all_he_holds(world: VoyageWorld) -> None:
    bench = Bench(world, accept=False)
    value = await bench.call("player_buys", good_id="medgel", qty=20)
    assert value["reason"] == "insufficient_stock"
    # All twelve, or as many of them as the player's credits pay for.
    fits = min(12, ledger(world).credits[PLAYER_ID] // 1_100)
    assert value["offer"] == f"Buy {fits} medical gel at 1,100 ({fits * 1_100:,} cr)"
    # The same deal with fewer units: the player's card still says why.
    assert [(r.name, r.ok, r.summary) for r in bench.reports] == [
        ("player_buys", False, "They have only 12 medical gel.")
    ]


async def test_more_than_the_player_can_pay_is_offered_as_what_they_can(
    world: VoyageWorld,
) -> None:
    with world.transaction() as tx:
        tx.transfer_credits(PLAYER_ID, SMUGGLER, tx.credits(PLAYER_ID) - 6_000)
    bench = Bench(world, accept=False)
    value = await bench.call("player_buys", good_id="spice", qty=4)
    assert value["reason"] == "insufficient_funds"
    fits = value["facts"]["max_qty"]
    assert fits >= 1 and value["offer"].startswith(f"Buy {fits} nebula spice at ")


async def test_a_misread_sale_the_player_cannot_pay_for_shows_why_fewer_are_offered(
    world: VoyageWorld,
) -> None:
    # "Six nebula spice." decided as the player selling spice (they hold none) to Karsk, and
    # the player can pay for two: the purchase they meant is refused for its own reason, and
    # that refusal is what the player sees beside the offer of what they can have.
    with world.transaction() as tx:
        tx.transfer_credits(PLAYER_ID, SMUGGLER, tx.credits(PLAYER_ID) - 6_000)
    bench = Bench(world, accept=False)
    value = await bench.call("player_sells", good_id="spice", qty=6)
    assert (value["ok"], value["reason"]) == (False, "insufficient_funds")
    fits = value["facts"]["max_qty"]
    assert fits == 2 and value["offer"].startswith("Buy 2 nebula spice at ")
    [offer] = bench.offers.values()
    assert (offer.draft.action, offer.draft.arguments["qty"]) == ("player_buys", 2)
    assert [(r.name, r.ok) for r in bench.reports] == [("player_buys", False)]
    assert [(a, ok, why, args["qty"]) for a, ok, why, args in _audit(world, 2)] == [
        ("player_sells", False, "insufficient_cargo", 6),
        ("player_buys", False, "insufficient_funds", 6),
    ]


async def test_a_price_out_of_the_band_is_offered_at_its_nearest_edge(world: VoyageWorld) -> None:
    bench = Bench(world, accept=False)
    value = await bench.call("player_buys", good_id="fuel", qty=2, unit_price=10)
    assert value["reason"] == "price_out_of_band"
    low = value["facts"]["low"]
    assert value["offer"] == f"Buy 2 fuel cells at {low:,} ({2 * low:,} cr)"


async def test_more_than_the_player_holds_is_offered_as_all_they_hold(world: VoyageWorld) -> None:
    _give_player(world, "medgel", 2)
    bench = Bench(world, accept=False)
    value = await bench.call("player_sells", good_id="medgel", qty=5)
    assert value["reason"] == "insufficient_cargo"
    assert value["offer"].startswith("Sell 2 medical gel for ")


async def test_a_counter_the_rules_refuse_too_is_a_plain_refusal(world: VoyageWorld) -> None:
    # Drive parts: Karsk buys them but sells none, and the player holds none either.
    bench = Bench(world, accept=False)
    value = await bench.call("player_buys", good_id="parts", qty=1)
    assert (value["ok"], value["reason"]) == (False, "not_for_sale")
    assert OFFERED not in value and bench.offers == {}
    assert [(r.name, r.ok) for r in bench.reports] == [("player_buys", False)]


class _GiftArgs(BaseModel):
    npc_id: str
    player_id: str
    qty: int


async def test_a_counter_to_an_action_that_takes_nothing_is_a_definition_error(
    world: VoyageWorld,
) -> None:
    gift = define_game_action(
        "gift_fuel",
        "Give the player fuel.",
        _GiftArgs,
        bind={"npc_id": Role.NPC, "player_id": Role.PLAYER},
        apply=lambda tx, args: None,
        narrate=lambda args, effect: "Given.",
    )

    def never(tx: Any, args: Any) -> Refusal:
        return Refusal("no", "no", instead=CounterOffer(gift, {"qty": 1}))

    take = define_game_action(
        "take_fuel",
        "Take the player's fuel.",
        _GiftArgs,
        bind={"npc_id": Role.NPC, "player_id": Role.PLAYER},
        guards=[never],
        apply=lambda tx, args: None,
        narrate=lambda args, effect: "Taken.",
        takes_from=Role.PLAYER,
        terms=lambda tx, args: OfferTerms("Hand over fuel"),
    )
    bench = Bench(world, accept=False)
    bench.registry.register(take.tool)
    outcome = await bench.call_raw("take_fuel", '{"qty": 1}')
    assert isinstance(outcome.result, ToolFailure)
    assert "gift_fuel" in outcome.content and "takes nothing from the player" in outcome.content
    # The refusal is audited; nothing was offered.
    assert bench.offers == {}
    assert _audit(world, 1)[0][:3] == ("take_fuel", False, "no")


async def test_a_hand_in_short_of_goods_shows_why_and_offers_the_missing_ones(
    world: VoyageWorld,
) -> None:
    bench = Bench(world, accept=False)
    taken = await bench.call("offer_quest", quest_id="quest-medgel")
    assert taken["ok"], taken
    _give_player(world, "medgel", 6)
    before = ledger(world)
    value = await bench.call("complete_quest", quest_id="quest-medgel")
    # The player asked for the hand-in: the model reads why it failed beside the way to it.
    assert (value["ok"], value["reason"]) == (False, "condition_unmet")
    assert value["offer"] == "Buy 4 medical gel at 1,100 (4,400 cr)"
    assert [(r.name, r.ok, r.summary) for r in bench.reports][-1] == (
        "complete_quest",
        False,
        "The job needs 10 medical gel; you hold 6.",
    )
    assert ledger(world) == before
    [offer] = bench.offers.values()
    assert (await bench.settle(offer.id)).ok
    done = await bench.call("complete_quest", quest_id="quest-medgel")
    # The hand-in takes from the player too: it is offered, and commits on their pick.
    [hand_in] = [o for o in bench.offers.values() if o.draft.action == "complete_quest"]
    assert done["ok"], done
    assert (await bench.settle(hand_in.id)).ok
    assert [(a, ok, why) for a, ok, why, _ in _audit(world, 3)] == [
        ("complete_quest", False, "condition_unmet"),
        ("player_buys", True, None),
        ("complete_quest", True, None),
    ]


async def test_a_job_offered_again_says_it_is_taken_and_what_completes_it(
    world: VoyageWorld,
) -> None:
    bench = Bench(world, accept=False)
    assert (await bench.call("offer_quest", quest_id="quest-medgel"))["ok"]
    _give_player(world, "medgel", 2)
    before = ledger(world)
    again = await bench.call("offer_quest", quest_id="quest-medgel")
    assert (again["ok"], again["reason"]) == (False, "job_already_taken")
    assert again["facts"] == {"quest_id": "quest-medgel", "have": 2, "need": 10}
    assert bench.reports[-1].summary == 'You took "bring 10 medical gel for a clinic" already.'
    assert ledger(world) == before
