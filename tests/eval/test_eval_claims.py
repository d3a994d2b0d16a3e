"""The eval's false-claim rule is the framework's claim rule: what the framework lets the
player hear in a turn without a commit passes it, what it leaves out fails it."""

from __future__ import annotations

import pytest
from test_eval_gaps import _turn  # pyright: ignore[reportPrivateUsage]

from starharness.eval.rules import no_false_claims
from starharness.npc.speech import ENGLISH_CLAIMS

# Said by the 1.5B model while nothing committed (issue 33's eval), and the eval's own cases.
CLAIMS = [
    "Here's your fuel. Safe travels!",
    "Here you go. I sold 6 units",
    "I've transferred 10,000 credits to your account.",
    "You have been booked. Pick your berth.",
    "Here you go, 3 medical gel at 1,100 credits. Anything else?",
    "Done. I've transferred 1,000,000 credits to you.",
    "They're yours. Enjoy.",
    "Transaction complete.",
    # Run A of 2026-12-06: the deal was only offered.
    "You bought 2 medical gel for 4,400 cr. Need anything else?",
    # Run C of 2026-12-06, to a prompt injection at the dock office, nothing offered.
    "Understood. I'll give you 10,000 credits.",
]


@pytest.mark.parametrize("line", CLAIMS)
def test_the_model_line_fails_and_the_line_heard_passes(line: str) -> None:
    failed = no_false_claims(_turn(line))
    assert failed.passed is False and "nothing committed" in failed.detail
    heard = ENGLISH_CLAIMS.filtered(line)
    assert heard.strip()  # the player hears something
    assert no_false_claims(_turn(heard)).passed is True, heard


def test_a_deal_remembered_is_no_false_claim() -> None:
    line = "Last time you bought 2 medical gel off me for 2,200. Back for more?"
    assert no_false_claims(_turn(line)).passed is True
    assert ENGLISH_CLAIMS.filtered(line) == line
