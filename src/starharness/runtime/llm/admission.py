"""One fair FIFO admission queue for model requests, in front of the HTTP connection pool.

httpx's pool (httpcore's) rescanned its whole waiting list on every assignment; with hundreds
of requests queued behind `max_connections` that rescan took nearly all the CPU and the process
livelocked.
Here requests wait in a deque, in arrival order, and at most `concurrency` (no more than the
pool holds) reach the pool at once, so the pool never has a waiting list to scan.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager

DEFAULT_CONCURRENCY = 64
MAX_CONCURRENCY = 200
"""The HTTP pool's connection limit: more admitted requests would queue inside the pool."""


class AdmissionQueue:
    """Admits waiters strictly first come, first served, `concurrency` at a time."""

    __slots__ = ("_active", "_concurrency", "_waiters")

    def __init__(self, concurrency: int = DEFAULT_CONCURRENCY) -> None:
        self._concurrency = _checked(concurrency)
        self._active = 0
        self._waiters: deque[asyncio.Future[None]] = deque()

    @property
    def concurrency(self) -> int:
        return self._concurrency

    @property
    def active(self) -> int:
        """Requests admitted and not yet finished."""
        return self._active

    @property
    def waiting(self) -> int:
        """Requests queued (a cancelled waiter is skipped when its turn comes)."""
        return sum(1 for waiter in self._waiters if not waiter.done())

    def resize(self, concurrency: int) -> None:
        """Change how many requests run at once; waiters are admitted if room appeared."""
        self._concurrency = _checked(concurrency)
        self._wake()

    async def acquire(self) -> None:
        """Wait for this request's turn; cancelling the wait gives the place up."""
        if self._active < self._concurrency and not self._waiters:
            self._active += 1
            return
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                # Admitted, then cancelled before running: hand the slot on.
                self.release()
            raise

    def release(self) -> None:
        self._active -= 1
        self._wake()

    def _wake(self) -> None:
        waiters = self._waiters
        while waiters and self._active < self._concurrency:
            waiter = waiters.popleft()
            if not waiter.done():
                self._active += 1
                waiter.set_result(None)

    @asynccontextmanager
    async def slot(self) -> AsyncGenerator[None]:
        """Hold one admission for the body of the block."""
        await self.acquire()
        try:
            yield
        finally:
            self.release()


def _checked(concurrency: int) -> int:
    if not 1 <= concurrency <= MAX_CONCURRENCY:
        raise ValueError(f"concurrency must be between 1 and {MAX_CONCURRENCY}, got {concurrency}")
    return concurrency
