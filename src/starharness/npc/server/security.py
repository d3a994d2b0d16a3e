"""Closed by default: loopback binding, an auth token to expose a server, Origin checks."""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Mapping, Sequence
from urllib.parse import urlsplit

from ...runtime.credentials import Secret, aget_secret
from ...runtime.errors import UserFacingError

_LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})


class ExposureError(UserFacingError, ValueError):
    """The server would be reachable from other machines without a token."""


def is_loopback(host: str) -> bool:
    """Whether binding `host` keeps the server on this machine."""
    name = host.strip().strip("[]").lower()
    if name in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


async def resolve_token(host: str, variable: str | None) -> Secret | None:
    """The token clients must present, or None; refuses a non-loopback host without one."""
    if variable is None:
        if not is_loopback(host):
            raise ExposureError(
                f"binding {host!r} exposes the server to other machines: name the variable "
                "holding an auth token with --auth-token-env NAME (or bind 127.0.0.1)"
            )
        return None
    secret = await aget_secret(variable)
    if secret is None or not secret.reveal().strip():
        raise ExposureError(f"{variable} is not set: it must hold the server's auth token")
    return secret


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


def origin_allowed(origin: str | None, host_header: str | None, allowed: Sequence[str]) -> bool:
    """Browsers send Origin: accept the server's own origin and the configured ones.

    Clients that send no Origin (engines, tools) are not browsers and are not checked here.
    """
    if origin is None:
        return True
    normalised = origin.strip().rstrip("/").lower()
    if normalised in allowed:
        return True
    parts = urlsplit(normalised)
    if parts.scheme not in ("http", "https") or host_header is None:
        return False
    default = 443 if parts.scheme == "https" else 80
    try:
        served = urlsplit(f"//{host_header.strip().lower()}")
        return (parts.hostname, parts.port or default) == (served.hostname, served.port or default)
    except ValueError:
        return False
