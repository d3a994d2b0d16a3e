"""Game actions: the only way a model changes the world."""

from .as_tool import action_tool
from .binding import ENCOUNTER, ActionAttempt, EncounterBinding, Role
from .factory import ActionDefinitionError, Apply, GameAction, Narrate, Tx, define_game_action
from .guards import Guard, in_range, predicate
from .refusal import Refusal

__all__ = [
    "ENCOUNTER",
    "ActionAttempt",
    "ActionDefinitionError",
    "Apply",
    "EncounterBinding",
    "GameAction",
    "Guard",
    "Narrate",
    "Refusal",
    "Role",
    "Tx",
    "action_tool",
    "define_game_action",
    "in_range",
    "predicate",
]
