"""How news and HUD changes reach every worker: in process, or over a PostgreSQL bus."""

from .base import DayBudget, Fanout, FanoutSink, LocalDayBudget, LocalFanout
from .notices import (
    HUD_CHANNEL,
    WORLD_CHANNEL,
    HudNotice,
    NoticeError,
    hud_payload,
    parse_hud,
    parse_world,
)
from .postgres import PostgresFanout
from .schema import NAMESPACE as BUS_NAMESPACE

__all__ = [
    "BUS_NAMESPACE",
    "HUD_CHANNEL",
    "WORLD_CHANNEL",
    "DayBudget",
    "Fanout",
    "FanoutSink",
    "HudNotice",
    "LocalDayBudget",
    "LocalFanout",
    "NoticeError",
    "PostgresFanout",
    "hud_payload",
    "parse_hud",
    "parse_world",
]
