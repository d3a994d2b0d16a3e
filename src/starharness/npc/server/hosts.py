"""An ASGI guard refusing any request or WebSocket whose `Host` is not one of the server's names.

It stands in front of every route (`/gh`, `/healthz`, `/metrics`, `/` and static files), so a
page whose name was rebound to this machine's address reaches nothing.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import sys
from collections.abc import Awaitable, Callable, Collection

from starlette.types import ASGIApp, Receive, Scope, Send

from .security import host_allowed

_log = logging.getLogger("starharness.npc.server")
_REFUSED = b"forbidden: this server does not answer to that host name\n"
_AMBIGUOUS = b"bad request: more than one Host header\n"


class HostGuard:
    """Passes a request on only when its `Host` header names this server."""

    def __init__(
        self, app: ASGIApp, names: Collection[str], on_refused: Callable[[], None]
    ) -> None:
        self._app = app
        self._names = names
        self._on_refused = on_refused

    def __call__(self, scope: Scope, receive: Receive, send: Send) -> Awaitable[None]:
        # Not a coroutine: a passed request runs in the app's own frame, and an open WebSocket
        # does not keep a guard frame alive for its whole life (uvicorn runs us as ASGI 3).
        if scope["type"] not in ("http", "websocket"):
            return self._app(scope, receive, send)
        hosts = [value for key, value in scope.get("headers", ()) if key == b"host"]
        if len(hosts) > 1:
            # RFC 9112 3.2 asks for 400: a proxy that routes by another of them than we check
            # would let a rebound name through.
            named = ", ".join(value.decode("latin-1") for value in hosts)
            return self._refuse(scope, named, receive, send, status=400, body=_AMBIGUOUS)
        host = hosts[0].decode("latin-1") if hosts else None
        if host_allowed(host, self._names):
            return self._app(scope, receive, send)
        return self._refuse(scope, host, receive, send)

    # Servers (uvicorn's "auto", hypercorn) tell ASGI 3 from ASGI 2 by whether `__call__` is a
    # coroutine function; marked as one, `build_app` runs anywhere without naming the interface.
    if sys.version_info >= (3, 12):
        __call__ = inspect.markcoroutinefunction(__call__)
    else:
        __call__._is_coroutine = asyncio.coroutines._is_coroutine  # type: ignore[attr-defined]  # pyright: ignore

    async def _refuse(
        self,
        scope: Scope,
        host: str | None,
        receive: Receive,
        send: Send,
        *,
        status: int = 403,
        body: bytes = _REFUSED,
    ) -> None:
        self._on_refused()
        if scope["type"] == "websocket":
            # Closing before accepting makes the server answer the handshake with 403 whatever
            # `status` says: uvicorn's websocket.http.response path logs a spurious error.
            _log.warning("refused a websocket for host %.100r (403)", host)
            await receive()
            await send({"type": "websocket.close", "code": 1008})
            return
        _log.warning("refused a request for host %.100r (%d)", host, status)
        headers = [
            (b"content-type", b"text/plain; charset=utf-8"),
            (b"content-length", str(len(body)).encode()),
        ]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})
