"""The HTTP transport for model requests: a keep-alive pool, one socket write per request.

httpx (through httpcore) writes a request's head and its body in two sends. A chat request is
small and always whole before the answer is read, so the connections here hold what is written
until the first read and send it at once: one syscall, one segment and one wake-up of the
server instead of two. The pool (pool.py) reuses idle connections without httpcore's rescans;
its "has the server hung up on this idle connection?" check, run on the connection a request
takes, polls the socket directly instead of going through anyio's attribute lookup (which also
asks the kernel for the peer's address each time). TCP connections run straight on asyncio
(socket_stream.py); unix sockets keep httpcore's anyio streams.
"""

# httpcore's stream interface takes its timeouts as arguments.
# ruff: noqa: ASYNC109

from __future__ import annotations

import os
import ssl
import urllib.request
from collections.abc import AsyncIterator, Generator, Iterable, MutableMapping
from contextlib import contextmanager
from typing import Any, cast

import httpcore
import httpx

from .pool import ReusingPool
from .socket_stream import HasFileno, SocketStream, connect_tcp, socket_readable

_MAX_HELD = 256 * 1024
"""A body larger than this (a huge prompt) goes out in pieces as it is written."""

_ERRORS: tuple[tuple[type[Exception], type[httpx.TransportError]], ...] = (
    (httpcore.ConnectTimeout, httpx.ConnectTimeout),
    (httpcore.ReadTimeout, httpx.ReadTimeout),
    (httpcore.WriteTimeout, httpx.WriteTimeout),
    (httpcore.PoolTimeout, httpx.PoolTimeout),
    (httpcore.TimeoutException, httpx.TimeoutException),
    (httpcore.ConnectError, httpx.ConnectError),
    (httpcore.ReadError, httpx.ReadError),
    (httpcore.WriteError, httpx.WriteError),
    (httpcore.NetworkError, httpx.NetworkError),
    (httpcore.ProxyError, httpx.ProxyError),
    (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol),
    (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
    (httpcore.LocalProtocolError, httpx.LocalProtocolError),
    (httpcore.ProtocolError, httpx.ProtocolError),
)
"""httpcore's errors as the httpx ones callers catch; subclasses before their bases."""

_CORE_ERRORS: tuple[type[Exception], ...] = tuple(theirs for theirs, _ in _ERRORS)

STOCK_TRANSPORTS_ENV = "STAR_HARNESS_STOCK_TRANSPORTS"
"""Set to 1 to use stock httpx and uvicorn I/O instead of the one-write, asyncio-connection
and coalescing layers."""


def stock_transports() -> bool:
    """Whether `STAR_HARNESS_STOCK_TRANSPORTS` asks for the libraries' own transports.

    This transport and the server's coalescing WebSocket protocol lean on httpcore's and
    uvicorn's internals; this setting is the way out when a release of either changes them.
    """
    return os.environ.get(STOCK_TRANSPORTS_ENV, "").strip().lower() in ("1", "true", "yes")


STOCK_MAX_KEEPALIVE = 20
"""Idle connections httpx's own pool may keep. Its work per request grows with the square of
its connections, so keeping the 64 a storm leaves took 15 ms of CPU per greeting in
bench/storm.py, against 4.6 ms with 20 kept (even though 20 makes it open a connection for
nearly every request: it counts all its connections against this limit)."""


def llm_http_client(*, timeout: httpx.Timeout, limits: httpx.Limits) -> httpx.AsyncClient:
    """An httpx client for model requests; blocking (it loads the CA bundle).

    With a proxy configured in the environment, or STAR_HARNESS_STOCK_TRANSPORTS set, httpx's
    own transport is kept (it is the one that knows how to reach proxies), with at most
    `STOCK_MAX_KEEPALIVE` idle connections.
    """
    proxies = urllib.request.getproxies()
    if stock_transports() or any(scheme in proxies for scheme in ("http", "https", "all")):
        kept = min(limits.max_keepalive_connections or STOCK_MAX_KEEPALIVE, STOCK_MAX_KEEPALIVE)
        stock = httpx.Limits(
            max_connections=limits.max_connections,
            max_keepalive_connections=kept,
            keepalive_expiry=limits.keepalive_expiry,
        )
        return httpx.AsyncClient(timeout=timeout, limits=stock)
    transport = OneWriteTransport(ssl_context=httpx.create_ssl_context(), limits=limits)
    return LlmHttpClient(timeout=timeout, transport=transport)


class QuickCookies(httpx.Cookies):
    """httpx's cookie store, which skips a response that sets no cookie.

    httpx wraps every response and its request in urllib stand-ins to hand them to the cookie
    jar, which then finds no `Set-Cookie` and does nothing: a tenth of a model request's
    client-side work in bench/storm.py, for answers that almost never set a cookie.
    """

    def extract_cookies(self, response: httpx.Response) -> None:
        headers = response.headers
        if "set-cookie" in headers or "set-cookie2" in headers:
            super().extract_cookies(response)


class LlmHttpClient(httpx.AsyncClient):
    """An httpx client whose cookie store is a QuickCookies (kept so when it is replaced)."""

    def __init__(self, **options: Any) -> None:
        self._quick_cookies = QuickCookies()
        super().__init__(**options)
        self._quick_cookies = QuickCookies(options.get("cookies"))

    @property
    def cookies(self) -> httpx.Cookies:
        return self._quick_cookies

    @cookies.setter
    def cookies(self, cookies: httpx._types.CookieTypes) -> None:  # pyright: ignore[reportPrivateUsage]
        self._quick_cookies = QuickCookies(cookies)


class OneWriteTransport(httpx.AsyncBaseTransport):
    """httpx transport over a ReusingPool whose connections send each request in one write."""

    def __init__(self, *, ssl_context: ssl.SSLContext | None, limits: httpx.Limits) -> None:
        self._pool = ReusingPool(
            ssl_context=ssl_context,
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=_OneWriteBackend(),
        )

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        core = httpcore.Request(
            method=request.method,
            url=httpcore.URL(
                scheme=url.raw_scheme, host=url.raw_host, port=url.port, target=url.raw_path
            ),
            headers=request.headers.raw,
            content=_body(request),
            extensions=request.extensions,
        )
        with _httpx_errors(request):
            answer = await self._pool.handle_async_request(core)
        # httpcore types this as "a mapping or an empty dict literal"; it holds str keys.
        extensions = cast(MutableMapping[str, Any], answer.extensions)  # pyright: ignore[reportUnknownMemberType]
        return httpx.Response(
            status_code=answer.status,
            headers=answer.headers,
            stream=_AnswerStream(answer, request),
            extensions=extensions,
        )

    async def aclose(self) -> None:
        await self._pool.aclose()


def _body(request: httpx.Request) -> httpx.AsyncByteStream:
    stream = request.stream
    if not isinstance(stream, httpx.AsyncByteStream):
        raise TypeError("an async client sends async request bodies")
    return stream


class _AnswerStream(httpx.AsyncByteStream):
    __slots__ = ("_answer", "_request")

    def __init__(self, answer: httpcore.Response, request: httpx.Request) -> None:
        self._answer = answer
        self._request = request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with _httpx_errors(self._request):
            async for part in self._answer.aiter_stream():
                yield part

    async def aclose(self) -> None:
        with _httpx_errors(self._request):
            await self._answer.aclose()


@contextmanager
def _httpx_errors(request: httpx.Request) -> Generator[None]:
    try:
        yield
    except _CORE_ERRORS as error:
        raise _translated(error, request) from error


def _translated(error: Exception, request: httpx.Request) -> httpx.TransportError:
    ours = next(ours for theirs, ours in _ERRORS if isinstance(error, theirs))
    return ours(str(error), request=request)


class _OneWriteBackend(httpcore.AsyncNetworkBackend):
    def __init__(self) -> None:
        # httpcore declares a stand-in AnyIOBackend for when anyio is missing; httpx needs anyio.
        self._inner = cast(httpcore.AsyncNetworkBackend, httpcore.AnyIOBackend())

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        stream = await connect_tcp(host, port, timeout, local_address, socket_options)
        return OneWriteStream(stream)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        stream = await self._inner.connect_unix_socket(path, timeout, socket_options)
        return OneWriteStream(stream)

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class OneWriteStream(httpcore.AsyncNetworkStream):
    """Holds writes until the next read (HTTP/1.1 reads only once the request is written)."""

    __slots__ = ("_held", "_inner", "_socket", "_timeout")

    def __init__(self, inner: httpcore.AsyncNetworkStream) -> None:
        self._inner = inner
        self._held: list[bytes] = []
        self._timeout: float | None = None
        # anyio hands out asyncio's TransportSocket, which is not a socket.socket but has fileno().
        raw = inner.get_extra_info("socket")
        self._socket: HasFileno | None = raw if callable(getattr(raw, "fileno", None)) else None

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
    ) -> httpcore.AsyncNetworkStream:
        if self._held:
            await self._send_held()
        wrapped = await self._inner.start_tls(ssl_context, server_hostname, timeout)
        return OneWriteStream(wrapped)

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":
            if isinstance(self._inner, SocketStream):
                return self._inner.is_readable()
            if self._socket is not None:
                return socket_readable(self._socket)
        return self._inner.get_extra_info(info)
