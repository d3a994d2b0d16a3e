"""The director's hands: set a going price, restock an exchange, post a headline, get a place
talking (one more round of gossip there today).

Game actions like any NPC's (guarded, one transaction each, audited); every limit comes from
the game's `EconomyBounds`, and a refusal says what would be allowed instead.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, Protocol, TypeVar

from pydantic import BaseModel, Field

from starharness.npc.actions import GameAction, Refusal, define_game_action

from ..actions._naming import good_name, listing, place_name
from ..content.seed import GOODS, LOCATIONS
from ..store import MarketQuote, WorldTx, spread_gossip
from .bounds import OMEGA_BOUNDS, EconomyBounds
from .lines import POST_HEADLINE, RESTOCK, SET_PRICE, SPREAD_WORD

HEADLINE_KIND: Final = "director"
"""`world_events.kind` of the director's headlines."""
MAX_HEADLINE_CHARS: Final = 120
MIN_HEADLINE_CHARS: Final = 8

_PLACE = Field(
    min_length=1,
    description="Place id in [brackets] in the summary.",
    json_schema_extra={"enum": [place.id for place in LOCATIONS]},
)
_GOOD = Field(
    min_length=1,
    description="Good id in [brackets] in the summary.",
    json_schema_extra={"enum": [good.id for good in GOODS]},
)


class PriceArgs(BaseModel):
    """A new going price for one good at one place."""

    location_id: str = _PLACE
    good_id: str = _GOOD
    price: int = Field(ge=1, description="The new going price, in credits per unit.")


class RestockArgs(BaseModel):
    """Units shipped into one place's exchange."""

    location_id: str = _PLACE
    good_id: str = _GOOD
    units: int = Field(ge=1, le=10_000, description="Units to add to the exchange's stock.")


class HeadlineArgs(BaseModel):
    """A headline players see in the news, under the place's name."""

    location_id: str = _PLACE
    headline: str = Field(
        min_length=MIN_HEADLINE_CHARS,
        max_length=MAX_HEADLINE_CHARS,
        description="One sentence without the place's name (clients show it already).",
    )


class WordArgs(BaseModel):
    """A place where people get talking about the players today."""

    location_id: str = _PLACE


class _AtMarket(Protocol):
    """Arguments naming one place's exchange for one good."""

    location_id: str
    good_id: str


A = TypeVar("A", bound=BaseModel | _AtMarket)
_Guard = Callable[[WorldTx, A], Refusal | None]


def _quote(tx: WorldTx, args: _AtMarket) -> MarketQuote:
    found = tx.quote(args.location_id, args.good_id)
    if found is None:  # the market guard runs first; reaching this is a bug
        raise LookupError(f"no market for {args.good_id!r} at {args.location_id!r}")
    return found


def _traded(tx: WorldTx, args: _AtMarket) -> Refusal | None:
    if tx.quote(args.location_id, args.good_id) is not None:
        return None
    if tx.location(args.location_id) is None:
        places = [f"{place.name} [{place.id}]" for place in tx.locations()]
        return Refusal(
            "unknown_place",
            f"there is no place {args.location_id!r}; places: {listing(places)}",
            {"location_id": args.location_id},
        )
    traded = [f"{good_name(tx, q.good_id)} [{q.good_id}]" for q in tx.market(args.location_id)]
    return Refusal(
        "not_traded_here",
        f"{place_name(tx, args.location_id)} has no exchange for {args.good_id!r}; it trades "
        f"{listing(traded)}",
        {"location_id": args.location_id, "good_id": args.good_id},
    )


def _once_today(action: str, what: str) -> _Guard[_AtMarket]:
    def guard(tx: WorldTx, args: _AtMarket) -> Refusal | None:
        done = tx.count_committed(
            action, tx.day(), location_id=args.location_id, good_id=args.good_id
        )
        if not done:
            return None
        return Refusal(
            "already_changed_today",
            f"you already {what} {good_name(tx, args.good_id)} at "
            f"{place_name(tx, args.location_id)} today (day {tx.day()}); once a day per good "
            "and place",
            {"location_id": args.location_id, "good_id": args.good_id, "day": tx.day()},
        )

    return guard


