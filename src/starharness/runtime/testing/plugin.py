"""ScriptedLlmPlugin: a profile row that serves the agent loop from a ScriptedProvider."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from ..kernel import Context, Plugin
from ..llm import LLM, LlmService, RetryConfig
from .scripted import ScriptedProvider


class ScriptedLlmConfig(BaseModel):
    """The script as a mock script file writes it: a list of steps, one per request."""

    model_config = ConfigDict(extra="forbid")

    steps: list[dict[str, Any]] = Field(default_factory=list[dict[str, Any]])
    name: str = "scripted"
    model: str = "scripted-model"
    repeat_last: bool = False
    retry: RetryConfig = RetryConfig(base_delay_s=0.0, max_delay_s=0.0, jitter=0.0)


class ScriptedLlmPlugin(Plugin[ScriptedLlmConfig]):
    """Provides `ctx.get(LLM)` with a ScriptedProvider; `ctx.get(LLM).get()` is that provider."""

    Config: ClassVar[type[BaseModel]] = ScriptedLlmConfig
    provides = (LLM,)

    async def setup(self, ctx: Context, config: ScriptedLlmConfig) -> None:
        provider = ScriptedProvider(
            config.steps, name=config.name, model=config.model, repeat_last=config.repeat_last
        )
        service = ctx.maybe(LLM)
        if service is None:
            service = LlmService()
            ctx.provide(LLM, service)
        ctx.scope.add(service.register(provider, retry=config.retry.build()))
