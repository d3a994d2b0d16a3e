"""Who a connection is: the player it is bound to, and whether it holds the server's credential.

Three kinds of server: a local one (no credentials: a single player on this machine, trusted),
one with the server's auth token (every client presents it), and one with player tokens (each
connection proves which player it is; the auth token then marks the game server's own
connection, which may act for any player and drive the clock).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

from ...runtime.hostguard import presented_token, token_matches
from ..frames import ErrorCode, FrameError
from ..identity import PlayerClaims, PlayerTokenError
from .security import Credentials

_NO_SCOPES: frozenset[str] = frozenset()
"""Shared by every connection without scopes (`frozenset()` makes a new 216-byte set each time)."""


@dataclass(slots=True)
class Access:
    """What one connection may do; `bind` narrows it to one player for good."""

    credentials: Credentials
    privileged: bool = False
    player_id: str | None = None
    claims: PlayerClaims | None = None
    scopes: frozenset[str] = _NO_SCOPES

    @property
    def tokens_required(self) -> bool:
        """Whether this connection must prove a player before acting."""
        return self.credentials.players is not None and not self.privileged

    @property
    def expires_at(self) -> float | None:
        """When the token binding this connection stops counting (its `exp` plus the leeway);
        None for a connection bound by no token."""
        claims = self.claims
        if claims is None:
            return None
        return claims.expires_at + _leeway(self)

    def expired(self, now: float) -> bool:
        """Whether the token binding this connection has expired by `now`."""
        deadline = self.expires_at
        return deadline is not None and deadline < now

    def expiry_error(self, encounter_id: str | None = None) -> FrameError:
        """The `unauthorized` error an expired token's connection gets, naming when."""
        claims = self.claims
        when = "" if claims is None else f" at {_utc(claims.expires_at)}"
        return FrameError(
            ErrorCode.UNAUTHORIZED,
            f"the player token expired{when}; reconnect with a fresh one",
            encounter_id,
        )

    def has_scope(self, scope: str) -> bool:
        return self.privileged or scope in self.scopes

    def bind_token(self, token: str, player_id: str | None = None) -> None:
        """Verify a player token and bind to its player (FrameError when it does not fit)."""
        verifier = self.credentials.players
        if verifier is None:
            raise FrameError(ErrorCode.UNAUTHORIZED, "this server does not use player tokens")
        try:
            claims = verifier.verify(token)
        except PlayerTokenError as exc:
            raise FrameError(ErrorCode.UNAUTHORIZED, str(exc)) from None
        if player_id is not None and claims.player_id != player_id:
            raise FrameError(
                ErrorCode.FORBIDDEN,
                f"the player token is for {claims.player_id!r}, not {player_id!r}",
            )
        self.bind(claims.player_id)
        self.claims = claims
        self.scopes = self.scopes | claims.scopes

    def bind(self, player_id: str) -> None:
        if self.player_id is not None and self.player_id != player_id:
            raise FrameError(
                ErrorCode.FORBIDDEN,
                f"this connection is bound to player {self.player_id!r}; reconnect to switch",
            )
        self.player_id = player_id

    def check_acts_for(self, player_id: str, now: float, encounter_id: str | None = None) -> None:
        """Refuse acting for `player_id` unless this connection is that player (or trusted)."""
        if self.player_id is not None and self.player_id != player_id:
            raise FrameError(
                ErrorCode.FORBIDDEN,
                f"this connection acts for player {self.player_id!r}, not {player_id!r}",
                encounter_id,
            )
        if self.tokens_required and self.player_id is None:
            raise FrameError(
                ErrorCode.UNAUTHORIZED,
                "this server needs a player token: send `hello` with `token` first "
                "(or present it at the handshake)",
                encounter_id,
            )
        if self.expired(now):
            raise self.expiry_error(encounter_id)


def _utc(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _leeway(access: Access) -> float:
    verifier = access.credentials.players
    return verifier.leeway_s if verifier is not None else 0.0


def admit(
    credentials: Credentials, headers: Mapping[str, str], query: Mapping[str, str]
) -> Access | str:
    """The handshake's verdict: an Access, or why the connection is refused."""
    presented = presented_token(headers, query)
    access = Access(credentials)
    if (
        credentials.server_token is not None
        and presented is not None
        and token_matches(credentials.server_token, presented)
    ):
        access.privileged = True
        return access
    if credentials.players is not None:
        if presented is not None:
            try:
                access.bind_token(presented)
            except FrameError as error:
                return error.message
        return access
    if not token_matches(credentials.server_token, presented):
        return f"the auth token is {'missing' if presented is None else 'wrong'}"
    return access
