"""A game's frame schema: the frames narrowed to its moods, attitude range, HUD and options."""

from __future__ import annotations

from .encounter import GameKit
from .frames import FrameProtocol, schema_text
from .game import Game


def game_protocol(game: Game) -> FrameProtocol:
    """The frame protocol the server speaks for `game` (the one its frames are checked with)."""
    return GameKit.of(game).protocol


def game_schema_text(game: Game) -> str:
    """The JSON Schema text of `game`'s frames, as `star-harness schema --game` writes it."""
    return schema_text(game_protocol(game))
