"""A watchdog for waits on the network that costs almost nothing per chunk.

`asyncio.timeout` would cancel and re-arm a timer for every chunk. Here each wait only records
when it began; one timer per limit period checks whether the current wait has lasted too long,
and only then cancels the waiting task.
"""

from __future__ import annotations

import asyncio


class StallGuard:
    """Bounds each `begin()`..`end()` wait; a wait over its limit cancels the waiting task."""

    __slots__ = ("_cancelling", "_deadline", "_handle", "_loop", "_task", "_waiting", "fired")

    def __init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        if task is None:
            raise RuntimeError("StallGuard needs to run inside a task")
        self._task = task
        self._cancelling = task.cancelling()
        self._handle: asyncio.TimerHandle | None = None
        self._deadline = 0.0
        self._waiting = False
        self.fired = False
        """The guard cancelled the task: the CancelledError that follows means a timeout."""

    def begin(self, limit: float | None) -> None:
        """A wait starts now and may last `limit` seconds (None: unbounded)."""
        if limit is None:
            self._waiting = False
            return
        task = asyncio.current_task()
        if task is not self._task and task is not None:
            # The consumer moved (e.g. asyncio.wait_for runs each step in a task of its own).
            self._task = task
            self._cancelling = task.cancelling()
        deadline = self._loop.time() + limit
        self._deadline = deadline
        self._waiting = True
        handle = self._handle
        if handle is None or handle.when() > deadline:
            if handle is not None:
                handle.cancel()
            self._handle = self._loop.call_at(deadline, self._check)

    def end(self) -> None:
        self._waiting = False

    def _check(self) -> None:
        self._handle = None
        if not self._waiting:
            return
        if self._loop.time() >= self._deadline:
            self.fired = self._task.cancel()
        else:
            self._handle = self._loop.call_at(self._deadline, self._check)

    def is_timeout(self) -> bool:
        """Call on CancelledError: True (and the cancel is consumed) if the guard caused it."""
        if not self.fired:
            return False
        self.fired = False
        return self._task.uncancel() <= self._cancelling

    def close(self) -> None:
        self._waiting = False
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
