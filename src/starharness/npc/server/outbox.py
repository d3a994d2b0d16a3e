"""A connection's bounded send queue: frames leave in order, at once when the socket is free.

A frame put while nothing is waiting is sent right away, inside `put` (a send to a socket that
accepts data completes without suspending), so a `say.delta` leaves in the same loop step as the
fragment it came from. Only when a send has to wait does a pump task take over, sending what
queued up meanwhile, in order. A reader that stalls fills the queue or times a send out; it is
then dropped instead of buffered without bound.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Coroutine, Generator
from typing import Any, Protocol

_log = logging.getLogger("starharness.npc.server")

Pending = str | asyncio.Future[str | None]
"""Frame text, or a frame still being computed (a HUD read in a worker thread); None skips."""


class Line(Protocol):
    """Where an outbox's frames go, and who hears when it gives up."""

    def send_text(self, text: str) -> Coroutine[Any, Any, None]:
        """Send one frame (completes without suspending while the socket accepts data)."""
        ...

    def stalled(self, reason: str) -> None:
        """The reader stalled (the queue is full or a send timed out); the outbox is closed."""
        ...

    def send_failed(self, error: BaseException) -> None:
        """A send raised `error`; the outbox is closed."""
        ...


class Outbox:
    """Queue frames without ever blocking the caller; a stall or a failed send ends the line."""

    # The line itself, not three bound methods of it: each is an object per connection.
    __slots__ = ("_closed", "_line", "_max", "_pump", "_queue", "_timeout")

    def __init__(self, line: Line, *, max_frames: int, timeout_s: float) -> None:
        self._line = line
        self._max = max_frames
        self._timeout = timeout_s
        # A list, not a deque: an idle connection's empty deque still holds a 64-slot block, and
        # the queue is short (at most max_frames), so popping its head costs nothing.
        self._queue: list[Pending] = []
        self._pump: asyncio.Task[None] | None = None
        self._closed = False

    def __len__(self) -> int:
        return len(self._queue)

    @property
    def closed(self) -> bool:
        return self._closed

    def put(self, item: Pending) -> None:
        """Send `item` now if the socket is free, else queue it (never blocks)."""
        if self._closed:
            return
        if self._pump is not None:
            if len(self._queue) >= self._max:
                self._stall(f"the client stopped reading: {self._max} frames are waiting")
                return
            self._queue.append(item)
            return
        if isinstance(item, str):
            self._send_now(item)
        else:
            self._queue.append(item)
            self._start_pump(None)

    def _send_now(self, text: str) -> None:
        sending = self._line.send_text(text)
        try:
            waiting_on = sending.send(None)
        except StopIteration:
            return
        except Exception as exc:
            self._fail(exc)
            return
        # The socket is busy: finish this send in a task, and queue what comes meanwhile.
        self._start_pump(_Resumed(sending, waiting_on))

    def _start_pump(self, started: _Resumed | None) -> None:
        self._pump = asyncio.get_running_loop().create_task(self._drain(started))

    async def _drain(self, started: _Resumed | None) -> None:
        try:
            if started is not None:
                await self._within_timeout(started)
            queue = self._queue
            while queue and not self._closed:
                item = queue.pop(0)
                text = item if isinstance(item, str) else await _resolve(item)
                if text is not None:
                    await self._within_timeout(self._line.send_text(text))
        except TimeoutError:
            self._stall(f"the client did not accept a frame within {self._timeout:g} s")
        except Exception as exc:
            self._fail(exc)
        finally:
            self._pump = None

    async def _within_timeout(self, sending: Awaitable[None]) -> None:
        async with asyncio.timeout(self._timeout):
            await sending

    def _stall(self, reason: str) -> None:
        if not self._closed:
            self._close_queue()
            self._line.stalled(reason)

    def _fail(self, exc: BaseException) -> None:
        if not self._closed:
            self._close_queue()
            self._line.send_failed(exc)

    def _close_queue(self) -> None:
        self._closed = True
        self._queue.clear()

    async def drain(self, timeout_s: float) -> None:
        """Wait (at most `timeout_s`) until what is queued has left; a stall ends it sooner."""
        pump = self._pump
        if pump is not None and pump is not asyncio.current_task():
            await asyncio.wait((pump,), timeout=timeout_s)

    async def aclose(self) -> None:
        """Queue nothing more and stop a pump that is still sending."""
        self._close_queue()
        pump = self._pump
        if pump is not None and pump is not asyncio.current_task():
            pump.cancel()
            await asyncio.gather(pump, return_exceptions=True)


class _Resumed:
    """Awaits the rest of a send coroutine that was started by hand and had to wait."""

    __slots__ = ("_coroutine", "_waiting_on")

    def __init__(self, coroutine: Coroutine[Any, Any, None], waiting_on: Any) -> None:
        self._coroutine = coroutine
        self._waiting_on = waiting_on

    def __await__(self) -> Generator[Any, Any, None]:
        coroutine = self._coroutine
        waiting_on = self._waiting_on
        while True:
            try:
                # Hand what the coroutine waits for to the task that awaits us, as a task would.
                yield waiting_on
            except BaseException as exc:
                try:
                    waiting_on = coroutine.throw(exc)
                except StopIteration:
                    return
                continue
            try:
                waiting_on = coroutine.send(None)
            except StopIteration:
                return


async def _resolve(pending: asyncio.Future[str | None]) -> str | None:
    try:
        # Shielded: the same future may be queued for several connections.
        return await asyncio.shield(pending)
    except asyncio.CancelledError:
        if pending.cancelled():
            return None
        raise
    except Exception:
        _log.exception("a frame could not be computed; it is skipped")
        return None
