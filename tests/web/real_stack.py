"""The real thing in-process: Omega station served with the browser client and the offline brain.

The mock LLM answers over real HTTP with the game's offline brain, the runtime runs real agent
turns, and the NPC server serves web/ and `/gh` on an ephemeral port.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fake_harness import WEB_ROOT

from stack_support import start_runtime
from starharness.mockllm import MockLlmServer
from starharness.npc import Game, RunningServer, ServerSettings, load_game, start_server
from starharness.npc.server.settings import IdentitySettings
from starharness.scaffold import new_game
from starharness.voyage import open_world
from starharness.voyage.content import OMEGA, OMEGA_STATION, ActorSeed
from starharness.voyage.game import GAME

SECOND_CAPTAIN = "player-birch"
"""Omega station's second player in `omega_station_for_two`: Captain Birch, at the station."""


@dataclass
class RealStack:
    running: RunningServer

    @property
    def url(self) -> str:
        return self.running.url + "/"

    @property
    def world(self) -> Any:
        return self.running.server.world


@asynccontextmanager
async def omega_station(tmp_path: Path) -> AsyncIterator[RealStack]:
    """Serve a fresh Omega station world under `tmp_path` with the browser client."""
    async with _serving(GAME, tmp_path / "world.db") as stack:
        yield stack


@asynccontextmanager
async def omega_station_for_two(tmp_path: Path, secret_env: str) -> AsyncIterator[RealStack]:
    """Omega station with a second captain at the station, served with player tokens signed
    with the secret in the variable `secret_env` (each page carries its own in `?token=`)."""
    world = tmp_path / "world.db"
    birch = ActorSeed(SECOND_CAPTAIN, "Captain Birch", "player", "captain", OMEGA, 50_000)
    seed = dataclasses.replace(OMEGA_STATION, actors=(*OMEGA_STATION.actors, birch))
    open_world(world, seed=seed).close()
    async with _serving(GAME, world, IdentitySettings(secret_env=secret_env)) as stack:
        yield stack


@asynccontextmanager
async def scaffolded_game(folder: Path, name: str = "tea_stall") -> AsyncIterator[RealStack]:
    """Make a game with `new-game` under `folder` and serve it as `play --game` would.

    Its own offline brain answers over real HTTP; the browser client is the same web/ as
    Omega station's. A game package can be imported once per process, so one name, one stack.
    """
    made = new_game(name, folder)
    async with _serving(load_game(f"{made}:GAME"), folder / "world.db") as stack:
        yield stack


@asynccontextmanager
async def _serving(
    game: Game[Any], world: Path, identity: IdentitySettings | None = None
) -> AsyncIterator[RealStack]:
    """`game` served with the browser client, its offline brain as the model."""
    settings = ServerSettings(port=0, world=world, web_root=WEB_ROOT)
    if identity is not None:
        settings = settings.model_copy(update={"identity": identity})
    async with MockLlmServer(responder=game.offline_responder) as mock:
        ctx = await start_runtime(mock.base_url)
        try:
            running = await start_server(ctx, game, settings)
            try:
                yield RealStack(running)
            finally:
                await running.stop()
        finally:
            await ctx.dispose()
