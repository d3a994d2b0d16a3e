"""Omega station's archetypes: which actions each kind of NPC has, and the rules it shares."""

from __future__ import annotations

from typing import Final

from starharness.npc import Archetype

from .actions import COMPLETE_QUEST, OFFER_QUEST, SELL_INTEL
from .content.archetypes import (
    FIXER,
    FIXER_RULES,
    OFFICIAL,
    OFFICIAL_RULES,
    TRADER,
    TRADER_RULES,
)

# Each kind leaves out what none of its people do, rather than listing what they do: an action
# a game adds later (a bar's drink, say) reaches every kind without touching this table.
ARCHETYPES: Final = (
    Archetype(FIXER, sections=(FIXER_RULES,)),
    Archetype(TRADER, without=(SELL_INTEL,), sections=(TRADER_RULES,)),
    Archetype(OFFICIAL, without=(OFFER_QUEST, COMPLETE_QUEST), sections=(OFFICIAL_RULES,)),
)
"""Every archetype the seed's NPCs have (a test checks each NPC's is declared)."""
