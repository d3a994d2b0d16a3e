"""The tiny game's actions: selling bread (guarded), baking (can fault), and talking."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, Field

from starharness.npc import Role, SpeechContract, define_game_action, define_speech_tool
from starharness.npc.actions import in_range, predicate

from .world import Tx

MOODS = ("calm", "happy", "cross")
SPEECH = SpeechContract(
    tool_name="talk", line_field="line", mood_field="mood", options_field="options", max_options=3
)


class SellArgs(BaseModel):
    """Sell loaves to the customer for a total price."""

    npc_id: str
    player_id: str
    qty: int = Field(description="How many loaves.")
    price: int = Field(description="Total price in coins.")


def _can_afford(tx: Tx, args: SellArgs) -> bool:
    return tx.coins(args.player_id) >= args.price


def _in_stock(tx: Tx, args: SellArgs) -> bool:
    return tx.loaves(args.npc_id) >= args.qty


def _sell(tx: Tx, args: SellArgs) -> Mapping[str, Any]:
    tx.add(args.player_id, coins=-args.price, loaves=args.qty)
    tx.add(args.npc_id, coins=args.price, loaves=-args.qty)
    return {"customer_coins": tx.coins(args.player_id)}


SELL = define_game_action(
    "sell_bread",
    "Sell loaves of bread to the customer.",
    SellArgs,
    bind={"npc_id": Role.NPC, "player_id": Role.PLAYER},
    guards=[
        in_range("qty", 1, 10),
        predicate(
            _can_afford,
            reason="cannot_afford",
            hint=lambda tx, a: f"they have {tx.coins(a.player_id)} coins, the deal is {a.price}",
            facts=lambda tx, a: {"have": tx.coins(a.player_id), "want": a.price},
        ),
        predicate(_in_stock, reason="out_of_stock", hint="not enough loaves"),
    ],
    apply=_sell,
    narrate=lambda args, effect: f"Sold {args.qty} loaves for {args.price} coins.",
)


class BakeArgs(BaseModel):
    """Bake more loaves."""

    npc_id: str
    qty: int = Field(ge=1, le=20)


def _bake(tx: Tx, args: BakeArgs) -> Mapping[str, Any]:
    tx.add(args.npc_id, loaves=args.qty)
    if tx.switch("oven_broken"):
        raise RuntimeError("the oven broke")
    return {"loaves": tx.loaves(args.npc_id)}


BAKE = define_game_action(
    "bake",
    "Bake loaves.",
    BakeArgs,
    bind={"npc_id": Role.NPC},
    apply=_bake,
    narrate=lambda args, effect: f"Baked {args.qty} loaves.",
)

TALK = define_speech_tool(SPEECH, MOODS, "Say one line to the customer; only way they hear you.")
