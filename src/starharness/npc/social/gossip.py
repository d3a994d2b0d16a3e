"""Gossip: as the world clock advances, NPCs who share a place or a route pass on a bounded
number of their memories about players, attributed to the teller, each hop worth less.

The plan is a pure function of what the NPCs know, who meets whom and a seed, so the same world
ticked the same days under the same seed spreads the same words. The game stores the passes
(each one a memory of the listener and an audit row) in the clock's transaction.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping, Sequence, Set
from dataclasses import dataclass

from .budget import check_importance


@dataclass(frozen=True, slots=True)
class GossipRules:
    """How far and how fast word travels; the game sets them."""

    seed: str = "gossip"
    per_pair: int = 2
    """Memories one NPC passes to another on one day."""
    per_day: int = 16
    """Passes in the whole world on one day, however many NPCs meet."""
    decay: float = 0.6
    """A retold memory's importance as a share of the teller's."""
    floor: int = 20
    """Nothing is passed on at an importance below this, so every chain of hops ends."""
    chance: float = 0.75
    """That two NPCs who meet talk about players on a given day."""

    def __post_init__(self) -> None:
        if self.per_pair < 1 or self.per_day < 1:
            raise ValueError("per_pair and per_day must be at least 1")
        if not 0 < self.decay < 1:
            raise ValueError(f"decay must be in (0, 1), got {self.decay}")
        if not 0 <= self.chance <= 1:
            raise ValueError(f"chance must be in [0, 1], got {self.chance}")
        check_importance(self.floor)

    def retold(self, importance: int) -> int:
        """The importance a memory has for whoever hears it from an NPC that holds it at
        `importance`."""
        return math.floor(check_importance(importance) * self.decay)

    def worth_telling(self, importance: int) -> bool:
        return self.retold(importance) >= max(1, self.floor)


@dataclass(frozen=True, slots=True)
class Hearsay:
    """A memory an NPC holds about a player and might pass on."""

    holder_id: str
    memory_id: int
    origin_id: int
    """The first memory this one stems from (its own id when it is that first one): an NPC
    never hears the same happening twice."""
    about_id: str
    importance: int
    hops: int
    """0 for what the holder lived or saw; n for what it heard at the n-th retelling."""
    text: str


@dataclass(frozen=True, slots=True)
class GossipPass:
    """One memory told by one NPC to another."""

    teller_id: str
    listener_id: str
    about_id: str
    memory_id: int
    """The teller's memory."""
    origin_id: int
    importance: int
    """The listener's (already decayed)."""
    hops: int
    """The listener's: the teller's plus one."""
    text: str
    """The teller's words, to be attributed (see `attributed`)."""


def acquaintances(
    places: Mapping[str, str], routes: Iterable[tuple[str, str]] = ()
) -> tuple[tuple[str, str], ...]:
    """Who talks to whom: NPCs at the same place, and a route's seller (crew come and go on
    its ships) with the NPCs at the route's far end.

    places maps each NPC who can talk (alive) to its place; routes are (seller, far place).
    Each pair once, in a stable order.
    """
    by_place: dict[str, list[str]] = {}
    for npc_id, place in places.items():
        by_place.setdefault(place, []).append(npc_id)
    pairs: set[tuple[str, str]] = set()
    for group in by_place.values():
        for i, a in enumerate(group):
            pairs.update(_pair(a, b) for b in group[i + 1 :])
    for seller, far in routes:
        if seller in places:
            pairs.update(_pair(seller, b) for b in by_place.get(far, ()) if b != seller)
    return tuple(sorted(pairs))


def plan_gossip(
    pairs: Sequence[tuple[str, str]],
    hearsay: Iterable[Hearsay],
    known: Mapping[str, Set[int]],
    rules: GossipRules,
    day: int,
    salt: str = "",
) -> list[GossipPass]:
    """One day's passes: each pair that talks (by the seeded chance) tells each other their
    most important memories the listener does not know yet, at most `per_pair` each way and
    `per_day` in all. What is heard today is passed on no sooner than tomorrow.

    known maps a listener to the origins it already holds beyond its own hearsay. salt tells
    apart another round on the same day (one a game triggers besides the clock's).
    """
    rng = random.Random(f"{rules.seed}:{day}:{salt}" if salt else f"{rules.seed}:{day}")
    by_holder: dict[str, list[Hearsay]] = {}
    knows: dict[str, set[int]] = {npc_id: set(origins) for npc_id, origins in known.items()}
    for item in hearsay:
        by_holder.setdefault(item.holder_id, []).append(item)
        knows.setdefault(item.holder_id, set()).add(item.origin_id)
    for items in by_holder.values():
        items.sort(key=lambda h: (-h.importance, -h.memory_id))
    order = sorted({_pair(a, b) for a, b in pairs if a != b})
    rng.shuffle(order)
    passes: list[GossipPass] = []
    for a, b in order:
        if rng.random() >= rules.chance:
            continue
        for teller, listener in ((a, b), (b, a)):
            heard = knows.setdefault(listener, set())
            told = 0
            for item in by_holder.get(teller, ()):
                if told == rules.per_pair or len(passes) == rules.per_day:
                    break
                if not rules.worth_telling(item.importance):
                    break  # sorted by importance: the rest are worth less
                if item.origin_id in heard:
                    continue
                heard.add(item.origin_id)
                passes.append(
                    GossipPass(
                        teller,
                        listener,
                        item.about_id,
                        item.memory_id,
                        item.origin_id,
                        rules.retold(item.importance),
                        item.hops + 1,
                        item.text,
                    )
                )
                told += 1
        if len(passes) == rules.per_day:
            break
    return passes


def attributed(teller_name: str, text: str) -> str:
    """The listener's memory of what the teller said: "Jo says: ..."."""
    return f"{teller_name} says: {' '.join(text.split())}"


def _pair(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a < b else (b, a)
