"""The price bands the trade guards enforce (defined with the game's content, where the offline
brain reads them too)."""

from ..content.prices import (
    BUY_CEILING,
    PRICE_BAND,
    SELL_FLOOR,
    PriceBand,
    band_around,
    buy_band,
    sell_band,
)

__all__ = [
    "BUY_CEILING",
    "PRICE_BAND",
    "SELL_FLOOR",
    "PriceBand",
    "band_around",
    "buy_band",
    "sell_band",
]
