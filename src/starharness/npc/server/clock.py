"""The world clock as the server drives it: bounded per call and per minute, in small steps
off the event loop, and optionally on a schedule of the server's own."""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..frames import ErrorCode, FrameError
from ..world import NewsItem
from .settings import TickSettings

if TYPE_CHECKING:
    from .hub import NpcServer

_log = logging.getLogger("starharness.npc.server")
_WINDOW_S = 60.0


class WorldClock:
    """Advances the world for a server; one advance at a time, so days never interleave."""

    def __init__(self, server: NpcServer, settings: TickSettings, max_days_per_call: int) -> None:
        self._server = server
        self._settings = settings
        self._max_call = max_days_per_call
        self._spent: deque[tuple[float, int]] = deque()
        self._lock = asyncio.Lock()
        self._schedule: asyncio.Task[None] | None = None

    def _reserve(self, days: int) -> None:
        if days > self._max_call:
            raise FrameError(ErrorCode.LIMIT, f"at most {self._max_call} days per world.tick")
        now = time.monotonic()
        while self._spent and now - self._spent[0][0] >= _WINDOW_S:
            self._spent.popleft()
        used = sum(spent for _, spent in self._spent)
        budget = self._settings.max_days_per_minute
        if used + days > budget:
            raise FrameError(
                ErrorCode.LIMIT,
                f"the world may advance at most {budget} days a minute; {budget - used} are left",
            )
        self._spent.append((now, days))

    async def advance(self, days: int) -> Sequence[NewsItem]:
        """Advance `days` in steps of `chunk_days`, each in a worker thread.

        Between steps the world is free, so other players' reads and trades wait at most one
        step, never the whole tick.
        """
        self._reserve(days)
        world = self._server.world
        step = self._settings.chunk_days
        events: list[NewsItem] = []
        async with self._lock:
            left = days
            while left > 0:
                chunk = min(step, left)
                events.extend(await asyncio.to_thread(world.tick, chunk))
                left -= chunk
        return events

    def start(self) -> None:
        if self._settings.every_s is not None and self._schedule is None:
            self._schedule = asyncio.get_running_loop().create_task(
                self._run_schedule(self._settings.every_s, self._settings.days),
                name="npc world clock",
            )

    async def _run_schedule(self, every_s: float, days: int) -> None:
        while True:
            await asyncio.sleep(every_s)
            try:
                await self._server.tick(days)
            except FrameError as error:
                _log.warning("the scheduled tick was refused: %s", error.message)
            except Exception:
                _log.exception("the scheduled tick failed")

    async def aclose(self) -> None:
        task, self._schedule = self._schedule, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
