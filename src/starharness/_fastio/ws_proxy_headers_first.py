"""uvicorn's proxy-headers handling, done before the app is called instead of around it.

With `proxy_headers=True` uvicorn wraps the app in `ProxyHeadersMiddleware`: a coroutine that
rewrites the scope's client and scheme from the `X-Forwarded-*` headers of trusted proxies
(`FORWARDED_ALLOW_IPS`), then awaits the app. Awaiting it keeps one coroutine frame alive for
each open WebSocket's whole life (about 0.45 KB, bench/ws_heap.py). Here the middleware's own
code rewrites the scope with nothing to await after it, and the app is called directly.

It relies on that middleware never suspending before it awaits the app (true of the uvicorn
releases `ws.py` admits, checked on every call): the server uses it only with the lean
protocol, on those releases.
"""

from __future__ import annotations

from collections.abc import Awaitable, Coroutine
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware


async def _nothing(scope: Scope, receive: Receive, send: Send) -> None:
    return None


class ProxyHeadersFirst:
    """Rewrites the scope as uvicorn's middleware would (its own code), then calls the app."""

    __slots__ = ("_app", "_rewrite")

    def __init__(self, app: ASGIApp, trusted_hosts: list[str] | str) -> None:
        self._app = app
        self._rewrite = ProxyHeadersMiddleware(_nothing, trusted_hosts)  # pyright: ignore[reportArgumentType]

    def __call__(self, scope: Scope, receive: Receive, send: Send) -> Awaitable[None]:
        if scope["type"] != "lifespan":
            _run_at_once(self._rewrite(scope, receive, send))  # pyright: ignore[reportArgumentType]
        return self._app(scope, receive, send)


def _run_at_once(coroutine: Coroutine[Any, Any, None]) -> None:
    # The middleware edits the scope in place and then awaits `_nothing`: it never suspends.
    try:
        coroutine.send(None)
    except StopIteration:
        return
    coroutine.close()
    raise RuntimeError("uvicorn's proxy-headers middleware suspended; it is not supported here")
