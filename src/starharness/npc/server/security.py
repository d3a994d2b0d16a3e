"""Closed by default: loopback binding, player tokens to expose a server, the names served."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from ...runtime.credentials import Secret, aget_secret
from ...runtime.errors import UserFacingError
from ...runtime.hostguard import LOOPBACK_NAMES, AllowedHosts, is_loopback
from ..identity import PlayerTokenError, PlayerTokens
from .settings import ServerSettings

MIN_TOKEN_CHARS = 16


class ExposureError(UserFacingError, ValueError):
    """The server would be reachable from other machines without player tokens, or a
    configured credential is missing or too weak."""


@dataclass(frozen=True, slots=True)
class Credentials:
    """The server's own token (privileged) and the verifier of player tokens, each optional."""

    server_token: Secret | None
    players: PlayerTokens | None


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


def allowed_hosts(settings: ServerSettings) -> AllowedHosts:
    """Host names clients may use (loopback names, the bound address, the configured names) on
    any port (a proxy may forward another), and the configured browser origins."""
    names = set(LOOPBACK_NAMES)
    names.update(settings.public_names)
    bound = settings.host.strip().strip("[]").lower()
    try:
        if not ipaddress.ip_address(bound).is_unspecified:
            names.add(bound)
    except ValueError:
        names.add(bound)
    return AllowedHosts.of(names, origins=settings.allow_origin)
