"""A typed line that restates a pending offer's terms accepts that offer, and nothing looser.

Seen on a 1.5B model: "Buy 4 medical gel at 1,100" pending, the player typed "Fine, 4 more
medical gel then.", the line went to the model, which read it as the player *selling* gel.
The rule reads only the offer's own label and cost; a haggle, a question, another number or
another good is words for the NPC.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st
from npc_support import Client, Stack, serving
from pydantic import BaseModel, Field
from tinygame import GREETING_GAME
from tinygame.actions import TALK
from tinygame.brain import customer_words, talk
from tinygame.world import Tx

from starharness.mockllm import ChatRequest, ScriptedCall, Step, ToolCalls
from starharness.npc import OfferTerms, Role, define_game_action
from starharness.npc.actions import Offer, OfferDraft
from starharness.npc.encounter.offer_desk import offers_meant, restates

GEL = OfferTerms("Buy 4 medical gel at 1,100", "4,400 cr")
FUEL = OfferTerms("Buy 3 fuel cells at 900", "2,700 cr")
SELL_FUEL = OfferTerms("Sell 3 fuel cells for 2,700 cr", "3 fuel cells")
PASSAGE = OfferTerms("Passage to Ceres Deep", "1,200 cr")
TEA = OfferTerms("2 cups of tea", "6 coins")


@pytest.mark.parametrize(
    ("terms", "line"),
    [
        (GEL, "Fine, 4 medical gel then."), (GEL, "Fine, 4 more medical gel then."),
        (GEL, "the 4 medical gel"), (GEL, "I'll take 4 medical gel, please"),
        (GEL, "Four medical gel, fine."), (GEL, "ok, medical gels at 1100 each"),
        (GEL, "Buy 4 medical gel at 1,100. Deal!"), (GEL, "I\u2019ll take the gel"),
        (FUEL, "the 3 fuel cells"), (FUEL, "buy 3 fuel cell"),
        (SELL_FUEL, "Fine, 3 fuel cells for 2,700"),
        (PASSAGE, "Passage to Ceres Deep, please."), (PASSAGE, "ok, Ceres Deep"),
        (TEA, "2 cups of tea please"), (TEA, "two cup of tea"),
    ],
)  # fmt: skip
def test_a_line_restating_the_terms_accepts(terms: OfferTerms, line: str) -> None:
    assert restates(line, terms)


@pytest.mark.parametrize(
    ("terms", "line"),
    [
        (GEL, "4 medical gel but cheaper"), (GEL, "4 medical gel?"),
        (GEL, "no, not 4 medical gel"), (GEL, "5 medical gel"),
        (GEL, "4 medical gel and 3 fuel cells"), (GEL, "sell 4 medical gel"),
        (GEL, "more medical gel"), (GEL, "I'll take a medical gel"), (GEL, "all the medical gel"),
        (GEL, "4 medical gel if you throw in fuel"), (GEL, "medical gel instead"),
        (GEL, "hello, 4 medical gel"), (GEL, "yes"), (GEL, "ok 4"), (GEL, "ok 4,400 cr"),
        (GEL, "deal, 4 medical gel, " + "fine " * 9), (GEL, "4 medical gel for less"),
        (GEL, "I'll take 4 medical gel for 4,400 cr"), (FUEL, "Fine, 4 more medical gel then."),
        (SELL_FUEL, "I'll take 3 fuel cells"), (SELL_FUEL, "I'll take them, 3 fuel cells"),
        (GEL, "I have 4 medical gel"), (GEL, "we got 4 medical gel"),
        (PASSAGE, "passage to Vesta"), (PASSAGE, "passage to Ceres Deep when?"),
        # Bare terms, without the offer's verb, a yes or a pointing word, may mean the deal
        # the other way round ("3 fuel cells" to buy, with "Sell 3 fuel cells" pending).
        (GEL, "4 medical gel"), (GEL, "Four medical gel."), (FUEL, "3 fuel cell"),
        (SELL_FUEL, "3 fuel cells"), (SELL_FUEL, "3 fuel cells please"),
    ],
)  # fmt: skip
def test_anything_looser_is_words_for_the_npc(terms: OfferTerms, line: str) -> None:
    assert not restates(line, terms)


def test_a_label_word_that_says_no_still_refuses() -> None:
    # A negation refuses even where the offer's own label holds the word.
    terms = OfferTerms('Hand over 2 gel for "No Return"', "2 gel")
    assert restates('Hand over 2 gel for "Return"', terms)
    assert not restates('Hand over 2 gel for "No Return"', terms)


def _french(line: str) -> bool:
    return line.strip(" ,.!").lower() in ("oui", "d'accord", "oui, d'accord")


def test_a_game_that_replaces_the_words_of_yes_judges_what_is_left() -> None:
    terms = OfferTerms("Acheter 4 gel médical", "4 400 cr")
    assert restates("Acheter 4 gel médical", terms, _french)
    assert restates("D'accord, 4 gels médical.", terms, _french)
    # Bare terms say neither the offer's verb nor the game's yes.
    assert not restates("4 gel médical", terms, _french)
    # English filler is the default rule's, not the game's: what is left goes to its rule.
    assert not restates("Fine, 4 gel médical then", terms, _french)
    assert not restates("4 gel médical, mais moins cher", terms, _french)
    assert not restates("5 gel médical, d'accord", terms, _french)


def _offer(number: int, terms: OfferTerms) -> Offer:
    def settle(offer_id: str) -> Any:
        raise AssertionError(f"{offer_id} was never to be settled here")

    return Offer(f"offer-{number}", OfferDraft("trade", {"n": number}, terms, settle))


def test_with_several_pending_the_one_restated_is_meant() -> None:
    gel, fuel = _offer(1, GEL), _offer(2, FUEL)
    assert offers_meant("the 3 fuel cells", [gel, fuel]) == (fuel,)
    assert offers_meant("Fine, 4 medical gel then.", [gel, fuel]) == (gel,)
    # A line that fits both, or a plain yes, means either: the NPC asks which.
    assert offers_meant("Buy then, deal", [gel, fuel]) == (gel, fuel)
    assert offers_meant("Yes, deal.", [gel, fuel]) == (gel, fuel)
    assert offers_meant("Yes, deal.", [gel]) == (gel,)
    # One that fits none is words.
    assert offers_meant("2 fuel cells", [gel, fuel]) == ()


def test_a_number_alone_never_decides_which_way_a_deal_goes() -> None:
    buy = _offer(1, OfferTerms("Buy 5 fuel cells at 900", "4,500 cr"))
    sell = Offer("offer-2", OfferDraft("sell", {"n": 2}, SELL_FUEL, buy.draft.settle))
    # "the 3 fuel cells" fits only the sale by its number, but its words fit the purchase too.
    assert offers_meant("the 3 fuel cells", [buy, sell]) == ()
    assert offers_meant("Fine, 3 fuel cells", [buy, sell]) == ()
    # The offer's own verb says which way.
    assert offers_meant("Sell 3 fuel cells", [buy, sell]) == (sell,)
    assert offers_meant("ok, buy 5 fuel cells", [buy, sell]) == (buy,)
    assert offers_meant("Fine, 4 medical gel then.", []) == ()


# -- the rule as properties ----------------------------------------------------------------------
# Label words are made of consonants no English word of the rule is made of; a foreign word
# holds letters no label word does, so it never passes for one (nor for its plural).

_LABEL_WORDS = st.text("bcdfghjklm", min_size=4, max_size=8)
_FOREIGN_WORDS = st.text("npqrtvwxz", min_size=4, max_size=8)
_FILLER = [
    "yes", "deal", "ok", "fine", "then", "please", "the", "sounds", "good", "that", "works",
    "for", "me", "I'll", "alright", "sure", "perfect", "take", "of", "at",
]  # fmt: skip
_SEPARATORS = st.sampled_from([" ", ", ", ". ", "! ", " - ", "; "])


@dataclasses.dataclass(frozen=True)
class _Case:
    terms: OfferTerms
    numbers: tuple[int, ...]
    line: list[str]


@st.composite
def _cases(draw: st.DrawFn) -> _Case:
    words = draw(st.lists(_LABEL_WORDS, min_size=1, max_size=4, unique=True))
    qty = draw(st.integers(1, 99))
    price = draw(st.integers(1, 5_000))
    label = f"{words[0]} {qty} {' '.join(words[1:])} at {price:,}".replace("  ", " ")
    terms = OfferTerms(label, f"{qty * price:,} cr")
    numbers = (qty, price, qty * price)

    def said(word: str) -> str:
        # A plural for a singular, any case.
        word = word + draw(st.sampled_from(["", "s", "es"]))
        return draw(st.sampled_from([word, word.upper(), word.capitalize()]))

    named = [said(word) for word in draw(st.lists(st.sampled_from(words), min_size=1, max_size=4))]
    # Without the label's first word, the line says yes or points at the offer.
    agreeing = draw(st.sampled_from(["", "yes", "fine", "the", "ok", "deal", "those"]))
    named.append(agreeing or said(words[0]))
    quoted = [
        draw(st.sampled_from([str(n), f"{n:,}"]))
        for n in draw(st.lists(st.sampled_from(numbers), max_size=3))
    ]
    filler = draw(st.lists(st.sampled_from(_FILLER), max_size=4))
    line = draw(st.permutations([*named, *quoted, *filler]))
    return _Case(terms, numbers, line)


def _joined(data: st.DataObject, words: list[str]) -> str:
    text = words[0]
    for word in words[1:]:
        text += data.draw(_SEPARATORS) + word
    return text + data.draw(st.sampled_from(["", ".", "!", "..."]))


@given(st.data())
def test_lines_made_of_the_offers_own_words_accept(data: st.DataObject) -> None:
    case = data.draw(_cases())
    assert restates(_joined(data, case.line), case.terms)


@given(st.data(), st.sampled_from(["number", "negation", "foreign", "question", "more"]))
def test_one_word_beyond_the_offer_never_accepts(data: st.DataObject, extra: str) -> None:
    case = data.draw(_cases())
    if extra == "number":
        numbers = st.integers(0, 1_000_000).filter(lambda n: n not in case.numbers)
        word = str(data.draw(numbers))
    elif extra == "negation":
        word = data.draw(st.sampled_from(["no", "not", "don't", "but", "if", "cheaper", "less",
                                          "instead", "never", "or", "unless"]))  # fmt: skip
    elif extra == "foreign":
        word = data.draw(_FOREIGN_WORDS)
    elif extra == "question":
        word = "?"
    else:
        word = "more"  # at the start: nothing before it says how many
    where = 0 if extra == "more" else data.draw(st.integers(0, len(case.line)))
    line = [*case.line[:where], word, *case.line[where:]]
    assert not restates(_joined(data, line), case.terms)


# -- through the real server ---------------------------------------------------------------------


class GoodsArgs(BaseModel):
    npc_id: str
    player_id: str
    good: Literal["gel", "fuel"]
    qty: int = Field(ge=1, le=5)


_NAMES = {"gel": "medical gel", "fuel": "fuel cells"}
_PRICES = {"gel": 2, "fuel": 1}


def _sell(tx: Tx, args: GoodsArgs) -> Mapping[str, Any]:
    total = args.qty * _PRICES[args.good]
    tx.add(args.player_id, coins=-total, loaves=args.qty)
    tx.add(args.npc_id, coins=total, loaves=-args.qty)
    return {"total": total}


GOODS = define_game_action(
    "sell_goods",
    "Sell the customer goods at the going price.",
    GoodsArgs,
    bind={"npc_id": Role.NPC, "player_id": Role.PLAYER},
    apply=_sell,
    narrate=lambda args, effect: f"Sold {args.qty} {_NAMES[args.good]}.",
    takes_from=Role.PLAYER,
    terms=lambda tx, a: OfferTerms(
        f"Buy {a.qty} {_NAMES[a.good]}", f"{a.qty * _PRICES[a.good]} coins"
    ),
)
GOODS_GAME = dataclasses.replace(GREETING_GAME, name="tinygame-goods", actions=(GOODS, TALK))
NO_THANKS = {"id": "no", "label": "No thanks"}


class Seller:
    """A model that offers the same deals every turn and keeps what the player said."""

    def __init__(self, *deals: tuple[str, int]) -> None:
        self.deals = deals
        self.heard: list[str] = []

    def __call__(self, request: ChatRequest) -> Step:
        if request.last_message.role == "tool":
            return ToolCalls(calls=[talk("Say the word.", options=[NO_THANKS])], fragment_size=4)
        said = customer_words(request)
        self.heard.append(said)
        if said.startswith("I accept: "):
            return ToolCalls(calls=[talk("Enjoy.", "happy", [NO_THANKS])], fragment_size=4)
        calls = [
            ScriptedCall(name="sell_goods", arguments=json.dumps({"good": good, "qty": qty}))
            for good, qty in self.deals
        ]
        return ToolCalls(calls=calls)


def _offers(frames: list[dict[str, Any]]) -> list[tuple[str, str]]:
    last = [f for f in frames if f["t"] == "options"][-1]
    return [(item["id"], item["label"]) for item in last["items"] if "offer" in item]


def _accepted(stack: Stack) -> list[tuple[int, str, int]]:
    rows = [row for row in stack.world.audit_rows() if row["action"] == "sell_goods"]
    return [
        (row["ok"], (args := json.loads(row["args"]))["accepted_offer"], args["qty"])
        for row in rows
    ]


async def _opened(client: Client) -> list[dict[str, Any]]:
    await client.send({"t": "hello", "playerId": "p1"})
    assert (await client.recv())["t"] == "welcome"
    return await client.open("e1", "n-baker", "p1")


async def test_restating_the_one_offer_commits_it_with_no_model_call(tmp_path: Path) -> None:
    seller = Seller(("gel", 4))
    async with serving(GOODS_GAME, tmp_path, responder=seller) as stack, stack.client() as client:
        assert _offers(await _opened(client)) == [("offer-1", "Buy 4 medical gel")]
        heard = len(seller.heard)
        frames = await client.say("e1", "Fine, 4 medical gel then.")
        # The deal is done before the model is asked anything, and never read as words.
        assert frames[0] == {
            "t": "action", "id": "e1", "name": "sell_goods", "ok": True,
            "summary": "Sold 4 medical gel.",
        }  # fmt: skip
        assert seller.heard[heard:] and all(
            said.startswith("I accept: Buy 4 medical gel (8 coins).")
            for said in seller.heard[heard:]
        )
        assert _accepted(stack) == [(1, "offer-1", 4)]
        assert stack.world.holdings("p1") == (12, 4)
        # Said again, it is words: the offer was settled once.
        await client.say("e1", "Fine, 4 medical gel then.")
        assert seller.heard[-1] == "Fine, 4 medical gel then."
        assert _accepted(stack) == [(1, "offer-1", 4)]


async def test_restating_one_of_two_offers_picks_it(tmp_path: Path) -> None:
    seller = Seller(("gel", 4), ("fuel", 3))
    async with serving(GOODS_GAME, tmp_path, responder=seller) as stack, stack.client() as client:
        assert _offers(await _opened(client)) == [
            ("offer-1", "Buy 4 medical gel"),
            ("offer-2", "Buy 3 fuel cells"),
        ]
        heard = len(seller.heard)
        frames = await client.say("e1", "the 3 fuel cells")
        assert (frames[0]["t"], frames[0]["summary"]) == ("action", "Sold 3 fuel cells.")
        assert all(said.startswith("I accept: Buy 3 fuel cells") for said in seller.heard[heard:])
        assert _accepted(stack) == [(1, "offer-2", 3)]
        assert stack.world.holdings("p1") == (17, 3)


async def test_a_line_that_fits_both_offers_asks_which(tmp_path: Path) -> None:
    seller = Seller(("gel", 4), ("fuel", 3))
    async with serving(GOODS_GAME, tmp_path, responder=seller) as stack, stack.client() as client:
        await _opened(client)
        heard = len(seller.heard)
        frames = await client.say("e1", "Fine, buy then.")
        spoken = "".join(f["text"] for f in frames if f["t"] == "say.delta")
        assert spoken == GOODS_GAME.which_offer_line
        assert [item for item, _ in _offers(frames)] == ["offer-1", "offer-2"]
        assert seller.heard[heard:] == []
        # The next restatement picks one: the question did not withdraw them.
        frames = await client.say("e1", "the 4 medical gel")
        assert frames[0]["t"] == "action"
        assert _accepted(stack) == [(1, "offer-1", 4)]


async def test_a_haggle_over_the_terms_goes_to_the_npc(tmp_path: Path) -> None:
    seller = Seller(("gel", 4))
    async with serving(GOODS_GAME, tmp_path, responder=seller) as stack, stack.client() as client:
        await _opened(client)
        for line in ("4 medical gel but cheaper", "5 medical gel", "4 medical gel?"):
            frames = await client.say("e1", line)
            assert [f for f in frames if f["t"] == "action"] == []
            assert seller.heard[-1] == line  # the model read it as words
            assert _accepted(stack) == []
        # The offer stood all along (the NPC made it again): the plain restatement takes it.
        assert _offers(frames) == [("offer-1", "Buy 4 medical gel")]
        await client.say("e1", "4 medical gel, deal")
        assert _accepted(stack) == [(1, "offer-1", 4)]
        assert stack.world.holdings("p1") == (12, 4)
