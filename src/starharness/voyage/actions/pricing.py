"""The price band: how far from the going price an NPC may set the price of a deal."""

from __future__ import annotations

import math
from dataclasses import dataclass

PRICE_BAND = 0.25
"""An NPC may price a unit up to 25% below or above the going price where it stands."""


@dataclass(frozen=True, slots=True)
class PriceBand:
    """The unit prices allowed for one good at one place."""

    going: int
    low: int
    high: int

    def allows(self, unit_price: int) -> bool:
        return self.low <= unit_price <= self.high

    def nearest(self, unit_price: int) -> int:
        """The allowed unit price closest to the one asked for."""
        return max(self.low, min(self.high, unit_price))


def band_around(going: int, share: float = PRICE_BAND) -> PriceBand:
    """The band of unit prices within `share` of the going price (never below 1)."""
    low = max(1, math.ceil(going * (1 - share)))
    high = max(low, math.floor(going * (1 + share)))
    return PriceBand(going, low, high)
