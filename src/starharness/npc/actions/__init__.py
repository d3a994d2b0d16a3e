"""Game actions: the only way a model changes the world."""

from .as_tool import action_tool
from .binding import ENCOUNTER, ActionAttempt, EncounterBinding, Role
from .factory import (
    ActionDefinitionError,
    Apply,
    GameAction,
    Narrate,
    StandingOffers,
    Tx,
    define_game_action,
    standing_drafts,
)
from .guards import Guard, in_range, predicate
from .offers import (
    ACCEPTED_OFFER,
    OFFER_CHANGED,
    OFFERED,
    Offer,
    OfferDraft,
    OfferTerms,
    Propose,
    Terms,
)
from .refusal import CounterOffer, Refusal, StandingOffer

__all__ = [
    "ACCEPTED_OFFER",
    "ENCOUNTER",
    "OFFERED",
    "OFFER_CHANGED",
    "ActionAttempt",
    "ActionDefinitionError",
    "Apply",
    "CounterOffer",
    "EncounterBinding",
    "GameAction",
    "Guard",
    "Narrate",
    "Offer",
    "OfferDraft",
    "OfferTerms",
    "Propose",
    "Refusal",
    "Role",
    "StandingOffer",
    "StandingOffers",
    "Terms",
    "Tx",
    "action_tool",
    "define_game_action",
    "in_range",
    "predicate",
    "standing_drafts",
]
