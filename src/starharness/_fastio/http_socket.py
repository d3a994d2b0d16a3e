"""Model connections straight on asyncio: httpcore2's network stream over an asyncio transport.

httpcore2's anyio stream runs every read and every write of a request inside an anyio cancel
scope (its timeout), and anyio's socket stream pauses and resumes the transport's reading
around each read and yields to the loop even when bytes are waiting: about a twelfth of a
greeting's event-loop time in bench/storm.py. Here bytes wait in a queue the protocol fills, a
read takes what is there without yielding, and a timeout is one timer on the loop, armed only
when a read or a drain really waits. Errors are httpcore2's, as from its own streams: a
timeout is ReadTimeout or WriteTimeout, a reset ReadError or WriteError, a clean end of the
stream an empty read. HTTP/1.1 only ever has one reader and one writer per connection.
"""

# httpcore2's stream interface takes its timeouts as arguments.
# ruff: noqa: ASYNC109

from __future__ import annotations

import asyncio
import errno
import ipaddress
import os
import select
import socket
import ssl
from collections import deque
from collections.abc import Iterable
from typing import Any, Protocol, cast

import httpcore2

_PAUSE_AT = 256 * 1024
"""Bytes queued unread at which the transport stops reading (a huge body, a slow reader)."""
_RESUME_AT = 64 * 1024


class _Link(asyncio.Protocol):
    """One connection's side of asyncio: the bytes that came, the end, and write pressure."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.chunks: deque[bytes] = deque()
        self.queued = 0
        self.ended = False
        self.failure: Exception | None = None
        self.waiter: asyncio.Future[bool] | None = None
        self.reading_paused = False
        self.writing_paused = False
        self.tls = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        self.chunks.append(data)
        self.queued += len(data)
        if self.queued >= _PAUSE_AT and not self.reading_paused and self.transport is not None:
            self.reading_paused = True
            self.transport.pause_reading()
        self.wake()

    def eof_received(self) -> bool | None:
        self.ended = True
        self.wake()
        # Half-closed, as anyio keeps it: the request may still be going out. TLS cannot.
        return None if self.tls else True

    def connection_lost(self, exc: Exception | None) -> None:
        self.ended = True
        self.failure = exc
        self.writing_paused = False
        self.wake()

    def pause_writing(self) -> None:
        self.writing_paused = True

    def resume_writing(self) -> None:
        self.writing_paused = False
        self.wake()

    def wake(self) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(True)


def _expire(waiter: asyncio.Future[bool]) -> None:
    if not waiter.done():
        waiter.set_result(False)


class SocketStream(httpcore2.AsyncNetworkStream):
    """httpcore2's view of one asyncio connection (TCP, or TLS after `start_tls`)."""

    __slots__ = ("_closed", "_link", "_loop", "_transport")

    def __init__(self, link: _Link, transport: asyncio.Transport) -> None:
        self._link = link
        self._transport = transport
        self._loop = asyncio.get_running_loop()
        self._closed = False

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        link = self._link
        while not link.chunks:
            if self._closed:
                raise httpcore2.ReadError("the connection was closed")
            if link.ended:
                if link.failure is not None:
                    raise httpcore2.ReadError(str(link.failure) or type(link.failure).__name__)
                return b""
            if not await self._wait(timeout):
                raise httpcore2.ReadTimeout("timed out reading")
        chunk = link.chunks.popleft()
        if len(chunk) > max_bytes:
            link.chunks.appendleft(chunk[max_bytes:])
            chunk = chunk[:max_bytes]
        link.queued -= len(chunk)
        if link.reading_paused and link.queued <= _RESUME_AT and not link.ended:
            link.reading_paused = False
            self._transport.resume_reading()
        return chunk

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        link = self._link
        if self._closed or link.failure is not None or self._transport.is_closing():
            raise httpcore2.WriteError("the connection is closed")
        self._transport.write(buffer)
        while link.writing_paused:
            if not await self._wait(timeout):
                raise httpcore2.WriteTimeout("timed out writing")
        if link.failure is not None:
            raise httpcore2.WriteError(str(link.failure) or type(link.failure).__name__)

    async def _wait(self, timeout: float | None) -> bool:
        """Until bytes, the end, or room to write come (True), or the timeout passes (False)."""
        waiter = self._link.waiter = self._loop.create_future()
        timer = None if timeout is None else self._loop.call_later(timeout, _expire, waiter)
        try:
            return await waiter
        finally:
            self._link.waiter = None
            if timer is not None:
                timer.cancel()

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            self._link.chunks.clear()
            self._transport.close()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        link = self._link
        try:
            async with asyncio.timeout(timeout):
                wrapped = await self._loop.start_tls(
                    self._transport, link, ssl_context, server_hostname=server_hostname
                )
        except TimeoutError as error:
            self._transport.abort()
            raise httpcore2.ConnectTimeout(str(error) or "timed out starting TLS") from error
        except (OSError, ssl.SSLError) as error:  # SSLError is an OSError; named for readers
            self._transport.abort()
            raise httpcore2.ConnectError(str(error)) from error
        if wrapped is None:  # the connection closed during the handshake
            raise httpcore2.ConnectError("the connection closed during the TLS handshake")
        link.tls = True
        link.transport = wrapped
        # This plain view is spent: closing it would cut the TLS connection underneath.
        self._closed = True
        return SocketStream(link, wrapped)

    def get_extra_info(self, info: str) -> Any:
        transport = self._transport
        if info == "ssl_object":
            return transport.get_extra_info("ssl_object")
        if info == "client_addr":
            return transport.get_extra_info("sockname")
        if info == "server_addr":
            return transport.get_extra_info("peername")
        if info == "socket":
            return transport.get_extra_info("socket")
        if info == "is_readable":
            return self.is_readable()
        return None

    def is_readable(self) -> bool:
        """Whether bytes or the end wait on an idle connection: the server hung up on it.

        asyncio reads as bytes come, so what anyio left in the socket is in our queue here;
        the poll catches what arrived since the loop last looked.
        """
        link = self._link
        if link.ended or link.chunks or self._closed:
            return True
        sock = self._transport.get_extra_info("socket")
        return sock is None or socket_readable(sock)


