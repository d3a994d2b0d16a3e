"""`star-harness web` sheds slow and hostile sockets as the game servers do (issue 38): silent
and half-sent sockets are closed, an oversized `/rpc` upgrade is answered 431 at once, one
address over its cap gets 429, and a bystander's page and `/rpc` socket are served throughout."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
from websockets.asyncio.client import connect
from webui_support import web_stack

from session_protocol_support import mock_rows
from starharness.mockllm import MockLlmServer
from starharness.webui import RunningWeb, WebSettings

WAIT_S = 15.0
_Socket = tuple[asyncio.StreamReader, asyncio.StreamWriter]


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("STAR_HARNESS_HOME", str(home))


@asynccontextmanager
async def _sockets(port: int, count: int) -> AsyncIterator[list[_Socket]]:
    opened: list[_Socket] = []
    try:
        for _ in range(count):
            opened.append(await asyncio.open_connection("127.0.0.1", port))
        yield opened
    finally:
        for _, writer in opened:
            writer.close()


async def _answer(reader: asyncio.StreamReader) -> bytes:
    return await asyncio.wait_for(reader.read(), WAIT_S)


async def _bystander(url: str, port: int) -> None:
    """The page loads and `/rpc` answers an `initialize`."""
    async with httpx.AsyncClient(trust_env=False) as client:
        assert (await client.get(url + "/")).status_code == 200
    origin = {"Origin": f"http://127.0.0.1:{port}"}
    async with connect(
        f"ws://127.0.0.1:{port}/rpc", additional_headers=origin, proxy=None
    ) as socket:
        await socket.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize"}))
        answer = json.loads(await asyncio.wait_for(socket.recv(), WAIT_S))
        assert answer["id"] == 1


@asynccontextmanager
async def _web(tmp_path: Path, settings: WebSettings) -> AsyncIterator[tuple[str, int, RunningWeb]]:
    async with (
        MockLlmServer() as mock,
        web_stack("task", mock_rows(mock.base_url, None), tmp_path, settings=settings) as stack,
    ):
        yield stack.url, stack.web.port, stack.web


async def test_silent_and_half_sent_sockets_are_shed_while_a_bystander_is_served(
    tmp_path: Path,
) -> None:
    async with _web(tmp_path, WebSettings(port=0, header_timeout_s=2)) as (url, port, web):
        async with _sockets(port, 200) as silent, _sockets(port, 1) as [(half, writer)]:
            writer.write(b"GET /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: web")
            await _bystander(url, port)
            answers = await asyncio.gather(*(_answer(reader) for reader, _ in silent))
            assert answers == [b""] * 200
            assert (await _answer(half)).startswith(b"HTTP/1.1 408 ")
        assert web.gate.shed["header_timeout"] >= 201
        await _bystander(url, port)


async def test_an_oversized_upgrade_is_answered_431_at_once(tmp_path: Path) -> None:
    async with _web(tmp_path, WebSettings(port=0, header_timeout_s=600)) as (url, port, _):
        head = (
            f"GET /rpc HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: Upgrade\r\n"
            "Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
            f"Cookie: {'x' * 9000}\r\n\r\n"
        )
        async with _sockets(port, 1) as [(reader, writer)]:
            writer.write(head.encode())
            answer = await _answer(reader)
        assert answer.startswith(b"HTTP/1.1 431 "), answer[:200]
        await _bystander(url, port)


async def test_one_address_may_hold_only_its_cap_of_sockets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FORWARDED_ALLOW_IPS", "192.0.2.1")
    settings = WebSettings(
        port=0, connections_per_address=2, uncapped_addresses=(), header_timeout_s=600
    )
    async with _web(tmp_path, settings) as (url, port, web):
        async with _sockets(port, 2):
            async with _sockets(port, 1) as [(reader, _)]:
                answer = await _answer(reader)
            assert answer.startswith(b"HTTP/1.1 429 ") and b"at most 2" in answer
        gate = web.gate
        await asyncio.wait_for(_until(lambda: not gate.by_address), WAIT_S)
        await _bystander(url, port)


async def _until(check: Callable[[], bool]) -> None:
    while True:
        if check():
            return
        await asyncio.sleep(0.01)
