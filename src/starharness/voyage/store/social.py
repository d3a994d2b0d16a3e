"""The store's side of witnesses: who is present when an NPC deals with a player, and the
memory each witness keeps, in its own words."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from starharness.npc.social import GossipRules, WitnessRules, check_importance

from ..content.social import (
    DEFAULT_IMPORTANCE,
    GOSSIP,
    MEMORY_IMPORTANCE,
    WITNESSES,
)
from .rows import Memory


@dataclass(frozen=True, slots=True)
class SocialRules:
    """What memories weigh, who witnesses what, how word travels (the game's declarations)."""

    witnesses: WitnessRules = WITNESSES
    gossip: GossipRules = GOSSIP
    importance: Mapping[str, int] = field(default_factory=lambda: dict(MEMORY_IMPORTANCE))
    default_importance: int = DEFAULT_IMPORTANCE

    def importance_of(self, kind: str) -> int:
        return check_importance(self.importance.get(kind, self.default_importance))


def witness_text(party_name: str, memory: Memory, good_name: str | None) -> str:
    """What a witness remembers of `memory`, which the party NPC named `party_name` keeps."""
    if memory.action in ("bought", "sold") and memory.qty is not None and good_name:
        way = "buy" if memory.action == "bought" else "sell"
        side = "from" if memory.action == "bought" else "to"
        return (
            f"Saw them {way} {memory.qty:,} {good_name} {side} {party_name} "
            f"for {memory.price or 0:,}."
        )
    text = " ".join(memory.text.split())
    return f"Saw {party_name} with them: {text[:1].lower()}{text[1:]}"
