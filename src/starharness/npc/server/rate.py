"""A token bucket: a sustained rate with a burst allowance."""

from __future__ import annotations

import time
from collections.abc import Callable


class TokenBucket:
    """`take()` is true while the rate allows; it refills continuously."""

    __slots__ = ("_burst", "_clock", "_rate", "_stamp", "_tokens")

    def __init__(
        self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._rate = rate
        self._burst = float(burst)
        self._tokens = float(burst)
        self._clock = clock
        self._stamp = clock()

    def reserve(self) -> float:
        """Take a token now, owing it if none is left: the seconds until the debt is repaid
        (0 when one was there). A reader that waits that long before going on is held to the
        rate, however fast its sender writes."""
        now = self._clock()
        tokens = min(self._burst, self._tokens + (now - self._stamp) * self._rate) - 1
        self._stamp = now
        self._tokens = tokens
        return 0.0 if tokens >= 0 else -tokens / self._rate

    def take(self) -> bool:
        now = self._clock()
        self._tokens = min(self._burst, self._tokens + (now - self._stamp) * self._rate)
        self._stamp = now
        if self._tokens < 1:
            return False
        self._tokens -= 1
        return True
