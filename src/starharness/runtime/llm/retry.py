"""Retrying a streamed request: exponential backoff with jitter, honouring Retry-After."""

from __future__ import annotations

import asyncio
import inspect
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from .admission import AdmissionQueue
from .errors import LlmError
from .provider import LlmProvider
from .types import LlmRequest, StreamChunk


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how patiently to retry a request that failed with a retryable error."""

    max_attempts: int = 4
    """Requests in total, the first included (1: never retry)."""
    base_delay_s: float = 0.5
    multiplier: float = 2.0
    max_delay_s: float = 20.0
    jitter: float = 0.25
    """Each delay is scaled by a random factor in [1 - jitter, 1 + jitter]."""
    max_retry_after_s: float = 120.0
    """A server asking to wait longer than this is not retried: the error is raised at once."""
    retry_after_output: bool = True
    """Retry even after chunks were streamed (the consumer must discard the partial answer)."""

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        if not 0.0 <= self.jitter <= 1.0:
            raise ValueError("jitter must be between 0 and 1")

    def backoff(self, retry: int, rng: random.Random | None = None) -> float:
        """The jittered delay before retry number `retry` (1 for the first retry)."""
        delay = min(self.base_delay_s * self.multiplier ** (retry - 1), self.max_delay_s)
        if self.jitter:
            delay *= (rng or random).uniform(1.0 - self.jitter, 1.0 + self.jitter)
        return delay


@dataclass(frozen=True, slots=True)
class RetryInfo:
    """Reported before waiting to retry: `attempt` is 1 for the first retry."""

    attempt: int
    delay_s: float
    error: LlmError
    after_output: bool
    """Chunks of the failed attempt were already streamed and must be discarded."""


OnRetry = Callable[[RetryInfo], Awaitable[None] | None]
Sleep = Callable[[float], Awaitable[None]]


def retry_delay(
    policy: RetryPolicy, retry: int, error: LlmError, rng: random.Random | None
) -> float:
    """Backoff for `retry`, but never shorter than what the server asked for."""
    delay = policy.backoff(retry, rng)
    if error.retry_after is not None:
        delay = max(delay, error.retry_after)
    return delay


async def _close(chunks: AsyncIterator[Any]) -> None:
    # Providers return async generators; closing one now (not at garbage collection)
    # releases its HTTP response at once.
    aclose = getattr(chunks, "aclose", None)
    if aclose is not None:
        await aclose()


async def stream_with_retry(
    provider: LlmProvider,
    request: LlmRequest,
    policy: RetryPolicy | None = None,
    on_retry: OnRetry | None = None,
    *,
    sleep: Sleep = asyncio.sleep,
    rng: random.Random | None = None,
    admission: AdmissionQueue | None = None,
) -> AsyncIterator[StreamChunk]:
    """`provider.stream(request)`, retried on retryable errors; the last error is raised.

    With `admission`, each attempt waits for its turn in that queue and holds its place until
    the answer ends (never while backing off).
    """
    policy = policy or RetryPolicy()
    attempt = 1
    while True:
        emitted = False
        try:
            if admission is not None:
                await admission.acquire()
            try:
                chunks = provider.stream(request)
                try:
                    async for chunk in chunks:
                        emitted = True
                        yield chunk
                finally:
                    await _close(chunks)
            finally:
                if admission is not None:
                    admission.release()
            return
        except LlmError as error:
            if (
                not error.retryable
                or attempt >= policy.max_attempts
                or (emitted and not policy.retry_after_output)
                or (error.retry_after is not None and error.retry_after > policy.max_retry_after_s)
            ):
                raise
            delay = retry_delay(policy, attempt, error, rng)
            if on_retry is not None:
                outcome = on_retry(RetryInfo(attempt, delay, error, emitted))
                if inspect.isawaitable(outcome):
                    await outcome
            await sleep(delay)
            attempt += 1
