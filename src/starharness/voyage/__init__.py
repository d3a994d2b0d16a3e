"""Omega station: the sample game built on the NPC framework (world, content, actions, brain)."""

from .archetypes import ARCHETYPES
from .content import PLAYER_ID, PROTOCOL_TEXT, SPEECH_ACTION
from .game import GAME, GAME_NAME, open_game_server_world, open_game_world
from .hud import VoyageHud
from .memory_hooks import record_visit, visit_summary
from .paths import default_world_path
from .store import (
    SchemaVersionError,
    VoyageWorld,
    WorldBusyError,
    WorldError,
    WorldReader,
    WorldTx,
    open_server_world,
    open_world,
    seed_server_world,
    seed_world,
)

__all__ = [
    "ARCHETYPES",
    "GAME",
    "GAME_NAME",
    "PLAYER_ID",
    "PROTOCOL_TEXT",
    "SPEECH_ACTION",
    "SchemaVersionError",
    "VoyageHud",
    "VoyageWorld",
    "WorldBusyError",
    "WorldError",
    "WorldReader",
    "WorldTx",
    "default_world_path",
    "open_game_server_world",
    "open_game_world",
    "open_server_world",
    "open_world",
    "record_visit",
    "seed_server_world",
    "seed_world",
    "visit_summary",
]
