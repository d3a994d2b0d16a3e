"""A sale refused for its price: the offline brain names the very deal the rules offer in its
place, the real rules' refusal in, the brain's line out."""

from __future__ import annotations

import re

import pytest
from voyage_action_support import Bench
from voyage_brain_support import ARRIVAL, Conversation, speech

from starharness.voyage import VoyageWorld
from starharness.voyage.content import PLAYER_ID, SMUGGLER


@pytest.mark.parametrize(
    ("asked", "bound"), [(1, "least"), (1_000, "least"), (1_400, "most"), (99_999, "most")]
)
async def test_the_brain_names_the_price_of_the_rules_counter_offer(
    world: VoyageWorld, asked: int, bound: str
) -> None:
    # Karsk buys drive parts at 1,125 to 1,275 here: a sale at any other price is refused and
    # the same sale at the band's nearest price is offered. The line must say that price.
    with world.transaction() as tx:
        tx.add_cargo(PLAYER_ID, "parts", 2)
    arguments = {"good_id": "parts", "qty": 2, "unit_price": asked}
    value = await Bench(world, accept=False).call("player_sells", **arguments)
    assert value["reason"] == "price_out_of_band"
    offer = re.match(r"Sell 2 drive parts for ([\d,]+) cr", value["offer"])
    assert offer is not None, value["offer"]
    talk = Conversation().player(ARRIVAL).scene(world.scene(SMUGGLER, PLAYER_ID))
    talk.spoke("Evening, kid.", [("bye", "Leave")])
    talk.player(f"sell 2 drive parts at {asked}")
    talk.result(talk.called("player_sells", arguments), value)
    line = speech(talk.ask())["line"]
    assert f"a unit is the {bound} I pay for drive parts" in line
    assert line.endswith(f": {offer[1]} for 2."), (line, value["offer"])
