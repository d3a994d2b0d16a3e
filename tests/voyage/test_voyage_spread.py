"""The economy cannot be pumped: an NPC buys below what it sells, through the real server."""

from __future__ import annotations

import json
from pathlib import Path

from voyage_e2e_support import Player, actions, serving_voyage

from starharness.mockllm import ScriptedCall, ToolCalls
from starharness.voyage.actions import DEFAULT_MOOD, SPEECH, buy_band, sell_band
from starharness.voyage.content import PLAYER_ID, SMUGGLER


def _call(name: str, **arguments: object) -> ToolCalls:
    return ToolCalls(calls=[ScriptedCall(name=name, arguments=json.dumps(arguments))])


def _talk(line: str) -> ToolCalls:
    return _call(
        SPEECH.tool_name,
        **{SPEECH.line_field: line, SPEECH.mood_field: DEFAULT_MOOD, SPEECH.options_field: []},
    )


def test_every_price_an_npc_pays_is_below_every_price_it_asks() -> None:
    for going in (*range(1, 400), 1_100, 2_400, 12_345, 99_999):
        sells, buys = sell_band(going), buy_band(going)
        assert buys.low <= buys.high <= sells.low <= sells.high
        assert buys.high < sells.low or going == 1


async def test_a_round_trip_at_the_band_edges_loses_money(tmp_path: Path) -> None:
    async with serving_voyage(tmp_path) as stack, Player(stack.running.ws_url, PLAYER_ID) as me:
        going = 1_100  # medical gel at Omega station: the smuggler sells it and buys it
        cheapest, dearest = sell_band(going).low, buy_band(going).high
        stack.mock.script_next(
            [
                _talk("Evening."),
                _call("player_buys", good_id="medgel", qty=5, unit_price=cheapest),
                _talk("Yours for that."),
                _talk("Done."),  # the player accepted
                _call("player_sells", good_id="medgel", qty=5, unit_price=int(going * 1.25)),
                _call("player_sells", good_id="medgel", qty=5, unit_price=going),
                _call("player_sells", good_id="medgel", qty=5, unit_price=dearest),
                _talk("That much, then."),
                _talk("Done."),  # accepted
            ]
        )
        await me.hello()
        await me.open("e1", SMUGGLER)
        offered = await me.say("e1", "Five gel at your lowest price.")
        # Both deals take from the player: each is an offer they accept with a plain yes.
        assert actions(offered) == []
        bought = await me.say("e1", "Deal.")
        assert actions(bought) == [("player_buys", True)]
        asked = await me.say("e1", "Buy them back at the top of your band.")
        assert actions(asked) == [("player_sells", False), ("player_sells", False)]
        sold = await me.say("e1", "Yes, deal.")
        assert actions(sold) == [("player_sells", True)]
        credits = stack.world.player_view(PLAYER_ID)["credits"]
        assert credits == 12_000 - 5 * cheapest + 5 * dearest < 12_000
