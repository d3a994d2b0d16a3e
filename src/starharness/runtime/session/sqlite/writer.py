"""A background thread that writes queued operations in batches.

Submitting is O(1) and never touches the disk; the thread waits up to `max_delay_s` after the
first queued operation (or until `max_batch` are queued, or a flush is asked) and writes them all
in one call. `write` raises to have the batch retried, or returns an error for operations it
refused (those are dropped and reported to the flush callers). The event loop only ever waits on
futures.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import logging
import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

from ..errors import StoreClosedError, StoreWriteError

_log = logging.getLogger("starharness.runtime.session")

Op = TypeVar("Op")

_FIRST_BACKOFF_S = 0.05
_MAX_BACKOFF_S = 5.0


class BatchWriter(Generic[Op]):
    """Owns one writer thread; `aclose` (or interpreter exit) drains the queue and joins it."""

    def __init__(
        self,
        write: Callable[[list[Op]], Exception | None],
        *,
        max_delay_s: float,
        max_batch: int,
        name: str,
    ) -> None:
        if max_delay_s < 0:
            raise ValueError(f"max_delay_s must be >= 0, got {max_delay_s}")
        if max_batch < 1:
            raise ValueError(f"max_batch must be >= 1, got {max_batch}")
        self._write = write
        self._max_delay_s = max_delay_s
        self._max_batch = max_batch
        self._name = name
        # submit() takes the bare lock (C-level enter/exit); the thread waits on the condition.
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._pending: list[Op] = []
        self._submitted = 0
        self._written = 0
        self._waiters: list[tuple[int, concurrent.futures.Future[None]]] = []
        self._urgent = False
        self._stopping = False
        self._closed = False
        self._stopped = False
        self._error: BaseException | None = None
        self.batches = 0
        """Batches written successfully (one write call each)."""
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()
        # A daemon thread dies with the interpreter; drain the queue first if nobody closed us.
        atexit.register(self.close_blocking)

    @property
    def pending(self) -> int:
        """Operations submitted but not written yet."""
        with self._cond:
            return self._submitted - self._written

    def submit(self, op: Op) -> None:
        """Queue one operation (never blocks on I/O)."""
        with self._lock:
            if self._closed:
                raise StoreClosedError(f"{self._name} is closed")
            pending = self._pending
            pending.append(op)
            self._submitted += 1
            if len(pending) == 1 or len(pending) == self._max_batch:
                self._cond.notify()

    def kick(self) -> None:
        """Write what is queued without waiting out the delay (returns at once)."""
        with self._lock:
            if self._pending:
                self._urgent = True
                self._cond.notify()

    async def flush(self) -> None:
        """Wait until every operation submitted so far is written; raises StoreWriteError if the
        write failed (the operations stay queued and are retried)."""
        waiter: concurrent.futures.Future[None] = concurrent.futures.Future()
        with self._cond:
            if self._written >= self._submitted:
                return
            if self._stopped:
                raise StoreWriteError(
                    f"{self._name} has stopped with {self._submitted - self._written} write(s)"
                    f" not done: {self._error}"
                )
            self._waiters.append((self._submitted, waiter))
            self._urgent = True
            self._cond.notify()
        await asyncio.wrap_future(waiter)

    async def aclose(self) -> None:
        """Write what is queued, stop the thread and wait for it (in a worker thread)."""
        await asyncio.to_thread(self.close_blocking)

    def close_blocking(self) -> None:
        """`aclose` for synchronous callers; raises StoreWriteError if operations were lost."""
        with self._cond:
            already = self._closed
            self._closed = True
            self._stopping = True
            self._cond.notify()
        if not already:
            atexit.unregister(self.close_blocking)
        self._thread.join()
        with self._cond:
            lost = self._submitted - self._written
            error = self._error
        if lost:
            raise StoreWriteError(f"{self._name}: {lost} queued write(s) lost: {error}") from error

    def _run(self) -> None:
        try:
            self._loop()
        finally:
            # Whoever still waits would wait forever: tell them what did not get written.
            with self._cond:
                self._stopped = True
                stranded = self._waiters
                self._waiters = []
                error = StoreWriteError(
                    f"{self._name} stopped with {self._submitted - self._written} write(s) not"
                    f" done: {self._error}"
                )
            for _, waiter in stranded:
                _settle(waiter, error)

    def _loop(self) -> None:
        cond = self._cond
        failures = 0
        while True:
            with cond:
                while not self._pending and not self._stopping:
                    cond.wait()
                if not self._pending:
                    return
                deadline = time.monotonic() + self._max_delay_s
                while not (self._urgent or self._stopping or len(self._pending) >= self._max_batch):
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        break
                    cond.wait(remaining)
                batch = self._pending
                self._pending = []
                self._urgent = False
            try:
                problem = self._write(batch)
            except Exception as exc:
                failures += 1
                _log.exception("%s: writing %d operation(s) failed", self._name, len(batch))
                with cond:
                    self._pending[:0] = batch
                    self._error = exc
                    failed = self._waiters
                    self._waiters = []
                    self._urgent = False
                    stopping = self._stopping
                for _, waiter in failed:
                    _settle(waiter, StoreWriteError(f"{self._name}: write failed: {exc}"))
                if stopping:
                    return
                backoff = min(_MAX_BACKOFF_S, _FIRST_BACKOFF_S * 2 ** (failures - 1))
                with cond:
                    cond.wait_for(lambda: self._urgent or self._stopping, backoff)
                continue
            failures = 0
            with cond:
                self.batches += 1
                self._written += len(batch)
                self._error = None
                done = [w for w in self._waiters if w[0] <= self._written]
                self._waiters = [w for w in self._waiters if w[0] > self._written]
                if not self._waiters:
                    self._urgent = False
            # A batch can be written while refusing some operations: tell whoever is waiting.
            error = None if problem is None else StoreWriteError(f"{self._name}: {problem}")
            for _, waiter in done:
                _settle(waiter, error)


def _settle(waiter: concurrent.futures.Future[None], error: BaseException | None) -> None:
    # The awaiting task may have been cancelled, which cancels the future too.
    try:
        if error is None:
            waiter.set_result(None)
        else:
            waiter.set_exception(error)
    except concurrent.futures.InvalidStateError:
        pass
