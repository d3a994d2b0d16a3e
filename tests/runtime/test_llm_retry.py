"""Retries through the real mock LLM: backoff, Retry-After, the callback and the limits."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from starharness.mockllm import MockLlmServer
from starharness.runtime.llm import (
    DEEPSEEK,
    AuthError,
    Finish,
    LlmConnectionError,
    LlmRequest,
    OpenAICompatibleProvider,
    RateLimitedError,
    RetryInfo,
    RetryPolicy,
    ServerError,
    StreamChunk,
    TextDelta,
    UserMessage,
)
from starharness.runtime.llm.retry import stream_with_retry

SESSION = "retry-session"


@pytest_asyncio.fixture
async def mock() -> AsyncIterator[MockLlmServer]:
    async with MockLlmServer() as server:
        yield server


@pytest_asyncio.fixture
async def provider(mock: MockLlmServer) -> AsyncIterator[OpenAICompatibleProvider]:
    provider = OpenAICompatibleProvider(DEEPSEEK, base_url=mock.base_url, api_key="k", model="m")
    yield provider
    await provider.aclose()


REQUEST = LlmRequest(model="m", system="", messages=[UserMessage("hi")], session_id=SESSION)


class Clock:
    """Records the waits instead of sleeping them, so tests stay fast."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)


async def _run(
    provider: OpenAICompatibleProvider, policy: RetryPolicy, clock: Clock
) -> tuple[list[StreamChunk], list[RetryInfo]]:
    infos: list[RetryInfo] = []
    chunks = [
        chunk
        async for chunk in stream_with_retry(
            provider, REQUEST, policy, infos.append, sleep=clock.sleep, rng=random.Random(7)
        )
    ]
    return chunks, infos


def _text(chunks: list[StreamChunk]) -> str:
    return "".join(c.text for c in chunks if isinstance(c, TextDelta))


async def test_retries_429_honouring_retry_after_then_500_then_succeeds(
    mock: MockLlmServer, provider: OpenAICompatibleProvider
) -> None:
    mock.script(
        SESSION, [{"behaviour": "rate_limit", "retry_after_s": 3.0}, "server_error", "success"]
    )
    clock = Clock()
    policy = RetryPolicy(base_delay_s=0.01, jitter=0.0)
    chunks, infos = await _run(provider, policy, clock)
    assert _text(chunks) == "mock response"
    assert chunks[-1] == Finish("stop")
    assert [type(i.error) for i in infos] == [RateLimitedError, ServerError]
    assert [i.attempt for i in infos] == [1, 2]
    assert clock.waits == [i.delay_s for i in infos]
    assert clock.waits[0] == 3.0  # the server's wait beats the 0.01 s backoff
    assert clock.waits[1] == pytest.approx(0.02)  # backoff doubles on the second retry
    assert not any(i.after_output for i in infos)
    assert len(mock.requests) == 3


async def test_backoff_grows_with_jitter_and_is_capped(
    mock: MockLlmServer, provider: OpenAICompatibleProvider
) -> None:
    mock.script(SESSION, ["server_error"] * 4 + ["success"])
    clock = Clock()
    policy = RetryPolicy(max_attempts=5, base_delay_s=1.0, max_delay_s=3.0, jitter=0.5)
    await _run(provider, policy, clock)
    bases = [1.0, 2.0, 3.0, 3.0]
    assert len(clock.waits) == 4
    for wait, base in zip(clock.waits, bases, strict=True):
        assert base * 0.5 <= wait <= base * 1.5
    assert len(set(clock.waits)) > 1


async def test_a_cut_stream_is_retried_and_flagged_after_output(
    mock: MockLlmServer, provider: OpenAICompatibleProvider
) -> None:
    mock.script(SESSION, [{"behaviour": "stream_disconnect", "partial_text": "par"}, "success"])
    clock = Clock()
    chunks, infos = await _run(provider, RetryPolicy(base_delay_s=0.0), clock)
    assert _text(chunks) == "par" + "mock response"  # the consumer discards on after_output
    assert len(infos) == 1
    assert infos[0].after_output
    assert isinstance(infos[0].error, LlmConnectionError)


async def test_no_retry_after_output_when_the_policy_forbids_it(
    mock: MockLlmServer, provider: OpenAICompatibleProvider
) -> None:
    mock.script(SESSION, [{"behaviour": "stream_disconnect", "partial_text": "par"}, "success"])
    with pytest.raises(LlmConnectionError):
        await _run(provider, RetryPolicy(retry_after_output=False), Clock())
    assert len(mock.requests) == 1


async def test_errors_that_cannot_heal_are_raised_at_once(
    mock: MockLlmServer, provider: OpenAICompatibleProvider
) -> None:
    mock.script(SESSION, ["auth_error", "success"])
    clock = Clock()
    with pytest.raises(AuthError):
        await _run(provider, RetryPolicy(), clock)
    assert clock.waits == []
    assert len(mock.requests) == 1


async def test_gives_up_after_max_attempts_with_the_last_error(
    mock: MockLlmServer, provider: OpenAICompatibleProvider
) -> None:
    mock.script(
        SESSION, ["server_error", "server_error", {"behaviour": "server_error", "status": 503}]
    )
    clock = Clock()
    with pytest.raises(ServerError) as caught:
        await _run(provider, RetryPolicy(max_attempts=3, base_delay_s=0.0), clock)
    assert caught.value.status == 503
    assert len(clock.waits) == 2
    assert len(mock.requests) == 3


async def test_a_retry_after_beyond_the_limit_is_not_waited_for(
    mock: MockLlmServer, provider: OpenAICompatibleProvider
) -> None:
    mock.script(SESSION, [{"behaviour": "rate_limit", "retry_after_s": 600}, "success"])
    clock = Clock()
    with pytest.raises(RateLimitedError):
        await _run(provider, RetryPolicy(max_retry_after_s=60), clock)
    assert clock.waits == []


async def test_an_async_callback_is_awaited_and_real_sleep_works(
    mock: MockLlmServer, provider: OpenAICompatibleProvider
) -> None:
    mock.script(SESSION, [{"behaviour": "rate_limit", "retry_after_s": 0.01}, "success"])
    seen: list[Any] = []

    async def on_retry(info: RetryInfo) -> None:
        seen.append(info.delay_s)

    policy = RetryPolicy(base_delay_s=0.001, jitter=0.0)
    chunks = [c async for c in stream_with_retry(provider, REQUEST, policy, on_retry)]
    assert _text(chunks) == "mock response"
    assert seen == [0.01]


def test_policy_rejects_nonsense() -> None:
    with pytest.raises(ValueError, match="max_attempts"):
        RetryPolicy(max_attempts=0)
    with pytest.raises(ValueError, match="jitter"):
        RetryPolicy(jitter=2.0)
