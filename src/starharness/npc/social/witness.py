"""Witnesses: what happens in a scene is remembered by every NPC present, each from its own
point of view; an NPC who was not there does not know it.

Who is present is the game's to say (NPCs sharing a place, or later the members of a group
encounter); the framework decides who witnesses what and how much it matters to them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from .budget import check_importance


@dataclass(frozen=True, slots=True)
class WitnessRules:
    """Which kinds of memory a scene's other NPCs see happen, and how much they weigh."""

    kinds: frozenset[str]
    """Memory kinds that happen in the open (a trade, a job handed out); others are private."""
    share: float = 0.8
    """A witness's importance as a share of the party's own: seen, not lived."""

    def __post_init__(self) -> None:
        if not 0 < self.share <= 1:
            raise ValueError(f"a witness share must be in (0, 1], got {self.share}")

    def witnessed(self, kind: str) -> bool:
        return kind in self.kinds

    def importance(self, own: int) -> int:
        """A witness's importance for what the party remembers at `own`."""
        return round(check_importance(own) * self.share)


@runtime_checkable
class Presence(Protocol):
    """Who else is in the scene where an NPC deals with a player (a game's world says)."""

    def present_with(self, npc_id: str, player_id: str) -> Sequence[str]:
        """The other NPCs who see what `npc_id` and `player_id` do now, in any order."""
        ...


def witnesses(party_id: str, present: Iterable[str]) -> tuple[str, ...]:
    """Everyone present but the party itself, once each, in a stable order."""
    return tuple(sorted({npc_id for npc_id in present if npc_id != party_id}))
