"""Who may use the web UI: the Host and Origin allow-lists (DNS rebinding) and the token."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from http.cookies import CookieError, SimpleCookie

from ..npc.server.security import is_loopback, presented_token, token_matches
from ..runtime.credentials import Secret

TOKEN_COOKIE = "star_harness_token"
"""Set when the page is opened with a valid ?token=, so its scripts and socket carry it."""
LOOPBACK_HOSTS: tuple[str, ...] = ("127.0.0.1", "localhost", "[::1]")


@dataclass(frozen=True, slots=True)
class Access:
    """`hosts` are host[:port] values a request's Host may carry; `origins` full origins."""

    hosts: frozenset[str]
    origins: frozenset[str]
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
        names: set[str] = set(LOOPBACK_HOSTS) if is_loopback(host) else {host.lower()}
        names.update(h.lower() for h in extra_hosts)
        hosts: set[str] = {f"{name}:{port}" for name in names}
        if port == 80:
            hosts |= names
        origins = {f"http://{h}" for h in hosts} | {o.rstrip("/").lower() for o in extra_origins}
        return cls(frozenset(h.lower() for h in hosts), frozenset(origins), token)

    def refusal(self, headers: Mapping[str, str], query: Mapping[str, str]) -> str | None:
        """Why a request is refused, or None when it may go on."""
        host = headers.get("host", "").strip().lower()
        if host not in self.hosts:
            return (
                f"host {host!r} is not served here (a rebound DNS name?); to serve it, "
                "start star-harness web with --allow-host NAME"
            )
        origin = headers.get("origin")
        if origin is not None and origin.strip().rstrip("/").lower() not in self.origins:
            return f"origin {origin!r} may not use this server"
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
