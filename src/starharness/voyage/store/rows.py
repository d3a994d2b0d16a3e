"""Plain records read from the world tables."""

from __future__ import annotations

from dataclasses import dataclass

QUEST_STATUSES = ("open", "accepted", "completed", "failed")


@dataclass(frozen=True, slots=True)
class Location:
    id: str
    name: str
    description: str


@dataclass(frozen=True, slots=True)
class Good:
    id: str
    name: str
    base_price: int
    contraband: bool


@dataclass(frozen=True, slots=True)
class Actor:
    id: str
    name: str
    kind: str
    archetype: str
    location_id: str
    alive: bool
    credits: int
    persona: str


@dataclass(frozen=True, slots=True)
class MarketQuote:
    """A location's going price and exchange stock for one good."""

    location_id: str
    good_id: str
    price: int
    stock: int
    target_stock: int


@dataclass(frozen=True, slots=True)
class TradeLine:
    """What an NPC does with one good, and the level it restocks its hold to."""

    npc_id: str
    good_id: str
    sells: bool
    buys: bool
    restock_to: int


@dataclass(frozen=True, slots=True)
class Route:
    from_id: str
    to_id: str
    seller_id: str
    fare: int
    days: int


@dataclass(frozen=True, slots=True)
class Intel:
    id: str
    npc_id: str
    kind: str
    title: str
    text: str
    price: int
    min_attitude: int


@dataclass(frozen=True, slots=True)
class Quest:
    id: str
    giver_id: str
    player_id: str | None
    kind: str
    title: str
    good_id: str
    qty: int
    reward: int
    min_attitude: int
    status: str
    accepted_day: int | None
    closed_day: int | None


@dataclass(frozen=True, slots=True)
class Memory:
    """One thing an NPC remembers; price is the total that changed hands."""

    id: int
    npc_id: str
    about_id: str
    day: int
    kind: str
    text: str
    action: str | None = None
    good_id: str | None = None
    qty: int | None = None
    price: int | None = None
    ref: str | None = None
    weight: int = 1
    """How many memories this row stands for (old ones are folded together)."""
    importance: int = 10
    """0..100: what is quoted first, kept longest and passed on (see `npc.social`)."""
    source_id: str | None = None
    """Whose deal the NPC witnessed, or who told it; None for what it lived."""
    hops: int = 0
    """How often it was retold before this NPC heard it (0: lived or seen)."""
    origin_id: int | None = None
    """The memory a witnessed or retold one stems from."""


@dataclass(frozen=True, slots=True)
class NewsItem:
    id: int
    day: int
    location_id: str
    kind: str
    headline: str


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One stored audit row; arguments are the decoded JSON."""

    id: int
    day: int
    at: float
    action: str
    actor_id: str
    target_id: str | None
    arguments: dict[str, object]
    ok: bool
    reason: str | None
    summary: str | None
