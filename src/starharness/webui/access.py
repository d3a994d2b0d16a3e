"""Who may use the web UI: the Host and Origin allow-lists (DNS rebinding) and the token."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from http.cookies import CookieError, SimpleCookie
from urllib.parse import parse_qsl

from starlette.types import ASGIApp, Scope

from ..runtime.credentials import Secret
from ..runtime.hostguard import (
    LOOPBACK_NAMES,
    AllowedHosts,
    HostGuard,
    is_loopback,
    presented_token,
    token_matches,
)

TOKEN_COOKIE = "star_harness_token"
"""Set when the page is opened with a valid ?token=, so its scripts and socket carry it."""
_HINT = "; to serve it, start star-harness web with --allow-host NAME"


@dataclass(frozen=True, slots=True)
class Access:
    """The names (on the served port) and origins the web UI answers to, and its token."""

    hosts: AllowedHosts
    token: Secret | None = None

    @classmethod
    def for_server(
        cls,
        host: str,
        port: int,
        *,
        extra_hosts: Iterable[str] = (),
        extra_origins: Iterable[str] = (),
        token: Secret | None = None,
    ) -> Access:
        names = set(LOOPBACK_NAMES) if is_loopback(host) else {host}
        names.update(extra_hosts)
        return cls(AllowedHosts.of(names, port, extra_origins), token)

    def guard(self, app: ASGIApp) -> ASGIApp:
        """`app` behind the Host, Origin and token checks (every HTTP request and WebSocket)."""
        return HostGuard(app, self.hosts, hint=_HINT, check=self._refusal)

    def _refusal(self, scope: Scope, headers: Mapping[str, str]) -> str | None:
        origin = headers.get("origin")
        if not self.hosts.allows_origin(origin, headers.get("host")):
            return f"origin {origin!r} may not use this server"
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        presented = presented_token(headers, query) or _cookie(headers.get("cookie", ""))
        if not token_matches(self.token, presented):
            return "a valid token is required (open the page with ?token=...)"
        return None


def _cookie(header: str) -> str | None:
    cookies = SimpleCookie()
    try:
        cookies.load(header)
    except CookieError:
        return None
    morsel = cookies.get(TOKEN_COOKIE)
    return morsel.value if morsel is not None else None
