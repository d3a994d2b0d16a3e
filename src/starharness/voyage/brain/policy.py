"""What the NPC does about what the player just said, before any tool has run this turn."""

from __future__ import annotations

from .intents import Intent, classify
from .offers import (
    BYE,
    PRICES,
    USUAL_LOT,
    affordable_lot,
    buy_option,
    payable,
    sell_option,
    standard_options,
    with_bye,
    working_option,
)
from .options import Option, decode
from .plans import Plan, Say, Situation, accepted_floor, act, buy_offer, first_discount
from .scene import Ware
from .tools import (
    BOOK_PASSAGE,
    BUY_GOODS,
    CHANGE_ATTITUDE,
    COMPLETE_QUEST,
    OFFER_QUEST,
    SELL_GOODS,
    SELL_INTEL,
    is_acceptance,
)
from .voice import money, mood_for, passages_line, sentence, trades_line, wares_line

HARD_HAGGLES = 3
"""From the third haggle of an encounter on, the NPC's patience runs out."""
COLDER = -5


def decide(s: Situation) -> Plan:
    """The first move of a turn."""
    handlers = {
        "greet": _greet,
        "buy": _buy,
        "sell": _sell,
        "haggle": _haggle,
        "prices": _prices,
        "rumours": _rumours,
        "intel": _intel,
        "jobs": _jobs,
        "job": _job,
        "deliver": _deliver,
        "passage": passage_offer,
        "travel": _travel,
        "work": _work,
        "bye": _bye,
    }
    return handlers.get(s.intent.kind, _chat)(s)


def _greet(s: Situation) -> Plan:
    scene = s.scene
    parts: list[str] = []
    if s.transcript.last_line:
        # Greeted again, or asked who it is, after its own greeting: the greeting again word
        # for word reads as a machine (the eval's `no_self_repeat`).
        name = f"The name's {scene.npc_name}, {s.addr}." if scene.npc_name else ""
        line = " ".join(part for part in (name, trades_line(scene), "Ask me a price.") if part)
        return Say(line, mood_for(scene.attitude), standard_options(scene))
    if scene.met_before:
        parts.append(f"Back again, {s.addr}.")
        deal = scene.last_deal
        if deal is not None:
            if deal.action == "bought":
                parts.append(
                    f"Last time you bought {deal.qty} {deal.good} off me for {money(deal.total)}."
                )
            else:
                parts.append(
                    f"Last time you sold me {deal.qty} {deal.good} for {money(deal.total)}."
                )
    elif scene.attitude <= -30:
        parts.append(f"I know your kind, {s.addr}. Make it quick.")
    else:
        parts.append(f"Evening, {s.addr}.")
    if scene.word:  # what this NPC saw at the bar or heard on the routes
        parts.append(scene.word)
    parts.extend(line for line in (wares_line(scene), passages_line(scene)) if line)
    parts.append("What'll it be?")
    return Say(" ".join(parts), mood_for(scene.attitude), standard_options(scene))


def _chat(s: Situation) -> Plan:
    line = f"Talk business or drink up, {s.addr}. {s.wares()}".strip()
    return Say(line, mood_for(s.scene.attitude), standard_options(s.scene))


def _prices(s: Situation) -> Plan:
    scene = s.scene
    ware = scene.sold(s.intent.good_id or "")
    if ware is not None:
        return Say(
            f"{ware.name.capitalize()}: {money(ware.price)} a unit, {ware.units} left, {s.addr}.",
            mood_for(scene.attitude),
            with_bye(*(buy_option(ware, lot) for lot in _lots(ware, scene.player_credits))),
        )
    parts = [s.wares(limit=6)]
    if scene.sells and scene.buys:
        # What it buys, without a price: the scene shows going prices, not the price the NPC
        # pays, and a number the scene does not hold is not grounded. The sell options carry
        # the price it pays.
        parts.append(f"I buy {', '.join(w.name for w in scene.buys)}.")
    parts.append(passages_line(scene))
    line = " ".join(part for part in parts if part) or "Nothing for sale today."
    return Say(line, mood_for(scene.attitude), standard_options(scene, skip=frozenset({"prices"})))


def which_ware(s: Situation) -> Ware | None:
    """The good the player means: named now, else the one the NPC last offered."""
    scene = s.scene
    if s.intent.good_id:
        return scene.sold(s.intent.good_id)
    for call in reversed(s.transcript.offered):
        if call.name == SELL_GOODS:
            ware = scene.sold(str(call.arguments.get("good_id", "")))
            if ware is not None:
                return ware
    for option in s.transcript.last_options:
        choice = decode(option.id)
        if choice is not None and choice.verb == "buy":
            return scene.sold(choice.subject)
    return next((ware for ware in scene.sells if ware.units), None)


