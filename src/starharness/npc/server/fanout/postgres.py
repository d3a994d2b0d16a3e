"""The fan-out over PostgreSQL: news rows and NOTIFY, one LISTEN connection per worker."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections import deque
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, LiteralString, TypeVar

import psycopg

from ....runtime.session import StoreUnreachableError
from ....runtime.session.postgres import PostgresTarget
from ...world import NewsItem
from ..log_limit import LogLimiter
from .base import WINDOW_S, DayBudget, FanoutSink
from .notices import HUD_CHANNEL, WORLD_CHANNEL, NoticeError, hud_payload, parse_hud, parse_world
from .schema import NAMESPACE, NEWS_LOCK, TICK_LOCK, check_or_create

_log = logging.getLogger("starharness.npc.server")

_IDLE_CHECK_S = 10.0
"""A listener that heard nothing this long reads the news anyway (and so notices a dead link)."""
_RETRY_S = (0.05, 0.2, 0.5, 1.0, 2.0)
_KEEP_NEWS_S = 600
"""News older than this is pruned: a worker away longer than that has missed it."""
_NEWS_PAGE = 500
_MAX_UNSENT = 10_000
"""News items kept for the bus while it is out of reach; beyond, the oldest are dropped."""

AsyncConn = psycopg.AsyncConnection[tuple[Any, ...]]
_Item = TypeVar("_Item")


_CLAIM: LiteralString = f"""
    UPDATE {NAMESPACE}.clock SET next_tick_at = CASE
        WHEN next_tick_at + make_interval(secs => %(every)s) > now()
        THEN next_tick_at + make_interval(secs => %(every)s)
        ELSE now() + make_interval(secs => %(every)s) END
    WHERE next_tick_at <= now() RETURNING next_tick_at
"""


async def _rollback(conn: AsyncConn) -> None:
    try:
        await conn.rollback()
    except psycopg.Error:
        await conn.close()  # the server rolled back with the lost session


class _SharedDayBudget:
    """The day budget in a table, written inside the tick lock's transaction."""

    def __init__(self, conn: AsyncConn) -> None:
        self._conn = conn

    async def reserve(self, days: int, budget: int) -> int | None:
        conn = self._conn
        await conn.execute(
            f"DELETE FROM {NAMESPACE}.spent WHERE at <= now() - make_interval(secs => %s)".encode(),
            (WINDOW_S,),
        )
        row = await (
            await conn.execute(f"SELECT coalesce(sum(days), 0) FROM {NAMESPACE}.spent".encode())
        ).fetchone()
        used = int(row[0]) if row else 0
        if used + days > budget:
            return budget - used
        await conn.execute(
            f"INSERT INTO {NAMESPACE}.spent (at, days) VALUES (now(), %s)".encode(), (days,)
        )
        return None


