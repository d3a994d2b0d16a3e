"""How the brain's NPCs play a scene of several NPCs, and what they do with the lore they are
given.

An NPC names another only when it has reason to, so the framework's floor rule hands that one
the line: the player asks it for a good it does not sell that the other was heard offering, or
for a berth when the other was heard selling berths, or for a good the other was heard offering
cheaper ("Brandt's fuel cells come cheaper than mine: ask Brandt"). An NPC answering another
speaks to what the player wanted and names no one, so a round ends after two lines whatever the
server's bound. Everything comes from the request: what the NPC heard (`npc.heard`), the line
it answers, the lore given for the player's line.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ..content.seed import GOODS
from ..content.words import singular
from .heard import Heard
from .intents import classify, named_good
from .offers import buy_option, standard_options, with_bye
from .plans import Plan, Say, Situation
from .policy import decide, passage_offer
from .scene import number
from .tools import BOOK_PASSAGE, SELL_GOODS
from .voice import money, mood_for

_NUMBER = r"(\d{1,3}(?:,\d{3})+|\d+)"
_BERTHS = re.compile(r"\bBerths to\b")
_UNIT_PRICE = re.compile(_NUMBER + r" a unit\b")
_ASKING = frozenset({"buy", "prices", "haggle", "chat"})
"""What a player asks that another NPC may be the better one to answer."""
_LORE_CHARS = 220
"""A second lore entry is said too only while the line stays about this long."""
_NAMES = {good.id: good.name for good in GOODS}
_OFFERED = {
    good.id: re.compile(
        rf"\b(?:{re.escape(good.name)}|{re.escape(singular(good.name))})(?: at |: ){_NUMBER}",
        re.I,
    )
    for good in GOODS
}


@dataclass(frozen=True, slots=True)
class _Quote:
    """A price another NPC was heard asking for a good."""

    npc: str
    good_id: str
    price: int


def short_name(name: str) -> str:
    """How one NPC calls another: the last word of its name ("Brandt" for "Ilse Brandt")."""
    return name.split()[-1] if name.split() else name


def refer(s: Situation) -> Say | None:
    """The player's line is better answered by another NPC of the scene: say so, by name."""
    t, scene, intent = s.transcript, s.scene, s.intent
    if not t.heard or intent.picked or t.answering is not None:
        return None
    me = scene.npc_name
    if intent.kind in ("passage", "travel") and not scene.passages:
        seller = _latest(t.heard, me, lambda line: _BERTHS.search(line.text) is not None)
        if seller is not None:
            return Say(
                f"I don't sell berths, {s.addr}. {seller} does. Your customer, "
                f"{short_name(seller)}.",
                mood_for(scene.attitude),
                standard_options(scene, skip=frozenset({"passage"})),
            )
        return None
    if intent.kind not in _ASKING:
        return None
    good_id = intent.good_id or _named(t.said)
    if good_id is None:
        return None
    quote = _quotes(t.heard, me).get(good_id)
    if quote is None:
        return None
    mine = scene.sold(good_id)
    name, other = _NAMES[good_id], short_name(quote.npc)
    if mine is None or not mine.units:
        line = (
            f"I don't sell {name}, {s.addr}. {quote.npc} has {name} for {money(quote.price)}. "
            f"Your customer, {other}."
        )
    elif quote.price < mine.price:
        line = (
            f"{other} sells {name} cheaper than I do, {s.addr}: {money(quote.price)} against "
            f"my {money(mine.price)}. Ask {other}."
        )
    else:
        return None
    return Say(line, mood_for(scene.attitude), standard_options(scene))


def answer(s: Situation) -> Say:
    """This NPC's line when another turned to it (or the player spoke to it with another):
    only speech, about what the player wants, naming no one."""
    t, scene = s.transcript, s.scene
    answering = t.answering
    assert answering is not None
    if answering.by_player:
        intent = classify(answering.text, scene, t.last_options)
        opener = ""
    else:
        asked = next((line.text for line in reversed(t.heard) if line.by_player), "")
        intent = classify(asked, scene, [])
        if intent.kind in ("chat", "greet"):
            intent = classify(answering.text, scene, [])
        opener = f"That's right, {s.addr}. "
    situation = Situation(t, scene, intent, s.addr)
    said = _offered_before(situation) or _spoken(situation, decide(situation))
    return Say(opener + said.line, said.mood, said.options)


