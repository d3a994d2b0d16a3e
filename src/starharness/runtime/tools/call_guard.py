"""Stops one running call on its timeout or its cancel signal, for a timer and nothing more.

`asyncio.timeout` would do, but the pipeline needs two stops (a deadline and a signal) around
parts of the call only; this arms a timer just while the tool runs, and only if it has a limit.
"""

from __future__ import annotations

import asyncio


class CallGuard:
    """Cancels the task running a call; `stopped` says why (None: not this guard)."""

    __slots__ = ("_cancelling", "_loop", "_settled", "_soon", "_task", "_timer", "stopped")

    def __init__(self, loop: asyncio.AbstractEventLoop, task: asyncio.Task[object]) -> None:
        self._loop = loop
        self._task = task
        self._cancelling = task.cancelling()
        self._timer: asyncio.TimerHandle | None = None
        self._soon: asyncio.Handle | None = None
        self._settled = False
        self.stopped: str | None = None
        """"timeout" or "cancel" once this guard cancelled the task."""

    def arm(self, limit_s: float) -> None:
        """Stop the call if it is still running `limit_s` seconds from now."""
        self._timer = self._loop.call_at(self._loop.time() + limit_s, self._stop, "timeout")

    def disarm(self) -> None:
        """The part under the timeout is over."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def cancel(self) -> None:
        """The cancel signal was set: stop the call on the loop's next pass.

        Not at once, as the setter may be the call itself, finishing: once the guard is
        closed, nothing is cancelled.
        """
        if self._soon is None and self.stopped is None:
            self._soon = self._loop.call_soon(self._stop, "cancel")

    def close(self) -> None:
        """The call is over: a stop that has not happened yet never will, and one the call
        swallowed is taken back (as asyncio.timeout does)."""
        self.disarm()
        if self._soon is not None:
            self._soon.cancel()
            self._soon = None
        if self.stopped is not None and not self._settled:
            self._settled = True
            self._task.uncancel()

    def _stop(self, why: str) -> None:
        self._timer = self._soon = None
        if self.stopped is None:
            self.stopped = why
            self._task.cancel()

    def caused(self) -> bool:
        """Call on CancelledError: True (and the cancel is consumed) if this guard caused it
        and nobody else cancelled the task meanwhile."""
        if self.stopped is None or self._settled:
            return False
        self._settled = True
        return self._task.uncancel() <= self._cancelling
