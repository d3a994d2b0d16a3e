"""Display names for ids, so hints and memories read as speech rather than as keys."""

from __future__ import annotations

from collections.abc import Sequence

from ..store import WorldTx


def good_name(tx: WorldTx, good_id: str) -> str:
    found = tx.good(good_id)
    return found.name if found else good_id


def place_name(tx: WorldTx, location_id: str) -> str:
    found = tx.location(location_id)
    return found.name if found else location_id


def listing(names: Sequence[str], empty: str = "nothing at the moment") -> str:
    return ", ".join(names) if names else empty
