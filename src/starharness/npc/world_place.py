"""Opening a game's world where the server settings put it: a file or a PostgreSQL database."""

from __future__ import annotations

from pathlib import Path

from ..runtime.session.postgres import PostgresTarget
from .encounter.errors import GameDefinitionError
from .game import Game
from .world import World
from .world_calls import DEFAULT_WORLD_CONNECTIONS


def open_game_world(
    game: Game,
    place: Path | PostgresTarget | None,
    *,
    connections: int = DEFAULT_WORLD_CONNECTIONS,
) -> World:
    """`game.open_world(path)`, or `game.open_server_world(target)` with at most `connections`
    connections for a database; blocks.

    Raises GameDefinitionError for a database URL given to a game that keeps its world in a
    file only.
    """
    if isinstance(place, PostgresTarget):
        if game.open_server_world is None:
            raise GameDefinitionError(
                f"the game {game.name!r} keeps its world in a file (it has no"
                f" open_server_world); it cannot open {place.describe()}: give a file path"
            )
        return game.open_server_world(place, connections=connections)
    return game.open_world(place)
