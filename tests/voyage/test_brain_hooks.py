"""A game copied from Omega station teaches the offline brain a new action through its hooks."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from voyage_e2e_support import Player, line

from stack_support import start_runtime
from starharness.mockllm import MockLlmServer
from starharness.npc import Role, ServerSettings, define_game_action, start_server
from starharness.npc.actions import predicate
from starharness.voyage import GAME
from starharness.voyage.brain import (
    BrainHooks,
    Call,
    Intent,
    Option,
    Plan,
    Say,
    SceneView,
    Situation,
    act,
    make_responder,
    with_bye,
)
from starharness.voyage.content import PLAYER_ID, SMUGGLER
from starharness.voyage.store import WorldTx

DRINK_PRICE = 40


class PourArgs(BaseModel):
    """Pour the player a drink at the bar's price."""

    npc_id: str
    player_id: str


def _pour(tx: WorldTx, args: PourArgs) -> Mapping[str, Any]:
    tx.transfer_credits(args.player_id, args.npc_id, DRINK_PRICE)
    return {"credits_left": tx.credits(args.player_id)}


POUR = define_game_action(
    "pour_drink",
    "Pour the player a drink for 40 credits.",
    PourArgs,
    bind={"npc_id": Role.NPC, "player_id": Role.PLAYER},
    guards=[
        predicate(
            lambda tx, a: tx.credits(a.player_id) >= DRINK_PRICE,
            reason="insufficient_funds",
            hint="they cannot pay for a drink",
            player_line="You cannot pay for a drink.",
        )
    ],
    apply=_pour,
    narrate=lambda args, effect: f"Poured a drink for {DRINK_PRICE} credits.",
)
DRINK = Option("drink", f"A drink, please ({DRINK_PRICE})")


def recognise_drink(said: str, scene: SceneView, offered: Sequence[Option]) -> Intent | None:
    if said == DRINK.label or re.search(r"\bdrinks?\b", said.casefold()):
        return Intent("drink", picked=said == DRINK.label)
    return None


def decide_drink(s: Situation) -> Plan:
    return act("pour_drink")


def react_drink(s: Situation, call: Call) -> Plan:
    if call.ok and call.result is not None:
        left = call.result["credits_left"]
        return Say(f"On the house next time, {s.addr}. You've {left:,} left.", "pleased",
                   with_bye(DRINK))  # fmt: skip
    return Say(f"Pay first, {s.addr}.", "annoyed", with_bye(DRINK))


HOOKS = BrainHooks(
    recognise=[recognise_drink], decide={"drink": decide_drink}, react={"pour_drink": react_drink}
)
BAR_GAME = dataclasses.replace(
    GAME, actions=(*GAME.actions, POUR), offline_responder=make_responder(HOOKS)
)


async def test_a_hooked_action_is_played_by_the_offline_brain(tmp_path: Path) -> None:
    settings = ServerSettings(port=0, world=tmp_path / "world.db")
    async with MockLlmServer(responder=BAR_GAME.offline_responder) as mock:
        ctx = await start_runtime(mock.base_url)
        running = await start_server(ctx, BAR_GAME, settings)
        try:
            async with Player(running.ws_url, PLAYER_ID) as me:
                await me.hello()
                await me.open("e1", SMUGGLER)
                poured = await me.say("e1", "pour me a drink, Karsk")
                cards = [(f["name"], f["ok"]) for f in poured if f["t"] == "action"]
                assert cards == [("pour_drink", True)]
                assert "You've 11,960 left." in line(poured)
                # Without the hook's word the built-in policy still answers as before.
                prices = await me.say("e1", "what are your prices?")
                assert not [f for f in prices if f["t"] == "action"]
                assert "fuel cells" in line(prices)
        finally:
            await running.stop()
            await ctx.dispose()
