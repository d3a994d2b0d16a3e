"""The NPC's hands: one guarded action (selling tea) and the speaking tool."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, Field

from starharness.npc import OfferTerms, Role, SpeechContract, define_game_action, define_speech_tool
from starharness.npc.actions import predicate

from .world import PRICE, Tx

MOODS = ("calm", "glad", "cross")
MOST_CUPS = 10
"""The most cups one sale pours (larger orders are refused before any guard runs)."""
DEFAULT_MOOD = "calm"
SPEECH = SpeechContract(
    tool_name="say", line_field="line", mood_field="mood", options_field="options", max_options=4
)
SAY = define_speech_tool(
    SPEECH,
    MOODS,
    "Say one line to the customer, with options they can pick; the only way they hear you.",
)


class SellTeaArgs(BaseModel):
    """Sell cups of tea to the customer at the stall's price (3 coins a cup)."""

    npc_id: str
    player_id: str
    cups: int = Field(ge=1, le=MOST_CUPS, description="How many cups of tea.")


def _in_the_pot(tx: Tx, args: SellTeaArgs) -> bool:
    return tx.cups(args.npc_id) >= args.cups


def _can_pay(tx: Tx, args: SellTeaArgs) -> bool:
    return tx.coins(args.player_id) >= args.cups * PRICE


def _sell(tx: Tx, args: SellTeaArgs) -> Mapping[str, Any]:
    total = args.cups * PRICE
    tx.move(args.player_id, coins=-total, cups=args.cups)
    tx.move(args.npc_id, coins=total, cups=-args.cups)
    tx.warm(args.npc_id, args.player_id, 1)
    return {"customer_coins": tx.coins(args.player_id), "cups_left": tx.cups(args.npc_id)}


SELL_TEA = define_game_action(
    "sell_tea",
    "Sell cups of tea to the customer; refused when the pot is short or they cannot pay.",
    SellTeaArgs,
    bind={"npc_id": Role.NPC, "player_id": Role.PLAYER},
    guards=[
        predicate(
            _in_the_pot,
            reason="not_enough_tea",
            # The hint speaks to the NPC (the model); the player line to the player.
            hint=lambda tx, a: f"you have only {tx.cups(a.npc_id)} cups left",
            facts=lambda tx, a: {"have": tx.cups(a.npc_id), "want": a.cups},
            player_line=lambda tx, a: f"Only {tx.cups(a.npc_id)} cups are left in the pot.",
        ),
        predicate(
            _can_pay,
            reason="cannot_pay",
            hint=lambda tx, a: (
                f"they have {tx.coins(a.player_id)} coins and {a.cups} cups cost {a.cups * PRICE}"
            ),
            facts=lambda tx, a: {
                "have": tx.coins(a.player_id),
                "need": a.cups * PRICE,
                "max_cups": tx.coins(a.player_id) // PRICE,
            },
            player_line=lambda tx, a: (
                f"You have {tx.coins(a.player_id)} coins; {a.cups} cups cost {a.cups * PRICE}."
            ),
        ),
    ],
    apply=_sell,
    narrate=lambda args, effect: f"Sold {args.cups} cup(s) of tea for {args.cups * PRICE} coins.",
    # It takes the customer's coins: the model's call is an offer, the customer's pick commits.
    takes_from=Role.PLAYER,
    terms=lambda tx, a: OfferTerms(
        f"{a.cups} cup{'s' if a.cups > 1 else ''} of tea", f"{a.cups * PRICE} coins"
    ),
)

ACTIONS = (SELL_TEA, SAY)
