"""The real thing in-process: Omega station served with the browser client and the offline brain.

The mock LLM answers over real HTTP with the game's offline brain, the runtime runs real agent
turns, and the NPC server serves web/ and `/gh` on an ephemeral port.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fake_harness import WEB_ROOT

from stack_support import start_runtime
from starharness.mockllm import MockLlmServer
from starharness.npc import Game, RunningServer, ServerSettings, load_game, start_server
from starharness.scaffold import new_game
from starharness.voyage.game import GAME


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
async def scaffolded_game(folder: Path, name: str = "tea_stall") -> AsyncIterator[RealStack]:
    """Make a game with `new-game` under `folder` and serve it as `play --game` would.

    Its own offline brain answers over real HTTP; the browser client is the same web/ as
    Omega station's. A game package can be imported once per process, so one name, one stack.
    """
    made = new_game(name, folder)
    async with _serving(load_game(f"{made}:GAME"), folder / "world.db") as stack:
        yield stack


@asynccontextmanager
async def _serving(game: Game[Any], world: Path) -> AsyncIterator[RealStack]:
    """`game` served with the browser client, its offline brain as the model."""
    settings = ServerSettings(port=0, world=world, web_root=WEB_ROOT)
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
