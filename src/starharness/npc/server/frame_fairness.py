"""A share of one pass of the event loop for handling frames, so a storm of them cannot fill it.

asyncio runs everything ready in one pass before it looks at the sockets again. When hundreds
of frames arrive at once (a storm of opens), handling them all in one pass kept everything
else waiting that long: a new model connection needs a pass or two to be usable, and at 250
opens the first pass alone took 66 ms (bench/storm.py). Yielding after every frame instead
split the batches that keep the server's writes and wake-ups few, and cost a tenth more CPU.
"""

from __future__ import annotations

import asyncio
import time

FRAME_PASS_BUDGET_S = 0.005
"""Frame handling a pass of the loop may hold before the next frame waits for the next pass."""


class _Pass:
    """One pass of the loop in which frames were handled, and when the first one began."""

    __slots__ = ("began",)

    def __init__(self, began: float) -> None:
        self.began = began


class PassBudget:
    """Tells a reader whether the frames handled in this pass of the loop have had their time."""

    __slots__ = ("_budget_s", "_pass")

    def __init__(self, budget_s: float = FRAME_PASS_BUDGET_S) -> None:
        self._budget_s = budget_s
        self._pass: _Pass | None = None

    def mark(self) -> object | None:
        """This pass, if a frame was handled in it: the same object until the next pass begins.

        A reader that marks before awaiting its next message and finds the same mark after it
        was not suspended: the message was already queued (a backlog, not a wait).
        """
        return self._pass

    def spent(self) -> bool:
        """True when this pass's budget is used up; the first call in a pass starts its clock."""
        now = time.perf_counter()
        current = self._pass
        if current is None:
            self._pass = _Pass(now)
            # Runs first in the next pass: ahead of every reader that waits for that pass.
            asyncio.get_running_loop().call_soon(self._next_pass)
            return False
        return now - current.began >= self._budget_s

    def _next_pass(self) -> None:
        self._pass = None
