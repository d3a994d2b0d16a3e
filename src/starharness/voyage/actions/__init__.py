"""Omega station's actions: the NPC's hands, each guarded, transactional and audited."""

from typing import Any, Final

from ..content.prices import (
    BUY_CEILING,
    PRICE_BAND,
    SELL_FLOOR,
    PriceBand,
    band_around,
    buy_band,
    sell_band,
)
from .guards import (
    Parties,
    Priced,
    VoyageGuard,
    attitude_at_least,
    can_afford,
    going_price_here,
    has_cargo,
    has_stock,
    price_within_band,
    same_location,
)
from .intel import INTEL_MEMORY, SELL_INTEL, SELL_RUMOUR, IntelArgs
from .quests import (
    COMPLETE,
    COMPLETE_QUEST,
    OFFER,
    OFFER_QUEST,
    QUEST_MEMORY,
    TRUST_FOR_A_JOB_DONE,
    QuestArgs,
)
from .relations import (
    CHANGE,
    CHANGE_ATTITUDE,
    MAX_ATTITUDE_STEP,
    NOTE,
    NOTE_MEMORY,
    AttitudeArgs,
    NoteArgs,
)
from .speech import DEFAULT_MOOD, MAX_OPTIONS, MIN_OPTIONS, MOODS, SPEAK, SPEECH, Mood
from .trade import BUY, BUY_GOODS, MAX_UNITS, SELL, SELL_GOODS, TradeArgs
from .travel import BOOK_PASSAGE, PASSAGE, PassageArgs

ACTIONS: Final[tuple[Any, ...]] = (
    SPEAK,
    SELL,
    BUY,
    SELL_RUMOUR,
    OFFER,
    COMPLETE,
    CHANGE,
    NOTE,
    PASSAGE,
)
"""Everything an Omega station NPC can do, the speaking tool first."""

__all__ = [
    "ACTIONS",
    "BOOK_PASSAGE",
    "BUY",
    "BUY_CEILING",
    "BUY_GOODS",
    "CHANGE",
    "CHANGE_ATTITUDE",
    "COMPLETE",
    "COMPLETE_QUEST",
    "DEFAULT_MOOD",
    "INTEL_MEMORY",
    "MAX_ATTITUDE_STEP",
    "MAX_OPTIONS",
    "MAX_UNITS",
    "MIN_OPTIONS",
    "MOODS",
    "NOTE",
    "NOTE_MEMORY",
    "OFFER",
    "OFFER_QUEST",
    "PASSAGE",
    "PRICE_BAND",
    "QUEST_MEMORY",
    "SELL",
    "SELL_FLOOR",
    "SELL_GOODS",
    "SELL_INTEL",
    "SELL_RUMOUR",
    "SPEAK",
    "SPEECH",
    "TRUST_FOR_A_JOB_DONE",
    "AttitudeArgs",
    "IntelArgs",
    "Mood",
    "NoteArgs",
    "Parties",
    "PassageArgs",
    "PriceBand",
    "Priced",
    "QuestArgs",
    "TradeArgs",
    "VoyageGuard",
    "attitude_at_least",
    "band_around",
    "buy_band",
    "can_afford",
    "going_price_here",
    "has_cargo",
    "has_stock",
    "price_within_band",
    "same_location",
    "sell_band",
]
