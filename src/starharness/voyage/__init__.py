"""Omega station: the sample game built on the NPC framework (world, content; actions to come)."""

from .content import PLAYER_ID, PROTOCOL_TEXT, SPEECH_ACTION
from .paths import default_world_path
from .store import (
    SchemaVersionError,
    World,
    WorldError,
    WorldReader,
    WorldTx,
    open_world,
    seed_world,
)

__all__ = [
    "PLAYER_ID",
    "PROTOCOL_TEXT",
    "SPEECH_ACTION",
    "SchemaVersionError",
    "World",
    "WorldError",
    "WorldReader",
    "WorldTx",
    "default_world_path",
    "open_world",
    "seed_world",
]
