"""Refusals are values: what a guard returns when it says no."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why an action cannot happen and how it could: the model reads the hint and adapts."""

    reason: str
    hint: str
    facts: Mapping[str, Any] = field(default_factory=dict[str, Any])
    player_line: str = ""
    """What the player is shown (the `action` frame's summary), in the game's words for the
    player; the hint is written for the model and never shown when this is set."""

    @property
    def shown(self) -> str:
        """The line for the player: `player_line`, else the hint (for games that wrote none)."""
        return self.player_line or self.hint

    def as_result(self) -> dict[str, Any]:
        """The tool result the model reads: `{ok: false, reason, hint, facts}`."""
        return {"ok": False, "reason": self.reason, "hint": self.hint, "facts": dict(self.facts)}
