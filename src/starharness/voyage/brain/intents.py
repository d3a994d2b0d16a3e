"""What the player wants, from a picked option or from plain English."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..content.seed import GOODS
from ..content.words import singular
from .options import Option, decode
from .scene import SceneView, number

_WORD_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "dozen": 12,
    "twenty": 20,
}
_STOP_WORDS = frozenset({"real", "the", "of", "and", "a", "an"})

_BYE = re.compile(r"\b(bye|goodbye|farewell|see you|so long|i'?m off|leaving|gotta go|later)\b")
_DELIVER = re.compile(
    r"\b(deliver\w*|job'?s? done|finished the job|done the job|brought (the|your|you)|"
    r"here'?s (the|your) (goods|cargo|gel|order))\b"
)
_RUMOURS = re.compile(
    r"\b(rumou?rs?|intel|gossip|tips?|secrets?|information|info|news|what'?s new|heard)\b"
)
_JOBS = re.compile(r"\b(jobs?|work|quests?|missions?|errands?|hiring|contracts?)\b")
_TAKE_JOB = re.compile(
    r"\b(take|accept|do|want|sign me up for)\s+(the|that|this|your)\s+"
    r"(job|work|quest|mission|errand|contract)\b"
)
""""I'll take the job": the one just offered, not a question about jobs."""
_TRAVEL = re.compile(
    r"\b(passage|travel|berth|ticket|fly|flight|go to|ship to|take me|leave for)\b"
)
_SELL_VERB = r"s+e+l+"
""""Sell" typed in a hurry: each letter held down or a double one typed once ("sel", "selll").
A pattern, not a distance from "sell": the words one letter away are English ("cell", as in
"2 fuel cels", "self", "tell", "shell"), while no word fits this but "sell" itself. Not
"sells" either: "who sells fuel?" asks about someone else's sale."""
_SELLING = _SELL_VERB + r"(?:i+n+g*)?"
""""Selling" and its typos ("seling", "sellin"): the player selling, as "selling" always was."""
_SELL_QUESTION = re.compile(r"\bwhat (do|are|have) you (got )?(" + _SELLING + r"|have|got)\b")
_SELL = re.compile(r"\b(" + _SELLING + r"|offload|unload|get rid of)\b")
_SOLD_TO_PLAYER = re.compile(r"\b(" + _SELL_VERB + r" (me|us)|you " + _SELLING + r")\b")
""""Sell me three gel", "can you sell us fuel", "are you selling fuel?": the player buys."""
_BOUGHT_FROM_PLAYER = re.compile(r"\byou (b+u+y+|buying)\b(?! (me|us)\b)")
""""Do you buy drive parts?", "would you buy my fuel cells?", "are you buying ore?": the
player sells (never "will you buy me a drink")."""
_HAGGLE = re.compile(
    r"\b(cheaper|discount|too (much|expensive|steep|high|pricey)|lower|haggle|knock|"
    r"come down|best price|better price|bargain|rip-?off|robbery)\b"
)
_OFFER = re.compile(
    r"\b(how about|what about|i'?ll (give|pay)|would you take|(?:can|could|will|would) you do)"
    r"\s+(\d[\d,]*)\b"
)
_BUY = re.compile(r"\b(b+u+y+|take|purchase|get|want|need|i'?ll have|give me|gimme)\b")
""""Buy" with a letter held down ("buyy") too; never "by" or "bye", which are English, nor
"buying": "are you buying fuel?" asks the NPC to buy."""
_PRICES = re.compile(
    r"\b(price|prices|how much|cost|costs|wares|stock|goods|selling|for sale|offer)\b"
)
_GREET = re.compile(r"\b(hi|hello|hey|evening|morning|greetings|howdy)\b")
_UNITS = sorted(
    {word for good in GOODS for word in (good.name.split()[-1], singular(good.name).split()[-1])}
    | {"unit", "piece", "cell", "crate", "can", "cup"}
)
"""What a unit of a good is called: "300 a fuel cell", "90 per crate", "1,000 a gel"."""
_UNIT_PRICE = re.compile(
    r"(?:at|for|@)?\s*(\d[\d,]*)\s*(?:credits?\s*|cr\s*)?(?:each|apiece|/unit|"
    r"(?:a|per|for a|for one)\s+(?:[a-z-]+\s+){0,2}?(?:" + "|".join(_UNITS) + r"))\b"
)
_PRICE = re.compile(r"\b(?:at|for|@)\s*(\d[\d,]*)\b")
_QTY = re.compile(r"\b(\d+)\b")


@dataclass(frozen=True, slots=True)
class Intent:
    """One thing the player asked for; `price` is per unit unless `price_is_total`."""

    kind: str
    good_id: str | None = None
    qty: int | None = None
    price: int | None = None
    price_is_total: bool = False
    subject: str | None = None
    picked: bool = False
    """True when the player picked one of the NPC's options."""


