"""Who may reach a server on this machine: its Host and Origin (DNS rebinding), and its token.

One guard for every server star-harness runs (the web UI and the NPC server), so the two never
read the same request differently again: each builds its `AllowedHosts` and stands `HostGuard`
in front of its app.
"""

from __future__ import annotations

import asyncio
import hmac
import inspect
import ipaddress
import sys
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import SplitResult, urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from .credentials import Secret

LOOPBACK_NAMES: frozenset[str] = frozenset(
    {"localhost", "localhost.localdomain", "ip6-localhost", "127.0.0.1", "::1"}
)
"""Names and addresses that always mean this machine."""
_POLICY_VIOLATION = 1008


def is_loopback(host: str) -> bool:
    """Whether binding `host` keeps the server on this machine."""
    name = _name(host)
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def presented_token(headers: Mapping[str, str], query: Mapping[str, str]) -> str | None:
    """The token a client sent: `Authorization: Bearer ...`, else `?token=` (for browsers)."""
    authorization = headers.get("authorization", "")
    scheme, _, value = authorization.partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    return query.get("token")


def token_matches(expected: Secret | None, presented: str | None) -> bool:
    """True without a configured token; otherwise a constant-time comparison."""
    if expected is None:
        return True
    if presented is None:
        return False
    return hmac.compare_digest(expected.reveal().strip().encode(), presented.encode())


@dataclass(frozen=True, slots=True)
class AllowedHosts:
    """The names a server answers to, on `port` (None: whichever port the request came in on,
    as behind a proxy), and the other origins whose pages may use it."""

    names: frozenset[str]
    port: int | None = None
    origins: frozenset[str] = frozenset()

    @classmethod
    def of(
        cls, names: Iterable[str], port: int | None = None, origins: Iterable[str] = ()
    ) -> AllowedHosts:
        """Names as given on a command line ('[::1]', 'Example.COM.'), origins with or without
        a trailing slash."""
        return cls(
            frozenset(_name(name) for name in names),
            port,
            frozenset(origin.strip().rstrip("/").lower() for origin in origins),
        )

    def allows_host(self, host_header: str | None) -> bool:
        """Whether the `Host` header names this server (a rebound name does not)."""
        served = _split(host_header)
        if served is None or served.hostname is None or _name(served.hostname) not in self.names:
            return False
        return self.port is None or _port(served, 80) == self.port

    def allows_origin(self, origin: str | None, host_header: str | None) -> bool:
        """Browsers send Origin: accept the configured origins and the server's own.

        The server's own is one of its names on the port the request came in on, so a rebound
        page (whose Origin and Host both carry the attacker's name) is refused. Clients that
        send no Origin (engines, tools) are not browsers and are not checked here.
        """
        if origin is None:
            return True
        normalised = origin.strip().rstrip("/").lower()
        if normalised in self.origins:
            return True
        parts = _split(normalised, scheme=True)
        served = _split(host_header)
        if parts is None or served is None or parts.scheme not in ("http", "https"):
            return False
        if parts.hostname is None or _name(parts.hostname) not in self.names:
            return False
        default = 443 if parts.scheme == "https" else 80
        return _port(parts, default) == _port(served, default)


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a request is refused, and the HTTP status it gets (a WebSocket handshake gets 403)."""

    reason: str
    status: int = 403


class HostGuard:
    """ASGI: passes a request or WebSocket on only when it carries one `Host` naming the server
    and `check` (Origin, token, ...) finds nothing to refuse; `on_refused` hears each refusal."""

    def __init__(
        self,
        app: ASGIApp,
        hosts: AllowedHosts,
        *,
        hint: str = "",
        check: Callable[[Scope, Mapping[str, str]], str | None] | None = None,
        on_refused: Callable[[Scope, Refusal], None] | None = None,
    ) -> None:
        self._app = app
        self._hosts = hosts
        self._hint = hint
        self._check = check
        self._on_refused = on_refused

    def __call__(self, scope: Scope, receive: Receive, send: Send) -> Awaitable[None]:
        # Not a coroutine: a passed request runs in the app's own frame, and an open WebSocket
        # does not keep a guard frame alive for its whole life (uvicorn runs us as ASGI 3).
        if scope["type"] not in ("http", "websocket"):
            return self._app(scope, receive, send)
        raw: list[tuple[bytes, bytes]] = scope.get("headers", [])
        hosts = [value.decode("latin-1") for key, value in raw if key == b"host"]
        if len(hosts) > 1:
            # RFC 9112 3.2 asks for 400: a proxy that routes by another of them than we check
            # would let a rebound name through.
            refusal = Refusal(f"more than one Host header ({', '.join(hosts)!r:.100})", 400)
            return self._refuse(scope, refusal, receive, send)
        host = hosts[0] if hosts else None
        if not self._hosts.allows_host(host):
            reason = f"host {host!r:.100} is not served here (a rebound DNS name?)"
            return self._refuse(scope, Refusal(reason + self._hint), receive, send)
        if self._check is not None:
            headers = {key.decode("latin-1"): value.decode("latin-1") for key, value in raw}
            reason = self._check(scope, headers)
            if reason is not None:
                return self._refuse(scope, Refusal(reason), receive, send)
        return self._app(scope, receive, send)

    # Servers (uvicorn's "auto", hypercorn) tell ASGI 3 from ASGI 2 by whether `__call__` is a
    # coroutine function; marked as one, the guarded app runs anywhere without naming it.
    if sys.version_info >= (3, 12):
        __call__ = inspect.markcoroutinefunction(__call__)
    else:
        __call__._is_coroutine = asyncio.coroutines._is_coroutine  # type: ignore[attr-defined]  # pyright: ignore

    async def _refuse(self, scope: Scope, refusal: Refusal, receive: Receive, send: Send) -> None:
        if self._on_refused is not None:
            self._on_refused(scope, refusal)
        if scope["type"] == "websocket":
            # Closing before accepting makes the server answer the handshake with 403 whatever
            # the status: uvicorn's websocket.http.response path logs a spurious error.
            await receive()
            await send({"type": "websocket.close", "code": _POLICY_VIOLATION})
            return
        body = f"refused: {refusal.reason}\n".encode()
        headers = [
            (b"content-type", b"text/plain; charset=utf-8"),
            (b"content-length", str(len(body)).encode()),
        ]
        await send({"type": "http.response.start", "status": refusal.status, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def _name(host: str) -> str:
    return host.strip().strip("[]").rstrip(".").lower()


def _split(value: str | None, *, scheme: bool = False) -> SplitResult | None:
    """`value` (an origin, or a Host header's host[:port]) split, or None when malformed."""
    if value is None:
        return None
    try:
        parts = urlsplit(value.strip().lower() if scheme else f"//{value.strip().lower()}")
        _ = parts.port  # raises on a port that is not a number
    except ValueError:
        return None
    return parts


def _port(parts: SplitResult, default: int) -> int:
    return parts.port or default
