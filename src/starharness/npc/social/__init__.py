"""A social world: witnesses who remember what they saw, gossip that carries memories between
NPCs as the clock advances, and memories kept within a small model's token budget."""

from .budget import (
    IMPORTANT,
    MOST,
    NOTABLE,
    TRIVIA,
    TokenBudget,
    check_importance,
    estimate_tokens,
    is_trivia,
)
from .gossip import GossipPass, GossipRules, Hearsay, acquaintances, attributed, plan_gossip
from .witness import Presence, WitnessRules, witnesses

__all__ = [
    "IMPORTANT",
    "MOST",
    "NOTABLE",
    "TRIVIA",
    "GossipPass",
    "GossipRules",
    "Hearsay",
    "Presence",
    "TokenBudget",
    "WitnessRules",
    "acquaintances",
    "attributed",
    "check_importance",
    "estimate_tokens",
    "is_trivia",
    "plan_gossip",
    "witnesses",
]
