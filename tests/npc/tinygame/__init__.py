"""A tiny test game for the NPC framework: two bakers' customers, two NPCs, two places."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from starharness.npc import CommittedAction, Game, NpcCard, World

from .actions import BAKE, MOODS, SELL, SPEECH, TALK
from .brain import respond
from .world import TinyWorld, open_world

PROTOCOL = (
    "You are a character in a small town. The customer hears you only through the talk tool. "
    "Deals happen only through actions. After ok: false, read the hint."
)


def _remember(world: World, npc: NpcCard, player_id: str, done: Sequence[CommittedAction]) -> None:
    if isinstance(world, TinyWorld):
        world.remember(npc.id, player_id, f"We met; {len(done)} deal(s).")


def _open(path: Path | None) -> World:
    return open_world(path)


GAME = Game(
    name="tinygame",
    open_world=_open,
    actions=(SELL, BAKE, TALK),
    speech=SPEECH,
    protocol_text=PROTOCOL,
    moods=MOODS,
    default_mood="calm",
    attitude_range=(-10, 10),
    offline_responder=respond,
    on_encounter_end=_remember,
)

GREETING_GAME = Game(
    name="tinygame-greeting",
    open_world=_open,
    actions=(SELL, BAKE, TALK),
    speech=SPEECH,
    protocol_text=PROTOCOL,
    moods=MOODS,
    default_mood="calm",
    attitude_range=(-10, 10),
    greets_first=True,
    offline_responder=respond,
    on_encounter_end=_remember,
)


def make_game() -> Game:
    """The game built by a function, as `--game tinygame:make_game` would load it."""
    return GAME


__all__ = ["GAME", "GREETING_GAME", "MOODS", "SPEECH", "TinyWorld", "make_game", "open_world"]
