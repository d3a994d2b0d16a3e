"""TimeContextPlugin: the current date (and time, at a chosen resolution) as dynamic context;
logged each time its text changes, so a coarse resolution keeps the prefix cache warm."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict

from ..kernel import Context, Plugin
from ..prompt import PROMPT

CONTEXT_NAME = "context.time"
_FORMATS = {"day": "%Y-%m-%d (%A)", "hour": "%Y-%m-%d %H:00", "minute": "%Y-%m-%d %H:%M"}


class TimeContextConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    resolution: Literal["day", "hour", "minute"] = "day"
    timezone: Literal["utc", "local"] = "utc"
    order: float = 10


def time_text(now: datetime, config: TimeContextConfig) -> str:
    zone = "UTC" if config.timezone == "utc" else (now.tzname() or "local time")
    return f"Current date: {now.strftime(_FORMATS[config.resolution])} {zone}"


class TimeContextPlugin(Plugin[TimeContextConfig]):
    needs_agent_loop = True
    Config = TimeContextConfig
    inject = (PROMPT,)
    clock: Callable[[], datetime] | None = None
    """Tests set a fixed clock."""

    async def setup(self, ctx: Context, config: TimeContextConfig) -> None:
        clock = self.clock

        def now() -> datetime:
            if clock is not None:
                return clock()
            current = datetime.now(UTC)
            return current if config.timezone == "utc" else current.astimezone()

        ctx.get(PROMPT).context(CONTEXT_NAME, config.order, lambda _ctx: time_text(now(), config))
