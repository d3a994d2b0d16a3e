"""What the NPC says once its actions ran: the deal done, or the hint and an alternative."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..content.prices import PriceBand, buy_band, sell_band
from ..content.words import units_of
from .offers import (
    PRICES,
    USUAL_LOT,
    affordable_lot,
    buy_option,
    payable,
    sell_option,
    standard_options,
    with_bye,
)
from .options import Option
from .plans import Plan, Say, Situation, act
from .policy import passage_offer, which_ware
from .scene import Ware
from .tools import (
    BOOK_PASSAGE,
    BUY_GOODS,
    CHANGE_ATTITUDE,
    COMPLETE_QUEST,
    DONE_MARK,
    OFFER_QUEST,
    SELL_GOODS,
    SELL_INTEL,
)
from .transcript import Call
from .voice import money, mood_for, to_player

FAREWELL = (Option("bye", "Board the ship"), Option("wave", "Wave goodbye"))
"""What a player who just bought passage may answer: they have left, so nothing but goodbye."""
WARMER = 5
"""A deal at the asking price warms the NPC by this much."""


def react(s: Situation, steps: list[list[Call]], *, may_act: bool = True) -> Plan:
    """Speak about this turn's steps: a failure or refusal first, since the player must hear it.

    A sale at the asking price first warms the NPC (one attitude change a turn at most), then
    it speaks about the sale; not when the turn allows no further action (`may_act`).
    """
    step = steps[-1]
    call = next((c for c in step if not c.ok), step[-1])
    if call.name == CHANGE_ATTITUDE and call.ok and len(steps) > 1:
        call = steps[-2][-1]
    elif (
        may_act
        and _fair_sale(s, call)
        and not any(c.name == CHANGE_ATTITUDE for c in s.transcript.calls)
    ):
        good = s.scene.goods().get(_str(call.arguments, "good_id"), "goods")
        return act(CHANGE_ATTITUDE, delta=WARMER, reason=f"paid my price for {good}, no fuss")
    if call.offered and call.ok:
        return _offered(s, call)
    if call.offered:
        # Refused, with the rules' counter-offer on the table: the refusal is said as usual,
        # and the deal it names stands as the framework's offer, not a line to pick again.
        said = _refused(s, call, call.result or {})
        trades = [o for o in said.options if not _is_trade(o.id)]
        return Say(said.line, said.mood, with_bye(*trades))
    if call.error is not None or call.result is None:
        return Say(
            f"Something's off with that, {s.addr}. Let's try it another way.",
            "wary",
            standard_options(s.scene),
        )
    if call.ok:
        return _done(s, call, call.result)
    return _refused(s, call, call.result)


def _is_trade(option_id: str) -> bool:
    return option_id.startswith(("buy:", "sell:"))


def _fair_sale(s: Situation, call: Call) -> bool:
    if call.name != SELL_GOODS or not call.ok or call.offered:
        return False
    ware = s.scene.sold(_str(call.arguments, "good_id"))
    return ware is not None and _int(call.arguments, "unit_price") >= ware.price


def _int(data: dict[str, Any], key: str, default: int = 0) -> int:
    value = data.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _str(data: dict[str, Any], key: str, default: str = "") -> str:
    value = data.get(key)
    return value if isinstance(value, str) else default


def _units(result: dict[str, Any]) -> str:
    return units_of(_int(result, "qty"), _str(result, "good", "goods"))


def _facts(result: dict[str, Any]) -> dict[str, Any]:
    facts = result.get("facts")
    return facts if isinstance(facts, dict) else {}  # pyright: ignore[reportUnknownVariableType]


def _refused_band(
    facts: dict[str, Any], going: int, band: Callable[[int], PriceBand] = buy_band
) -> PriceBand:
    """The band a refusal states, else `band` at `going` (what the NPC pays, or with
    `sell_band` what it asks): the rules' own band, so the brain never prices by a band of its
    own reckoning."""
    low, high = _int(facts, "low"), _int(facts, "high")
    if 0 < low <= high:
        return PriceBand(_int(facts, "going", going), low, high)
    return band(going)


def _ware(s: Situation, call: Call, selling: bool) -> Ware | None:
    good_id = _str(call.arguments, "good_id")
    return s.scene.sold(good_id) if selling else s.scene.bought(good_id)


def _offered(s: Situation, call: Call) -> Say:
    """The call became an offer: say the terms; the player's accept commits it."""
    result = call.result or {}
    if _str(result, "action", call.name) != call.name:
        # The rules offered the deal the call was read as (the player's buy for their sell).
        return Say(
            f"Here's what I can do: {_str(result, 'offer', 'my offer')}. Say the word, {s.addr}.",
            mood_for(s.scene.attitude),
            with_bye(PRICES),
        )
    args = call.arguments
    name = s.scene.goods().get(_str(args, "good_id"), "goods")
    qty, unit = _int(args, "qty", 1), _int(args, "unit_price")
    if call.name == SELL_GOODS:
        line = f"{units_of(qty, name)} at {money(unit)} a unit, {money(qty * unit)} all told."
    elif call.name == BUY_GOODS:
        line = f"I'll give you {money(qty * unit)} for {units_of(qty, name)}, {money(unit)} a unit."
    elif call.name == BOOK_PASSAGE and args.get("work") is True:
        line = "You'll work the voyage off: galley and cargo, no fare."
    elif call.name == BOOK_PASSAGE:
        line = "A berth's yours at the posted fare."
    elif call.name == COMPLETE_QUEST:
        line = "Hand the goods over and the reward's yours."
    else:
        line = "That's my offer."
    return Say(f"{line} Say the word, {s.addr}.", mood_for(s.scene.attitude), with_bye(PRICES))


