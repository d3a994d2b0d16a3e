"""Passage: an NPC who sells berths moves the player to another location."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, Field

from starharness.npc.actions import OfferTerms, Refusal, Role, define_game_action

from ..content.seed import LOCATIONS
from ..store import Route, WorldTx
from ._naming import listing, place_name
from .guards import can_afford, same_location

SELL_PASSAGE = "sell_passage"


class PassageArgs(BaseModel):
    """A berth on a ship leaving from here."""

    npc_id: str
    player_id: str
    destination: str = Field(
        min_length=1,
        description="Id in [brackets] in the scene.",
        json_schema_extra={"enum": [place.id for place in LOCATIONS]},
    )


def _route(tx: WorldTx, args: PassageArgs) -> Route | None:
    found = tx.route(tx.location_of(args.npc_id), args.destination)
    return found if found is not None and found.seller_id == args.npc_id else None


def _fare(tx: WorldTx, args: PassageArgs) -> int:
    found = _route(tx, args)
    if found is None:  # the route guard runs first; reaching this is a bug
        raise LookupError(f"no passage to {args.destination!r}")
    return found.fare


def _sells_route(tx: WorldTx, args: PassageArgs) -> Refusal | None:
    if _route(tx, args) is not None:
        return None
    here = tx.location_of(args.npc_id)
    offered = [
        f"{place_name(tx, r.to_id)} [{r.to_id}] for {r.fare:,}"
        for r in tx.routes_from(here)
        if r.seller_id == args.npc_id
    ]
    return Refusal(
        "no_passage",
        f"you sell no passage to {args.destination!r}; you sell: {listing(offered, 'none')}",
        {"destination": args.destination},
        "They sell no passage there.",
    )


def _travel(tx: WorldTx, args: PassageArgs) -> Mapping[str, Any]:
    route = _route(tx, args)
    if route is None:
        raise LookupError(f"no passage to {args.destination!r}")
    name = place_name(tx, route.to_id)
    tx.transfer_credits(args.player_id, args.npc_id, route.fare)
    tx.move_actor(args.player_id, route.to_id)
    tx.remember(
        args.npc_id,
        args.player_id,
        f"Sold them passage to {name} for {route.fare:,}.",
        kind="travel",
        price=route.fare,
        ref=route.to_id,
    )
    return {
        "destination": name,
        "destination_id": route.to_id,
        "fare": route.fare,
        "days": route.days,
        "their_credits": tx.credits(args.player_id),
    }


def _terms(tx: WorldTx, args: PassageArgs) -> OfferTerms:
    fare = _fare(tx, args)
    label = f"Passage to {place_name(tx, args.destination)}"
    return OfferTerms(label, f"{fare:,} cr", {"fare": fare})


PASSAGE = define_game_action(
    SELL_PASSAGE,
    "Sell the player a berth on a passage you sell; they leave at once. Fares are fixed. "
    "Refused if they cannot pay.",
    PassageArgs,
    bind={"npc_id": Role.NPC, "player_id": Role.PLAYER},
    guards=[
        same_location,
        _sells_route,
        can_afford(lambda a: a.player_id, _fare),
    ],
    apply=_travel,
    narrate=lambda args, effect: (
        f"Passage to {effect['destination']} sold for "
        f"{effect['fare']:,} credits; the player has left."
    ),
    takes_from=Role.PLAYER,
    terms=_terms,
)
