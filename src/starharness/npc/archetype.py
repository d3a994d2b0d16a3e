"""Archetypes: what every NPC of one kind shares (actions, rules, turn plan), declared once."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True, slots=True)
class Archetype:
    """A kind of NPC (a merchant, a guard, ...): registered once per server, shared by its NPCs.

    An NPC belongs to the archetype its world card names (`NpcCard.archetype`); the encounter
    adds only what is the NPC's own (persona, scene, bindings) on top.
    """

    name: str
    actions: tuple[str, ...] | None = None
    """Names of the game's actions this archetype may use (None: all of them, so an action
    added to the game later reaches it too). The speaking tool is always included."""
    without: tuple[str, ...] = ()
    """Names of the game's actions this archetype does not have (taken from `actions`)."""
    sections: tuple[str, ...] = ()
    """Rules every NPC of the archetype shares, literal text, after the protocol and before
    the persona (so they stay in the prefix cached across the archetype's NPCs)."""
    protocol_text: str | None = None
    """Replaces the game's protocol for this archetype (None: the game's)."""
    turn_plan: Literal["native", "decide-act-speak"] | None = None
    """Overrides the game's turn plan for this archetype (None: the game's choice)."""