def accepted(s: Situation) -> Say:
    """The player accepted an offer and the framework settled it: what the NPC says next."""
    said = s.transcript.said
    scene = s.scene
    if DONE_MARK not in said:
        reason = said.rpartition(": ")[2].rstrip("]").strip()
        return Say(
            f"That deal's off, {s.addr}. {to_player(reason) if reason else 'Things changed.'}",
            "wary",
            standard_options(scene),
        )
    if "passage to" in said.casefold():
        # The player has left with the ship: a farewell, and the encounter ends after it.
        return Say(f"Berth's yours. Fair winds, {s.addr}.", "friendly", FAREWELL)
    return Say(
        f"Pleasure doing business, {s.addr}. You've {money(scene.player_credits)} credits now.",
        "pleased",
        standard_options(scene),
    )


def _done(s: Situation, call: Call, result: dict[str, Any]) -> Say:
    scene = s.scene
    if call.name == SELL_GOODS:
        credits = _int(result, "their_credits", scene.player_credits)
        units = {_str(call.arguments, "good_id"): _int(result, "your_units_left")}
        return Say(
            f"Done. {_units(result)} for {money(_int(result, 'total'))}; "
            f"you've {money(credits)} left, {s.addr}.",
            "pleased",
            standard_options(scene, credits=credits, units=units),
        )
    if call.name == BUY_GOODS:
        credits = _int(result, "their_credits", scene.player_credits)
        return Say(
            f"Pleasure doing business. {_units(result)}, {money(_int(result, 'total'))} paid out.",
            "pleased",
            standard_options(scene, credits=credits),
        )
    if call.name == CHANGE_ATTITUDE:
        return _colder(s, _int(result, "attitude", scene.attitude))
    if call.name == SELL_INTEL:
        return Say(
            f"{_str(result, 'text')} You didn't hear it from me.",
            "friendly",
            standard_options(scene, skip=frozenset({"rumours"})),
        )
    if call.name == OFFER_QUEST:
        return Say(
            f"It's yours: {_units(result)}, "
            f"{money(_int(result, 'reward'))} on delivery. Don't make me wait.",
            "friendly",
            with_bye(PRICES),
        )
    if call.name == COMPLETE_QUEST:
        return Say(
            f"That's the job done. {money(_int(result, 'reward'))} credits, as promised.",
            "pleased",
            standard_options(scene, credits=_int(result, "their_credits", scene.player_credits)),
        )
    if call.name == BOOK_PASSAGE:
        days = _int(result, "days", 1)
        return Say(
            f"Berth's yours: {_str(result, 'destination')}, {days} day{'s' if days != 1 else ''} "
            "out. Fair winds.",
            "friendly",
            FAREWELL,
        )
    return Say(f"Done, {s.addr}.", mood_for(scene.attitude), standard_options(scene))


def _colder(s: Situation, attitude: int) -> Say:
    """After cooling on a hard haggler: the going price, take it or leave it."""
    scene = s.scene
    # The good haggled over: named now, else the one on the table.
    ware = which_ware(s)
    if ware is None:
        ware = next((w for w in scene.sells if w.units), None)
    mood = "hostile" if attitude <= -30 else "annoyed"
    if ware is None:
        return Say(f"Keep squeezing and you'll find the door, {s.addr}.", mood, with_bye(PRICES))
    lot = affordable_lot(ware, scene.player_credits, lot=s.intent.qty or USUAL_LOT) or 1
    return Say(
        f"Keep squeezing and you'll find the door, {s.addr}. {ware.name.capitalize()}: "
        f"{money(ware.price)} a unit, same as for everyone. Take it or leave it.",
        mood,
        with_bye(buy_option(ware, lot)),
    )


def _refused(s: Situation, call: Call, result: dict[str, Any]) -> Say:
    reason = _str(result, "reason")
    facts = _facts(result)
    hint = _str(result, "hint")
    if call.name == SELL_GOODS:
        return _sale_refused(s, call, reason, facts, hint)
    if call.name == BUY_GOODS:
        return _purchase_refused(s, call, reason, facts, hint)
    if call.name == SELL_INTEL and reason == "attitude_too_low":
        return Say(
            f"I don't sell that to people I barely know, {s.addr}. Do some honest business first.",
            "wary",
            standard_options(s.scene, skip=frozenset({"rumours"})),
        )
    if call.name == BOOK_PASSAGE and reason in ("insufficient_funds", "can_pay"):
        # The berths that fit the purse now, in the NPC's words (the hint is for the model).
        return passage_offer(s)
    if call.name == COMPLETE_QUEST and reason == "condition_unmet":
        need, have = _int(facts, "need"), _int(facts, "have")
        return Say(
            f"You're {need - have} short, {s.addr}: the job is {need}, you've brought {have}. "
            "Come back with the rest.",
            "annoyed",
            standard_options(s.scene),
        )
    mood = "annoyed" if reason == "insufficient_funds" else "wary"
    return Say(to_player(hint) if hint else "No deal.", mood, standard_options(s.scene))