def classify(text: str, scene: SceneView | None, last_options: list[Option]) -> Intent:
    """The player's intent; the labels of the options just offered first, then English."""
    picked = _picked(text, last_options)
    if picked is not None:
        return picked
    said = text.strip()
    if not said or (said.startswith("(") and said.endswith(")")):
        return Intent("greet")
    return _english(said.casefold(), scene or SceneView())


def _picked(text: str, options: list[Option]) -> Intent | None:
    # An option reaches the model as its label (what the framework sends for an `optionId`),
    # so only a label of the options just offered is a pick. Text that merely looks like an
    # option id ("buy:medgel:2:1") is English, never a deal at a price the NPC did not offer.
    wanted = _plain(text)
    ids = [o.id for o in options if _plain(o.label) == wanted]
    choice = decode(ids[0]) if ids else None
    if choice is None:
        return None
    if choice.verb in ("buy", "sell"):
        return Intent(choice.verb, choice.subject, choice.qty, choice.price, picked=True)
    return Intent(choice.verb, subject=choice.subject or None, picked=True)


def _plain(text: str) -> str:
    """A label as typed: "I'll take the job." is the option "I'll take the job"."""
    return text.strip().rstrip(".!?… ").casefold()


def _english(text: str, scene: SceneView) -> Intent:
    if _BYE.search(text) and not _BUY.search(text):
        return Intent("bye")
    if _DELIVER.search(text):
        return Intent("deliver")
    if _TRAVEL.search(text):
        place = _destination(text, scene)
        return Intent("travel", subject=place) if place else Intent("passage")
    if _RUMOURS.search(text):
        return Intent("rumours")
    if _TAKE_JOB.search(text) and scene.open_jobs:
        return Intent("job", subject=scene.open_jobs[0].id)
    if _JOBS.search(text):
        return Intent("jobs")
    qty = _quantity(text)
    unit, total = _prices(text)
    if _BOUGHT_FROM_PLAYER.search(text) or (
        _SELL.search(text) and not _SELL_QUESTION.search(text) and not _SOLD_TO_PLAYER.search(text)
    ):
        good = named_good(text, {w.good_id: w.name for w in scene.buys} or scene.goods())
        return Intent("sell", good, qty, unit or total, price_is_total=unit is None and bool(total))
    sold = {w.good_id: w.name for w in scene.sells} or scene.goods()
    good = named_good(text, sold)
    offer = _OFFER.search(text)
    if _HAGGLE.search(text) or (offer and not _BUY.search(text[: offer.start()])):
        price = unit or total or (number(offer[3]) if offer else None)
        return Intent("haggle", good, qty, price, price_is_total=unit is None and bool(total))
    if unit is not None and good and not _BUY.search(text):
        # "300 credits a fuel cell?": a price put to the NPC, not a quantity.
        return Intent("haggle", good, qty, unit)
    if _BUY.search(text) or (good and qty):
        if good is None and _PRICES.search(text):
            return Intent("prices")
        return Intent("buy", good, qty, unit or total, price_is_total=unit is None and bool(total))
    if _PRICES.search(text) or _SELL_QUESTION.search(text):
        return Intent("prices", good)
    if _GREET.search(text):
        return Intent("greet")
    return Intent("chat", good)


def _quantity(text: str) -> int | None:
    stripped = _UNIT_PRICE.sub(" ", _PRICE.sub(" ", text))
    found = _QTY.search(stripped)
    if found:
        return int(found[1])
    for word in re.findall(r"[a-z]+", stripped):
        if word in _WORD_NUMBERS and word not in ("a", "an"):
            return _WORD_NUMBERS[word]
    return None


def _prices(text: str) -> tuple[int | None, int | None]:
    unit = _UNIT_PRICE.search(text)
    if unit:
        return number(unit[1]), None
    total = _PRICE.search(text)
    return None, number(total[1]) if total else None


def named_good(text: str, goods: dict[str, str]) -> str | None:
    """The good of `goods` (id to name) that `text` names most clearly, or None."""
    words = set(re.findall(r"[a-z0-9-]+", text))
    best: tuple[int, str] | None = None
    for good_id, name in goods.items():
        score = 3 if good_id in words else 0
        for part in name.casefold().split():
            if part not in _STOP_WORDS and (part in words or part.rstrip("s") in words):
                score += 2 if len(part) > 3 else 1
        if score and (best is None or score > best[0]):
            best = (score, good_id)
    return best[1] if best else None


def _destination(text: str, scene: SceneView) -> str | None:
    words = set(re.findall(r"[a-z0-9'-]+", text))
    for passage in scene.passages:
        parts = {p for p in passage.name.casefold().replace("'s", "").split() if len(p) > 3}
        if passage.destination_id in text or parts & words:
            return passage.destination_id
    return None
