"""PromptPlugin: provides `ctx.get(PROMPT)` with the harness identity and an optional persona."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from ..kernel import Context, Plugin
from .keys import PROMPT
from .service import PromptService

IDENTITY_ORDER = -100
PERSONA_ORDER = 0
TOOL_GUIDANCE_ORDER = 100
"""Tool guidance sections use 100 and up."""


class PromptConfig(BaseModel):
    """The global sections: harness identity (order -100) and persona (order 0, if not empty)."""

    model_config = ConfigDict(extra="forbid")

    include_harness_identity: bool = True
    identity: str = "You are an AI agent powered by star-harness."
    persona: str = ""


class PromptPlugin(Plugin[PromptConfig]):
    """Provides PROMPT."""

    Config = PromptConfig
    provides = (PROMPT,)

    async def setup(self, ctx: Context, config: PromptConfig) -> None:
        ctx.provide(PROMPT, PromptService())
        prompt = ctx.get(PROMPT)
        if config.include_harness_identity and config.identity:
            prompt.section("harness.identity", IDENTITY_ORDER, config.identity)
        if config.persona:
            prompt.section("persona", PERSONA_ORDER, config.persona)
