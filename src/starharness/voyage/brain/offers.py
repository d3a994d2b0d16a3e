"""Building the options an NPC offers, from the real stock, prices and purse in the scene."""

from __future__ import annotations

from typing import Any

from ..content.words import units_of
from .options import Option, decode, trade_id
from .plans import buy_offer
from .scene import Passage, SceneView, Ware
from .tools import BOOK_PASSAGE, BUY_GOODS, COMPLETE_QUEST, SELL_GOODS, SELL_INTEL
from .voice import money

MAX_OPTIONS = 4
USUAL_LOT = 5

BYE = Option("bye", "Leave")
PRICES = Option("prices", "What are your prices?")
RUMOURS = Option("rumours", "Any rumours?")
JOBS = Option("jobs", "Got any work?")
PASSAGE = Option("passage", "I need passage")


def buy_option(ware: Ware, qty: int, unit: int | None = None) -> Option:
    """Buy qty units; `unit` only when it differs from the going price."""
    price = ware.price if unit is None else unit
    special = unit is not None and unit != ware.price
    label = (
        f"{units_of(qty, ware.name)} at {money(price)} ({money(qty * price)})"
        if special
        else f"Buy {units_of(qty, ware.name)} ({money(qty * price)})"
    )
    return Option(trade_id("buy", ware.good_id, qty, price if special else None), label)


def working_option(passage: Passage) -> Option:
    """A berth worked off instead of paid for, for a player short of the fare."""
    return Option(f"work:{passage.destination_id}", f"Work your passage to {passage.name}")


def sell_option(ware: Ware, qty: int, unit: int) -> Option:
    return Option(
        trade_id("sell", ware.good_id, qty, unit),
        f"Sell {units_of(qty, ware.name)} at {money(unit)} ({money(qty * unit)})",
    )


def payable(qty: int, unit: int, credits: int) -> int:
    """At most `qty` units at `unit` a piece that `credits` pay for (0: not even one)."""
    return max(0, min(qty, credits // unit if unit > 0 else qty))


def affordable_lot(ware: Ware, credits: int, units: int | None = None, lot: int = USUAL_LOT) -> int:
    """The biggest lot up to `lot` that the stock holds and the purse pays for (0: none)."""
    held = ware.units if units is None else units
    return max(0, min(lot, held or 0, credits // ware.price if ware.price else 0))


def standard_options(
    scene: SceneView,
    *,
    credits: int | None = None,
    units: dict[str, int] | None = None,
    skip: frozenset[str] = frozenset(),
) -> tuple[Option, ...]:
    """Two to four options that fit the scene: affordable lots, a sale, the NPC's trade, leave."""
    purse = scene.player_credits if credits is None else credits
    found: list[Option] = []
    for ware in scene.sells:
        lot = affordable_lot(ware, purse, (units or {}).get(ware.good_id))
        if lot and len(found) < 2:
            found.append(buy_option(ware, lot))
    for ware in scene.buys:
        held = scene.held(ware.good_id)
        if held and len(found) < 3:
            found.append(sell_option(ware, held, buy_offer(ware.price)))
            break
    extras: list[Option] = []
    # Only a job the player can hand over now: an offer the guards refuse is a dead end.
    ready = [job for job in scene.their_jobs if scene.can_hand_over(job)]
    if ready:
        job = ready[0]
        extras.append(Option(f"deliver:{job.id}", f'Hand over the job "{job.title}"'))
    if scene.passages:
        extras.append(PASSAGE)
    if scene.intel:
        extras.append(RUMOURS)
    if scene.open_jobs:
        extras.append(JOBS)
    extras.append(PRICES)
    for option in extras:
        if option.id not in skip and len(found) < MAX_OPTIONS - 1:
            found.append(option)
    found.append(BYE)
    return tuple(found)


def as_offers(
    options: tuple[Option, ...], scene: SceneView
) -> tuple[list[tuple[str, dict[str, Any]]], tuple[Option, ...]]:
    """Split options into the action calls that make them offers, and the rest.

    A deal that takes from the player is not an option the model writes but an offer the
    game holds: the brain calls the action (the framework checks it and shows it with its
    price) and keeps the other options as words the player may say.
    """
    calls: list[tuple[str, dict[str, Any]]] = []
    rest: list[Option] = []
    for option in options:
        call = _offer_call(option, scene)
        if call is None:
            rest.append(option)
        else:
            calls.append(call)
    return calls, tuple(rest)


def _offer_call(option: Option, scene: SceneView) -> tuple[str, dict[str, Any]] | None:
    choice = decode(option.id)
    if choice is None:
        return None
    if choice.verb == "buy":
        ware = scene.sold(choice.subject)
        if ware is None:
            return None
        unit = ware.price if choice.price is None else choice.price
        return SELL_GOODS, {"good_id": ware.good_id, "qty": choice.qty, "unit_price": unit}
    if choice.verb == "sell" and choice.price is not None:
        return BUY_GOODS, {"good_id": choice.subject, "qty": choice.qty, "unit_price": choice.price}
    if choice.verb == "intel":
        return SELL_INTEL, {"intel_id": choice.subject}
    if choice.verb == "travel":
        return BOOK_PASSAGE, {"destination": choice.subject}
    if choice.verb == "work":
        return BOOK_PASSAGE, {"destination": choice.subject, "work": True}
    if choice.verb == "deliver":
        return COMPLETE_QUEST, {"quest_id": choice.subject}
    return None


def with_bye(*options: Option) -> tuple[Option, ...]:
    """The given options (at most three, duplicates dropped), then Leave."""
    unique: list[Option] = []
    for option in options:
        if option.id != BYE.id and option.id not in {o.id for o in unique}:
            unique.append(option)
    if not unique:
        unique.append(PRICES)
    return (*unique[: MAX_OPTIONS - 1], BYE)
