"""The director's brief, line by line: written by the summary, read back by the offline brain.

One module owns the format, so the brief a model reads and the one the brain parses never
drift apart. Pure text: no world store here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

SET_PRICE: Final = "set_price"
RESTOCK: Final = "restock"
POST_HEADLINE: Final = "post_headline"
SPREAD_WORD: Final = "spread_word"
RUN_CODE: Final = "run_code"
"""The runtime's code-mode tool (`runtime.codemode.RUN_CODE`, which the brain may not import)."""

DAY_PREFIX: Final = "Day "
MARKETS_HEADER: Final = (
    "Markets (place, good: going price, base, what one change may set today; exchange stock "
    "of target, most units one restock may add):"
)
NOT_TODAY: Final = "not today"

_DAY = re.compile(r"^Day (?P<day>\d+)\b")
_HEADLINES = re.compile(r"^Headlines: (?P<posted>\d+) of (?P<most>\d+) posted today\b")
_MARKET = re.compile(
    r"^- \[(?P<place>[^\]]+)\] \[(?P<good>[^\]]+)\] (?P<name>[^:]+): "
    r"price (?P<price>[\d,]+) \(base (?P<base>[\d,]+)\), "
    r"(?:set (?P<low>[\d,]+)\.\.(?P<high>[\d,]+) today|set not today); "
    r"stock (?P<stock>\d+) of (?P<target>\d+), restock up to (?P<restock>\d+)$"
)


@dataclass(frozen=True, slots=True)
class MarketLine:
    """One good at one place, as the brief states it."""

    location_id: str
    good_id: str
    name: str
    price: int
    base: int
    allowed: tuple[int, int] | None
    stock: int
    target: int
    max_restock: int

    def render(self) -> str:
        allowed = (
            f"set {self.allowed[0]:,}..{self.allowed[1]:,} today"
            if self.allowed is not None
            else f"set {NOT_TODAY}"
        )
        return (
            f"- [{self.location_id}] [{self.good_id}] {self.name}: price {self.price:,} "
            f"(base {self.base:,}), {allowed}; stock {self.stock} of {self.target}, "
            f"restock up to {self.max_restock}"
        )


@dataclass(frozen=True, slots=True)
class TickBrief:
    """What the brain reads back from a brief."""

    day: int
    markets: tuple[MarketLine, ...]
    headlines_left: int


def day_line(day: int, days: int) -> str:
    return f"{DAY_PREFIX}{day}: the clock just advanced {days} day{'s' if days != 1 else ''}."


def headlines_line(posted: int, most: int) -> str:
    return f"Headlines: {posted} of {most} posted today."


def parse_brief(text: str) -> TickBrief | None:
    """The brief in `text`, or None when it holds no day line."""
    day: int | None = None
    left = 0
    markets: list[MarketLine] = []
    for raw in text.splitlines():
        line = raw.strip()
        if (found := _DAY.match(line)) is not None:
            day = int(found["day"])
        elif (found := _HEADLINES.match(line)) is not None:
            left = max(0, int(found["most"]) - int(found["posted"]))
        elif (found := _MARKET.match(line)) is not None:
            markets.append(_market(found))
    return None if day is None else TickBrief(day, tuple(markets), left)


def _int(text: str) -> int:
    return int(text.replace(",", ""))


def _market(found: re.Match[str]) -> MarketLine:
    low, high = found["low"], found["high"]
    return MarketLine(
        location_id=found["place"],
        good_id=found["good"],
        name=found["name"],
        price=_int(found["price"]),
        base=_int(found["base"]),
        allowed=(_int(low), _int(high)) if low is not None and high is not None else None,
        stock=int(found["stock"]),
        target=int(found["target"]),
        max_restock=int(found["restock"]),
    )
