"""The model requests' transport: one write per request, dead idle connections, httpx2 errors."""

from __future__ import annotations

import asyncio
import shutil
import socket
import ssl
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpcore2
import httpx2
import pytest
from hypothesis import given
from hypothesis import strategies as st

from starharness._fastio import ReusingTransport
from starharness._fastio.http import OneWriteStream

_LIMITS = httpx2.Limits(max_connections=4, max_keepalive_connections=2)


class _Recording(httpcore2.AsyncNetworkStream):
    """An inner stream that keeps what reaches it and answers every read with `reply`."""

    def __init__(self, reply: bytes = b"HTTP/1.1 200 OK\r\n") -> None:
        self.writes: list[bytes] = []
        self.reads = 0
        self.closed = False
        self._reply = reply

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:  # noqa: ASYNC109
        self.writes.append(buffer)

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:  # noqa: ASYNC109
        self.reads += 1
        return self._reply

    async def aclose(self) -> None:
        self.closed = True

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,  # noqa: ASYNC109
    ) -> httpcore2.AsyncNetworkStream:
        return self

    def get_extra_info(self, info: str) -> Any:
        return None


@given(st.lists(st.binary(max_size=300_000), max_size=6))
def test_writes_reach_the_socket_whole_and_in_order_once_the_answer_is_read(
    parts: list[bytes],
) -> None:
    async def scenario() -> None:
        inner = _Recording()
        stream = OneWriteStream(inner)
        for part in parts:
            await stream.write(part)
        total = b"".join(parts)
        if len(total) < 256 * 1024:
            assert inner.writes == []  # held until the request is complete
        assert await stream.read(100) == b"HTTP/1.1 200 OK\r\n"
        assert b"".join(inner.writes) == total
        assert len(inner.writes) <= 1 + len(total) // (256 * 1024)
        assert all(inner.writes)

    asyncio.run(scenario())


async def test_a_closed_stream_drops_what_it_held_and_tls_starts_after_a_flush() -> None:
    inner = _Recording()
    stream = OneWriteStream(inner)
    await stream.write(b"CONNECT example.org:443 HTTP/1.1\r\n\r\n")
    wrapped = await stream.start_tls(ssl.create_default_context(), "example.org")
    assert inner.writes == [b"CONNECT example.org:443 HTTP/1.1\r\n\r\n"]
    await wrapped.write(b"GET / HTTP/1.1\r\n\r\n")
    await wrapped.aclose()
    assert inner.closed
    assert len(inner.writes) == 1


# -- against a real server on loopback ---------------------------------------------------------


class _Server:
    """A tiny HTTP/1.1 server: answers each request with `ok`, then maybe hangs up."""

    def __init__(
        self, *, hang_up_after_answer: bool = False, cut_body: bool = False, cookie: bytes = b""
    ) -> None:
        self._cookie = cookie
        """Set on the first answer only."""
        self.connections = 0
        self.requests: list[bytes] = []
        self.hung_up = asyncio.Event()
        self.may_hang_up = asyncio.Event()
        self._hang_up = hang_up_after_answer
        self._cut_body = cut_body

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    (
                        int(line.split(b":")[1])
                        for line in head.split(b"\r\n")
                        if line.lower().startswith(b"content-length:")
                    ),
                    0,
                )
                self.requests.append(head + await reader.readexactly(length))
                if self._cut_body:
                    writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial")
                    await writer.drain()
                    return
                first = len(self.requests) == 1
                cookie = b"Set-Cookie: " + self._cookie + b"\r\n" if first and self._cookie else b""
                writer.write(b"HTTP/1.1 200 OK\r\n" + cookie + b"Content-Length: 2\r\n\r\nok")
                await writer.drain()
                if self._hang_up:
                    await self.may_hang_up.wait()
                    return
        except (asyncio.IncompleteReadError, ConnectionError):
            return
        finally:
            writer.close()
            await writer.wait_closed()
            self.hung_up.set()


@asynccontextmanager
async def _serving(server: _Server, tls: ssl.SSLContext | None = None) -> AsyncIterator[str]:
    listening = await asyncio.start_server(server.handle, "127.0.0.1", 0, ssl=tls)
    port = listening.sockets[0].getsockname()[1]
    try:
        yield f"{'https' if tls else 'http'}://127.0.0.1:{port}"
    finally:
        listening.close()
        await listening.wait_closed()


def _client(base_url: str) -> httpx2.AsyncClient:
    transport = ReusingTransport(ssl_context=None, limits=_LIMITS)
    return httpx2.AsyncClient(base_url=base_url, transport=transport, timeout=5)


async def test_requests_and_bodies_arrive_whole_over_a_reused_connection() -> None:
    server = _Server()
    async with _serving(server) as url, _client(url) as client:
        for n in range(3):
            response = await client.post("/v1/chat/completions", content=b'{"n": %d}' % n)
            assert (response.status_code, response.text) == (200, "ok")
    assert server.connections == 1
    assert [request.rsplit(b"\r\n\r\n", 1)[1] for request in server.requests] == [
        b'{"n": 0}',
        b'{"n": 1}',
        b'{"n": 2}',
    ]