class _Link:
    """One lazily (re)opened connection used by one caller at a time."""

    def __init__(self, target: PostgresTarget, *, autocommit: bool) -> None:
        self._target = target
        self._autocommit = autocommit
        self._conn: AsyncConn | None = None
        self.lock = asyncio.Lock()

    async def get(self) -> AsyncConn:
        conn = self._conn
        if conn is None or conn.closed or conn.broken:
            return await self.reopen()
        return conn

    async def reopen(self) -> AsyncConn:
        """A fresh connection in place of the kept one (closed first)."""
        conn, self._conn = self._conn, None
        if conn is not None:
            await conn.close()
        self._conn = await self._target.aconnect(autocommit=self._autocommit)
        return self._conn

    async def begin(
        self, statement: LiteralString, params: tuple[object, ...] | dict[str, object]
    ) -> tuple[AsyncConn, psycopg.AsyncCursor[tuple[Any, ...]]]:
        """Run the first statement of a transaction (the link is not autocommit); when the kept
        connection turned out dead (the server restarted since its last use) nothing was done:
        run it again on a fresh one. The caller commits or rolls back."""
        assert not self._autocommit
        conn = await self.get()
        try:
            return conn, await conn.execute(statement, params)
        except psycopg.OperationalError:
            conn = await self.reopen()
            return conn, await conn.execute(statement, params)

    @property
    def conn(self) -> AsyncConn | None:
        return self._conn

    async def aclose(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            await conn.close()


class PostgresFanout:
    """Workers sharing one bus: news is read back by id, so each worker delivers it once."""

    def __init__(self, target: PostgresTarget, last_seen: int) -> None:
        self.target = target
        self._control = _Link(target, autocommit=False)
        self._announce = _Link(target, autocommit=True)
        self._sink: FanoutSink | None = None
        self._listener: asyncio.Task[None] | None = None
        self._notices: set[asyncio.Task[None]] = set()
        self._listening = False
        self._up = asyncio.Event()
        self._last_seen = last_seen
        self._reconnecting = False
        self._problem: str | None = "the fan-out's LISTEN connection is not open yet"
        # What could not be announced while the bus was out of reach, sent in order once it
        # answers (by the retrier, or the listener's reconnect): no headline or HUD is lost.
        self._unsent_news: deque[NewsItem] = deque()
        self._unsent_huds: set[str | None] = set()
        self._retrier: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self._limiter = LogLimiter(_log)
        self.backend_pid: int | None = None
        """The listener's server process id (tests end it to exercise a reconnect)."""
        self.reconnects = 0

    @classmethod
    async def open(cls, target: PostgresTarget) -> PostgresFanout:
        """Check (or create) the bus's tables, then a fan-out on them; StoreFormatError for a
        database holding something else, StoreUnreachableError when it cannot be reached."""

        def check() -> int:
            with target.connect() as conn:
                check_or_create(conn, target)
                row = conn.execute(
                    f"SELECT coalesce(max(id), 0) FROM {NAMESPACE}.news".encode()
                ).fetchone()
                # A new worker starts from now: history is not news to its players.
                return int(row[0]) if row else 0

        return cls(target, await asyncio.to_thread(check))

    @property
    def announce_backend_pid(self) -> int | None:
        """The announcing connection's server process id, while it is open (tests end it)."""
        conn = self._announce.conn
        return None if conn is None or conn.closed else conn.info.backend_pid

    # -- listening ---------------------------------------------------------------------------

    def start(self, sink: FanoutSink) -> None:
        self._sink = sink
        if self._listener is None:
            self._listener = asyncio.get_running_loop().create_task(
                self._listen(sink), name="npc fan-out listener"
            )

    async def wait_listening(self) -> None:
        """Until the LISTEN connection is up (news published from then on is heard)."""
        await self._up.wait()

    async def _listen(self, sink: FanoutSink) -> None:
        failures = 0
        while True:
            try:
                conn = await self.target.aconnect(autocommit=True)
            except StoreUnreachableError as exc:
                # /readyz answers anyone allowed by Host: the cause (host, user) is logged only.
                self._problem = "the fan-out's LISTEN connection is down (see the server log)"
                if failures == 0:
                    _log.warning("fan-out: cannot open the LISTEN connection: %s", exc)
                await asyncio.sleep(_RETRY_S[min(failures, len(_RETRY_S) - 1)])
                failures += 1
                continue
            try:
                await self._serve_notices(conn, sink)
            except psycopg.Error as exc:
                self._listening = False
                self._problem = "the fan-out's LISTEN connection dropped; reconnecting"
                _log.warning(
                    "fan-out: the LISTEN connection dropped (%s); reconnecting",
                    str(exc).strip().replace("\n", " "),
                )
                self.reconnects += 1
                failures = 0
                sink.bus_lost()
            except Exception as exc:
                # A bug in delivery must not leave the worker deaf for good: report, retry.
                self._problem = f"the fan-out's listener failed ({type(exc).__name__}); retrying"
                _log.exception("fan-out: the listener failed; reconnecting")
                self.reconnects += 1
                await asyncio.sleep(_RETRY_S[min(failures, len(_RETRY_S) - 1)])
                failures += 1
            finally:
                self._listening = False
                self._up.clear()
                await conn.close()

    async def _serve_notices(self, conn: AsyncConn, sink: FanoutSink) -> None:
        await conn.execute(f"LISTEN {WORLD_CHANNEL}".encode())
        await conn.execute(f"LISTEN {HUD_CHANNEL}".encode())
        self.backend_pid = conn.info.backend_pid
        if self._reconnecting:
            # HUD notices sent while we were away are lost; the HUD is state, so re-push it.
            sink.deliver_hud(None)
        self._reconnecting = True
        self._listening = True
        self._up.set()
        self._problem = None
        # The bus answers again: what waits to be announced goes now, not at the next retry.
        self._wake.set()
        await self._catch_up(conn, sink)
        while True:
            batch = [n async for n in conn.notifies(timeout=_IDLE_CHECK_S, stop_after=1)]
            # In order: a HUD announced after news is pushed after that news was delivered.
            for notice in batch:
                await self._hear(conn, notice.channel, notice.payload, sink)
            # A quiet spell reads too: a notice only wakes us, so a lost one delays news and
            # never loses it (and a dead link shows here).
            if not batch:
                await self._catch_up(conn, sink)

    async def _hear(self, conn: AsyncConn, channel: str, payload: str, sink: FanoutSink) -> None:
        try:
            if channel == WORLD_CHANNEL:
                if parse_world(payload) > self._last_seen:
                    await self._catch_up(conn, sink)
            elif channel == HUD_CHANNEL:
                sink.deliver_hud(parse_hud(payload).player_id)
        except NoticeError as exc:
            _log.warning("fan-out: ignored a notice on %s: %s", channel, exc)

    async def _catch_up(self, conn: AsyncConn, sink: FanoutSink) -> None:
        while True:
            cursor = await conn.execute(
                f"SELECT id, location_id, headline FROM {NAMESPACE}.news WHERE id > %s"
                f" ORDER BY id LIMIT {_NEWS_PAGE}".encode(),
                (self._last_seen,),
            )
            rows = await cursor.fetchall()
            if not rows:
                return
            self._last_seen = int(rows[-1][0])
            sink.deliver_news([NewsItem(str(r[1]), str(r[2])) for r in rows])
            if len(rows) < _NEWS_PAGE:
                return

    # -- publishing --------------------------------------------------------------------------

    async def publish(self, events: Sequence[NewsItem]) -> None:
        """Announce `events`; while the bus is out of reach they wait, in order, and go out
        once it answers (at least once: a link lost mid-commit may announce a batch twice)."""
        if not events:
            return
        self._unsent_news.extend(events)
        dropped = len(self._unsent_news) - _MAX_UNSENT
        for _ in range(max(0, dropped)):
            self._unsent_news.popleft()
        if dropped > 0:
            self._limiter.log(
                logging.WARNING,
                "news-dropped",
                "fan-out: %d unsent news items were dropped (the bus is still out of reach)",
                dropped,
            )
        await self._send_unsent()

    def hud_changed(self, player_id: str | None) -> None:
        if player_id is None:
            # Everyone's covers each player's (changed in place: a send in flight removes
            # only what it sent).
            self._unsent_huds.clear()
        if None not in self._unsent_huds:
            self._unsent_huds.add(player_id)
        task = asyncio.get_running_loop().create_task(self._send_unsent())
        self._notices.add(task)
        task.add_done_callback(self._notices.discard)

    async def _send_unsent(self) -> None:
        """Send what waits (news first: a HUD announced after news follows it); on failure it
        keeps waiting and the retrier takes over."""
        if self._retrier is not None:
            return  # the bus is out of reach: the retrier sends everything, in order
        try:
            await self._flush()
        except (psycopg.Error, StoreUnreachableError) as exc:
            # The cause names a host and a user: the log's only; one line a kind a while.
            self._limiter.log(
                logging.WARNING,
                f"unsent:{type(exc).__name__}",
                "fan-out: the bus is out of reach; %d news items and %d HUD notices wait: %s",
                len(self._unsent_news),
                len(self._unsent_huds),
                str(exc).strip().replace("\n", " ")[:300],
            )
            self._retry_later()

    async def _flush(self) -> None:
        """Announce every waiting news item, then every waiting HUD notice; raises (and keeps
        what is left) when the bus cannot be reached."""
        async with self._announce.lock:
            while self._unsent_news:
                batch = list(itertools.islice(self._unsent_news, _NEWS_PAGE))
                await self._announcing(self._insert_news, batch)
                for _ in batch:
                    self._unsent_news.popleft()
            while self._unsent_huds:
                huds = list(self._unsent_huds)
                await self._announcing(self._notify_huds, huds)
                self._unsent_huds.difference_update(huds)

    async def _announcing(
        self, work: Callable[[AsyncConn, _Item], Awaitable[None]], items: _Item
    ) -> None:
        # Once more on a fresh connection if the kept one died since its last use (a restart).
        conn = await self._announce.get()
        try:
            await work(conn, items)
        except psycopg.OperationalError:
            await work(await self._announce.reopen(), items)

    async def _insert_news(self, conn: AsyncConn, events: list[NewsItem]) -> None:
        async with conn.transaction():
            # Without it two workers' ids could commit out of order, and a reader past the
            # later one would never read the earlier.
            await conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", NEWS_LOCK)
            async with conn.cursor() as cursor:
                await cursor.executemany(
                    f"INSERT INTO {NAMESPACE}.news (location_id, headline)"
                    " VALUES (%s, %s)".encode(),
                    [(e.location_id, e.headline) for e in events],
                )
            row = await (await conn.execute("SELECT lastval()")).fetchone()
            last = int(row[0]) if row else 0
            await conn.execute("SELECT pg_notify(%s, %s)", (WORLD_CHANNEL, str(last)))
            await conn.execute(
                f"DELETE FROM {NAMESPACE}.news"
                " WHERE at < now() - make_interval(secs => %s)".encode(),
                (_KEEP_NEWS_S,),
            )

    async def _notify_huds(self, conn: AsyncConn, huds: list[str | None]) -> None:
        if len(huds) == 1:  # the common case (one action's player): one round trip
            await conn.execute("SELECT pg_notify(%s, %s)", (HUD_CHANNEL, hud_payload(huds[0])))
            return
        async with conn.transaction():
            for player_id in huds:
                await conn.execute(
                    "SELECT pg_notify(%s, %s)", (HUD_CHANNEL, hud_payload(player_id))
                )

    def _retry_later(self) -> None:
        if self._retrier is None:
            self._wake.clear()
            self._retrier = asyncio.get_running_loop().create_task(
                self._retry(), name="npc fan-out retrier"
            )

    async def _retry(self) -> None:
        tries = 0
        try:
            while self._unsent_news or self._unsent_huds:
                pause = _RETRY_S[min(tries, len(_RETRY_S) - 1)]
                # The listener's reconnect wakes us as soon as the bus answers again.
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), pause)
                self._wake.clear()
                tries += 1
                try:
                    await self._flush()
                except (psycopg.Error, StoreUnreachableError):
                    continue
                self._limiter.flush()
                _log.warning("fan-out: the bus answers again; what waited was announced")
        finally:
            self._retrier = None

    # -- the clock ---------------------------------------------------------------------------

    @asynccontextmanager
    async def _ticking(self) -> AsyncGenerator[DayBudget]:
        async with self._control.lock:
            conn, _ = await self._control.begin("SELECT pg_advisory_xact_lock(%s, %s)", TICK_LOCK)
            try:
                yield _SharedDayBudget(conn)
            except BaseException:
                await _rollback(conn)
                raise
            await conn.commit()

    def ticking(self) -> AbstractAsyncContextManager[DayBudget]:
        return self._ticking()

    async def claim_period(self, every_s: float) -> bool:
        async with self._control.lock:
            conn, cursor = await self._control.begin(_CLAIM, {"every": every_s})
            try:
                claimed = await cursor.fetchone() is not None
            except BaseException:
                await _rollback(conn)
                raise
            await conn.commit()
            return claimed

    # -- operations --------------------------------------------------------------------------

    def not_ready(self) -> str | None:
        if not self._listening:
            return self._problem
        if self._retrier is not None:
            return (
                f"the fan-out cannot announce: {len(self._unsent_news)} news items and"
                f" {len(self._unsent_huds)} HUD notices wait (see the server log)"
            )
        return None

    async def aclose(self) -> None:
        tasks = [t for t in (self._listener, self._retrier, *self._notices) if t is not None]
        self._listener = None
        self._retrier = None
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self._control.aclose()
        await self._announce.aclose()
