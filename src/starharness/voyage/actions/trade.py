"""Trading goods, named from the player's side (what the player asks for is what the model
picks): the player buys from the NPC's hold, or sells from their own hold to the NPC."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from pydantic import BaseModel, Field

from starharness.npc.actions import (
    CounterOffer,
    GameAction,
    OfferTerms,
    Refusal,
    Role,
    define_game_action,
)

from ..content.prices import (
    BUY_CEILING,
    PRICE_BAND,
    SELL_FLOOR,
    PriceBand,
    buy_band,
    sell_band,
)
from ..content.seed import GOODS
from ..content.words import units_of
from ..store import WorldTx
from ._naming import good_name, listing
from .guards import (
    VoyageGuard,
    can_afford,
    going_price_here,
    has_cargo,
    has_stock,
    price_within_band,
    same_location,
)

GOING_PRICE = 0
"""A unit price left out (or 0): the deal is at the price the scene shows (`_priced`)."""
SELL_GOODS = "player_buys"
BUY_GOODS = "player_sells"
MAX_UNITS = 1_000
_OVER = f"{PRICE_BAND:.0%}"
_SELL_UNDER = f"{1 - SELL_FLOOR:.0%}"
_BUY_CEILING = f"{BUY_CEILING:.0%}"


class TradeArgs(BaseModel):
    """A deal over units of one good at a unit price the NPC chooses."""

    npc_id: str
    player_id: str
    good_id: str = Field(
        min_length=1,
        description="Id in [brackets] in the scene.",
        # The ids the world has: a server that constrains arguments by schema keeps a small
        # model to them (the guards still refuse what this NPC does not trade).
        json_schema_extra={"enum": [good.id for good in GOODS]},
    )
    qty: int = Field(ge=1, le=MAX_UNITS)
    unit_price: int = Field(
        default=GOING_PRICE,
        ge=GOING_PRICE,
        description="Credits per unit, only to haggle; left out: the price in the scene.",
    )

    @property
    def total(self) -> int:
        return self.qty * self.unit_price


def _total(_tx: WorldTx, args: TradeArgs) -> int:
    return args.total


def _sells(tx: WorldTx, args: TradeArgs) -> Refusal | None:
    line = tx.trade_line(args.npc_id, args.good_id)
    if line is not None and line.sells:
        return None
    offered = [good_name(tx, ln.good_id) for ln in tx.trade_lines(args.npc_id) if ln.sells]
    return Refusal(
        "not_for_sale",
        f"you do not sell {good_name(tx, args.good_id)}; you sell {listing(offered)}",
        {"good_id": args.good_id},
        f"They do not sell {good_name(tx, args.good_id)}.",
    )


def _buys(tx: WorldTx, args: TradeArgs) -> Refusal | None:
    line = tx.trade_line(args.npc_id, args.good_id)
    if line is not None and line.buys:
        return None
    wanted = [good_name(tx, ln.good_id) for ln in tx.trade_lines(args.npc_id) if ln.buys]
    return Refusal(
        "not_wanted",
        f"you do not buy {good_name(tx, args.good_id)}; you buy {listing(wanted)}",
        {"good_id": args.good_id},
        f"They do not buy {good_name(tx, args.good_id)}.",
    )


def _sell(tx: WorldTx, args: TradeArgs) -> Mapping[str, Any]:
    effect = _trade(tx, args, seller=args.npc_id, buyer=args.player_id, player_did="bought")
    return effect | {"your_units_left": tx.cargo_qty(args.npc_id, args.good_id)}


def _buy(tx: WorldTx, args: TradeArgs) -> Mapping[str, Any]:
    effect = _trade(tx, args, seller=args.player_id, buyer=args.npc_id, player_did="sold")
    return effect | {"your_credits": tx.credits(args.npc_id)}


def _trade(
    tx: WorldTx, args: TradeArgs, *, seller: str, buyer: str, player_did: str
) -> dict[str, Any]:
    """Move the money and the goods, and let the NPC remember what the player did."""
    total = args.total
    tx.transfer_credits(buyer, seller, total)
    tx.move_cargo(seller, buyer, args.good_id, args.qty)
    name = good_name(tx, args.good_id)
    tx.remember(
        args.npc_id,
        args.player_id,
        f"They {player_did} {units_of(args.qty, name)} for {total:,} ({args.unit_price:,} each).",
        kind="trade",
        action=player_did,
        good_id=args.good_id,
        qty=args.qty,
        price=total,
    )
    return {
        "good": name,
        "qty": args.qty,
        "unit_price": args.unit_price,
        "total": total,
        "their_credits": tx.credits(args.player_id),
    }


def _at_going_price(tx: WorldTx, args: TradeArgs) -> TradeArgs:
    """A sale the model priced at nothing is at the going price here."""
    return _priced(tx, args, lambda going: going)


def _at_buying_price(tx: WorldTx, args: TradeArgs) -> TradeArgs:
    """A purchase the model priced at nothing is at the most this NPC pays here."""
    return _priced(tx, args, lambda going: buy_band(going).high)


def _priced(tx: WorldTx, args: TradeArgs, price_for: Callable[[int], int]) -> TradeArgs:
    if args.unit_price != GOING_PRICE:
        return args
    going = going_price_here(tx, args)
    if going is None:
        # Nothing trades this good here: the guards refuse it whatever the price.
        return args
    return args.model_copy(update={"unit_price": price_for(going)})


def _quote(tx: WorldTx, args: TradeArgs) -> dict[str, Any]:
    # What the deal was priced on: a price that moves before the pick voids the offer.
    return {"going_price": going_price_here(tx, args)}


def _buy_terms(tx: WorldTx, args: TradeArgs) -> OfferTerms:
    """The player buys: they give credits."""
    name = good_name(tx, args.good_id)
    units = units_of(args.qty, name)
    return OfferTerms(
        f"Buy {units} at {args.unit_price:,}",
        f"{args.total:,} cr",
        _quote(tx, args),
        pitch=f"I sell you {units} at {args.unit_price:,} ({args.total:,} cr)",
        says=f"I can let you have {units} for {args.total:,} credits.",
        says_done=f"There you go: {units}.",
    )


def _sell_terms(tx: WorldTx, args: TradeArgs) -> OfferTerms:
    """The player sells: they give goods."""
    name = good_name(tx, args.good_id)
    units = units_of(args.qty, name)
    return OfferTerms(
        f"Sell {units} for {args.total:,} cr",
        units,
        _quote(tx, args),
        pitch=f"I buy {units} from you for {args.total:,} cr",
        says=f"I'll give you {args.total:,} credits for {units}.",
        says_done=f"Here are your {args.total:,} credits.",
    )


# Action cards read from the player's side: the player buys when the NPC sells.
def _player_bought(args: TradeArgs, effect: Mapping[str, Any]) -> str:
    return f"Bought {units_of(args.qty, effect['good'])} for {args.total:,} credits."


def _player_sold(args: TradeArgs, effect: Mapping[str, Any]) -> str:
    return f"Sold {units_of(args.qty, effect['good'])} for {args.total:,} credits."


# Counter-offers: the deal the rules allow in place of a refused one. A small model gets the
# good right and the number or the direction wrong ("Three medical gel, please." decided as the
# player selling gel); the player is offered the deal that fits and still accepts it or not.

Counter = Callable[[WorldTx, TradeArgs, Refusal], Refusal | None]
"""The refusal with its counter-offer (`Refusal.instead`), or None: no deal fits."""
_Action = Callable[[], GameAction[TradeArgs, Any]]
"""The action a counter offers, looked up when it runs (the counter is part of its definition)."""


def _countered(guard: VoyageGuard[TradeArgs], counter: Counter) -> VoyageGuard[TradeArgs]:
    def guarded(tx: WorldTx, args: TradeArgs) -> Refusal | None:
        refusal = guard(tx, args)
        if refusal is None:
            return None
        return counter(tx, args, refusal) or refusal

    return guarded


def _deal(action: GameAction[TradeArgs, Any], good_id: str, qty: int, price: int) -> CounterOffer:
    return CounterOffer(action, {"good_id": good_id, "qty": qty, "unit_price": price})


def _most_sold(tx: WorldTx, args: TradeArgs, qty: int, price: int) -> int:
    """Of `qty`, the most the NPC can sell the player at `price`: its stock, their credits."""
    affordable = tx.credits(args.player_id) // price if price > 0 else 0
    return min(qty, tx.cargo_qty(args.npc_id, args.good_id), affordable)


def _most_bought(tx: WorldTx, args: TradeArgs, qty: int, price: int) -> int:
    """Of `qty`, the most the NPC can buy from the player at `price`: their hold, its credits."""
    affordable = tx.credits(args.npc_id) // price if price > 0 else 0
    return min(qty, tx.cargo_qty(args.player_id, args.good_id), affordable)


def _npc_sells_instead(tx: WorldTx, args: TradeArgs, refusal: Refusal) -> Refusal | None:
    """A sale by the player of what they do not hold or the NPC does not buy, read as their
    buying it from the NPC: all they asked for, so that what they cannot have of it (more than
    they can pay, or than the NPC holds) is refused and countered by the purchase's own guards,
    which say why."""
    going = going_price_here(tx, args)
    line = tx.trade_line(args.npc_id, args.good_id)
    if going is None or line is None or not line.sells:
        return None
    if _most_sold(tx, args, args.qty, going) < 1:
        return None
    return replace(refusal, instead=_deal(SELL, args.good_id, args.qty, GOING_PRICE))


def sold_instead(
    tx: WorldTx, npc_id: str, player_id: str, good_id: str, qty: int
) -> CounterOffer | None:
    """The NPC's sale to the player of up to `qty` units of a good it sells here, at the going
    price, as many as its stock and their credits allow; None when it sells none."""
    args = TradeArgs(npc_id=npc_id, player_id=player_id, good_id=good_id, qty=max(qty, 1))
    going = going_price_here(tx, args)
    line = tx.trade_line(npc_id, good_id)
    if going is None or line is None or not line.sells:
        return None
    most = _most_sold(tx, args, args.qty, going)
    return None if most < 1 else _deal(SELL, good_id, most, GOING_PRICE)


def _npc_buys_instead(tx: WorldTx, args: TradeArgs, refusal: Refusal) -> Refusal | None:
    """A purchase of what the NPC does not sell, read as the player selling what they hold."""
    going = going_price_here(tx, args)
    line = tx.trade_line(args.npc_id, args.good_id)
    if going is None or line is None or not line.buys:
        return None
    if _most_bought(tx, args, args.qty, buy_band(going).high) < 1:
        return None
    # All they asked for: more than they hold is refused and countered by the sale's own guards.
    return replace(refusal, instead=_deal(BUY, args.good_id, args.qty, GOING_PRICE))


def _fewer_held(tx: WorldTx, args: TradeArgs, refusal: Refusal) -> Refusal | None:
    """The player sells more than they hold: what they hold, or, holding none, the mirror."""
    if tx.cargo_qty(args.player_id, args.good_id) < 1:
        return _npc_sells_instead(tx, args, refusal)
    return _fewer(lambda: BUY, _most_bought)(tx, args, refusal)


def _fewer(action: _Action, most: Callable[[WorldTx, TradeArgs, int, int], int]) -> Counter:
    """As many units as the hold and the payer's credits allow, at the same price."""

    def counter(tx: WorldTx, args: TradeArgs, refusal: Refusal) -> Refusal | None:
        qty = most(tx, args, args.qty, args.unit_price)
        if qty < 1:
            return None
        return replace(refusal, instead=_deal(action(), args.good_id, qty, args.unit_price))

    return counter


