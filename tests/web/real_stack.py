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
from starharness.npc import RunningServer, ServerSettings, start_server
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
    settings = ServerSettings(port=0, world=tmp_path / "world.db", web_root=WEB_ROOT)
    async with MockLlmServer(responder=GAME.offline_responder) as mock:
        ctx = await start_runtime(mock.base_url)
        try:
            running = await start_server(ctx, GAME, settings)
            try:
                yield RealStack(running)
            finally:
                await running.stop()
        finally:
            await ctx.dispose()
