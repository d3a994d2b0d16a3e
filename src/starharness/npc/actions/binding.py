"""What an encounter tells its actions: who acts, on whom, in which world, and who to tell."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from ...runtime.kernel import ServiceKey
from ..world import World
from ..world_calls import IN_THREADS, WorldCalls

if TYPE_CHECKING:
    from .offers import Propose


class Role(StrEnum):
    """Encounter roles an action parameter can be bound to."""

    NPC = "npc"
    PLAYER = "player"


@dataclass(frozen=True, slots=True)
class ActionAttempt:
    """One attempt as the encounter reports it: committed (ok) or refused."""

    name: str
    ok: bool
    summary: str
    arguments: dict[str, Any]
    result: dict[str, Any]


@dataclass(frozen=True, slots=True)
class EncounterBinding:
    """Provided on each encounter's (or resident's) agent layer; actions read it at call time.

    A resident acts with `npc_id` set to its name and no player (`player_id` empty).
    """

    world: World
    npc_id: str
    player_id: str
    report: Callable[[ActionAttempt], None]
    calls: WorldCalls = IN_THREADS
    """Where actions run: on the event loop (`Game.world_calls_inline`) or in worker threads."""
    propose: Propose | None = None
    """Holds an offer for the player to accept (an encounter); None where no player can accept
    (a resident), so actions that take from the player are refused there."""
    committed: Callable[[], Awaitable[None]] | None = None
    """Awaited after an action committed on the model's word, before the model hears its
    result: the encounter re-reads the deals the change may have opened (a job just taken
    can be handed in at once), so this turn's options already show them."""

    def role(self, role: Role) -> str:
        return self.npc_id if role is Role.NPC else self.player_id


ENCOUNTER: ServiceKey[EncounterBinding] = ServiceKey(
    "npc.encounter", "game actions run only inside an encounter"
)
