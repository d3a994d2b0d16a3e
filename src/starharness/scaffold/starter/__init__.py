"""Starter: a small game made by `star-harness new-game` (one stall, one NPC, one action).

Serve it with `uv run star-harness play --game ./starter:GAME` from the folder that holds this
one.
"""

from .game import GAME, GAME_NAME

__all__ = ["GAME", "GAME_NAME"]
