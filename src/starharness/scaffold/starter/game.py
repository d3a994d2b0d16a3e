"""GAME: the one object the framework serves (`--game ./starter:GAME`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from starharness.npc import CommittedAction, Game, NpcCard, World
from starharness.runtime import star_harness_home

from .actions import ACTIONS, DEFAULT_MOOD, MOODS, SPEECH
from .brain import respond
from .hud import StarterHud
from .persona import PROTOCOL_TEXT
from .world import StarterWorld

GAME_NAME = "starter"


def default_world_path() -> Path:
    """`$STAR_HARNESS_HOME/starter/world.db` (by default under ~/.star-harness)."""
    return star_harness_home() / GAME_NAME / "world.db"


def _open(path: Path | None) -> World:
    return StarterWorld(path or default_world_path())


def _remember(world: World, npc: NpcCard, player_id: str, done: Sequence[CommittedAction]) -> None:
    if isinstance(world, StarterWorld) and done:
        world.remember(npc.id, player_id, f"They bought tea {len(done)} time(s) last visit.")


GAME = Game(
    name=GAME_NAME,
    open_world=_open,
    actions=ACTIONS,
    speech=SPEECH,
    protocol_text=PROTOCOL_TEXT,
    moods=MOODS,
    default_mood=DEFAULT_MOOD,
    attitude_range=(-10, 10),
    greets_first=True,
    offline_responder=respond,
    on_encounter_end=_remember,
    default_world_path=default_world_path,
    hud_model=StarterHud,
    world_calls_inline=True,
)
