"""Closed by default: loopback binding, player tokens to expose a server, Host and Origin checks."""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from ...runtime.credentials import Secret, aget_secret
from ...runtime.errors import UserFacingError
from ..identity import PlayerTokenError, PlayerTokens
from .settings import ServerSettings

_LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})
MIN_TOKEN_CHARS = 16


class ExposureError(UserFacingError, ValueError):
    """The server would be reachable from other machines without player tokens, or a
    configured credential is missing or too weak."""


@dataclass(frozen=True, slots=True)
class Credentials:
    """The server's own token (privileged) and the verifier of player tokens, each optional."""

    server_token: Secret | None
    players: PlayerTokens | None


def is_loopback(host: str) -> bool:
    """Whether binding `host` keeps the server on this machine."""
    name = host.strip().strip("[]").lower()
    if name in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


async def resolve_credentials(settings: ServerSettings) -> Credentials:
    """Read the configured secrets; refuses a non-loopback host without player tokens."""
    identity = settings.identity
    if identity.secret_env is None and not is_loopback(settings.host):
        raise ExposureError(
            f"binding {settings.host!r} exposes the server to other machines: players must "
            "present signed player tokens; name the variable holding their signing secret with "
            "--player-secret-env NAME (or bind 127.0.0.1)"
        )
    server_token = await _read(settings.auth_token_env, "the server's auth token")
    if server_token is not None and len(server_token.reveal().strip()) < MIN_TOKEN_CHARS:
        raise ExposureError(
            f"{settings.auth_token_env} holds a token of {len(server_token.reveal().strip())} "
            f"characters; at least {MIN_TOKEN_CHARS} are required"
        )
    players: PlayerTokens | None = None
    secret = await _read(identity.secret_env, "the player-token signing secret")
    if secret is not None:
        try:
            players = PlayerTokens(
                secret.reveal().strip(), audience=identity.audience, leeway_s=identity.leeway_s
            )
        except PlayerTokenError as exc:
            raise ExposureError(f"{identity.secret_env}: {exc}") from None
    return Credentials(server_token, players)


async def _read(variable: str | None, what: str) -> Secret | None:
    if variable is None:
        return None
    secret = await aget_secret(variable)
    if secret is None or not secret.reveal().strip():
        raise ExposureError(f"{variable} is not set: it must hold {what}")
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


def allowed_names(settings: ServerSettings) -> frozenset[str]:
    """Host names clients may use: loopback names, the bound address, the configured names."""
    names = set(_LOOPBACK_NAMES) | {"127.0.0.1", "::1"}
    names.update(settings.public_names)
    bound = settings.host.strip().strip("[]").lower()
    try:
        if not ipaddress.ip_address(bound).is_unspecified:
            names.add(bound)
    except ValueError:
        names.add(bound)
    return frozenset(names)


def host_allowed(host_header: str | None, names: Collection[str]) -> bool:
    """Whether the `Host` header names this server (a rebound name does not)."""
    if host_header is None:
        return False
    hostname = _hostname(host_header)
    return hostname is not None and _name_allowed(hostname, names)


def origin_allowed(
    origin: str | None, host_header: str | None, allowed: Sequence[str], names: Collection[str]
) -> bool:
    """Browsers send Origin: accept the server's own origin and the configured ones.

    The server's own origin counts only under an allowed name, so a rebound page (whose Origin
    and Host both carry the attacker's name) is refused. Clients that send no Origin (engines,
    tools) are not browsers and are not checked here.
    """
    if origin is None:
        return True
    normalised = origin.strip().rstrip("/").lower()
    if normalised in allowed:
        return True
    parts = urlsplit(normalised)
    if parts.scheme not in ("http", "https") or host_header is None:
        return False
    if parts.hostname is None or not _name_allowed(parts.hostname, names):
        return False
    default = 443 if parts.scheme == "https" else 80
    try:
        served = urlsplit(f"//{host_header.strip().lower()}")
        return (parts.hostname, parts.port or default) == (served.hostname, served.port or default)
    except ValueError:
        return False


def _hostname(host_header: str) -> str | None:
    try:
        return urlsplit(f"//{host_header.strip().lower()}").hostname
    except ValueError:
        return None


def _name_allowed(hostname: str, names: Collection[str]) -> bool:
    name = hostname.strip("[]").rstrip(".").lower()
    return name in names