def _offered_before(s: Situation) -> Say | None:
    """The price this NPC already offered the player for the good asked about, kept to: what
    made the other send the player here."""
    good_id = s.intent.good_id
    ware = s.scene.sold(good_id or "")
    if ware is None or s.intent.kind not in _ASKING:
        return None
    for call in reversed(s.transcript.offered):
        unit, qty = call.arguments.get("unit_price"), call.arguments.get("qty")
        if call.name != SELL_GOODS or call.arguments.get("good_id") != good_id:
            continue
        if isinstance(unit, int) and isinstance(qty, int) and qty > 0 and unit < ware.price:
            return Say(
                f"{ware.name.capitalize()}: {money(unit)} a unit for you, as I said.",
                mood_for(s.scene.attitude),
                with_bye(buy_option(ware, qty, unit)),
            )
        return None
    return None


def from_lore(s: Situation) -> Say | None:
    """Small talk about what the NPC was given lore on: it tells what it knows."""
    lore = s.transcript.lore
    if s.intent.kind != "chat" or not lore or s.transcript.answering is not None:
        return None
    line = lore[0]
    if len(lore) > 1 and len(line) + len(lore[1]) < _LORE_CHARS:
        line = f"{line} {lore[1]}"
    return Say(line, mood_for(s.scene.attitude), standard_options(s.scene))


def _spoken(s: Situation, plan: Plan) -> Say:
    """A plan as speech alone: a deal it would have made becomes an option to take it."""
    if isinstance(plan, Say):
        return plan
    name, arguments = plan.calls[0]
    scene = s.scene
    if name == SELL_GOODS:
        ware = scene.sold(str(arguments.get("good_id", "")))
        qty = arguments.get("qty")
        if ware is not None and isinstance(qty, int) and qty > 0:
            unit = arguments.get("unit_price")
            price = unit if isinstance(unit, int) else ware.price
            return Say(
                f"{ware.name.capitalize()}: {money(price)} a unit, {ware.units} left.",
                mood_for(scene.attitude),
                with_bye(buy_option(ware, qty, price)),
            )
    if name == BOOK_PASSAGE:
        return passage_offer(s)
    return Say(
        s.wares() or f"What'll it be, {s.addr}?",
        mood_for(scene.attitude),
        standard_options(scene),
    )


def _named(text: str) -> str | None:
    """The good any NPC might trade that `text` names."""
    return named_good(text.casefold(), _NAMES)


def _others(heard: list[Heard], me: str) -> list[Heard]:
    return [line for line in heard if not line.by_player and line.speaker != me]


def _latest(heard: list[Heard], me: str, says: Callable[[Heard], bool]) -> str | None:
    """The NPC other than `me` who last said a line `says` accepts."""
    for line in reversed(_others(heard, me)):
        if says(line):
            return line.speaker
    return None


def _quotes(heard: list[Heard], me: str) -> dict[str, _Quote]:
    """The latest price each good was heard offered at by an NPC other than `me`."""
    found: dict[str, _Quote] = {}
    asked: dict[str, str] = {}
    """The player's latest line to each NPC (what an unnamed "428 a unit" is about)."""
    for line in heard:
        if line.by_player:
            for npc in line.to:
                asked[npc] = line.text
            continue
        if line.speaker == me:
            continue
        named = False
        for good_id, pattern in _OFFERED.items():
            if (offered := pattern.search(line.text)) is not None:
                found[good_id] = _Quote(line.speaker, good_id, number(offered[1]))
                named = True
        unit = None if named else _UNIT_PRICE.search(line.text)
        if unit is not None:
            good_id = _named(line.text) or _named(asked.get(line.speaker, ""))
            if good_id is not None:
                found[good_id] = _Quote(line.speaker, good_id, number(unit[1]))
    return found
