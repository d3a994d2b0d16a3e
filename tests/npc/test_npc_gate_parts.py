"""The gate's parts without a server: one log line per kind per interval, with a count (a fake
clock); head reading under any split of the bytes (hypothesis, a fake socket); how client
addresses are counted."""

from __future__ import annotations

import asyncio
import errno
import logging
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from starharness.npc.server.gate import GateSettings, GateState, gated_http, networks
from starharness.npc.server.log_limit import ACCEPT_FAILED, AcceptErrors, LogLimiter


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_one_line_per_kind_per_interval_with_a_count(caplog: pytest.LogCaptureFixture) -> None:
    clock = _Clock()
    limiter = LogLimiter(logging.getLogger("test.limit"), interval_s=10, clock=clock)
    with caplog.at_level(logging.WARNING, "test.limit"):
        assert limiter.log(logging.WARNING, "a", "first %s", "a")
        for _ in range(500):
            assert not limiter.log(logging.WARNING, "a", "again %s", "a")
        assert limiter.log(logging.WARNING, "b", "another kind")
        clock.now += 9.9
        assert not limiter.log(logging.WARNING, "a", "still %s", "a")
        clock.now += 0.2
        assert limiter.log(logging.WARNING, "a", "later %s", "a")
        clock.now += 60
        assert limiter.log(logging.WARNING, "a", "quiet %s", "a")
        assert not limiter.log(logging.WARNING, "a", "counted")
        limiter.flush()
    assert [r.getMessage() for r in caplog.records] == [
        "first a",
        "another kind",
        "later a (and 501 more like it in the last 10 s)",
        "quiet a",
        "1 more a lines were not logged",
    ]


async def test_failed_accepts_are_limited_and_the_rest_passes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    loop = asyncio.get_running_loop()
    seen: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _, context: seen.append(context))
    handler = AcceptErrors(LogLimiter(logging.getLogger("test.accept")))
    handler.install()
    try:
        with caplog.at_level(logging.WARNING, "test.accept"):
            for _ in range(2048):
                error = OSError(errno.EMFILE, "Too many open files")
                loop.call_exception_handler({"message": ACCEPT_FAILED, "exception": error})
            retry = "Exception in callback BaseSelectorEventLoop._start_serving(...)"
            for _ in range(100):  # the retries due when the listener closed
                closed = ValueError("Invalid file descriptor: -1")
                loop.call_exception_handler({"message": retry, "exception": closed})
            loop.call_exception_handler({"message": "something else"})
        assert len(caplog.records) == 1
        assert "Too many open files" in caplog.records[0].getMessage()
        assert [c["message"] for c in seen] == ["something else"]
    finally:
        handler.uninstall()
    assert loop.get_exception_handler() is not handler
    loop.set_exception_handler(None)


# -- the gate, byte by byte -------------------------------------------------------------------


class _Inner(asyncio.Protocol):
    def __init__(self, *args: object, **kwargs: object) -> None:
        self.received = bytearray()
        self.lost = False

    def data_received(self, data: bytes) -> None:
        self.received += data

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True


class _Socket(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__({"peername": ("192.0.2.7", 5000)})
        self.written = bytearray()
        self.closed = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.written += data

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed


def _feed(data: bytes, cuts: list[int]) -> tuple[_Inner, _Socket, Any]:
    async def run() -> tuple[_Inner, _Socket, Any]:
        gate = GateState(GateSettings(header_timeout_s=600, max_header_bytes=4096))
        connection = gated_http(_Inner, gate.settings, gate)()
        socket = _Socket()
        connection.connection_made(socket)
        inner = connection.get_protocol()
        assert isinstance(inner, _Inner)
        start = 0
        for cut in [*sorted(set(cuts)), len(data)]:
            if start < cut <= len(data):
                connection.data_received(data[start:cut])
                start = cut
        state = connection._state  # pyright: ignore[reportPrivateUsage]
        connection.connection_lost(None)
        return inner, socket, state

    return asyncio.run(run())


_REQUESTS = (
    b"GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n"
    b"POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n\r\nhello world"
    b"\r\nGET /y HTTP/1.1\nHost: a\n\n"
)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, len(_REQUESTS)), max_size=12))
def test_whole_requests_pass_under_any_split(cuts: list[int]) -> None:
    inner, socket, state = _feed(_REQUESTS, cuts)
    assert bytes(inner.received) == _REQUESTS
    assert socket.written == b"" and state == 2  # between requests


