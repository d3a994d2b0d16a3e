"""The offline brain reads what an NPC saw or heard apart from what it did: a deal at the bar
or a rumour is mentioned to the player, never taken for the NPC's own last deal."""

from __future__ import annotations

from starharness.voyage import VoyageWorld
from starharness.voyage.brain import parse_scene
from starharness.voyage.content import BROKER, DOCK_MASTER, PLAYER_ID, SMUGGLER


def _buy_fuel_from_karsk(world: VoyageWorld) -> None:
    with world.transaction() as tx:
        tx.remember(SMUGGLER, PLAYER_ID, "They bought 5 fuel cells for 2,250 (450 each).",
                    kind="trade", action="bought", good_id="fuel", qty=5, price=2_250)  # fmt: skip


def test_a_witness_mentions_the_deal_and_does_not_take_it_for_its_own(
    world: VoyageWorld,
) -> None:
    _buy_fuel_from_karsk(world)
    view = parse_scene(world.scene(DOCK_MASTER, PLAYER_ID))
    assert (view.memory_count, view.hearsay_count, view.met_before) == (1, 1, False)
    assert view.last_deal is None
    assert view.word == "I saw you buy 5 fuel cells from Jonah Karsk for 2,250."
    # Karsk's own scene: his deal, nothing seen or heard.
    own = parse_scene(world.scene(SMUGGLER, PLAYER_ID))
    assert own.met_before and own.word is None
    assert own.last_deal is not None and own.last_deal.total == 2_250


def test_a_rumour_is_attributed_and_is_not_the_listeners_deal(world: VoyageWorld) -> None:
    _buy_fuel_from_karsk(world)
    world.tick(2)
    view = parse_scene(world.scene(BROKER, PLAYER_ID))
    assert view.hearsay_count >= 1 and not view.met_before and view.last_deal is None
    assert view.word is not None and " tells me: " in view.word and "fuel cells" in view.word
