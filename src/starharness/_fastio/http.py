"""A keep-alive pool for model requests at O(1) per request, on httpcore2's public connections.

httpx2's own pool (httpcore2's `AsyncConnectionPool`) walks every connection twice per request
(when it is queued and when its answer is closed), and asks each idle one "has the server hung
up?", a socket poll through anyio's attribute lookup (which also asks the kernel for the peer's
address). With fifty conversations at once most connections are idle at any moment, so that
walk was a third of a model request's client CPU in the peer benchmark.

Here idle connections wait on a stack: a request takes the one most recently used, checked
then (keep-alive expiry and the hang-up poll, so a server that hung up is noticed before the
request is written); a finished request puts it back on top. The ones at the bottom are the
surplus of a past burst: once a second the idle ones are checked and the expired closed, and
past `max_keepalive_connections` the oldest is closed at once. HTTP/1.1 only: a connection
carries one request at a time.

httpcore2 also writes a request's head and its body in two sends. A chat request is small and
always whole before the answer is read, so the connections here hold what is written until the
first read and send it at once: one syscall, one segment and one wake-up of the server instead
of two (a send to a local server cost 0.2 ms of client CPU each on the 2-core machine the
benchmarks run on).

Everything here is httpx2's and httpcore2's public API (the transport and network-backend
interfaces, `AsyncHTTPConnection`, the error classes); `bench/fastio_http.py` prints each
part's gain over httpx2's own transport.
"""

# httpcore2's stream interface takes its timeouts as arguments.
# ruff: noqa: ASYNC109

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
import time
from collections import deque
from collections.abc import AsyncIterator, Generator, Iterable, Mapping, MutableMapping
from contextlib import contextmanager
from typing import Any, cast

import httpcore2
import httpx2

from .http_socket import connect_tcp

_SWEEP_S = 1.0
"""How often the idle connections not taken are checked for expiry and hang-ups."""
_MAX_HELD = 256 * 1024
"""A body larger than this (a huge prompt) goes out in pieces as it is written."""

_ERRORS: tuple[tuple[type[Exception], type[httpx2.TransportError]], ...] = (
    (httpcore2.ConnectTimeout, httpx2.ConnectTimeout),
    (httpcore2.ReadTimeout, httpx2.ReadTimeout),
    (httpcore2.WriteTimeout, httpx2.WriteTimeout),
    (httpcore2.PoolTimeout, httpx2.PoolTimeout),
    (httpcore2.TimeoutException, httpx2.TimeoutException),
    (httpcore2.ConnectError, httpx2.ConnectError),
    (httpcore2.ReadError, httpx2.ReadError),
    (httpcore2.WriteError, httpx2.WriteError),
    (httpcore2.NetworkError, httpx2.NetworkError),
    (httpcore2.ProxyError, httpx2.ProxyError),
    (httpcore2.UnsupportedProtocol, httpx2.UnsupportedProtocol),
    (httpcore2.RemoteProtocolError, httpx2.RemoteProtocolError),
    (httpcore2.LocalProtocolError, httpx2.LocalProtocolError),
    (httpcore2.ProtocolError, httpx2.ProtocolError),
)
"""httpcore2's errors as the httpx2 ones callers catch (as httpx2's own transport maps them);
subclasses before their bases."""

_CORE_ERRORS: tuple[type[Exception], ...] = tuple(theirs for theirs, _ in _ERRORS)
_STALE: tuple[type[Exception], ...] = (
    httpcore2.ReadError,
    httpcore2.WriteError,
    httpcore2.RemoteProtocolError,
)
"""How a request on an idle connection the server had just closed fails: reset by the peer, or
the end of the stream where an answer's head should be."""
_log = logging.getLogger(__name__)


