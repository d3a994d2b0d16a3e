"""Omega station's rule book: guards that refuse with a hint saying how the action could succeed.

Each guard runs inside the action's transaction, so what it read is still true when `apply`
writes. Two voices per refusal: the hint speaks to the NPC ("you" is the NPC), who reads it and
tells the player in its own voice; the player line is what the player's action card shows
("you" is the player). A hint says what the *player* can buy or sell, as the actions are named
(`player_buys`, `player_sells`): "they hold only 3 fuel cells; buy at most 3" (the NPC's side)
was followed by `player_buys` on the 1.5B model, the direction turned around.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypeVar

from starharness.npc.actions import Refusal

from ..content.prices import PriceBand, band_around
from ..store import WorldTx
from ._naming import good_name, place_name


class Parties(Protocol):
    """Arguments of an action between the encounter's NPC and player."""

    npc_id: str
    player_id: str


class Priced(Parties, Protocol):
    """Arguments of a trade: a good, a quantity and a unit price."""

    good_id: str
    qty: int
    unit_price: int


P = TypeVar("P", bound=Parties)
T = TypeVar("T", bound=Priced)

VoyageGuard = Callable[[WorldTx, P], Refusal | None]
"""A guard as this game writes it: typed transaction, typed arguments."""


def same_location(tx: WorldTx, args: Parties) -> Refusal | None:
    """The NPC and the player must stand in the same place."""
    npc_at = tx.location_of(args.npc_id)
    player_at = tx.location_of(args.player_id)
    if npc_at == player_at:
        return None
    return Refusal(
        "not_here",
        f"they are at {place_name(tx, player_at)} and you are at {place_name(tx, npc_at)}; "
        "they must travel here first",
        {"npc_location": npc_at, "player_location": player_at},
        f"Not here: you are at {place_name(tx, player_at)}.",
    )


def has_stock(tx: WorldTx, args: Priced) -> Refusal | None:
    """The NPC must hold the units it sells."""
    have = tx.cargo_qty(args.npc_id, args.good_id)
    if have >= args.qty:
        return None
    name = good_name(tx, args.good_id)
    hint = (
        f"you hold only {have} {name}; the player can buy at most {have}"
        if have
        else f"you hold no {name} right now; offer something else"
    )
    shown = f"They have only {have} {name}." if have else f"They have no {name} right now."
    return Refusal(
        "insufficient_stock",
        hint,
        {"good_id": args.good_id, "have": have, "want": args.qty},
        shown,
    )


def has_cargo(tx: WorldTx, args: Priced) -> Refusal | None:
    """The player must hold the units they sell."""
    have = tx.cargo_qty(args.player_id, args.good_id)
    if have >= args.qty:
        return None
    name = good_name(tx, args.good_id)
    hint = (
        f"they hold only {have} {name}; the player can sell you at most {have}"
        if have
        else f"they hold no {name}; they have nothing of it to sell"
    )
    shown = f"You hold only {have} {name}." if have else f"You hold no {name}."
    return Refusal(
        "insufficient_cargo",
        hint,
        {"good_id": args.good_id, "have": have, "want": args.qty},
        shown,
    )


def can_afford(
    payer: Callable[[P], str],
    amount: Callable[[WorldTx, P], int],
    *,
    unit: Callable[[P], int] | None = None,
) -> VoyageGuard[P]:
    """The payer must have the deal's amount; the hint names both, and what would fit."""

    def guard(tx: WorldTx, args: P) -> Refusal | None:
        payer_id = payer(args)
        have = tx.credits(payer_id)
        need = amount(tx, args)
        if have >= need:
            return None
        npc_pays = payer_id == args.npc_id
        who = "you have" if npc_pays else "they have"
        hint = f"{who} {have:,}, the deal is {need:,}"
        shown = (
            f"They cannot pay {need:,} credits."
            if npc_pays
            else f"You have {have:,} credits; this costs {need:,}."
        )
        facts: dict[str, int | str] = {"payer": payer_id, "have": have, "need": need}
        if unit is not None:
            price = unit(args)
            fits = have // price if price > 0 else 0
            facts["max_qty"] = fits
            hint += (
                f"; at {price:,} a unit that pays for {fits}"
                if fits
                else f"; that does not pay for one unit at {price:,}"
            )
        return Refusal("insufficient_funds", hint, facts, shown)

    return guard


def attitude_at_least(
    threshold: Callable[[WorldTx, P], int], what: Callable[[WorldTx, P], str]
) -> VoyageGuard[P]:
    """The NPC's attitude to the player must reach a threshold (for intel, jobs and favours)."""

    def guard(tx: WorldTx, args: P) -> Refusal | None:
        score = tx.attitude(args.npc_id, args.player_id)
        needed = threshold(tx, args)
        if score >= needed:
            return None
        return Refusal(
            "attitude_too_low",
            f"your attitude to them is {score}; you offer {what(tx, args)} only at {needed} or "
            "more. They can earn it with fair deals or a job done",
            {"attitude": score, "needed": needed},
            f"They do not trust you enough for {what(tx, args)} yet (attitude {score}, "
            f"needs {needed}).",
        )

    return guard


def price_within_band(
    going: Callable[[WorldTx, T], int | None],
    band_of: Callable[[int], PriceBand] = band_around,
) -> VoyageGuard[T]:
    """The unit price must sit within the band around the going price where the NPC stands."""

    def guard(tx: WorldTx, args: T) -> Refusal | None:
        price = going(tx, args)
        if price is None:
            return Refusal(
                "not_traded_here",
                f"{good_name(tx, args.good_id)} has no going price here; trade something else",
                {"good_id": args.good_id},
                f"Nobody trades {good_name(tx, args.good_id)} here.",
            )
        band: PriceBand = band_of(price)
        if band.allows(args.unit_price):
            return None
        return Refusal(
            "price_out_of_band",
            f"the going price of {good_name(tx, args.good_id)} here is {price:,}; name a unit "
            f"price between {band.low:,} and {band.high:,} (you said {args.unit_price:,})",
            {"going": price, "low": band.low, "high": band.high, "asked": args.unit_price},
            # The band, not the going price: an NPC buys below it, and "1,100 is out of the
            # question: the going price is 1,100" is what a player read when selling at it.
            f"{args.unit_price:,} a unit is out of the question: {band.low:,} to "
            f"{band.high:,} for {good_name(tx, args.good_id)} here.",
        )

    return guard


def going_price_here(tx: WorldTx, args: Priced) -> int | None:
    """The going price of the trade's good where the NPC stands."""
    return tx.price(tx.location_of(args.npc_id), args.good_id)
