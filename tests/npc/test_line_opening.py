"""The words an NPC's line begins with after its decision made an offer, or after the player
accepted one (`line_opening`): the game's `OfferTerms.says` and `says_done`, as the speech
call's arguments so far, only where the speech contract allows them."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from starharness.npc import OfferTerms, SpeechContract
from starharness.npc.actions import OFFERED, Offer, OfferDraft
from starharness.npc.encounter.offer_desk import line_opening, offer_made

CONTRACT = SpeechContract(
    tool_name="npc_speak",
    line_field="line",
    mood_field="mood",
    options_field="options",
    max_line_chars=60,
    line_characters="[A-Za-z0-9 ,.'!?;:-]",
)


def _offer(says: str) -> Offer:
    def settle(offer_id: str) -> Any:
        raise AssertionError(f"{offer_id} was never to be settled here")

    terms = OfferTerms("Buy 2 loaves", "6 coins", says=says)
    return Offer("offer-1", OfferDraft("trade", {"n": 2}, terms, settle))


def _made(offer: Offer) -> str:
    return json.dumps({"action": "trade", **offer.made()})


def test_an_offer_s_words_open_the_line_cut_inside_its_string() -> None:
    offer = _offer("Two loaves for 6 coins.")
    assert offer_made(_made(offer), [offer]) is offer
    begun = line_opening(offer.terms.says, CONTRACT)
    assert begun == '{"line":"Two loaves for 6 coins.'
    assert json.loads(begun + '"}') == {"line": "Two loaves for 6 coins."}


def test_a_result_that_made_no_offer_or_one_no_longer_pending_has_none() -> None:
    offer = _offer("Two loaves for 6 coins.")
    assert offer_made(json.dumps({"action": "trade", "ok": False}), [offer]) is None
    assert offer_made("not json", [offer]) is None
    assert offer_made(json.dumps([OFFERED]), [offer]) is None
    # An offer no longer pending (taken, withdrawn) opens nothing.
    assert offer_made(_made(offer), []) is None


def test_words_that_break_the_contract_open_nothing() -> None:
    for says in ["", "   ", 'Two "fresh" loaves (6 coins)', "x" * 61]:
        assert line_opening(says, CONTRACT) is None


@given(st.text(min_size=1, max_size=60))
def test_any_words_open_a_line_only_as_the_contract_allows(says: str) -> None:
    begun = line_opening(says, CONTRACT)
    if begun is None:
        return
    line = json.loads(begun + '"}')["line"]
    assert line == says.strip()
    assert all(ch.isascii() and (ch.isalnum() or ch in " ,.'!?;:-") for ch in line)