async def test_an_idle_connection_the_server_closed_is_not_reused() -> None:
    server = _Server(hang_up_after_answer=True)
    async with _serving(server) as url, _client(url) as client:
        assert (await client.get("/one")).text == "ok"
        server.may_hang_up.set()  # after the answer was read and the connection went idle
        await server.hung_up.wait()  # on loopback its FIN is in our socket by now
        assert (await client.get("/two")).text == "ok"
    assert server.connections == 2


async def test_a_cookie_the_server_sets_is_kept_and_sent_back() -> None:
    server = _Server(cookie=b"lb=node-7; Path=/")
    transport = ReusingTransport(ssl_context=None, limits=_LIMITS)
    async with (
        _serving(server) as url,
        httpx2.AsyncClient(base_url=url, transport=transport, timeout=5) as client,
    ):
        assert (await client.get("/one")).text == "ok"
        assert client.cookies.get("lb") == "node-7"
        assert (await client.get("/two")).text == "ok"  # sets none: the kept one stays
        assert (await client.get("/three")).text == "ok"
        assert dict(client.cookies) == {"lb": "node-7"}
        client.cookies = {"mine": "1"}
        assert (await client.get("/four")).text == "ok"
    heads = [request.split(b"\r\n\r\n")[0].lower() for request in server.requests]
    assert b"cookie:" not in heads[0]
    assert b"\r\ncookie: lb=node-7" in heads[1]
    assert b"\r\ncookie: lb=node-7" in heads[2]
    assert b"\r\ncookie: mine=1" in heads[3]


async def test_a_refused_connection_is_an_httpx_connect_error() -> None:
    with socket.socket() as spare:
        spare.bind(("127.0.0.1", 0))
        port = spare.getsockname()[1]
    async with _client(f"http://127.0.0.1:{port}") as client:
        with pytest.raises(httpx2.ConnectError):
            await client.get("/")


async def test_a_body_cut_short_is_an_httpx_protocol_error_while_streaming() -> None:
    server = _Server(cut_body=True)
    async with (
        _serving(server) as url,
        _client(url) as client,
        client.stream("POST", "/v1/chat/completions", content=b"{}") as response,
    ):
        assert response.status_code == 200
        with pytest.raises(httpx2.RemoteProtocolError):
            async for _ in response.aiter_bytes():
                pass


def _self_signed(folder: Path) -> tuple[Path, Path]:
    if shutil.which("openssl") is None:
        pytest.skip("no openssl command to make a test certificate with")
    cert, key = folder / "cert.pem", folder / "key.pem"
    command = [
        *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
        *("-keyout", str(key), "-out", str(cert), "-subj", "/CN=localhost"),
        *("-addext", "subjectAltName=IP:127.0.0.1"),
    ]
    subprocess.run(
        command,
        check=True,
        capture_output=True,
    )
    return cert, key


async def test_requests_over_tls_share_one_verified_connection(tmp_path: Path) -> None:
    cert, key = await asyncio.to_thread(_self_signed, tmp_path)
    served = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    served.load_cert_chain(cert, key)
    server = _Server()
    trusted = ssl.create_default_context(cafile=str(cert))
    transport = ReusingTransport(ssl_context=trusted, limits=_LIMITS)
    async with (
        _serving(server, tls=served) as url,
        httpx2.AsyncClient(base_url=url, transport=transport, timeout=5) as client,
    ):
        for n in range(2):
            response = await client.post("/v1/chat/completions", content=b'{"n": %d}' % n)
            assert (response.status_code, response.text) == (200, "ok")
    assert server.connections == 1
    assert server.requests[-1].endswith(b'\r\n\r\n{"n": 1}')


async def test_a_server_certificate_we_do_not_trust_is_refused(tmp_path: Path) -> None:
    cert, key = await asyncio.to_thread(_self_signed, tmp_path)
    served = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    served.load_cert_chain(cert, key)
    transport = ReusingTransport(ssl_context=ssl.create_default_context(), limits=_LIMITS)
    async with (
        _serving(_Server(), tls=served) as url,
        httpx2.AsyncClient(base_url=url, transport=transport, timeout=5) as client,
    ):
        with pytest.raises(httpx2.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            await client.get("/")


async def test_an_idle_tls_connection_the_server_closed_is_not_reused(tmp_path: Path) -> None:
    cert, key = await asyncio.to_thread(_self_signed, tmp_path)
    served = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    served.load_cert_chain(cert, key)
    server = _Server(hang_up_after_answer=True)
    trusted = ssl.create_default_context(cafile=str(cert))
    transport = ReusingTransport(ssl_context=trusted, limits=_LIMITS)
    async with (
        _serving(server, tls=served) as url,
        httpx2.AsyncClient(base_url=url, transport=transport, timeout=5) as client,
    ):
        assert (await client.get("/one")).text == "ok"
        server.may_hang_up.set()
        await server.hung_up.wait()  # its close_notify and FIN are in our socket by now
        for _ in range(3):  # the loop may read them (and close its side), or not yet
            await asyncio.sleep(0)
        assert (await client.get("/two")).text == "ok"
    assert server.connections == 2
