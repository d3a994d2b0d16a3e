"""Generic guard helpers. Domain guards (stock, funds, place) belong to the game."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel

from .refusal import Refusal

A = TypeVar("A", bound=BaseModel)

Guard = Callable[[Any, A], Refusal | None]
"""`guard(tx, args)`: runs inside the action's transaction; returns a Refusal to say no."""


def in_range(
    field: str,
    low: float,
    high: float,
    *,
    reason: str = "out_of_range",
    hint: str | None = None,
    player_line: str = "",
) -> Guard[Any]:
    """Refuse unless `low <= args.<field> <= high`."""

    def guard(tx: Any, args: BaseModel) -> Refusal | None:
        value = getattr(args, field)
        if low <= value <= high:
            return None
        return Refusal(
            reason,
            hint or f"{field} must be between {low:g} and {high:g}; you asked for {value}",
            {field: value, "min": low, "max": high},
            player_line or f"{field} must be between {low:g} and {high:g}",
        )

    return guard


def predicate(
    check: Callable[[Any, A], bool],
    *,
    reason: str,
    hint: str | Callable[[Any, A], str],
    facts: Callable[[Any, A], dict[str, Any]] | None = None,
    player_line: str | Callable[[Any, A], str] = "",
) -> Guard[A]:
    """Refuse when `check(tx, args)` is false; `hint`, `facts` and `player_line` may be computed.

    The hint speaks to the model; `player_line` is what the player is shown instead.
    """

    def guard(tx: Any, args: A) -> Refusal | None:
        if check(tx, args):
            return None
        text = hint(tx, args) if callable(hint) else hint
        shown = player_line(tx, args) if callable(player_line) else player_line
        return Refusal(reason, text, facts(tx, args) if facts is not None else {}, shown)

    return guard
