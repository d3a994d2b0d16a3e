"""Player tokens are JWTs (HS256) the game's backend signs: `sub` is the player, `exp` required.

Claims: `sub` (player id), `exp` (expiry, seconds since the epoch), `aud` (the server's
audience, "star-harness" by default), optional `iat`, `nbf` and `scope` (space-separated:
`world.tick` lets the holder advance the clock, `metrics` lets it read `/metrics`).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass

import jwt

from ...runtime.errors import StarHarnessError

ALGORITHM = "HS256"
DEFAULT_AUDIENCE = "star-harness"
MIN_SECRET_CHARS = 32
"""RFC 7518 asks for an HS256 key at least as long as the hash (256 bits)."""
SCOPE_TICK = "world.tick"
SCOPE_METRICS = "metrics"
_REQUIRED = ("sub", "exp", "aud")


class PlayerTokenError(StarHarnessError, ValueError):
    """A player token that is malformed, forged, expired or for another server."""


@dataclass(frozen=True, slots=True)
class PlayerClaims:
    """What a verified token says: who, until when, and what else it may do."""

    player_id: str
    expires_at: float
    scopes: frozenset[str]


class PlayerTokens:
    """Verifies player tokens signed with one secret, for one audience."""

    __slots__ = ("_audience", "_leeway", "_secret")

    def __init__(self, secret: str, *, audience: str = DEFAULT_AUDIENCE, leeway_s: float = 30.0):
        if len(secret) < MIN_SECRET_CHARS:
            raise PlayerTokenError(
                f"the player-token secret has {len(secret)} characters; "
                f"at least {MIN_SECRET_CHARS} are required"
            )
        self._secret = secret
        self._audience = audience
        self._leeway = leeway_s

    @property
    def leeway_s(self) -> float:
        return self._leeway

    def verify(self, token: str) -> PlayerClaims:
        """The token's claims, or PlayerTokenError saying what is wrong (never the secret)."""
        try:
            claims = jwt.decode(
                token,
                self._secret,
                algorithms=[ALGORITHM],
                audience=self._audience,
                leeway=self._leeway,
                options={"require": list(_REQUIRED)},
            )
        except jwt.ExpiredSignatureError:
            raise PlayerTokenError("the player token has expired") from None
        except jwt.InvalidAudienceError:
            raise PlayerTokenError("the player token is for another server (aud)") from None
        except jwt.MissingRequiredClaimError as exc:
            raise PlayerTokenError(f"the player token has no {exc.claim!r} claim") from None
        except jwt.InvalidSignatureError:
            raise PlayerTokenError("the player token's signature does not match") from None
        except jwt.PyJWTError as exc:
            raise PlayerTokenError(f"the player token is not valid: {exc}") from None
        subject = claims.get("sub")
        if not isinstance(subject, str) or not subject:
            raise PlayerTokenError("the player token's 'sub' must name the player")
        scope = claims.get("scope", "")
        if not isinstance(scope, str):
            raise PlayerTokenError("the player token's 'scope' must be a space-separated string")
        return PlayerClaims(subject, float(claims["exp"]), frozenset(scope.split()))


def mint_player_token(
    secret: str,
    player_id: str,
    *,
    ttl_s: float = 3600.0,
    scopes: Iterable[str] = (),
    audience: str = DEFAULT_AUDIENCE,
    now: float | None = None,
) -> str:
    """A token for `player_id`, valid `ttl_s` seconds (what a game backend does on login)."""
    if not player_id:
        raise ValueError("a player token needs a player id")
    if ttl_s <= 0:
        raise ValueError("ttl_s must be positive")
    if len(secret) < MIN_SECRET_CHARS:
        raise PlayerTokenError(f"the secret must have at least {MIN_SECRET_CHARS} characters")
    issued = int(time.time() if now is None else now)
    claims: dict[str, object] = {
        "sub": player_id,
        "aud": audience,
        "iat": issued,
        "exp": issued + max(1, int(ttl_s)),
    }
    scope = " ".join(sorted(set(scopes)))
    if scope:
        claims["scope"] = scope
    return jwt.encode(claims, secret, algorithm=ALGORITHM)
