"""httpcore's connection pool with keep-alive that works under load, at O(1) per request.

httpcore 1.0's pool, on every request added or finished, walks every connection: it polls each
idle one's socket ("has the server hung up?") and closes an idle one whenever the pool holds
more connections *in all* than `max_keepalive_connections` (it counts every connection where it
means to count the idle ones). With 64 requests in flight and 20 kept, nearly every finished
request's connection was closed and the next request opened a new TCP connection
(bench/storm.py: 0.92 new connections per greeting).

Here idle connections wait on a stack. A request takes the one most recently used, checked then
(keep-alive expiry and a poll of its socket: a server that hung up is noticed before the request
is written); a finished request puts its connection back on top. The ones at the bottom are the
surplus of a past burst: once a second the idle ones are checked and the expired ones closed.
HTTP/1.1 only (a connection carries one request at a time), as the transport builds it.
"""

from __future__ import annotations

import contextlib
import time
from collections import deque
from collections.abc import AsyncIterable, AsyncIterator, Mapping, MutableMapping
from typing import Any, cast

import anyio
import httpcore
from httpcore._async.connection_pool import AsyncPoolRequest  # pyright: ignore[reportPrivateImportUsage]
from httpcore._async.interfaces import AsyncConnectionInterface
from httpcore._synchronization import AsyncLock, AsyncShieldCancellation

_SWEEP_S = 1.0
"""How often the idle connections not taken are checked for expiry and hang-ups."""

_Connection = AsyncConnectionInterface


