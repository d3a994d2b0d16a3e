"""ToolsPlugin: provides `ctx.get(TOOLS)`."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..kernel import Context, Plugin
from .definition import REQUIRES_APPROVAL
from .keys import TOOLS
from .registry import UNLISTED_TOOLS, ToolRegistry, check_tool_order


class ToolsConfig(BaseModel):
    """Registry settings: default timeout, which calls need approval, parallelism."""

    model_config = ConfigDict(extra="forbid")

    default_timeout_s: float | None = Field(default=120.0, gt=0)
    """Applies to tools that set no timeout of their own; null for none."""
    ask: list[str] = [f"tag:{REQUIRES_APPROVAL}"]
    """Tool names and `tag:NAME` entries whose calls go to the approval service first."""
    max_parallel: int = Field(default=16, ge=1)
    """At most this many concurrency-safe calls of one step run at once."""
    tool_order: list[str] = [UNLISTED_TOOLS]
    """The order of the tool schemas in every request (the seed's `toolOrder`): names first,
    then `<unlisted-tools>` for all the others sorted by name, then more names. Without the
    placeholder the unlisted tools come last. Order matters to a model's attention and to the
    provider's prompt cache (a stable prefix); names not registered are skipped."""

    @field_validator("tool_order")
    @classmethod
    def _no_repeats(cls, order: list[str]) -> list[str]:
        return list(check_tool_order(order))


class ToolsPlugin(Plugin[ToolsConfig]):
    """Provides TOOLS."""

    Config = ToolsConfig
    provides = (TOOLS,)

    async def setup(self, ctx: Context, config: ToolsConfig) -> None:
        registry = ToolRegistry(
            default_timeout_s=config.default_timeout_s,
            ask=config.ask,
            max_parallel=config.max_parallel,
            tool_order=config.tool_order,
        )
        ctx.provide(TOOLS, registry)