def _buy(s: Situation) -> Plan:
    scene, intent = s.scene, s.intent
    if intent.good_id is None:
        return Say(
            f"Which one, {s.addr}? {s.wares()}",
            mood_for(scene.attitude),
            standard_options(scene),
        )
    ware = scene.sold(intent.good_id)
    if ware is None:
        name = scene.goods().get(intent.good_id, intent.good_id)
        return Say(
            f"I don't sell {name}. {s.wares()}",
            mood_for(scene.attitude),
            standard_options(scene),
        )
    if intent.qty is None:
        return _how_many(s, ware)
    unit = _unit(intent, intent.qty)
    if unit is None or intent.picked:
        return act(SELL_GOODS, good_id=ware.good_id, qty=intent.qty, unit_price=unit or ware.price)
    if unit >= accepted_floor(ware.price):
        return act(
            SELL_GOODS, good_id=ware.good_id, qty=intent.qty, unit_price=min(unit, ware.price)
        )
    return _haggle(s)


def _lots(ware: Ware, credits: int) -> list[int]:
    """Lot sizes worth offering: those in stock the player can pay for (else the smallest)."""
    lots = sorted({lot for lot in (1, USUAL_LOT, 10) if lot <= (ware.units or 0)})
    return [lot for lot in lots if lot * ware.price <= credits] or lots[:1]


def _how_many(s: Situation, ware: Ware) -> Plan:
    affordable = _lots(ware, s.scene.player_credits)
    line = f"How many? {ware.name.capitalize()}: {money(ware.price)} a unit, {ware.units} left."
    if not affordable:
        return Say(f"I'm out of {ware.name}, {s.addr}.", "neutral", standard_options(s.scene))
    return Say(
        line, mood_for(s.scene.attitude), with_bye(*(buy_option(ware, lot) for lot in affordable))
    )


