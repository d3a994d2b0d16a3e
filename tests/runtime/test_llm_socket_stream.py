"""Model connections on asyncio (_fastio/http_socket.py), through httpx2 and loopback servers."""

from __future__ import annotations

import asyncio
import socket
import struct
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import httpx2
import pytest

from starharness._fastio import ReusingTransport
from starharness._fastio import http_socket as socket_stream

_Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]
_BIG = 3 * 1024 * 1024 + 17


@asynccontextmanager
async def _serving(handler: _Handler) -> AsyncIterator[str]:
    listening = await asyncio.start_server(handler, "127.0.0.1", 0)
    port = listening.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        listening.close()
        await listening.wait_closed()


def _client(url: str, timeout: httpx2.Timeout | float = 5) -> httpx2.AsyncClient:
    limits = httpx2.Limits(max_connections=2, max_keepalive_connections=2)
    transport = ReusingTransport(ssl_context=None, limits=limits)
    return httpx2.AsyncClient(base_url=url, transport=transport, timeout=timeout)


async def _request(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    length = next(
        (
            int(line.split(b":")[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        ),
        0,
    )
    return head + await reader.readexactly(length)


def _pattern(size: int) -> bytes:
    return bytes(index % 251 for index in range(size))


async def test_a_body_larger_than_the_read_queue_arrives_whole_while_read_slowly() -> None:
    body = _pattern(_BIG)

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
        await writer.drain()
        writer.close()

    async with (
        _serving(answer) as url,
        _client(url) as client,
        client.stream("POST", "/v1/chat/completions", content=b"{}") as response,
    ):
        parts: list[bytes] = []
        async for part in response.aiter_raw():
            parts.append(part)
            await asyncio.sleep(0.001)  # a slow reader: the queue fills and reading pauses
    assert b"".join(parts) == body


async def test_many_requests_with_bodies_share_one_connection() -> None:
    connections = 0

    async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        try:
            while True:
                sent = (await _request(reader)).split(b"\r\n\r\n", 1)[1]
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(sent) + sent)
                await writer.drain()
        except asyncio.IncompleteReadError:
            writer.close()

    async with _serving(echo) as url, _client(url) as client:
        for size in (0, 1, 1000, 300_000, 5):
            response = await client.post("/echo", content=_pattern(size))
            assert response.content == _pattern(size)
    assert connections == 1


async def test_a_server_that_never_answers_is_an_httpx_read_timeout() -> None:
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _request(reader)
        await reader.read()  # until the client gives up and hangs up

    async with _serving(silent) as url, _client(url, httpx2.Timeout(5, read=0.2)) as client:
        with pytest.raises(httpx2.ReadTimeout):
            await client.post("/v1/chat/completions", content=b"{}")


async def test_a_server_that_never_reads_is_an_httpx_write_timeout() -> None:
    gave_up = asyncio.Event()

    async def deaf(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await gave_up.wait()
        writer.close()

    async with _serving(deaf) as url, _client(url, httpx2.Timeout(5, write=0.2)) as client:
        with pytest.raises(httpx2.WriteTimeout):
            # Far more than the kernel's socket buffers on loopback can take unread.
            await client.post("/v1/chat/completions", content=b"x" * (64 * 1024 * 1024))
        gave_up.set()


async def test_a_connection_reset_before_the_answer_is_an_httpx_read_error() -> None:
    async def reset(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _request(reader)
        sock = writer.get_extra_info("socket")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        writer.transport.abort()  # with linger 0: an RST, not a FIN

    async with _serving(reset) as url, _client(url) as client:
        with pytest.raises(httpx2.ReadError):
            await client.post("/v1/chat/completions", content=b"{}")


async def test_a_server_that_hangs_up_before_answering_is_an_httpx_protocol_error() -> None:
    async def hang_up(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _request(reader)
        writer.close()

    async with _serving(hang_up) as url, _client(url) as client:
        with pytest.raises(httpx2.RemoteProtocolError):
            await client.post("/v1/chat/completions", content=b"{}")


async def test_an_idle_connection_the_server_wrote_to_is_not_reused() -> None:
    connections = 0
    answered = asyncio.Event()
    strayed = asyncio.Event()

    async def chatty(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        await _request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        await writer.drain()
        if connections == 1:
            await answered.wait()  # the client read the answer: the connection is idle
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nstray")  # unasked
            await writer.drain()  # on loopback it is in the client's socket by now
            strayed.set()
        await reader.read()

    async with _serving(chatty) as url, _client(url) as client:
        assert (await client.get("/one")).text == "ok"
        answered.set()
        await strayed.wait()
        for _ in range(3):  # the loop reads the stray bytes off the socket into the queue
            await asyncio.sleep(0)
        assert (await client.get("/two")).text == "ok"
    assert connections == 2


async def _peer_of_one_request(host: str, family: socket.AddressFamily) -> tuple[object, ...]:
    peers: list[tuple[object, ...]] = []

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peers.append(writer.get_extra_info("peername"))
        await _request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        await writer.drain()
        writer.close()

    bound = "::1" if family == socket.AF_INET6 else "127.0.0.1"
    listening = await asyncio.start_server(answer, bound, 0, family=family)
    port = listening.sockets[0].getsockname()[1]
    try:
        async with _client(f"http://{host}:{port}") as client:
            response = await client.post("/v1/chat/completions", content=b"{}")
            assert response.content == b"ok"
    finally:
        listening.close()
        await listening.wait_closed()
    assert len(peers) == 1
    return peers[0]


async def test_a_numeric_address_and_a_name_both_connect() -> None:
    assert (await _peer_of_one_request("127.0.0.1", socket.AF_INET))[0] == "127.0.0.1"
    assert (await _peer_of_one_request("localhost", socket.AF_INET))[0] == "127.0.0.1"


@pytest.mark.skipif(not socket.has_ipv6, reason="no IPv6 on this machine")
async def test_a_numeric_ipv6_address_connects() -> None:
    try:
        peer = await _peer_of_one_request("[::1]", socket.AF_INET6)
    except OSError as error:  # a kernel with IPv6 off cannot listen on ::1
        pytest.skip(f"cannot listen on ::1: {error}")
    assert peer[0] == "::1"


async def test_a_refused_numeric_address_is_an_httpx_connect_error_naming_it() -> None:
    with socket.socket() as probe:  # a port nobody listens on: bound, never listening
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
        async with _client(f"http://127.0.0.1:{port}") as client:
            with pytest.raises(httpx2.ConnectError, match=f"127.0.0.1:{port}.*refused"):
                await client.post("/v1/chat/completions", content=b"{}")


async def test_a_connect_still_in_progress_is_waited_for_on_the_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # As with a distant server: the socket is not writable yet when connect returns.
    monkeypatch.setattr(socket_stream, "_writable", lambda _sock: False)
    assert (await _peer_of_one_request("127.0.0.1", socket.AF_INET))[0] == "127.0.0.1"
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
        async with _client(f"http://127.0.0.1:{port}") as client:
            with pytest.raises(httpx2.ConnectError):
                await client.post("/v1/chat/completions", content=b"{}")