_TOO_LONG = b"GET / HTTP/1.1\r\nHost: a\r\nX-Big: " + b"z" * 9000 + b"\r\n\r\n"


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, len(_TOO_LONG)), max_size=12))
def test_a_long_line_is_refused_under_any_split(cuts: list[int]) -> None:
    inner, socket, _ = _feed(_TOO_LONG, cuts)
    assert socket.written.startswith(b"HTTP/1.1 431 ")
    assert len(inner.received) <= 8192 + 64  # the line never reached uvicorn's parser whole


@pytest.mark.parametrize(
    ("head", "state"),
    [
        # A real upgrade: from here on the bytes are the WebSocket's.
        (b"GET /gh HTTP/1.1\r\nUpgrade: websocket\r\nConnection: keep-alive, Upgrade\r\n\r\n", 3),
        # `Upgrade` alone switches nothing: the next head is watched like any other.
        (b"GET /gh HTTP/1.1\r\nUpgrade: websocket\r\n\r\nGET / HT", 0),
        (b"GET / HTTP/1.1\r\nConnection: upgrade\r\nUpgrade: h2c\r\n\r\nGET / HT", 0),
    ],
)
def test_only_a_websocket_upgrade_stops_the_watch(head: bytes, state: int) -> None:
    inner, socket, reached = _feed(head, [])
    assert bytes(inner.received) == head and socket.written == b""
    assert reached == state


def test_addresses_are_counted_per_host_and_ipv6_per_64() -> None:
    gate = GateState(GateSettings(uncapped=networks(["127.0.0.0/8", "::1", "10.1.0.0/16"])))
    key = gate.address_key
    assert key(("192.0.2.7", 5000)) == "192.0.2.7"
    assert key(("::ffff:192.0.2.7", 5000, 0, 0)) == "192.0.2.7"
    assert key(("2001:db8:1:2::5", 5000, 0, 0)) == key(("2001:db8:1:2:ffff::9", 1, 0, 0))
    assert key(("2001:db8:1:2::5", 5000, 0, 0)) != key(("2001:db8:1:3::5", 5000, 0, 0))
    assert key(("fe80::1%eth0", 5000, 0, 2)) == "fe80::/64"
    for uncapped in (("127.0.0.1", 1), ("::1", 1, 0, 0), ("10.1.200.3", 1), "/run/sock", None):
        assert key(uncapped) is None
    assert (
        GateState(GateSettings(connections_per_address=None)).address_key(("192.0.2.7", 1)) is None
    )
    assert networks(["*", "/run/sock", "192.0.2.0/24"]) == networks(["192.0.2.0/24"])


# -- a WebSocket's writes ---------------------------------------------------------------------

_UPGRADE = b"GET /gh HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"


class _CountingSocket(_Socket):
    def __init__(self) -> None:
        super().__init__()
        self.sends: list[bytes] = []

    def write(self, data: bytes | bytearray | memoryview) -> None:
        assert not self.closed, "written after close"
        self.sends.append(bytes(data))
        self.written += data

    def get_write_buffer_size(self) -> int:
        return 0


async def test_a_websockets_writes_of_one_pass_leave_in_one_send_before_its_close() -> None:
    gate = GateState(GateSettings(header_timeout_s=600))
    connection = gated_http(_Inner, gate.settings, gate)()
    socket = _CountingSocket()
    connection.connection_made(socket)
    connection.write(b"HTTP/1.1 200 OK\r\n\r\n")  # before the upgrade: written at once
    assert socket.sends == [b"HTTP/1.1 200 OK\r\n\r\n"]
    connection.data_received(_UPGRADE)
    socket.sends.clear()
    connection.write(b"one")
    connection.writelines([b"two", bytearray(b"three")])
    assert socket.sends == [] and connection.get_write_buffer_size() == 11
    await asyncio.sleep(0)
    assert socket.sends == [b"onetwothree"] and connection.get_write_buffer_size() == 0
    connection.write(b"close frame")
    connection.close()
    assert socket.sends == [b"onetwothree", b"close frame"] and socket.closed
    await asyncio.sleep(0)  # the pass's flush finds nothing left and writes nothing
    assert len(socket.sends) == 2
    connection.connection_lost(None)
