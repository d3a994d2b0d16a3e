"""Passage: an NPC who sells berths moves the player to another location, and the voyage's days
pass on the world's clock (the same clock `tick` runs). A player who cannot pay the fare may
work their passage instead (fare 0), so nobody is ever stranded."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, Field

from starharness.npc.actions import OfferTerms, Refusal, Role, define_game_action

from ..content.seed import LOCATIONS
from ..store import Route, VoyageWorld, WorldTx
from ._naming import listing, place_name
from .guards import can_afford, same_location

BOOK_PASSAGE = "book_passage"


class PassageArgs(BaseModel):
    """A berth on a ship leaving from here."""

    npc_id: str
    player_id: str
    destination: str = Field(
        min_length=1,
        description="Id in [brackets] in the scene.",
        json_schema_extra={"enum": [place.id for place in LOCATIONS]},
    )
    work: bool = Field(
        default=False,
        description="True: they work the voyage off instead of paying (only if they cannot "
        "pay the fare).",
    )


def _route(tx: WorldTx, args: PassageArgs) -> Route | None:
    found = tx.route(tx.location_of(args.npc_id), args.destination)
    return found if found is not None and found.seller_id == args.npc_id else None


def _fare(tx: WorldTx, args: PassageArgs) -> int:
    """What the player pays: the posted fare, or nothing for a working passage."""
    found = _route(tx, args)
    if found is None:  # the route guard runs first; reaching this is a bug
        raise LookupError(f"no passage to {args.destination!r}")
    return 0 if args.work else found.fare


def _work_only_when_broke(tx: WorldTx, args: PassageArgs) -> Refusal | None:
    """A working berth is for those who cannot pay: whoever can, pays the fare."""
    found = _route(tx, args)
    if not args.work or found is None or tx.credits(args.player_id) < found.fare:
        return None
    return Refusal(
        "can_pay",
        f"they can pay the {found.fare:,} fare; sell them the berth with work=false",
        {"fare": found.fare, "have": tx.credits(args.player_id)},
        f"You can pay the {found.fare:,} fare.",
    )


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
    fare = _fare(tx, args)
    if fare:
        tx.transfer_credits(args.player_id, args.npc_id, fare)
    tx.move_actor(args.player_id, route.to_id)
    tx.remember(
        args.npc_id,
        args.player_id,
        f"Sold them passage to {name} for {fare:,}."
        if fare
        else f"Let them work their passage to {name}.",
        kind="travel",
        price=fare,
        ref=route.to_id,
    )
    # The voyage takes its days on the world's own clock, in this same transaction.
    world = tx.owner
    if not isinstance(world, VoyageWorld):  # a transaction is always its world's
        raise TypeError(f"a transaction of {type(world).__name__}, not of a VoyageWorld")
    world.pass_days(tx, route.days)
    return {
        "destination": name,
        "destination_id": route.to_id,
        "fare": fare,
        "worked": args.work,
        "days": route.days,
        "day": tx.day(),
        "their_credits": tx.credits(args.player_id),
    }


def _terms(tx: WorldTx, args: PassageArgs) -> OfferTerms:
    fare = _fare(tx, args)
    place = place_name(tx, args.destination)
    if args.work:
        return OfferTerms(
            f"Work your passage to {place}",
            "your labour",
            {"fare": 0},
            pitch=f"you work your passage to {place}",
            says=f"You can work your passage to {place}.",
            says_done=f"Good, you work your passage to {place}.",
        )
    return OfferTerms(
        f"Passage to {place}",
        f"{fare:,} cr",
        {"fare": fare},
        pitch=f"I book you a passage to {place} ({fare:,} cr)",
        says=f"Passage to {place} is {fare:,} credits.",
        says_done=f"You're booked to {place}.",
    )


def _narrate(args: PassageArgs, effect: Mapping[str, Any]) -> str:
    days = int(effect["days"])
    voyage = f"{days} day{'s' if days != 1 else ''} out, arrived on day {effect['day']}"
    if effect["worked"]:
        return f"Worked your passage to {effect['destination']}: {voyage}."
    return f"Bought passage to {effect['destination']} for {effect['fare']:,} credits: {voyage}."


PASSAGE = define_game_action(
    BOOK_PASSAGE,
    "Book the player a berth on a passage you run; they leave at once and the voyage's days "
    "pass. Fares are fixed. A player who cannot pay the fare may work the passage off "
    "(work=true); one who can pay is refused a working berth.",
    PassageArgs,
    bind={"npc_id": Role.NPC, "player_id": Role.PLAYER},
    guards=[
        same_location,
        _sells_route,
        _work_only_when_broke,
        can_afford(lambda a: a.player_id, _fare),
    ],
    apply=_travel,
    narrate=_narrate,
    takes_from=Role.PLAYER,
    terms=_terms,
)
