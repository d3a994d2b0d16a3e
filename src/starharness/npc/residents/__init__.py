"""Resident agents: a game's own agents that act on the world after each clock tick."""

from .resident import Brief, News, Resident
from .runner import RESIDENT_KIND, ResidentDefinitionError, ResidentRunner, ResidentTurn

__all__ = [
    "RESIDENT_KIND",
    "Brief",
    "News",
    "Resident",
    "ResidentDefinitionError",
    "ResidentRunner",
    "ResidentTurn",
]
