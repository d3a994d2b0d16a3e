"""What an NPC remembers when an encounter ends, so the next visit starts where this one left."""

from __future__ import annotations

from collections.abc import Sequence

from starharness.npc import CommittedAction, NpcCard
from starharness.npc import World as GameWorld

from .content import SPEECH_ACTION
from .store import VoyageWorld, WorldTx

VISIT_MEMORY = "visit"
MAX_VISIT_TEXT = 200


def visit_summary(committed: Sequence[CommittedAction]) -> str:
    """One line for the whole visit: what committed, in order, or that nothing did."""
    done = [action.summary.strip() for action in committed if action.name != SPEECH_ACTION]
    done = [summary for summary in done if summary]
    if not done:
        return "They came by and talked; no deal was made."
    text = "They came by. " + " ".join(done)
    return text if len(text) <= MAX_VISIT_TEXT else text[: MAX_VISIT_TEXT - 1].rstrip() + "…"


def record_visit(
    world: GameWorld, npc: NpcCard, player_id: str, committed: Sequence[CommittedAction]
) -> None:
    """`on_encounter_end`: store the visit as the NPC's memory of the player."""
    if not isinstance(world, VoyageWorld):
        raise TypeError(f"Omega station needs its own VoyageWorld, got {type(world).__name__}")
    text = visit_summary(committed)

    def remember(tx: WorldTx) -> None:
        found = tx.actors((player_id, npc.id))  # both in one statement
        if player_id not in found or npc.id not in found:
            return
        tx.remember(npc.id, player_id, text, kind=VISIT_MEMORY)

    world.run_action(remember)
