"""Stops one running call on its timeout or its cancel signal, for a timer and nothing more.

`asyncio.timeout` would do, but the pipeline needs two stops (a deadline and a signal) around
parts of the call only; this arms a timer just while the tool runs, and only if it has a limit.
"""

from __future__ import annotations

import asyncio


class CallGuard:
    """Cancels the task running a call; `stopped` says why (None: not this guard)."""

    __slots__ = ("_cancelling", "_handle", "_loop", "_task", "stopped")

    def __init__(self, loop: asyncio.AbstractEventLoop, task: asyncio.Task[object]) -> None:
        self._loop = loop
        self._task = task
        self._cancelling = task.cancelling()
        self._handle: asyncio.TimerHandle | None = None
        self.stopped: str | None = None
        """"timeout" or "cancel" once this guard cancelled the task."""

    def arm(self, limit_s: float) -> None:
        """Stop the call if it is still running `limit_s` seconds from now."""
        self._handle = self._loop.call_at(self._loop.time() + limit_s, self._stop, "timeout")

    def disarm(self) -> None:
        handle = self._handle
        if handle is not None:
            handle.cancel()
            self._handle = None

    def cancel(self) -> None:
        """The cancel signal was set: stop the call now."""
        self._stop("cancel")

    def _stop(self, why: str) -> None:
        self._handle = None
        if self.stopped is None:
            self.stopped = why
            self._task.cancel()

    def caused(self) -> bool:
        """Call on CancelledError: True (and the cancel is consumed) if this guard caused it
        and nobody else cancelled the task meanwhile."""
        if self.stopped is None:
            return False
        return self._task.uncancel() <= self._cancelling
