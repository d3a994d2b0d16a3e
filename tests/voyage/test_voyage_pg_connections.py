"""`world_connections`: how many calls a worker makes at once to a PostgreSQL world, in threads
of its own, and so how many connections it holds to it."""

from __future__ import annotations

import asyncio
import threading
from contextlib import AsyncExitStack
from pathlib import Path

import pytest
from pydantic import ValidationError
from voyage_e2e_support import Player, serving_voyage

from pg_support import pg_execute
from starharness.npc import ServerSettings, open_game_world
from starharness.runtime.session.postgres import PostgresTarget
from starharness.voyage import GAME, VoyageWorld
from starharness.voyage.content import PLAYER_ID
from world_support import WorldPlace

_PLAYERS = 24


def _connections_to(target: PostgresTarget) -> int:
    rows = pg_execute(
        target,
        "SELECT count(*) FROM pg_stat_activity "
        "WHERE datname = current_database() AND pid <> pg_backend_pid()",
    )
    count = rows[0][0]
    assert isinstance(count, int)
    return count


async def _hellos_at_once(url: str) -> None:
    async with AsyncExitStack() as exits:
        players = [await exits.enter_async_context(Player(url, PLAYER_ID)) for _ in range(_PLAYERS)]
        welcomes = await asyncio.gather(*(player.hello() for player in players))
    assert [welcome["t"] for welcome in welcomes] == ["welcome"] * _PLAYERS
    assert all(welcome["hud"]["credits"] == 12_000 for welcome in welcomes)


@pytest.mark.parametrize("connections", [2, 6])
async def test_a_worker_holds_at_most_world_connections_to_its_world(
    pg_target: PostgresTarget, tmp_path: Path, connections: int
) -> None:
    place = WorldPlace("postgresql", target=pg_target)
    async with serving_voyage(tmp_path, place=place, world_connections=connections) as stack:
        for _ in range(3):
            await _hellos_at_once(stack.running.ws_url)
        held = _connections_to(pg_target)  # the pool keeps every connection it opened
        world_threads = [t for t in threading.enumerate() if t.name.startswith("world_")]
    assert 1 <= held <= connections
    assert 1 <= len(world_threads) <= connections
    if connections > 2:
        # The load did ask for more than two calls at once: the bound above is not idle luck.
        assert held > 2
    assert not [t for t in threading.enumerate() if t.name.startswith("world_")]


def test_the_games_world_opens_at_most_the_connections_it_is_given(
    pg_target: PostgresTarget,
) -> None:
    world = open_game_world(GAME, pg_target, connections=2)
    assert isinstance(world, VoyageWorld)
    start = threading.Barrier(8)

    def reader() -> None:
        start.wait()
        for _ in range(20):
            assert world.player_view(PLAYER_ID)["credits"] == 12_000

    try:
        threads = [threading.Thread(target=reader) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert 1 <= _connections_to(pg_target) <= 2
    finally:
        world.close()


def test_world_connections_is_refused_for_a_world_file(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="world_connections is for a postgresql:// world"):
        ServerSettings(world=tmp_path / "world.db", world_connections=4)
    with pytest.raises(ValidationError, match="greater than or equal to 1"):
        ServerSettings(world="postgresql://u@h/db", world_connections=0)
    assert ServerSettings(world="postgresql://u@h/db", world_connections=32).world_connections == 32
