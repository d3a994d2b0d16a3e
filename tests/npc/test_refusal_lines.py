"""A refusal's player line: what the action card shows instead of the model's hint."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from starharness.npc.actions import Refusal, in_range, predicate


class _Args(BaseModel):
    qty: int


def _never(tx: Any, args: _Args) -> bool:
    return False


def _hint(tx: Any, args: _Args) -> str:
    return f"they have 2 coins, the deal is {args.qty * 3}"


def _shown(tx: Any, args: _Args) -> str:
    return f"You have 2 coins; {args.qty} cost {args.qty * 3}."


def test_a_predicate_gives_the_player_its_own_line() -> None:
    guard = predicate(_never, reason="cannot_afford", hint=_hint, player_line=_shown)
    refusal = guard(None, _Args(qty=4))
    assert refusal is not None
    assert refusal.shown == "You have 2 coins; 4 cost 12."
    assert refusal.as_result()["hint"] == "they have 2 coins, the deal is 12"
    assert "You have" not in str(refusal.as_result())


def test_without_a_player_line_the_hint_is_shown() -> None:
    assert Refusal("r", "the hint").shown == "the hint"
    refusal = in_range("qty", 1, 3)(None, _Args(qty=9))
    assert refusal is not None and refusal.shown == "qty must be between 1 and 3"
