"""The NPC server as a runtime plugin, and loading a game by `module:attr`."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, Field

from ..runtime.kernel import Context, Plugin, ServiceKey
from ..runtime.llm import LLM
from ..runtime.loop import AGENTS
from ..runtime.prompt import PROMPT
from ..runtime.session import SESSIONS
from ..runtime.tools import TOOLS
from .game_loading import load_game
from .server import RunningServer, ServerSettings, start_server

NPC_SERVER: ServiceKey[RunningServer] = ServiceKey(
    "npc.server", "the NpcServerPlugin row serves a game"
)


class NpcServerConfig(ServerSettings):
    """Which game to serve (`package.module:attr`) and how (see ServerSettings)."""

    game: str = Field(min_length=3)


class NpcServerPlugin(Plugin[NpcServerConfig]):
    """Loads the game, opens its world and serves it until the plugin is disposed."""

    Config: ClassVar[type[BaseModel]] = NpcServerConfig
    inject = (SESSIONS, LLM, TOOLS, PROMPT, AGENTS)
    provides = (NPC_SERVER,)

    async def setup(self, ctx: Context, config: NpcServerConfig) -> None:
        game = load_game(config.game)
        running = await start_server(ctx, game, config)
        ctx.scope.add(running.stop)
        ctx.provide(NPC_SERVER, running)