def _in_band(
    action: _Action,
    band_of: Callable[[int], PriceBand],
    most: Callable[[WorldTx, TradeArgs, int, int], int],
) -> VoyageGuard[TradeArgs]:
    """The price must be in the band; out of it, the same deal at the nearest price it allows."""

    def counter(tx: WorldTx, args: TradeArgs, refusal: Refusal) -> Refusal | None:
        going = going_price_here(tx, args)
        if going is None:
            return None
        price = band_of(going).nearest(args.unit_price)
        qty = most(tx, args, args.qty, price)
        if qty < 1:
            return None
        return replace(refusal, instead=_deal(action(), args.good_id, qty, price))

    return _countered(price_within_band(going_price_here, band_of), counter)


_PARTIES = {"npc_id": Role.NPC, "player_id": Role.PLAYER}

SELL = define_game_action(
    SELL_GOODS,
    "The player buys from you: use it when they want to buy, get or order one of your wares. "
    "Units go from your hold to theirs and they pay you, at the going price unless you haggle. "
    f"Refused if it is not one of your wares, the price is more than {_SELL_UNDER} under or "
    f"{_OVER} over the going price, you hold too few, or they cannot pay.",
    TradeArgs,
    bind=_PARTIES,
    guards=[
        same_location,
        _countered(_sells, _npc_buys_instead),
        _in_band(lambda: SELL, sell_band, _most_sold),
        _countered(has_stock, _fewer(lambda: SELL, _most_sold)),
        _countered(
            can_afford(lambda a: a.player_id, _total, unit=lambda a: a.unit_price),
            _fewer(lambda: SELL, _most_sold),
        ),
    ],
    apply=_sell,
    narrate=_player_bought,
    takes_from=Role.PLAYER,
    terms=_buy_terms,
    complete=_at_going_price,
)
"""The NPC sells to the player: credits move to the NPC, units to the player's hold."""

BUY = define_game_action(
    BUY_GOODS,
    "The player sells to you: use it only when they offer to sell you units from their own "
    "hold. Units go from their hold to yours and you pay them. Refused if you do not trade in "
    f"that good, the price is over {_BUY_CEILING} of the going price (you pay less than it) or "
    f"more than {_OVER} under it, they hold too few, or you cannot pay.",
    TradeArgs,
    bind=_PARTIES,
    guards=[
        same_location,
        _countered(_buys, _npc_sells_instead),
        # Before the price: holding none of it is what tells a player's buy read as their sell.
        _countered(has_cargo, _fewer_held),
        _in_band(lambda: BUY, buy_band, _most_bought),
        _countered(
            can_afford(lambda a: a.npc_id, _total, unit=lambda a: a.unit_price),
            _fewer(lambda: BUY, _most_bought),
        ),
    ],
    apply=_buy,
    narrate=_player_sold,
    takes_from=Role.PLAYER,
    terms=_sell_terms,
    complete=_at_buying_price,
)
"""The NPC buys from the player: credits move to the player, units to the NPC's hold."""
