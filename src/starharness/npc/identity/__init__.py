"""Player identity: signed, expiring player tokens that bind a connection to one player."""

from .tokens import (
    ALGORITHM,
    DEFAULT_AUDIENCE,
    MIN_SECRET_CHARS,
    SCOPE_METRICS,
    SCOPE_TICK,
    PlayerClaims,
    PlayerTokenError,
    PlayerTokens,
    mint_player_token,
)

__all__ = [
    "ALGORITHM",
    "DEFAULT_AUDIENCE",
    "MIN_SECRET_CHARS",
    "SCOPE_METRICS",
    "SCOPE_TICK",
    "PlayerClaims",
    "PlayerTokenError",
    "PlayerTokens",
    "mint_player_token",
]
