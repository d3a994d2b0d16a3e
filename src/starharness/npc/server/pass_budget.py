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


class PassBudget:
    """Tells a reader whether the frames handled in this pass of the loop have had their time."""

    __slots__ = ("_began", "_budget_s")

    def __init__(self, budget_s: float = FRAME_PASS_BUDGET_S) -> None:
        self._budget_s = budget_s
        self._began: float | None = None

    def spent(self) -> bool:
        """True when this pass's budget is used up; the first call in a pass starts its clock."""
        now = time.perf_counter()
        began = self._began
        if began is None:
            self._began = now
            # Runs first in the next pass: ahead of every reader that waits for that pass.
            asyncio.get_running_loop().call_soon(self._next_pass)
            return False
        return now - began >= self._budget_s

    def _next_pass(self) -> None:
        self._began = None
