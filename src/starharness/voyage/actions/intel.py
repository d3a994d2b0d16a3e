"""Selling rumours and route intel, only to players the NPC trusts enough."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, Field

from starharness.npc.actions import OfferTerms, Refusal, Role, define_game_action

from ..content.seed import INTEL
from ..store import Intel, WorldTx
from ..store.scene import INTEL_MEMORY
from ._naming import listing
from .guards import attitude_at_least, can_afford, same_location

SELL_INTEL = "sell_intel"


class IntelArgs(BaseModel):
    """One piece of intel from the NPC's list in the scene."""

    npc_id: str
    player_id: str
    intel_id: str = Field(
        min_length=1,
        description="Id in [brackets] in the scene.",
        json_schema_extra={"enum": [item.id for item in INTEL]},
    )


def _intel(tx: WorldTx, args: IntelArgs) -> Intel:
    found = tx.intel(args.intel_id)
    if found is None:  # the ownership guard runs first; reaching this is a bug
        raise LookupError(f"no intel {args.intel_id!r}")
    return found


def _owned(tx: WorldTx, args: IntelArgs) -> Refusal | None:
    found = tx.intel(args.intel_id)
    if found is not None and found.npc_id == args.npc_id:
        return None
    yours = [f"{item.id} ({item.title})" for item in tx.intel_of(args.npc_id)]
    return Refusal(
        "unknown_intel",
        f"you know no intel {args.intel_id!r}; yours: {listing(yours, 'none')}",
        {"intel_id": args.intel_id},
        "They know nothing about that.",
    )


def _not_sold_yet(tx: WorldTx, args: IntelArgs) -> Refusal | None:
    sold = tx.count_memories(args.npc_id, args.player_id, kind=INTEL_MEMORY, ref=args.intel_id)
    if not sold:
        return None
    return Refusal(
        "already_sold",
        f'they already bought "{_intel(tx, args).title}" from you; offer something else',
        {"intel_id": args.intel_id},
        "You already bought that from them.",
    )


def _price(tx: WorldTx, args: IntelArgs) -> int:
    return _intel(tx, args).price


def _sell(tx: WorldTx, args: IntelArgs) -> Mapping[str, Any]:
    item = _intel(tx, args)
    if item.price:
        tx.transfer_credits(args.player_id, args.npc_id, item.price)
    tx.remember(
        args.npc_id,
        args.player_id,
        f'Sold them the {item.kind} "{item.title}" for {item.price:,}.',
        kind=INTEL_MEMORY,
        price=item.price,
        ref=item.id,
    )
    return {"title": item.title, "kind": item.kind, "text": item.text, "price": item.price}


def _terms(tx: WorldTx, args: IntelArgs) -> OfferTerms:
    item = _intel(tx, args)
    if not item.price:
        return OfferTerms(
            f'Hear the {item.kind} "{item.title}"',
            "free",
            {"price": 0},
            pitch=f'I tell you the {item.kind} "{item.title}" for free',
            says=f"You can have that {item.kind} for free.",
            says_done="Here's what I heard.",
        )
    return OfferTerms(
        f'Buy the {item.kind} "{item.title}"',
        f"{item.price:,} cr",
        {"price": item.price},
        pitch=f'I sell you the {item.kind} "{item.title}" ({item.price:,} cr)',
        says=f"That {item.kind} costs {item.price:,} credits.",
        says_done="Here's what I know.",
    )


SELL_RUMOUR = define_game_action(
    SELL_INTEL,
    "Sell the player a rumour or route intel of yours at its price; the result holds the words "
    "to say. Refused below the item's attitude, if they have it, or if they cannot pay.",
    IntelArgs,
    bind={"npc_id": Role.NPC, "player_id": Role.PLAYER},
    guards=[
        same_location,
        _owned,
        _not_sold_yet,
        attitude_at_least(
            lambda tx, a: _intel(tx, a).min_attitude,
            lambda tx, a: f'"{_intel(tx, a).title}"',
        ),
        can_afford(lambda a: a.player_id, _price),
    ],
    apply=_sell,
    # From the player's side, as every action card reads.
    narrate=lambda args, effect: (
        f'Bought the {effect["kind"]} "{effect["title"]}" for {effect["price"]:,} credits.'
        if effect["price"]
        else f'Heard the {effect["kind"]} "{effect["title"]}".'
    ),
    takes_from=Role.PLAYER,
    terms=_terms,
)