class ReusingPool(httpcore.AsyncConnectionPool):
    """An httpcore pool that reuses idle connections last-in first-out, without rescans."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._idle: list[_Connection] = []
        """Idle connections, the most recently used last."""
        self._queued: deque[AsyncPoolRequest] = deque()
        self._released: list[_Connection] = []
        """Connections whose request ended since the last assignment."""
        self._next_sweep = time.monotonic() + _SWEEP_S

    def create_connection(self, origin: httpcore.Origin) -> _Connection:
        connection = super().create_connection(origin)
        if isinstance(connection, httpcore.AsyncHTTPConnection):
            _quicken(connection._request_lock)  # pyright: ignore[reportPrivateUsage]
        return connection

    async def handle_async_request(self, request: httpcore.Request) -> httpcore.Response:
        scheme = request.url.scheme
        if scheme not in (b"http", b"https", b"ws", b"wss"):
            raise httpcore.UnsupportedProtocol(
                f"Request URL has an unsupported protocol '{scheme.decode()}://'."
                if scheme
                else "Request URL is missing an 'http://' or 'https://' protocol."
            )
        # httpcore types extensions as "a mapping or an empty dict literal"; they hold str keys.
        extensions = cast(MutableMapping[str, Any], request.extensions)  # pyright: ignore[reportUnknownMemberType]
        timeouts = cast(Mapping[str, float | None], extensions.get("timeout", {}))
        timeout = timeouts.get("pool")
        pool_request = AsyncPoolRequest(request)
        self._requests.append(pool_request)
        self._queued.append(pool_request)
        try:
            while True:
                await self._close_connections(self._assign_requests_to_connections())
                connection = await pool_request.wait_for_connection(timeout=timeout)
                try:
                    response = await connection.handle_async_request(request)
                except httpcore.ConnectionNotAvailable:
                    # It went away between being chosen and being used: choose again, first.
                    pool_request.clear_connection()
                    self._released.append(connection)
                    self._queued.appendleft(pool_request)
                else:
                    break
        except BaseException:
            self._finish(pool_request)
            await self._close_connections(self._assign_requests_to_connections())
            raise
        stream = response.stream
        if not isinstance(stream, AsyncIterable):
            raise TypeError("an async pool's connection answered with a sync stream")
        return httpcore.Response(
            status=response.status,
            headers=response.headers,
            content=_PoolStream(stream, pool_request, self),
            extensions=cast(MutableMapping[str, Any], response.extensions),  # pyright: ignore[reportUnknownMemberType]
        )

    def _finish(self, pool_request: AsyncPoolRequest) -> None:
        self._requests.remove(pool_request)
        connection = pool_request.connection
        if connection is not None:
            self._released.append(connection)
        else:
            with contextlib.suppress(ValueError):  # it gave up waiting (a rare case)
                self._queued.remove(pool_request)

    def _assign_requests_to_connections(self) -> list[_Connection]:
        closing: list[_Connection] = []
        if self._released:
            self._take_back(closing)
        now = time.monotonic()
        if now >= self._next_sweep:
            self._next_sweep = now + _SWEEP_S
            self._sweep(closing)
        queued = self._queued
        while queued:
            pool_request = queued[0]
            origin = pool_request.request.url.origin
            connection = self._idle_for(origin, closing)
            if connection is None:
                if len(self._connections) >= self._max_connections:
                    if not self._idle:
                        break  # every connection is busy: wait for one to be released
                    # Idle ones for other origins make room for this one.
                    oldest = self._idle.pop(0)
                    self._forget(oldest)
                    closing.append(oldest)
                connection = self.create_connection(origin)
                self._connections.append(connection)
            queued.popleft()
            pool_request.assign_to_connection(connection)
        return closing

    def _take_back(self, closing: list[_Connection]) -> None:
        for connection in self._released:
            if connection.is_closed():
                self._forget(connection)
            elif connection.is_idle() and connection not in self._idle:
                self._idle.append(connection)
        self._released.clear()
        while len(self._idle) > self._max_keepalive_connections:
            oldest = self._idle.pop(0)
            self._forget(oldest)
            closing.append(oldest)

    def _idle_for(self, origin: httpcore.Origin, closing: list[_Connection]) -> _Connection | None:
        idle = self._idle
        skipped: list[_Connection] = []
        found: _Connection | None = None
        while idle:
            connection = idle.pop()
            if connection.is_closed():
                self._forget(connection)
            elif connection.has_expired():  # its keep-alive ran out, or the server hung up
                self._forget(connection)
                closing.append(connection)
            elif connection.can_handle_request(origin) and connection.is_available():
                found = connection
                _quicken_inner(connection)
                break
            else:
                skipped.append(connection)
        idle.extend(reversed(skipped))
        return found

    def _sweep(self, closing: list[_Connection]) -> None:
        """Close expired idle connections, and pick up any idle one the stack lost track of."""
        kept: list[_Connection] = []
        for connection in list(self._connections):
            if connection.is_closed():
                self._connections.remove(connection)
            elif connection.is_idle():
                if connection.has_expired():
                    self._connections.remove(connection)
                    closing.append(connection)
                else:
                    kept.append(connection)
        still = set(map(id, kept))
        order = [connection for connection in self._idle if id(connection) in still]
        known = set(map(id, order))
        self._idle = [connection for connection in kept if id(connection) not in known] + order

    async def _close_connections(self, closing: list[_Connection]) -> None:
        # httpcore's shields even an empty list, and an anyio cancel scope costs per request.
        if closing:
            await super()._close_connections(closing)

    def _forget(self, connection: _Connection) -> None:
        if connection in self._connections:
            self._connections.remove(connection)

    async def aclose(self) -> None:
        self._idle.clear()
        self._released.clear()
        await super().aclose()


def _quicken(lock: AsyncLock) -> None:
    """Make one of httpcore's locks take its free path without a trip through the event loop.

    anyio's Lock yields to the loop on every uncontended acquire, inside a shielded cancel
    scope; a connection takes three such locks per request, and only one request at a time
    ever holds them, so they never wait. (asyncio only, as the transport runs.)
    """
    if getattr(lock, "_quick", False):
        return
    lock._backend = "asyncio"  # pyright: ignore[reportPrivateUsage]
    lock._anyio_lock = anyio.Lock(fast_acquire=True)  # pyright: ignore[reportPrivateUsage, reportAttributeAccessIssue]
    lock._quick = True  # pyright: ignore[reportAttributeAccessIssue]


def _quicken_inner(connection: _Connection) -> None:
    # The HTTP/1.1 connection exists once the first request has connected; it is idle here, so
    # nobody holds its lock while it is replaced.
    if isinstance(connection, httpcore.AsyncHTTPConnection):
        inner = connection._connection  # pyright: ignore[reportPrivateUsage]
        if isinstance(inner, httpcore.AsyncHTTP11Connection):
            _quicken(inner._state_lock)  # pyright: ignore[reportPrivateUsage]


class _PoolStream:
    """An answer's body; closing it hands the connection back to the pool."""

    __slots__ = ("_closed", "_pool", "_pool_request", "_stream")

    def __init__(
        self, stream: AsyncIterable[bytes], pool_request: AsyncPoolRequest, pool: ReusingPool
    ) -> None:
        self._stream = stream
        self._pool_request = pool_request
        self._pool = pool
        self._closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for part in self._stream:
                yield part
        except BaseException:
            await self.aclose()
            raise

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        with AsyncShieldCancellation():
            close = getattr(self._stream, "aclose", None)
            if close is not None:
                await close()
        pool = self._pool
        pool._finish(self._pool_request)  # pyright: ignore[reportPrivateUsage]
        await pool._close_connections(pool._assign_requests_to_connections())  # pyright: ignore[reportPrivateUsage]
