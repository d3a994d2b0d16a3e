"""The world clock as the server drives it: bounded per call and per minute (across workers),
in small steps off the event loop, and optionally on a schedule that one worker runs a period."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

import psycopg

from ...runtime.session import StoreUnreachableError
from ..frames import ErrorCode, FrameError
from ..world import NewsItem
from .settings import TickSettings

if TYPE_CHECKING:
    from .hub import NpcServer

_log = logging.getLogger("starharness.npc.server")


class WorldClock:
    """Advances the world for a server; one advance at a time, so days never interleave."""

    def __init__(self, server: NpcServer, settings: TickSettings, max_days_per_call: int) -> None:
        self._server = server
        self._settings = settings
        self._max_call = max_days_per_call
        self._lock = asyncio.Lock()
        self._schedule: asyncio.Task[None] | None = None

    async def advance(self, days: int) -> Sequence[NewsItem]:
        """Advance `days` in steps of `chunk_days`, each in a worker thread.

        Between steps the world is free, so other players' reads and trades wait at most one
        step, never the whole tick.
        """
        if days > self._max_call:
            raise FrameError(ErrorCode.LIMIT, f"at most {self._max_call} days per world.tick")
        world = self._server.world
        step = self._settings.chunk_days
        budget = self._settings.max_days_per_minute
        events: list[NewsItem] = []
        try:
            # The fan-out's tick lock makes this one advance at a time across every worker.
            async with self._lock, self._server.fanout.ticking() as spent:
                left_this_minute = await spent.reserve(days, budget)
                if left_this_minute is not None:
                    raise FrameError(
                        ErrorCode.LIMIT,
                        f"the world may advance at most {budget} days a minute;"
                        f" {left_this_minute} are left",
                    )
                left = days
                while left > 0:
                    chunk = min(step, left)
                    events.extend(await self._server.world_calls.thread(world.tick, chunk))
                    left -= chunk
                self._server.metrics.ticks.inc()
        except (psycopg.Error, StoreUnreachableError) as exc:
            # The cause names a host and a user: it goes to the log, not to the client.
            _log.warning("a tick was refused: the fan-out bus is unreachable: %s", exc)
            raise FrameError(
                ErrorCode.INTERNAL,
                "the world clock's lock could not be had; the world did not advance, try again",
            ) from None
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
                # Every worker's schedule fires; the one that claims the period ticks.
                if await self._server.fanout.claim_period(every_s):
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
