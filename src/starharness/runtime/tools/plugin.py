"""ToolsPlugin: provides `ctx.get(TOOLS)`."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from ..kernel import Context, Plugin
from .definition import REQUIRES_APPROVAL
from .keys import TOOLS
from .registry import ToolRegistry


class ToolsConfig(BaseModel):
    """Registry settings: default timeout, which calls need approval, parallelism."""

    model_config = ConfigDict(extra="forbid")

    default_timeout_s: float | None = Field(default=120.0, gt=0)
    """Applies to tools that set no timeout of their own; null for none."""
    ask: list[str] = [f"tag:{REQUIRES_APPROVAL}"]
    """Tool names and `tag:NAME` entries whose calls go to the approval service first."""
    max_parallel: int = Field(default=16, ge=1)
    """At most this many concurrency-safe calls of one step run at once."""


class ToolsPlugin(Plugin[ToolsConfig]):
    """Provides TOOLS."""

    Config = ToolsConfig
    provides = (TOOLS,)

    async def setup(self, ctx: Context, config: ToolsConfig) -> None:
        registry = ToolRegistry(
            default_timeout_s=config.default_timeout_s,
            ask=config.ask,
            max_parallel=config.max_parallel,
        )
        ctx.provide(TOOLS, registry)
