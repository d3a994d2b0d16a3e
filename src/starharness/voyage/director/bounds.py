"""The bounds Omega station declares for its director: how far it may move the economy."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from ..content.seed import GOODS
from ..store import ClockRules


@dataclass(frozen=True, slots=True)
class GoodBounds:
    """Where the director may put the going price of one good, at any place."""

    min_price: int
    max_price: int


@dataclass(frozen=True, slots=True)
class EconomyBounds:
    """Every limit a director action is checked against (its guards read these)."""

    goods: Mapping[str, GoodBounds]
    max_price_step: float = 0.15
    """The most one change may move a going price, as a share of it; one change per good and
    place a day, so this is also the most a price moves by the director's hand per tick."""
    max_restock_share: float = 0.5
    """The most units one restock adds, as a share of the exchange's target stock."""
    stock_ceiling: float = 2.0
    """An exchange never holds more than this multiple of its target stock after a restock."""
    headlines_per_day: int = 3
    """The most headlines the director posts on one day, across every place."""

    def good(self, good_id: str) -> GoodBounds | None:
        return self.goods.get(good_id)

    def price_step(self, going: int) -> int:
        """The most one change may move a price of `going` (at least 1)."""
        return max(1, math.floor(going * self.max_price_step))

    def allowed_today(self, good_id: str, going: int) -> tuple[int, int] | None:
        """The prices one change may set from `going`: within the step and the good's bounds."""
        bounds = self.good(good_id)
        if bounds is None:
            return None
        step = self.price_step(going)
        low = max(bounds.min_price, going - step)
        high = min(bounds.max_price, going + step)
        # None when the going price sits outside the bounds (a world with other clock rules):
        # no single change could then honour both the step and the bounds.
        return (low, high) if low <= high else None

    def max_restock(self, target_stock: int) -> int:
        """The most units one restock adds at an exchange with this target stock."""
        return max(1, math.floor(target_stock * self.max_restock_share))

    def stock_cap(self, target_stock: int) -> int:
        """The most units an exchange with this target stock may hold after a restock."""
        return max(1, math.floor(target_stock * self.stock_ceiling))


def _around_base(low: float, high: float) -> dict[str, GoodBounds]:
    return {
        good.id: GoodBounds(
            max(1, math.ceil(good.base_price * low)),
            max(1, math.floor(good.base_price * high)),
        )
        for good in GOODS
    }


_CLOCK: Final = ClockRules()

OMEGA_BOUNDS: Final = EconomyBounds(goods=_around_base(_CLOCK.floor, _CLOCK.ceiling))
"""Omega station's rule: a going price stays within the band the world clock keeps it in
(0.4 to 2.5 times the good's base price), so the clock and the director never fight."""