class ReusingTransport(httpx2.AsyncBaseTransport):
    """An httpx2 transport whose pool reuses idle connections last-in first-out."""

    def __init__(
        self,
        *,
        ssl_context: ssl.SSLContext | None,
        limits: httpx2.Limits,
        fast_streams: bool = True,
    ) -> None:
        """`fast_streams=False` keeps httpcore2's own (anyio) connections under the pool, so
        the benchmark can print what each of the two parts gains."""
        self._ssl_context = ssl_context
        self._backend = _FastBackend() if fast_streams else None
        self._max_connections = limits.max_connections or 2**31
        self._max_idle = (
            self._max_connections
            if limits.max_keepalive_connections is None
            else limits.max_keepalive_connections
        )
        self._keepalive_expiry = limits.keepalive_expiry
        self._idle: list[httpcore2.AsyncHTTPConnection] = []
        """Idle connections, the most recently used last."""
        self._open: set[httpcore2.AsyncHTTPConnection] = set()
        """Every connection, busy or idle (closed on `aclose`)."""
        self._waiting: deque[asyncio.Future[None]] = deque()
        self._next_sweep = time.monotonic() + _SWEEP_S
        self._closed = False

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        url = request.url
        stream = request.stream
        if not isinstance(stream, httpx2.AsyncByteStream):
            raise TypeError("an async client sends async request bodies")
        core = httpcore2.Request(
            method=request.method,
            url=httpcore2.URL(
                scheme=url.raw_scheme, host=url.raw_host, port=url.port, target=url.raw_path
            ),
            headers=request.headers.raw,
            content=stream,
            extensions=request.extensions,
        )
        with _httpx_errors(request):
            connection, answer = await self._send(
                core, replayable=isinstance(stream, httpx2.ByteStream)
            )
        # httpcore2 types extensions as "a mapping or an empty dict literal"; they hold str keys.
        extensions = cast(MutableMapping[str, Any], answer.extensions)  # pyright: ignore[reportUnknownMemberType]
        return httpx2.Response(
            status_code=answer.status,
            headers=answer.headers,
            stream=_AnswerStream(answer, request, connection, self),
            extensions=extensions,
        )

    async def _send(
        self, request: httpcore2.Request, *, replayable: bool
    ) -> tuple[httpcore2.AsyncHTTPConnection, httpcore2.Response]:
        scheme = request.url.scheme
        if scheme not in (b"http", b"https"):
            raise httpcore2.UnsupportedProtocol(
                f"Request URL has an unsupported protocol '{scheme.decode()}://'."
                if scheme
                else "Request URL is missing an 'http://' or 'https://' protocol."
            )
        # httpcore2 types extensions as "a mapping or an empty dict literal"; they hold str keys.
        extensions = cast(Mapping[str, Any], request.extensions)  # pyright: ignore[reportUnknownMemberType]
        timeouts = cast(Mapping[str, float | None], extensions.get("timeout", {}))
        origin = request.url.origin
        while True:
            connection, reused = await self._acquire(origin, timeouts.get("pool"))
            try:
                return connection, await connection.handle_async_request(request)
            except httpcore2.ConnectionNotAvailable:
                await self.release(connection)  # it went away between being taken and used
            except _STALE as error:
                await self.release(connection)
                if not (reused and replayable):
                    raise
                # The server closed this idle connection as the request went out (its keep-alive
                # ran out at that moment, too late for the check when it was taken): no answer
                # began, so the request goes again, as browsers do. It cannot loop: each pass
                # closes one idle connection, and a new connection's failure is raised.
                _log.debug("a reused connection broke before an answer (%s); sending again", error)
            except BaseException:
                await self.release(connection)
                raise

    async def _acquire(
        self, origin: httpcore2.Origin, pool_s: float | None
    ) -> tuple[httpcore2.AsyncHTTPConnection, bool]:
        """A connection for `origin`, and whether it served a request before."""
        if self._closed:
            raise RuntimeError("the transport is closed")
        deadline = None if pool_s is None else time.monotonic() + pool_s
        while True:
            now = time.monotonic()
            if now >= self._next_sweep:
                self._next_sweep = now + _SWEEP_S
                await self._sweep()
            connection = await self._idle_for(origin)
            if connection is not None:
                return connection, True
            if len(self._open) >= self._max_connections and self._idle:
                # Idle ones for other origins make room for this one.
                await self._close(self._idle.pop(0))
            if len(self._open) < self._max_connections:
                connection = httpcore2.AsyncHTTPConnection(
                    origin,
                    ssl_context=self._ssl_context,
                    keepalive_expiry=self._keepalive_expiry,
                    network_backend=self._backend,
                )
                self._open.add(connection)
                return connection, False
            await self._wait(None if deadline is None else deadline - time.monotonic())

    async def _wait(self, within: float | None) -> None:
        """Until a connection is released or closed; PoolTimeout after `within` seconds."""
        if within is not None and within <= 0:
            raise httpcore2.PoolTimeout("timed out waiting for a connection")
        waiter = asyncio.get_running_loop().create_future()
        self._waiting.append(waiter)
        try:
            async with asyncio.timeout(within):
                await waiter
        except BaseException as error:
            if waiter.done() and not waiter.cancelled():
                self._wake()  # woken, then cancelled: its turn passes to the next in line
            else:
                with contextlib.suppress(ValueError):
                    self._waiting.remove(waiter)
            if isinstance(error, TimeoutError):
                raise httpcore2.PoolTimeout("timed out waiting for a connection") from None
            raise

    def _wake(self) -> None:
        waiting = self._waiting
        while waiting:
            waiter = waiting.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    async def _idle_for(self, origin: httpcore2.Origin) -> httpcore2.AsyncHTTPConnection | None:
        idle = self._idle
        skipped: list[httpcore2.AsyncHTTPConnection] = []
        found = None
        while idle:
            connection = idle.pop()
            if connection.is_closed():
                self._open.discard(connection)
            elif connection.has_expired():  # its keep-alive ran out, or the server hung up
                await self._close(connection)
            elif connection.can_handle_request(origin) and connection.is_available():
                found = connection
                break
            else:
                skipped.append(connection)
        idle.extend(reversed(skipped))
        return found

    async def _sweep(self) -> None:
        """Close the idle connections whose keep-alive ran out or whose server hung up."""
        for connection in list(self._idle):
            if connection.is_closed() or connection.has_expired():
                self._idle.remove(connection)
                await self._close(connection)

    async def release(self, connection: httpcore2.AsyncHTTPConnection) -> None:
        """A request is done with `connection` (its answer closed, or it failed): keep it for
        the next request, or close it."""
        if connection.is_closed():
            self._open.discard(connection)
        elif connection.is_idle() and not self._closed:
            self._idle.append(connection)
            if len(self._idle) > self._max_idle:
                await self._close(self._idle.pop(0))
        else:
            await self._close(connection)
        self._wake()

    async def _close(self, connection: httpcore2.AsyncHTTPConnection) -> None:
        self._open.discard(connection)
        await connection.aclose()

    async def aclose(self) -> None:
        self._closed = True
        self._idle.clear()
        connections, self._open = list(self._open), set()
        for connection in connections:
            await connection.aclose()