def _sale_refused(s: Situation, call: Call, reason: str, facts: dict[str, Any], hint: str) -> Say:
    ware = _ware(s, call, selling=True)
    unit = _int(call.arguments, "unit_price")
    if ware is None:
        return Say(to_player(hint), "wary", standard_options(s.scene))
    if reason == "insufficient_funds":
        have, need, fits = _int(facts, "have"), _int(facts, "need"), _int(facts, "max_qty")
        line = f"You have {money(have)}, {s.addr}, the deal is {money(need)}."
        if fits:
            line += f" I can let you have {fits} for {money(fits * unit)}."
            return Say(line, "annoyed", with_bye(buy_option(ware, fits, unit), PRICES))
        return Say(line + " Come back when you can pay.", "annoyed", with_bye(PRICES))
    if reason == "insufficient_stock":
        have = _int(facts, "have")
        if not have:
            return Say(f"I'm out of {ware.name}, {s.addr}.", "neutral", standard_options(s.scene))
        # Offer only what the player can also pay for: an offer they cannot take is a dead end.
        fits = payable(have, unit, s.scene.player_credits)
        if fits == have:
            return Say(
                f"I've only got {units_of(have, ware.name)} left, {s.addr}. Take them all?",
                "neutral",
                with_bye(buy_option(ware, have, unit), PRICES),
            )
        if fits:
            return Say(
                f"I've only got {units_of(have, ware.name)} left, {s.addr}, and your purse "
                f"pays for {fits} of them.",
                "neutral",
                with_bye(buy_option(ware, fits, unit), PRICES),
            )
        return Say(
            f"I've only got {units_of(have, ware.name)} left, {s.addr}, and you can't pay for one.",
            "neutral",
            with_bye(PRICES),
        )
    if reason == "price_out_of_band":
        # The rules' nearest price, as for a purchase (`_purchase_refused`): the line and the
        # card name the deal the rules would commit.
        price = _refused_band(facts, ware.price, sell_band).nearest(unit or ware.price)
        bound = "as low as I go" if unit < price else "the most I may ask"
        qty = payable(_int(call.arguments, "qty", 1), price, s.scene.player_credits) or 1
        return Say(
            f"Can't do {money(unit)}, {s.addr}. The going price of {ware.name} here is "
            f"{money(ware.price)}; {money(price)} is {bound}.",
            "annoyed",
            with_bye(buy_option(ware, qty, price), PRICES),
        )
    return Say(to_player(hint), "wary", standard_options(s.scene))


def _purchase_refused(
    s: Situation, call: Call, reason: str, facts: dict[str, Any], hint: str
) -> Say:
    ware = _ware(s, call, selling=False)
    unit = _int(call.arguments, "unit_price")
    if ware is not None and reason == "insufficient_cargo":
        have = _int(facts, "have")
        if have:
            return Say(
                f"You've only got {units_of(have, ware.name)} in your hold, {s.addr}. "
                "I'll take those.",
                "neutral",
                with_bye(sell_option(ware, have, unit)),
            )
    if ware is not None and reason == "price_out_of_band":
        qty = min(_int(call.arguments, "qty", 1), s.scene.held(ware.good_id)) or 1
        # The rules' deal in its place, by their own sum: the nearest price of the band they
        # refused by. A price left out is the most the NPC pays, as the rules fill it in. The
        # line names that deal, so it says what the rules' counter-offer card says.
        band = _refused_band(facts, ware.price)
        asked = unit or band.high
        price = band.nearest(asked)
        # Asked under the band: the least it pays. Over it (the NPC's own call named a price
        # the game does not allow it to pay): the most, never the hint's "you said", which is
        # about the NPC itself.
        bound = "least" if asked < price else "most"
        return Say(
            f"{money(price)} a unit is the {bound} I pay for {ware.name}, {s.addr}: "
            f"{money(price * qty)} for {qty}.",
            "neutral",
            with_bye(sell_option(ware, qty, price), PRICES),
        )
    if ware is not None and reason == "insufficient_funds":
        fits = _int(facts, "max_qty")
        line = f"I have {money(_int(facts, 'have'))}, the deal is {money(_int(facts, 'need'))}."
        if fits:
            return Say(
                f"{line} I can take {fits}.", "wary", with_bye(sell_option(ware, fits, unit))
            )
        return Say(line, "wary", standard_options(s.scene))
    return Say(to_player(hint), "wary", standard_options(s.scene))
