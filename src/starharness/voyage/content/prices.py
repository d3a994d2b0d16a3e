"""The price rules of Omega station: how far from the going price an NPC may set the price of
a deal. One definition: the actions' guards enforce these bands, the scene states them and the
offline brain prices its offers from them, so every price the brain offers commits."""

from __future__ import annotations

import math
from dataclasses import dataclass

PRICE_BAND = 0.25
"""An NPC may price a unit up to 25% below or above the going price where it stands."""
SELL_FLOOR = 0.9
"""An NPC sells at no less than 90% of the going price (and no more than 125%)..."""
BUY_CEILING = 0.85
"""...and buys at no more than 85% of it (and no less than 75%): every price it pays is below
every price it asks at the same place and day, so buying and selling back always loses."""


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


def sell_band(going: int) -> PriceBand:
    """The unit prices an NPC may sell at: from 90% to 125% of the going price."""
    low = max(1, math.ceil(going * SELL_FLOOR))
    high = max(low, math.floor(going * (1 + PRICE_BAND)))
    return PriceBand(going, low, high)


def buy_band(going: int) -> PriceBand:
    """The unit prices an NPC may buy at: from 75% to 85% of the going price, always below
    the lowest price it sells at (at a going price of 1 both are 1: no gain either way)."""
    high = max(1, min(math.floor(going * BUY_CEILING), sell_band(going).low - 1))
    low = max(1, min(high, math.ceil(going * (1 - PRICE_BAND))))
    return PriceBand(going, low, high)


SELLS_LINE = "Sells from the hold, units at going price: "
"""How a scene starts the list of goods the NPC sells (it sells at 90-125% of these prices)."""
BUYS_LINE = (
    f"Buys, paying {(1 - PRICE_BAND) * 100:.0f}-{BUY_CEILING:.0%} of the going price shown: "
)
"""How a scene starts the list of goods the NPC buys, with their going prices: the NPC pays
less than that, as `buy_band` says."""
