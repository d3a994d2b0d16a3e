"""The NPC server as a runtime plugin, and loading a game by `module:attr`."""

from __future__ import annotations

import importlib
from typing import Any, ClassVar

from pydantic import BaseModel, Field

from ..runtime.errors import StarHarnessError
from ..runtime.kernel import Context, Plugin, ServiceKey
from ..runtime.llm import LLM
from ..runtime.loop import AGENTS
from ..runtime.prompt import PROMPT
from ..runtime.session import SESSIONS
from ..runtime.tools import TOOLS
from .game import Game
from .server import RunningServer, ServerSettings, start_server


class GameLoadError(StarHarnessError, LookupError):
    """`--game module:attr` names nothing that is a Game; the message says why."""


def load_game(spec: str) -> Game[Any]:
    """The Game named `package.module:attr`: a Game, or a function without arguments making one."""
    module_name, colon, attribute = spec.partition(":")
    if not colon or not module_name or not attribute:
        raise GameLoadError(f"a game is named 'package.module:attribute', got {spec!r}")
    try:
        found: object = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise GameLoadError(f"cannot import the game module {module_name!r}: {exc}") from None
    except Exception as exc:
        raise GameLoadError(
            f"importing the game module {module_name!r} failed: {type(exc).__name__}: {exc}"
        ) from None
    for part in attribute.split("."):
        try:
            found = getattr(found, part)
        except AttributeError:
            raise GameLoadError(f"{module_name!r} has no attribute {attribute!r}") from None
    if not isinstance(found, Game) and callable(found):
        found = found()
    if not isinstance(found, Game):
        raise GameLoadError(f"{spec!r} is a {type(found).__name__}, not a starharness.npc.Game")
    game: Game[Any] = found  # pyright: ignore[reportUnknownVariableType]
    return game


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
