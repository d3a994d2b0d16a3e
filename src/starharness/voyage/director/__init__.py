"""Omega station's director: an optional resident agent that runs the economy after each tick.

Its changes are game actions (`set_price`, `restock`, `post_headline`, `spread_word`) within
the bounds the game declares; its offline brain plays it deterministically from the brief alone.
"""

from .actions import (
    DIRECTOR_ACTIONS,
    HEADLINE_KIND,
    MAX_HEADLINE_CHARS,
    director_actions,
)
from .bounds import OMEGA_BOUNDS, EconomyBounds, GoodBounds
from .brain import is_director_request, plan_tick, respond_director
from .lines import POST_HEADLINE, RESTOCK, SET_PRICE, MarketLine, TickBrief, parse_brief
from .resident import (
    DIRECTOR,
    DIRECTOR_NAME,
)
from .summary import (
    summarise,
)

__all__ = [
    "DIRECTOR",
    "DIRECTOR_ACTIONS",
    "DIRECTOR_NAME",
    "HEADLINE_KIND",
    "MAX_HEADLINE_CHARS",
    "OMEGA_BOUNDS",
    "POST_HEADLINE",
    "RESTOCK",
    "SET_PRICE",
    "EconomyBounds",
    "GoodBounds",
    "MarketLine",
    "TickBrief",
    "director_actions",
    "is_director_request",
    "parse_brief",
    "plan_tick",
    "respond_director",
    "summarise",
]
