"""Player identity: signed, expiring player tokens that bind a connection to one player."""

from .tokens import (
    DEFAULT_AUDIENCE,
    SCOPE_METRICS,
    SCOPE_TICK,
    PlayerClaims,
    PlayerTokenError,
    PlayerTokens,
    mint_player_token,
)

__all__ = [
    "DEFAULT_AUDIENCE",
    "SCOPE_METRICS",
    "SCOPE_TICK",
    "PlayerClaims",
    "PlayerTokenError",
    "PlayerTokens",
    "mint_player_token",
]