class HasFileno(Protocol):
    def fileno(self) -> int: ...


def socket_readable(sock: HasFileno) -> bool:
    """True when an idle connection has something to read, which means the server hung up."""
    fd = sock.fileno()
    return fd < 0 or _ready_now(fd, write=False)


def _ready_now(fd: int, *, write: bool) -> bool:
    """Whether `fd` can be read (or written) right now, without waiting."""
    if hasattr(select, "poll"):
        poller = select.poll()
        poller.register(fd, select.POLLOUT if write else select.POLLIN)
        return bool(poller.poll(0))
    readable, writable, _ = select.select([] if write else [fd], [fd] if write else [], [], 0)
    return bool(writable if write else readable)


_IN_PROGRESS = frozenset(
    code
    for code in (
        errno.EINPROGRESS,
        errno.EAGAIN,
        errno.EWOULDBLOCK,
        getattr(errno, "WSAEWOULDBLOCK", None),
    )
    if code is not None
)
"""What a non-blocking connect answers while the handshake is under way (Windows says its own)."""


def _numeric(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def _writable(sock: socket.socket) -> bool:
    return _ready_now(sock.fileno(), write=True)


async def _connect_numeric(
    loop: asyncio.AbstractEventLoop,
    address: ipaddress.IPv4Address | ipaddress.IPv6Address,
    host: str,
    port: int,
    local_address: str | None,
) -> socket.socket:
    """A socket connected to a numeric address, without a pass of the loop when it can.

    A connect to a local server is done by the time `connect` returns; asyncio's own waits
    for the loop to see the socket writable, and when the loop is busy (a storm of opens)
    each pass is long: new model connections took 50 ms in bench/storm.py.
    """
    family = socket.AF_INET6 if address.version == 6 else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setblocking(False)
        if local_address is not None:
            sock.bind((local_address, 0))
        code = sock.connect_ex((host, port))
        if code in _IN_PROGRESS:
            if _writable(sock):
                code = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            else:
                await loop.sock_connect(sock, (host, port))  # waits on the loop as asyncio does
                code = 0
        if code:
            raise OSError(code, f"connect to {host}:{port} failed: {os.strerror(code)}")
    except BaseException:
        sock.close()
        raise
    return sock


async def connect_tcp(
    host: str,
    port: int,
    timeout: float | None = None,
    local_address: str | None = None,
    socket_options: Iterable[httpcore2.SOCKET_OPTION] | None = None,
) -> SocketStream:
    """A TCP connection (TCP_NODELAY on, as asyncio sets it), with httpcore2's connect errors."""
    loop = asyncio.get_running_loop()
    link = _Link()
    address = _numeric(host)
    try:
        async with asyncio.timeout(timeout):
            if address is None:
                transport, _ = await loop.create_connection(
                    lambda: link,
                    host,
                    port,
                    local_addr=None if local_address is None else (local_address, 0),
                    happy_eyeballs_delay=0.25,  # as anyio's connect_tcp tries addresses
                )
            else:
                sock = await _connect_numeric(loop, address, host, port, local_address)
                transport, _ = await loop.create_connection(lambda: link, sock=sock)
    except TimeoutError as error:
        raise httpcore2.ConnectTimeout(str(error) or "timed out connecting") from error
    except OSError as error:
        raise httpcore2.ConnectError(str(error)) from error
    sock = transport.get_extra_info("socket")
    for option in socket_options or ():
        sock.setsockopt(*option)
    return SocketStream(link, transport)
