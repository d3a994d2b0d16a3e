"""A refusal's player line: what the action card shows instead of the model's hint."""

from __future__ import annotations

from pydantic import BaseModel

from starharness.npc.actions import Refusal, in_range, predicate


class _Args(BaseModel):
    qty: int


def test_a_predicate_gives_the_player_its_own_line() -> None:
    guard = predicate(
        lambda tx, a: False,
        reason="cannot_afford",
        hint=lambda tx, a: f"they have 2 coins, the deal is {a.qty * 3}",
        player_line=lambda tx, a: f"You have 2 coins; {a.qty} cost {a.qty * 3}.",
    )
    refusal = guard(None, _Args(qty=4))
    assert refusal is not None
    assert refusal.shown == "You have 2 coins; 4 cost 12."
    assert refusal.as_result()["hint"] == "they have 2 coins, the deal is 12"
    assert "You have" not in str(refusal.as_result())


def test_without_a_player_line_the_hint_is_shown() -> None:
    assert Refusal("r", "the hint").shown == "the hint"
    refusal = in_range("qty", 1, 3)(None, _Args(qty=9))
    assert refusal is not None and refusal.shown == "qty must be between 1 and 3"