class _AnswerStream(httpx2.AsyncByteStream):
    """An answer's body; closing it hands the connection back to the pool."""

    __slots__ = ("_answer", "_closed", "_connection", "_request", "_transport")

    def __init__(
        self,
        answer: httpcore2.Response,
        request: httpx2.Request,
        connection: httpcore2.AsyncHTTPConnection,
        transport: ReusingTransport,
    ) -> None:
        self._answer = answer
        self._request = request
        self._connection = connection
        self._transport = transport
        self._closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with _httpx_errors(self._request):
            async for part in self._answer.aiter_stream():
                yield part

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            with _httpx_errors(self._request):
                await self._answer.aclose()
        finally:
            await self._transport.release(self._connection)


@contextmanager
def _httpx_errors(request: httpx2.Request) -> Generator[None]:
    try:
        yield
    except _CORE_ERRORS as error:
        raise _translated(error, request) from error


def _translated(error: Exception, request: httpx2.Request) -> httpx2.TransportError:
    ours = next(ours for theirs, ours in _ERRORS if isinstance(error, theirs))
    return ours(str(error), request=request)


class _FastBackend(httpcore2.AsyncNetworkBackend):
    """TCP connections straight on asyncio (http_socket.py), every connection holding its
    writes until the next read; unix sockets keep httpcore2's own anyio streams."""

    def __init__(self) -> None:
        # httpcore2 declares a stand-in AnyIOBackend for when anyio is missing; httpx2 needs anyio.
        self._inner = cast(httpcore2.AsyncNetworkBackend, httpcore2.AnyIOBackend())

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore2.SOCKET_OPTION] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        stream = await connect_tcp(host, port, timeout, local_address, socket_options)
        return OneWriteStream(stream)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore2.SOCKET_OPTION] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        stream = await self._inner.connect_unix_socket(path, timeout, socket_options)
        return OneWriteStream(stream)

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class OneWriteStream(httpcore2.AsyncNetworkStream):
    """Holds writes until the next read (HTTP/1.1 reads only once the request is written)."""

    __slots__ = ("_held", "_inner", "_timeout")

    def __init__(self, inner: httpcore2.AsyncNetworkStream) -> None:
        self._inner = inner
        self._held: list[bytes] = []
        self._timeout: float | None = None

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        self._held.append(buffer)
        self._timeout = timeout
        if sum(map(len, self._held)) >= _MAX_HELD:  # a request is two or three writes
            await self._send_held()

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        if self._held:
            await self._send_held()
        return await self._inner.read(max_bytes, timeout)

    async def _send_held(self) -> None:
        data = self._held[0] if len(self._held) == 1 else b"".join(self._held)
        self._held.clear()
        await self._inner.write(data, self._timeout)

    async def aclose(self) -> None:
        self._held.clear()
        await self._inner.aclose()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        if self._held:
            await self._send_held()
        wrapped = await self._inner.start_tls(ssl_context, server_hostname, timeout)
        return OneWriteStream(wrapped)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)
