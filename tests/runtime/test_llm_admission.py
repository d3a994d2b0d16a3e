"""The admission queue: strictly FIFO, never more than its concurrency in flight, over real HTTP."""

from __future__ import annotations

import asyncio

import pytest

from starharness.mockllm import ChatRequest, MockLlmServer, Step, Success
from starharness.runtime.llm import (
    OPENAI_COMPATIBLE,
    AdmissionQueue,
    LlmRequest,
    LlmService,
    OpenAICompatibleProvider,
    RetryPolicy,
    TextDelta,
    UserMessage,
)


async def test_requests_reach_the_model_in_arrival_order_a_few_at_a_time() -> None:
    arrived: list[str] = []

    def respond(request: ChatRequest) -> Step:
        arrived.append(request.headers["x-star-harness-session"])
        return Success(text="ok", initial_delay_ms=20)

    async with MockLlmServer(responder=respond) as mock:
        provider = OpenAICompatibleProvider(
            OPENAI_COMPATIBLE, base_url=mock.base_url, model="mock-model"
        )
        service = LlmService(AdmissionQueue(3))
        service.register(provider, retry=RetryPolicy(max_attempts=1))
        peak = 0

        async def one(index: int) -> str:
            nonlocal peak
            request = LlmRequest(
                model="", system="", messages=[UserMessage("hi")], session_id=f"s{index:03}"
            )
            text = ""
            async for chunk in service.stream(request):
                peak = max(peak, service.admission.active)
                if isinstance(chunk, TextDelta):
                    text += chunk.text
            return text

        try:
            # The first request builds the HTTP client (in a thread); later ones reuse it.
            assert await one(-1) == "ok"
            arrived.clear()
            answers = await asyncio.gather(*(one(i) for i in range(40)))
        finally:
            await provider.aclose()
    assert answers == ["ok"] * 40
    # FIFO: request j starts only once every earlier one has; only the (at most 3) requests in
    # flight together may reach the server in another order.
    position = {session: index for index, session in enumerate(arrived)}
    assert sorted(position) == [f"s{i:03}" for i in range(40)]
    for j in range(40):
        for i in range(j - 2):
            assert position[f"s{i:03}"] < position[f"s{j:03}"], (i, j, arrived)
    assert peak == 3
    assert service.admission.active == 0 and service.admission.waiting == 0


async def test_a_cancelled_waiter_gives_its_place_up() -> None:
    queue = AdmissionQueue(1)
    await queue.acquire()
    order: list[str] = []

    async def wait(name: str) -> None:
        async with queue.slot():
            order.append(name)

    first = asyncio.create_task(wait("first"))
    second = asyncio.create_task(wait("second"))
    third = asyncio.create_task(wait("third"))
    await asyncio.sleep(0)
    assert queue.waiting == 3
    second.cancel()
    await asyncio.gather(second, return_exceptions=True)
    queue.release()
    await asyncio.gather(first, third)
    assert order == ["first", "third"]
    assert queue.active == 0


async def test_waiters_are_admitted_strictly_in_arrival_order() -> None:
    queue = AdmissionQueue(2)
    admitted: list[int] = []
    gate = asyncio.Event()

    async def one(index: int) -> None:
        async with queue.slot():
            admitted.append(index)
            await gate.wait()
            gate.clear()

    tasks = [asyncio.create_task(one(i)) for i in range(30)]
    while len(admitted) < 30:
        await asyncio.sleep(0)
        gate.set()
    await asyncio.gather(*tasks)
    assert admitted == list(range(30))


def test_the_concurrency_stays_within_the_pool() -> None:
    with pytest.raises(ValueError, match="between 1 and 200"):
        AdmissionQueue(201)
