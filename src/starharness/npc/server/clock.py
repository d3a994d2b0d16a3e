"""The world clock as the server drives it: a tick advances the world (bounded per call and per
minute across workers, in small steps off the event loop), then the game's residents take their
turns, and every worker's players hear the news; optionally on a schedule that one worker runs a
period."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence

import psycopg

from ...runtime.kernel import Context
from ...runtime.loop import AgentOptions
from ...runtime.session import StoreUnreachableError
from ..frames import ErrorCode, FrameError
from ..game import Game
from ..residents import ResidentDefinitionError, ResidentRunner, ResidentTurn
from ..world import NewsItem, World
from ..world_calls import WorldCalls
from .fanout import Fanout
from .log_limit import LogLimiter
from .metrics import ServerMetrics
from .outage import OUTAGE_CODE, WorldWatch, is_outage
from .settings import TickSettings

_log = logging.getLogger("starharness.npc.server")


class WorldClock:
    """Advances the world for a server; one tick at a time (residents included), so days never
    interleave and each resident acts on the world of its tick."""

    def __init__(
        self,
        world: World,
        calls: WorldCalls,
        fanout: Fanout,
        watch: WorldWatch,
        metrics: ServerMetrics,
        settings: TickSettings,
        max_days_per_call: int,
        residents: Sequence[ResidentRunner] = (),
    ) -> None:
        self._world = world
        self._calls = calls
        self._fanout = fanout
        self._watch = watch
        self._metrics = metrics
        self._settings = settings
        self._max_call = max_days_per_call
        self.residents = tuple(residents)
        """The game's residents this server runs after each tick, in the settings' order."""
        self._ticking = asyncio.Lock()
        self._schedule: asyncio.Task[None] | None = None
        self._limiter = LogLimiter(_log)

    async def tick(self, days: int) -> None:
        """Advance the world (bounded, in steps off the event loop) and broadcast the news;
        then each resident takes its turn, and players hear what it made news of.

        The tick returns once the residents' turns ended (each bounded by the turn timeout).
        """
        # One tick at a time, residents included: each resident acts on the world of its tick.
        async with self._ticking:
            await self._broadcast(await self._advance(days))
            for runner in self.residents:
                turn = await _run_resident(runner, days)
                if turn is not None and any(attempt.ok for attempt in turn.attempts):
                    await self._broadcast(turn.events)

    async def _advance(self, days: int) -> Sequence[NewsItem]:
        """Advance `days` in steps of `chunk_days`, each in a worker thread.

        Between steps the world is free, so other players' reads and trades wait at most one
        step, never the whole tick.
        """
        if days > self._max_call:
            raise FrameError(ErrorCode.LIMIT, f"at most {self._max_call} days per world.tick")
        world = self._world
        step = self._settings.chunk_days
        budget = self._settings.max_days_per_minute
        events: list[NewsItem] = []
        moving = False
        try:
            # The fan-out's tick lock makes this one advance at a time across every worker.
            async with self._fanout.ticking() as spent:
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
                    events.extend(await self._calls.thread(world.tick, chunk))
                    left -= chunk
                self._metrics.ticks.inc()
        except (psycopg.Error, StoreUnreachableError) as exc:
            # The cause names a host and a user: it goes to the log, not to the client; a line
            # per kind a while (a game server ticking into an outage must not flood it).
            if is_outage(exc) and moving:
                self._watch.failed(exc, "a tick")
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

    async def _broadcast(self, events: Sequence[NewsItem]) -> None:
        try:
            await self._fanout.publish(events)
        except (psycopg.Error, StoreUnreachableError) as exc:
            # A bus that keeps unsent news (PostgresFanout does) never raises this.
            self._limiter.log(
                logging.WARNING,
                "unpublished",
                "%d news items were not published: %s",
                len(events),
                exc,
            )
        self._fanout.hud_changed(None)

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
                if await self._fanout.claim_period(every_s):
                    await self.tick(days)
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


def resident_runners(
    ctx: Context,
    game: Game,
    names: Sequence[str],
    world: World,
    options: AgentOptions,
    calls: WorldCalls,
    ended: Callable[[str], None],
) -> tuple[ResidentRunner, ...]:
    """A runner for each resident `names` picks from the game's; ResidentDefinitionError
    naming what the game has when one is not among them."""
    runners: list[ResidentRunner] = []
    for name in names:
        resident = game.resident(name)
        if resident is None:
            offered = ", ".join(repr(r.name) for r in game.residents) or "none"
            raise ResidentDefinitionError(
                f"the game {game.name!r} has no resident {name!r} (it has: {offered})"
            )
        runners.append(ResidentRunner(ctx, resident, world, options, calls=calls, ended=ended))
    return tuple(runners)


async def _run_resident(runner: ResidentRunner, days: int) -> ResidentTurn | None:
    # A resident that fails (a model down, a bad brief) leaves the tick done and the world
    # consistent: each of its actions committed or rolled back on its own.
    try:
        return await runner.run(days)
    except Exception:
        _log.exception("resident %s: the turn after the tick failed", runner.resident.name)
        return None
