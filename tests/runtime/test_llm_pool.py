"""The model requests' connection pool: connections reused under load, dead ones replaced."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx2
import pytest

from starharness._fastio import ReusingTransport
from starharness.mockllm import ChatRequest, MockLlmServer, Success
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
from starharness.runtime.llm.transport import STOCK_TRANSPORTS_ENV


def _service(mock: MockLlmServer, concurrency: int) -> tuple[LlmService, OpenAICompatibleProvider]:
    provider = OpenAICompatibleProvider(
        OPENAI_COMPATIBLE, base_url=mock.base_url, model="mock-model"
    )
    service = LlmService(AdmissionQueue(concurrency))
    # One attempt: a request sent on a connection the server closed must not be hidden by a retry.
    service.register(provider, retry=RetryPolicy(max_attempts=1))
    return service, provider


async def _ask(service: LlmService, index: int) -> str:
    request = LlmRequest(
        model="", system="", messages=[UserMessage("hi")], session_id=f"s{index:04}"
    )
    text = ""
    async for chunk in service.stream(request):
        if isinstance(chunk, TextDelta):
            text += chunk.text
    return text


async def test_ten_times_the_concurrency_in_requests_reuse_the_concurrency_in_connections(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(STOCK_TRANSPORTS_ENV, raising=False)
    concurrency = 32  # above the keep-alive limit of 20 that was set before
    # Each answer waits for the whole round: every round needs `concurrency` connections at once.
    rounds = asyncio.Barrier(concurrency)

    async def respond(_: ChatRequest) -> Success:
        await rounds.wait()
        return Success(text="ok")

    async with MockLlmServer(responder=respond) as mock:
        service, provider = _service(mock, concurrency)
        try:
            async with asyncio.timeout(120):
                answers = await asyncio.gather(*(_ask(service, i) for i in range(10 * concurrency)))
        finally:
            await provider.aclose()
        assert answers == ["ok"] * (10 * concurrency)
        assert len(mock.requests) == 10 * concurrency
        assert mock.connections_accepted == concurrency


async def test_idle_connections_the_server_closed_are_replaced_without_a_failed_request() -> None:
    concurrency = 8
    async with MockLlmServer(
        responder=lambda _: Success(text="ok", initial_delay_ms=5), keep_alive_s=0.0
    ) as mock:
        service, provider = _service(mock, concurrency)
        try:
            assert (
                await asyncio.gather(*(_ask(service, i) for i in range(concurrency)))
                == ["ok"] * concurrency
            )
            first = mock.connections_accepted
            assert 1 <= first <= concurrency
            # The mock hangs up on every idle connection; it has no event to say it is done.
            while mock.connections_open:  # noqa: ASYNC110
                await asyncio.sleep(0.005)
            again = await asyncio.gather(*(_ask(service, i) for i in range(concurrency)))
            assert again == ["ok"] * concurrency
        finally:
            await provider.aclose()
        assert mock.connections_accepted > first
        assert all(record.error is None for record in mock.requests)


async def test_connections_past_their_keep_alive_are_closed_not_reused() -> None:
    limits = httpx2.Limits(max_connections=8, max_keepalive_connections=8, keepalive_expiry=0.0)
    transport = ReusingTransport(ssl_context=None, limits=limits)
    async with (
        MockLlmServer(responder=lambda _: Success(text="ok")) as mock,
        httpx2.AsyncClient(base_url=mock.base_url, transport=transport, timeout=5) as client,
    ):
        body = {"model": "mock-model", "messages": [{"role": "user", "content": "hi"}]}
        for _ in range(3):
            response = await client.post("/chat/completions", json=body)
            assert response.status_code == 200
        assert mock.connections_accepted == 3


async def test_a_request_that_gives_up_waiting_for_a_connection_leaves_the_pool_usable() -> None:
    limits = httpx2.Limits(max_connections=1, max_keepalive_connections=1)
    transport = ReusingTransport(ssl_context=None, limits=limits)
    arrived, release = asyncio.Event(), asyncio.Event()

    async def respond(_: ChatRequest) -> Success:
        arrived.set()
        await release.wait()
        return Success(text="ok")

    async with (
        MockLlmServer(responder=respond) as mock,
        httpx2.AsyncClient(base_url=mock.base_url, transport=transport, timeout=5) as client,
    ):
        body = {"model": "mock-model", "messages": [{"role": "user", "content": "hi"}]}
        holding = asyncio.create_task(client.post("/chat/completions", json=body))
        await arrived.wait()
        waiting = asyncio.create_task(client.post("/chat/completions", json=body))
        await asyncio.sleep(0.05)  # let it queue in the pool behind the only connection
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        release.set()
        assert (await holding).status_code == 200
        assert (await client.post("/chat/completions", json=body)).status_code == 200
        assert mock.connections_accepted == 1


async def test_idle_connections_beyond_the_keep_alive_limit_are_closed() -> None:
    limits = httpx2.Limits(max_connections=8, max_keepalive_connections=2)
    transport = ReusingTransport(ssl_context=None, limits=limits)
    together = asyncio.Barrier(8)

    async def respond(request: ChatRequest) -> Success:
        if request.conversation.startswith("burst"):
            await together.wait()  # the burst's eight answers need eight connections at once
        return Success(text="ok")

    async with (
        MockLlmServer(responder=respond) as mock,
        httpx2.AsyncClient(base_url=mock.base_url, transport=transport, timeout=5) as client,
    ):
        body = {"model": "mock-model", "messages": [{"role": "user", "content": "hi"}]}
        burst = {"x-star-harness-session": "burst"}
        answers = await asyncio.gather(
            *(client.post("/chat/completions", json=body, headers=burst) for _ in range(8))
        )
        assert [answer.status_code for answer in answers] == [200] * 8
        assert mock.connections_accepted == 8
        # The client closes the six beyond the limit; the mock has no event for it.
        while mock.connections_open > 2:  # noqa: ASYNC110
            await asyncio.sleep(0.005)
        assert (await client.post("/chat/completions", json=body)).status_code == 200
        assert mock.connections_accepted == 8


async def test_a_request_that_finds_every_connection_busy_gets_a_pool_timeout() -> None:
    limits = httpx2.Limits(max_connections=1, max_keepalive_connections=1)
    transport = ReusingTransport(ssl_context=None, limits=limits)
    arrived, release = asyncio.Event(), asyncio.Event()

    async def respond(_: ChatRequest) -> Success:
        arrived.set()
        await release.wait()
        return Success(text="ok")

    async with (
        MockLlmServer(responder=respond) as mock,
        httpx2.AsyncClient(base_url=mock.base_url, transport=transport, timeout=5) as client,
    ):
        body = {"model": "mock-model", "messages": [{"role": "user", "content": "hi"}]}
        holding = asyncio.create_task(client.post("/chat/completions", json=body))
        await arrived.wait()
        with pytest.raises(httpx2.PoolTimeout):
            await client.post("/chat/completions", json=body, timeout=httpx2.Timeout(5, pool=0.05))
        release.set()
        assert (await holding).status_code == 200
        assert (await client.post("/chat/completions", json=body)).status_code == 200
        assert mock.connections_accepted == 1


class _ClosesOnTheSecondRequest:
    """A raw HTTP/1.1 server whose connections answer one request with keep-alive, then hang up
    when the next one arrives: a server whose idle timeout ran out as the request went out."""

    def __init__(self) -> None:
        self.connections = 0
        self.answered = 0
        self._tasks: set[asyncio.Task[None]] = set()

    async def __aenter__(self) -> str:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    async def __aexit__(self, *_: object) -> None:
        self._server.close()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._server.wait_closed()

    def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        task = asyncio.create_task(self._serve(reader, writer))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            for served in range(2):
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    int(line.split(b":", 1)[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                await reader.readexactly(length)
                if served:
                    break  # the second request: hang up without a word
                self.answered += 1
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


async def test_a_request_on_an_idle_connection_the_server_closes_as_it_arrives_goes_again() -> None:
    limits = httpx2.Limits(max_connections=4, max_keepalive_connections=4)
    server = _ClosesOnTheSecondRequest()
    async with server as url:
        transport = ReusingTransport(ssl_context=None, limits=limits)
        async with httpx2.AsyncClient(base_url=url, transport=transport, timeout=5) as client:
            for _ in range(3):
                answer = await client.post("/chat/completions", json={"n": 1})
                assert (answer.status_code, answer.text) == (200, "ok")
    # Every request after the first went out on the idle connection, was hung up on, and went
    # again on a new one.
    assert (server.connections, server.answered) == (3, 3)


async def test_a_request_whose_body_cannot_be_sent_again_is_not_resent() -> None:
    limits = httpx2.Limits(max_connections=4, max_keepalive_connections=4)
    server = _ClosesOnTheSecondRequest()
    async with server as url:
        transport = ReusingTransport(ssl_context=None, limits=limits)
        async with httpx2.AsyncClient(base_url=url, transport=transport, timeout=5) as client:
            assert (await client.post("/chat/completions", json={"n": 1})).text == "ok"

            async def body() -> AsyncIterator[bytes]:
                yield b'{"n": 2}'

            with pytest.raises(httpx2.TransportError):
                await client.post(
                    "/chat/completions", content=body(), headers={"content-length": "8"}
                )
    assert (server.connections, server.answered) == (1, 1)
