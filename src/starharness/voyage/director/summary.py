"""The world summary the director reads after each tick: every market, its bounds, the news."""

from __future__ import annotations

from typing import Final

from starharness.npc import World as AnyWorld

from ..store import VoyageWorld, WorldReader
from .actions import POST_HEADLINE
from .bounds import EconomyBounds
from .lines import MARKETS_HEADER, MarketLine, day_line, headlines_line

NEWS_ITEMS: Final = 5


def market_lines(reader: WorldReader, bounds: EconomyBounds) -> list[MarketLine]:
    """Every exchange of every place, with what the director may do there today."""
    goods = {good.id: good for good in reader.goods()}
    lines: list[MarketLine] = []
    for place in reader.locations():
        for quote in reader.market(place.id):
            good = goods[quote.good_id]
            room = max(0, bounds.stock_cap(quote.target_stock) - quote.stock)
            lines.append(
                MarketLine(
                    location_id=place.id,
                    good_id=good.id,
                    name=good.name,
                    price=quote.price,
                    base=good.base_price,
                    allowed=bounds.allowed_today(good.id, quote.price),
                    stock=quote.stock,
                    target=quote.target_stock,
                    max_restock=min(bounds.max_restock(quote.target_stock), room),
                )
            )
    return lines


def summarise(world: AnyWorld, days: int, bounds: EconomyBounds) -> str:
    """The brief for one director turn, read in one snapshot."""
    if not isinstance(world, VoyageWorld):
        raise TypeError(f"the director runs on an Omega station world, not {type(world).__name__}")
    with world.snapshot() as reader:
        day = reader.day()
        places = ", ".join(f"{place.name} [{place.id}]" for place in reader.locations())
        lines = market_lines(reader, bounds)
        posted = reader.count_committed(POST_HEADLINE, day)
        news = reader.latest_news(NEWS_ITEMS)
    text = [day_line(day, days), f"Places: {places}.", MARKETS_HEADER]
    text += [line.render() for line in lines]
    text.append(headlines_line(posted, bounds.headlines_per_day))
    if news:
        text.append("Latest news, newest first:")
        text += [f"- (day {item.day}) [{item.location_id}] {item.headline}" for item in news]
    return "\n".join(text)
