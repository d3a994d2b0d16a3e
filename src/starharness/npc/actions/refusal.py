"""Refusals are values: what a guard returns when it says no."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .factory import GameAction


@dataclass(frozen=True, slots=True)
class CounterOffer:
    """What the game's rules would accept in place of a refused call: another call of an action
    that takes from the player, offered to the player (they still accept it or not).

    A small model picks the right deal with the wrong number or direction (a player's "three of
    those, please" read as the player selling them; twenty units of what the NPC holds twelve
    of); the guard that refuses it knows the deal the rules allow. `arguments` are the model's
    arguments of `action` (bound roles are filled in by the encounter); the counter's own
    guards run before it is offered, and a counter is never followed by another.
    """

    action: GameAction[Any, Any]
    arguments: Mapping[str, Any]
    explained: bool = False
    """Show the refusal beside a counter of another action: the player asked for the refused
    call, and the counter is the way to it (a hand-in short of goods, and the missing goods
    offered). Left False, a counter of another action stands alone, since it corrects the
    model's misreading of the player (their buy read as their sell), which no one should see.
    A counter of the same action always shows its refusal."""


@dataclass(frozen=True, slots=True)
class StandingOffer:
    """A deal the game holds open whenever its guards pass, without the model proposing it (a
    job's hand-in while the player holds the goods): `arguments` of `action`, an action that
    takes from the player, bound roles filled in by the encounter. See `Game.standing_offers`."""

    action: GameAction[Any, Any]
    arguments: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why an action cannot happen and how it could: the model reads the hint and adapts."""

    reason: str
    hint: str
    facts: Mapping[str, Any] = field(default_factory=dict[str, Any])
    player_line: str = ""
    """What the player is shown (the `action` frame's summary), in the game's words for the
    player; the hint is written for the model and never shown when this is set."""
    instead: CounterOffer | None = None
    """The deal the rules would accept instead, offered to the player in the refused call's
    place (see `CounterOffer`); the refusal is still audited and reported."""

    @property
    def shown(self) -> str:
        """The line for the player: `player_line`, else the hint (for games that wrote none)."""
        return self.player_line or self.hint

    def as_result(self) -> dict[str, Any]:
        """The tool result the model reads: `{ok: false, reason, hint, facts}`."""
        return {"ok": False, "reason": self.reason, "hint": self.hint, "facts": dict(self.facts)}