def _price_guards(bounds: EconomyBounds) -> list[_Guard[PriceArgs]]:
    def within(tx: WorldTx, args: PriceArgs) -> Refusal | None:
        going = _quote(tx, args).price
        allowed = bounds.allowed_today(args.good_id, going)
        name = good_name(tx, args.good_id)
        if allowed is None:
            return Refusal(
                "no_bounds",
                f"{name} at {going:,} is outside the bounds the game declares; leave it to "
                "the clock today",
                {"good_id": args.good_id, "going": going},
            )
        low, high = allowed
        if low <= args.price <= high:
            return None
        good = bounds.goods[args.good_id]
        out_of_bounds = not good.min_price <= args.price <= good.max_price
        return Refusal(
            "price_out_of_bounds" if out_of_bounds else "price_step_too_large",
            f"{name} at {place_name(tx, args.location_id)} goes for {going:,}; today you may set "
            f"{low:,} to {high:,} (at most {bounds.max_price_step:.0%} a day, never outside "
            f"{good.min_price:,}..{good.max_price:,}); you asked {args.price:,}",
            {
                "going": going,
                "low": low,
                "high": high,
                "min_price": good.min_price,
                "max_price": good.max_price,
                "asked": args.price,
            },
        )

    def changes(tx: WorldTx, args: PriceArgs) -> Refusal | None:
        if _quote(tx, args).price != args.price:
            return None
        return Refusal(
            "no_change",
            f"{good_name(tx, args.good_id)} already goes for {args.price:,} there",
            {"price": args.price},
        )

    return [_traded, _once_today(SET_PRICE, "set the price of"), changes, within]


def _restock_guards(bounds: EconomyBounds) -> list[_Guard[RestockArgs]]:
    def fits(tx: WorldTx, args: RestockArgs) -> Refusal | None:
        quote = _quote(tx, args)
        most = min(bounds.max_restock(quote.target_stock), bounds.stock_cap(quote.target_stock))
        room = max(0, bounds.stock_cap(quote.target_stock) - quote.stock)
        allowed = min(most, room)
        if args.units <= allowed:
            return None
        name = good_name(tx, args.good_id)
        hint = (
            f"the exchange holds {quote.stock} {name} (target {quote.target_stock}); ship at "
            f"most {allowed} today"
            if allowed
            else f"the exchange is full of {name} ({quote.stock}, cap "
            f"{bounds.stock_cap(quote.target_stock)}); restock something else"
        )
        return Refusal(
            "restock_out_of_bounds",
            hint,
            {"stock": quote.stock, "target": quote.target_stock, "max_units": allowed},
        )

    return [_traded, _once_today(RESTOCK, "restocked"), fits]


class _AtPlace(Protocol):
    """Arguments naming one place."""

    location_id: str


def _known_place(tx: WorldTx, args: _AtPlace) -> Refusal | None:
    if tx.location(args.location_id) is not None:
        return None
    places = [f"{place.name} [{place.id}]" for place in tx.locations()]
    return Refusal(
        "unknown_place",
        f"there is no place {args.location_id!r}; places: {listing(places)}",
        {"location_id": args.location_id},
    )


def _headline_guards(bounds: EconomyBounds) -> list[_Guard[HeadlineArgs]]:
    def quota(tx: WorldTx, args: HeadlineArgs) -> Refusal | None:
        posted = tx.count_committed(POST_HEADLINE, tx.day())
        if posted < bounds.headlines_per_day:
            return None
        return Refusal(
            "headline_quota",
            f"you posted {posted} headlines today, the most a day allows; post again tomorrow",
            {"posted": posted, "max": bounds.headlines_per_day},
        )

    return [_known_place, quota]


