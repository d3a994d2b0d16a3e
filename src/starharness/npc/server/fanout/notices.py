"""The text of the bus's notices: what a NOTIFY payload says and how a listener reads it."""

from __future__ import annotations

from dataclasses import dataclass

WORLD_CHANNEL = "star_harness_world"
"""Payload: the id of the last news row the announcing transaction committed."""
HUD_CHANNEL = "star_harness_hud"
"""Payload: `p:` and a player id, or `*` for every player."""

MAX_PAYLOAD_BYTES = 7900
"""NOTIFY refuses payloads of 8000 bytes or more; a longer player id is announced as `*`."""
_ALL = "*"
_PLAYER = "p:"


class NoticeError(ValueError):
    """A notice payload this build cannot read."""


@dataclass(frozen=True, slots=True)
class HudNotice:
    """A HUD change: one player's, or every player's (`player_id` None)."""

    player_id: str | None


def hud_payload(player_id: str | None) -> str:
    """The payload announcing that `player_id`'s HUD changed (None: everyone's)."""
    if player_id is None:
        return _ALL
    payload = _PLAYER + player_id
    if len(payload.encode()) > MAX_PAYLOAD_BYTES or "\x00" in payload:
        return _ALL
    return payload


def parse_hud(payload: str) -> HudNotice:
    """The HUD notice in `payload`; NoticeError for anything `hud_payload` does not write."""
    if payload == _ALL:
        return HudNotice(None)
    fits = "\x00" not in payload and len(payload.encode()) <= MAX_PAYLOAD_BYTES
    if fits and payload.startswith(_PLAYER) and len(payload) > len(_PLAYER):
        return HudNotice(payload[len(_PLAYER) :])
    raise NoticeError(f"a HUD notice is {_ALL!r} or 'p:<player id>', got {payload[:80]!r}")


def parse_world(payload: str) -> int:
    """The news id a world notice announces; NoticeError unless a non-negative decimal."""
    if not payload.isascii() or not payload.isdecimal() or len(payload) > 19:
        raise NoticeError(f"a world notice is a news id (decimal digits), got {payload[:80]!r}")
    return int(payload)
