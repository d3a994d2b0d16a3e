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
from .log_limit import LogLimiter
from .outage import OUTAGE_CODE, is_outage
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
        self._limiter = LogLimiter(_log)

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
        moving = False
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
                moving = True
                while left > 0:
                    chunk = min(step, left)
                    events.extend(await self._server.world_calls.thread(world.tick, chunk))
                    left -= chunk
                self._server.metrics.ticks.inc()
        except (psycopg.Error, StoreUnreachableError) as exc:
            # The cause names a host and a user: it goes to the log, not to the client; a line
            # per kind a while (a game server ticking into an outage must not flood it).
            if is_outage(exc) and moving:
                self._server.world_watch.failed(exc, "a tick")
            self._limiter.log(
                logging.WARNING,
                f"tick:{type(exc).__name__}",
                "a tick was refused: %s: %s: %s",
                "the world is out of reach" if moving else "the fan-out bus is out of reach",
                type(exc).__name__,
                str(exc).strip().replace("\n", " ")[:300],
            )
            what = (
                "the world could not be read"
                if moving
                else "the world clock's lock could not be had"
            )
            raise FrameError(
                OUTAGE_CODE,
                f"{what} (its database is out of reach); the world did not advance:"
                " try again shortly",
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
                self._limiter.log(
                    logging.WARNING,
                    "scheduled",
                    "the scheduled tick was refused: %s",
                    error.message,
                )
            except (psycopg.Error, StoreUnreachableError) as exc:
                self._limiter.log(
                    logging.WARNING,
                    f"scheduled:{type(exc).__name__}",
                    "the scheduled tick was refused: the fan-out bus is out of reach: %s",
                    str(exc).strip().replace("\n", " ")[:300],
                )
            except Exception:
                _log.exception("the scheduled tick failed")

    async def aclose(self) -> None:
        task, self._schedule = self._schedule, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