def _word_guards() -> list[_Guard[WordArgs]]:
    def once(tx: WorldTx, args: WordArgs) -> Refusal | None:
        if not tx.count_committed(SPREAD_WORD, tx.day(), location_id=args.location_id):
            return None
        return Refusal(
            "already_talking_today",
            f"{place_name(tx, args.location_id)} already got talking today (day {tx.day()}); "
            "once a day per place",
            {"location_id": args.location_id, "day": tx.day()},
        )

    return [_known_place, once]


def _spread_word(tx: WorldTx, args: WordArgs) -> Mapping[str, Any]:
    passes = spread_gossip(tx, tx.day(), place=args.location_id)
    return {"location_id": args.location_id, "passed_on": len(passes)}


def _set_price(tx: WorldTx, args: PriceArgs) -> Mapping[str, Any]:
    before = _quote(tx, args).price
    tx.set_price(args.location_id, args.good_id, args.price)
    return {"good": good_name(tx, args.good_id), "before": before, "price": args.price}


def _restock(tx: WorldTx, args: RestockArgs) -> Mapping[str, Any]:
    stock = tx.adjust_stock(args.location_id, args.good_id, args.units)
    return {"good": good_name(tx, args.good_id), "units": args.units, "stock": stock}


def _post(tx: WorldTx, args: HeadlineArgs) -> Mapping[str, Any]:
    headline = args.headline.strip()
    tx.add_world_event(args.location_id, headline, kind=HEADLINE_KIND)
    return {"location_id": args.location_id, "headline": headline, "day": tx.day()}


def director_actions(bounds: EconomyBounds) -> tuple[GameAction[Any, WorldTx], ...]:
    """The director's four actions, checked against `bounds`."""
    step = f"{bounds.max_price_step:.0%}"
    set_price: GameAction[PriceArgs, WorldTx] = define_game_action(
        SET_PRICE,
        f"Set the going price of a good at a place (what every trade there haggles around). "
        f"At most {step} from the going price, within the good's bounds, once a day per good "
        "and place; the summary lists what each may be set to today.",
        PriceArgs,
        guards=_price_guards(bounds),
        apply=_set_price,
        narrate=lambda args, effect: (
            f"{effect['good']} at {args.location_id}: {effect['before']:,} -> {args.price:,}."
        ),
    )
    restock: GameAction[RestockArgs, WorldTx] = define_game_action(
        RESTOCK,
        "Ship units into a place's exchange (traders there restock from it). At most "
        f"{bounds.max_restock_share:.0%} of its target stock a day, never past "
        f"{bounds.stock_ceiling:g} times the target.",
        RestockArgs,
        guards=_restock_guards(bounds),
        apply=_restock,
        narrate=lambda args, effect: (
            f"{args.units} {effect['good']} shipped to {args.location_id} "
            f"(stock {effect['stock']})."
        ),
    )
    headline: GameAction[HeadlineArgs, WorldTx] = define_game_action(
        POST_HEADLINE,
        f"Post a headline players see in the news of a place, at most "
        f"{bounds.headlines_per_day} a day: say what changed and why.",
        HeadlineArgs,
        guards=_headline_guards(bounds),
        apply=_post,
        narrate=lambda args, effect: f"News at {args.location_id}: {effect['headline']}",
    )
    word: GameAction[WordArgs, WorldTx] = define_game_action(
        SPREAD_WORD,
        "Get a place talking tonight: its people, and the crews on its routes, pass on what "
        "they know about the players (one more round of gossip, as each day brings; once a "
        "day per place).",
        WordArgs,
        guards=_word_guards(),
        apply=_spread_word,
        narrate=lambda args, effect: (
            f"Word spreads at {args.location_id}: {effect['passed_on']} memories passed on."
        ),
    )
    return (set_price, restock, headline, word)


DIRECTOR_ACTIONS: Final = director_actions(OMEGA_BOUNDS)
"""Omega station's director actions, bounded by `OMEGA_BOUNDS`."""