def _unit(intent: Intent, qty: int) -> int | None:
    if intent.price is None:
        return None
    return max(1, intent.price // qty) if intent.price_is_total else intent.price


def _haggle_count(s: Situation) -> int:
    count = 0
    for line in s.transcript.player_lines:
        if is_acceptance(line):
            continue  # an accepted offer, told by the framework, is no haggle
        said = classify(line, s.scene, [])
        if said.kind == "haggle":
            count += 1
        elif said.kind == "buy" and said.price is not None:
            ware = s.scene.sold(said.good_id or "")
            unit = _unit(said, said.qty or 1)
            if ware is not None and unit is not None and unit < accepted_floor(ware.price):
                count += 1
    return count


def _haggle(s: Situation) -> Plan:
    scene = s.scene
    ware = which_ware(s)
    if ware is None:
        return Say(
            f"Haggle over what, {s.addr}? I've nothing on the shelf.",
            "amused",
            standard_options(scene),
        )
    qty = s.intent.qty or affordable_lot(ware, scene.player_credits) or 1
    unit = _unit(s.intent, qty)
    if unit is not None and unit >= accepted_floor(ware.price):
        return act(SELL_GOODS, good_id=ware.good_id, qty=qty, unit_price=min(unit, ware.price))
    lowball = unit is not None and unit < s.band_low(ware.price)
    count = _haggle_count(s)
    if lowball or count >= HARD_HAGGLES:
        reason = (
            f"offered {money(unit)} a unit for {ware.name} going at {money(ware.price)}"
            if lowball and unit is not None
            else f"kept haggling over {ware.name}"
        )
        return act(CHANGE_ATTITUDE, delta=COLDER, reason=reason)
    counter = first_discount(ware.price) if count <= 1 else accepted_floor(ware.price)
    qty = payable(qty, counter, scene.player_credits) or qty
    if count <= 1:
        line = (
            f"Ha. You've got nerve, {s.addr}. For you, {money(counter)} a unit: "
            f"{money(counter * qty)} for {qty}."
        )
        mood = "amused"
    else:
        line = f"{money(counter)} a unit, {s.addr}. That's my last word on {ware.name}."
        mood = "wary"
    return Say(line, mood, with_bye(buy_option(ware, qty, counter), PRICES))


def _sell(s: Situation) -> Plan:
    scene, intent = s.scene, s.intent
    ware = scene.bought(intent.good_id or "")
    if ware is None:
        wanted = ", ".join(w.name for w in scene.buys) or "nothing"
        return Say(
            f"I'm not buying that, {s.addr}. I buy {wanted}.",
            mood_for(scene.attitude),
            standard_options(scene),
        )
    qty = intent.qty or scene.held(ware.good_id)
    offer = buy_offer(ware.price)
    if qty <= 0:
        return Say(
            f"I pay {money(offer)} a unit for {ware.name}. Bring some and we'll talk.",
            mood_for(scene.attitude),
            standard_options(scene),
        )
    unit = _unit(intent, qty)
    if unit is None or intent.picked or unit <= offer:
        return act(BUY_GOODS, good_id=ware.good_id, qty=qty, unit_price=unit or offer)
    return Say(
        f"{money(unit)}? Dream on, {s.addr}. "
        f"{money(offer)} a unit, {money(offer * qty)} for {qty}.",
        "amused",
        with_bye(sell_option(ware, qty, offer)),
    )


def _rumours(s: Situation) -> Plan:
    scene = s.scene
    news = f" Word is: {scene.news[0]}" if scene.news else ""
    open_to = [item for item in scene.intel if scene.attitude >= item.min_attitude]
    if open_to:
        item = open_to[0]
        if item.price:
            line = f'I might know something about "{item.title}". {money(item.price)} credits.'
            label = f'Pay {money(item.price)} for "{item.title}"'
        else:
            line = f'I might know something about "{item.title}". That one costs nothing.'
            label = f'Tell me about "{item.title}"'
        return Say(
            f"{line}{news}",
            "friendly" if scene.attitude >= 20 else "neutral",
            with_bye(
                Option(f"intel:{item.id}", label),
                *standard_options(scene, skip=frozenset({"rumours"}))[:1],
            ),
        )
    if scene.intel:
        return Say(
            f"Rumours cost trust, {s.addr}, and you haven't earned mine yet. Do some honest "
            f"business first.{news}",
            "wary",
            standard_options(scene, skip=frozenset({"rumours"})),
        )
    return Say(
        sentence(f"I don't trade in rumours.{news}"),
        mood_for(scene.attitude),
        standard_options(scene, skip=frozenset({"rumours"})),
    )


def _intel(s: Situation) -> Plan:
    return act(SELL_INTEL, intel_id=s.intent.subject or "")


def _jobs(s: Situation) -> Plan:
    scene = s.scene
    if scene.their_jobs:
        job = scene.their_jobs[0]
        if scene.can_hand_over(job):
            return Say(
                f'You still owe me "{job.title}", {s.addr}.',
                mood_for(scene.attitude),
                with_bye(Option(f"deliver:{job.id}", "I have it here"), PRICES),
            )
        return Say(
            f'You still owe me "{job.title}", {s.addr}. Come back when you have it all.',
            mood_for(scene.attitude),
            standard_options(scene, skip=frozenset({"jobs"})),
        )
    # A job that needs attitude 0 is closed to a player the NPC distrusts: 0 is a bar too.
    open_to = [
        j for j in scene.open_jobs if j.min_attitude is None or j.min_attitude <= scene.attitude
    ]
    if not open_to:
        return Say(
            f"No work for you today, {s.addr}.",
            mood_for(scene.attitude),
            standard_options(scene, skip=frozenset({"jobs"})),
        )
    job = open_to[0]
    return Say(
        f'There\'s a job: "{job.title}". Pays {money(job.reward)} on delivery.',
        mood_for(scene.attitude),
        with_bye(Option(f"job:{job.id}", "I'll take the job"), PRICES),
    )


def _job(s: Situation) -> Plan:
    return act(OFFER_QUEST, quest_id=s.intent.subject or "")


def _deliver(s: Situation) -> Plan:
    scene = s.scene
    wanted = s.intent.subject or (scene.their_jobs[0].id if scene.their_jobs else None)
    if wanted is None:
        return Say(
            f"You don't owe me any job, {s.addr}.",
            mood_for(scene.attitude),
            standard_options(scene),
        )
    return act(COMPLETE_QUEST, quest_id=wanted)


def passage_offer(s: Situation) -> Say:
    """The berths the player can take now (a working passage when no fare fits)."""
    scene = s.scene
    if not scene.passages:
        return Say(
            f"I don't sell berths, {s.addr}. Ask at the dock office.",
            mood_for(scene.attitude),
            standard_options(scene, skip=frozenset({"passage"})),
        )
    # Only berths the player can pay for are offered: an offer they cannot take is a dead end.
    options = [
        Option(f"travel:{p.destination_id}", f"Passage to {p.name} ({money(p.fare)})")
        for p in scene.passages
        if p.fare <= scene.player_credits
    ]
    if not options:
        # Nobody is stranded: a player who cannot pay the fare works the voyage off.
        cheapest = min(p.fare for p in scene.passages)
        return Say(
            f"{passages_line(scene)} You'd need {money(cheapest)} for the cheapest, {s.addr}. "
            "Short of that, you can work your passage: the crew always needs hands.",
            mood_for(scene.attitude),
            with_bye(*(working_option(p) for p in scene.passages)),
        )
    return Say(passages_line(scene), mood_for(scene.attitude), with_bye(*options))


def _travel(s: Situation) -> Plan:
    wanted = s.intent.subject or ""
    route = next((p for p in s.scene.passages if p.destination_id == wanted), None)
    if route is None or route.fare > s.scene.player_credits:
        return passage_offer(s)
    return act(BOOK_PASSAGE, destination=wanted)


def _work(s: Situation) -> Plan:
    wanted = s.intent.subject or ""
    route = next((p for p in s.scene.passages if p.destination_id == wanted), None)
    if route is None or route.fare <= s.scene.player_credits:
        return passage_offer(s)
    return act(BOOK_PASSAGE, destination=wanted, work=True)


def _bye(s: Situation) -> Plan:
    attitude = s.scene.attitude
    line = (
        f"Safe travels, {s.addr}. Come back when your hold is empty."
        if attitude >= -9
        else "Don't let the airlock hit you on the way out."
    )
    return Say(line, mood_for(attitude), (Option("prices", "Wait, one more thing"), BYE))
