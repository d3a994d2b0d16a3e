"""A player who types in a hurry, or asks: a misspelt "sell" or "buy" still says which way the
deal goes, so does a question put to the trader ("do you buy drive parts?"), and no ordinary
word ("cell", "self", "by") turns into one."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from voyage_brain_support import (
    ARRIVAL,
    Conversation,
    only_call,
    option_ids,
    price_refusal,
    speech,
)

from starharness.mockllm import ToolCalls
from starharness.voyage.brain.intents import classify
from starharness.voyage.brain.scene import SceneView, Ware

# A trader that sells and buys both goods, so the words alone decide the deal's direction.
SCENE = """\
Day 1. Omega station: The Rusty Nebula, a dim bar on the docking ring; the dock office is next door.
Jonah Karsk: 48,000 credits.
Sells from the hold, units at going price: fuel cells [fuel] 40 at 450, drive parts [parts] \
10 at 1,500.
Buys, paying 75-85% of the going price shown: fuel cells [fuel] 450, drive parts [parts] 1,500.
The player: Captain Ash, 12,000 credits; hold: 2 fuel cells, 3 drive parts.
Attitude to the player: 0 (neutral).
Memories of the player: You have never dealt with them."""

TRADES = SceneView(
    sells=[Ware("fuel", "fuel cells", 450, 40), Ware("parts", "drive parts", 1_500, 10)],
    buys=[Ware("fuel", "fuel cells", 450), Ware("parts", "drive parts", 1_500)],
    player_hold={"fuel cells": 2, "drive parts": 3},
)


def _greeted() -> Conversation:
    talk = Conversation().player(ARRIVAL).scene(SCENE)
    talk.spoke("Evening, kid.", [("prices", "What are you selling?"), ("bye", "Leave")])
    return talk


@pytest.mark.parametrize(
    ("said", "call"),
    [
        # Found playing: both were read as the player buying, and the NPC offered its own fuel.
        ("sel 3 fuel at 1", ("player_sells", {"good_id": "fuel", "qty": 3, "unit_price": 1})),
        (
            "selll 2 drive partss 99",
            ("player_sells", {"good_id": "parts", "qty": 2, "unit_price": 1275}),
        ),
        ("SeLL 2 fuel", ("player_sells", {"good_id": "fuel", "qty": 2, "unit_price": 382})),
        ("seling 2 fuel cells", ("player_sells", {"good_id": "fuel", "qty": 2, "unit_price": 382})),
        ("selling 2 fuel", ("player_sells", {"good_id": "fuel", "qty": 2, "unit_price": 382})),
        (
            "I'll seeell you 2 fuel",
            ("player_sells", {"good_id": "fuel", "qty": 2, "unit_price": 382}),
        ),
        # "cels" is a misspelt fuel cell, never a sale: the same lines spelt right read the same.
        ("2 fuel cels", ("player_buys", {"good_id": "fuel", "qty": 2, "unit_price": 450})),
        ("2 fuel cells", ("player_buys", {"good_id": "fuel", "qty": 2, "unit_price": 450})),
        (
            "sell 2 fuel cels for 360",
            ("player_sells", {"good_id": "fuel", "qty": 2, "unit_price": 180}),
        ),
        ("sel me 2 fuel cels", ("player_buys", {"good_id": "fuel", "qty": 2, "unit_price": 450})),
        ("buyy 2 fuel", ("player_buys", {"good_id": "fuel", "qty": 2, "unit_price": 450})),
    ],
)
def test_a_misspelt_trade_word_still_says_who_sells(
    said: str, call: tuple[str, dict[str, object]]
) -> None:
    assert only_call(_greeted().player(said).ask()) == call


@pytest.mark.parametrize(
    ("said", "call"),
    [
        # Asked of the trader: which way the deal goes is in who buys, not in the verb alone.
        # All four were read the other way round, and the NPC offered its own wares.
        ("do you buy drive parts?", ("player_sells", {"good_id": "parts", "qty": 3})),
        ("would you buy my fuel cells?", ("player_sells", {"good_id": "fuel", "qty": 2})),
        ("are you buying fuel?", ("player_sells", {"good_id": "fuel", "qty": 2})),
        ("are you selling fuel?", ("player_buys", {"good_id": "fuel"})),
    ],
)
def test_a_question_to_the_trader_says_who_sells(
    said: str, call: tuple[str, dict[str, object]]
) -> None:
    step = _greeted().player(said).ask()
    assert isinstance(step, ToolCalls), step
    first = step.calls[0]
    name, arguments = first.name, json.loads(first.arguments)
    assert (name, {k: v for k, v in arguments.items() if k in call[1]}) == call


@pytest.mark.parametrize("said", ["will you buy me a drink?", "would you buy us a round?"])
def test_buying_the_player_something_is_no_sale(said: str) -> None:
    assert classify(said, TRADES, []).kind != "sell"


def test_a_misspelt_sale_below_the_band_is_answered_with_the_least_the_npc_pays() -> None:
    # The whole turn the player saw: the sale is tried at their price, the rules refuse it, and
    # the NPC names what it pays for the 2 cells they hold, not what it would sell them for.
    talk = _greeted().player("sel 3 fuel at 1")
    step = talk.ask()
    assert only_call(step) == ("player_sells", {"good_id": "fuel", "qty": 3, "unit_price": 1})
    talk.follow(
        step,
        price_refusal("fuel cells", 450, 338, 382, 1),
    )
    answer = talk.ask()
    assert speech(answer)["line"] == "338 a unit is the least I pay for fuel cells, kid: 676 for 2."
    assert option_ids(answer)[0] == "sell:fuel:2:338"


def test_a_misspelt_buy_with_no_number_is_still_a_purchase() -> None:
    step = _greeted().player("buyy fuel cells").ask()
    assert option_ids(step)[0].startswith("buy:fuel:")
    assert "sell:" not in " ".join(option_ids(step))


@pytest.mark.parametrize(
    "said", ["by the way, 2 fuel cells", "2 fuel cells by tomorrow", "cell 2 fuel", "self 2 fuel"]
)
def test_words_near_a_trade_word_leave_the_direction_alone(said: str) -> None:
    # Two cells named is the player buying them, whatever ordinary word comes with them.
    assert only_call(_greeted().player(said).ask())[0] == "player_buys"


def _squeezed(word: str) -> str:
    """The word with every run of one letter cut to one: "selll" is "sel"."""
    return re.sub(r"(.)\1+", r"\1", word)


_SELL_TYPOS = frozenset({"sel", "selin", "seling"})
"""The spellings of "sell" and "selling" once their doubled letters are squeezed."""
_SELL_WORDS = frozenset({"offload", "unload"})
"""The other words that sell on their own."""


def _repeated(letters: str) -> st.SearchStrategy[str]:
    """`letters` with each letter typed one to three times, in any case."""
    parts = [st.sampled_from([c * n for n in (1, 2, 3)]) for c in letters]
    cased = st.tuples(*parts).map("".join)
    return cased.flatmap(
        lambda word: st.lists(st.booleans(), min_size=len(word), max_size=len(word)).map(
            lambda upper: "".join(c.upper() if u else c for c, u in zip(word, upper, strict=True))
        )
    )


@given(word=st.one_of(_repeated("sell"), _repeated("selling"), _repeated("selin")))
def test_sell_typed_with_any_letters_doubled_or_in_any_case_is_a_sale(word: str) -> None:
    intent = classify(f"{word} 2 fuel cells", TRADES, [])
    assert (intent.kind, intent.good_id, intent.qty) == ("sell", "fuel", 2)


def _one_edit(word: str) -> st.SearchStrategy[str]:
    """`word` with one letter dropped, changed or added: where typos and real words meet."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    at = st.integers(min_value=0, max_value=len(word))
    letter = st.sampled_from(letters)
    dropped = at.filter(lambda i: i < len(word)).map(lambda i: word[:i] + word[i + 1 :])
    changed = st.tuples(at.filter(lambda i: i < len(word)), letter).map(
        lambda t: word[: t[0]] + t[1] + word[t[0] + 1 :]
    )
    added = st.tuples(at, letter).map(lambda t: word[: t[0]] + t[1] + word[t[0] :])
    return st.one_of(dropped, changed, added)


@given(
    word=st.one_of(
        _one_edit("sell"),
        _one_edit("selling"),
        st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8),
        st.sampled_from(["cell", "cels", "cells", "self", "seller", "sells", "sale", "shell"]),
    )
)
def test_no_word_outside_the_typos_of_sell_is_a_sale(word: str) -> None:
    if _squeezed(word) in _SELL_TYPOS or word in _SELL_WORDS:
        return
    assert classify(f"{word} 2 fuel cells", TRADES, []).kind != "sell", word


@given(word=_repeated("buy"))
def test_buy_typed_with_any_letters_doubled_is_a_purchase(word: str) -> None:
    intent = classify(f"{word} fuel cells", TRADES, [])
    assert (intent.kind, intent.good_id) == ("buy", "fuel")


@pytest.mark.parametrize("said", ["by fuel cells", "bye fuel cells", "bu fuel cells"])
def test_by_and_bye_are_not_buy(said: str) -> None:
    assert classify(said, TRADES, []).kind != "buy"
