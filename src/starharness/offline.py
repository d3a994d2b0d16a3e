"""The built-in offline brain: the mock LLM server playing a game's responder over real HTTP.

With no API key, `play` and `serve` put this plugin in the profile's `llm` row, so the real
provider client, loop and tools all run; only the model is the game's deterministic brain.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from .mockllm import SERVING_KEEP_CONVERSATIONS, MockLlmServer, Responder
from .npc import load_game
from .runtime.errors import UserFacingError
from .runtime.kernel import Context, Plugin
from .runtime.llm import LLM, OPENAI_COMPATIBLE, LlmService, OpenAICompatibleProvider

OFFLINE_MODEL = "offline-brain"


class OfflineBrainConfig(BaseModel):
    """Which game's responder plays the NPCs (`package.module:attr`)."""

    model_config = ConfigDict(extra="forbid")

    game: str = Field(min_length=3)


class NoOfflineBrainError(UserFacingError, RuntimeError):
    """The game ships no offline responder, so it cannot run without a model."""


class OfflineBrainPlugin(Plugin[OfflineBrainConfig]):
    """Starts the mock LLM on a loopback port with the game's responder; provides `ctx.get(LLM)`."""

    Config: ClassVar[type[BaseModel]] = OfflineBrainConfig
    provides = (LLM,)

    async def setup(self, ctx: Context, config: OfflineBrainConfig) -> None:
        game = load_game(config.game)
        responder: Responder | None = game.offline_responder
        if responder is None:
            raise NoOfflineBrainError(
                f"the game {game.name!r} has no offline brain: set an API key "
                "(e.g. DEEPSEEK_API_KEY) or choose a provider with --provider"
            )
        mock = offline_mock(responder)
        await mock.start()
        ctx.scope.add(mock.close)
        provider = OpenAICompatibleProvider(
            OPENAI_COMPATIBLE, base_url=mock.base_url, model=OFFLINE_MODEL, name="offline"
        )
        ctx.scope.add(provider.aclose)
        service = ctx.maybe(LLM)
        if service is None:
            service = LlmService()
            ctx.provide(LLM, service)
        ctx.scope.add(service.register(provider, default=True))


def offline_mock(responder: Responder) -> MockLlmServer:
    """The mock that plays `responder`, bounded for a server that runs for days."""
    # Nothing reads its records, and a conversation per encounter must not pile up.
    return MockLlmServer(
        responder=responder,
        models=(OFFLINE_MODEL,),
        keep_requests=0,
        keep_conversations=SERVING_KEEP_CONVERSATIONS,
    )
