"""The fan-out seam: how a worker's news and HUD changes reach every worker's connections."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import AsyncGenerator, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Protocol

from ...world import NewsItem

WINDOW_S = 60.0
"""The day budget is per this many seconds (a sliding minute)."""


class FanoutSink(Protocol):
    """What a fan-out delivers to: one worker's connections."""

    def deliver_news(self, events: Sequence[NewsItem]) -> None:
        """Send `world.event` frames for `events` to every connection of this worker."""
        ...

    def deliver_hud(self, player_id: str | None) -> None:
        """Re-read and push the HUD of `player_id` (None: every player) on this worker."""
        ...

    def bus_lost(self) -> None:
        """The bus's link to its database dropped (the world's may be down with it)."""
        ...


class DayBudget(Protocol):
    """The per-minute day budget, held while a tick advances the clock."""

    async def reserve(self, days: int, budget: int) -> int | None:
        """Spend `days`; None when granted, else the days left this minute (nothing spent)."""
        ...


class Fanout(Protocol):
    """One worker's view of the bus: publish news and HUD changes, hear everyone's."""

    def start(self, sink: FanoutSink) -> None:
        """Begin delivering to `sink` (a task owned by the fan-out, cancelled by `aclose`)."""
        ...

    def ticking(self) -> AbstractAsyncContextManager[DayBudget]:
        """Held while the clock advances: one advance at a time across every worker."""
        ...

    async def claim_period(self, every_s: float) -> bool:
        """Whether this worker runs the scheduled tick of the current period (one worker does)."""
        ...

    async def publish(self, events: Sequence[NewsItem]) -> None:
        """Make `events` news on every worker, this one included."""
        ...

    def hud_changed(self, player_id: str | None) -> None:
        """The HUD of `player_id` (None: every player) changed: push it wherever it is shown."""
        ...

    def not_ready(self) -> str | None:
        """Why this worker cannot deliver news now, or None when it can."""
        ...

    async def aclose(self) -> None: ...


class LocalDayBudget:
    """The day budget in this process's memory: right for a single worker."""

    def __init__(self) -> None:
        self._spent: deque[tuple[float, int]] = deque()

    async def reserve(self, days: int, budget: int) -> int | None:
        now = time.monotonic()
        while self._spent and now - self._spent[0][0] >= WINDOW_S:
            self._spent.popleft()
        used = sum(spent for _, spent in self._spent)
        if used + days > budget:
            return budget - used
        self._spent.append((now, days))
        return None


class LocalFanout:
    """One worker alone: news and HUD changes go straight to this process's connections."""

    def __init__(self) -> None:
        self._sink: FanoutSink | None = None
        self._budget = LocalDayBudget()

    def start(self, sink: FanoutSink) -> None:
        self._sink = sink

    @asynccontextmanager
    async def _ticking(self) -> AsyncGenerator[DayBudget]:
        yield self._budget

    def ticking(self) -> AbstractAsyncContextManager[DayBudget]:
        return self._ticking()

    async def claim_period(self, every_s: float) -> bool:
        return True

    async def publish(self, events: Sequence[NewsItem]) -> None:
        if self._sink is not None and events:
            self._sink.deliver_news(events)

    def hud_changed(self, player_id: str | None) -> None:
        if self._sink is not None:
            self._sink.deliver_hud(player_id)

    def not_ready(self) -> str | None:
        return None

    async def aclose(self) -> None:
        self._sink = None
