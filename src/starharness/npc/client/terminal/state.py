"""What the terminal client knows: where the conversation is and what input means now."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from enum import Enum

from pydantic import JsonValue

from ...frames import NpcEntry, OptionItem


class Phase(Enum):
    """Where the conversation is; input is read only in LOBBY and IDLE."""

    HANDSHAKE = "handshake"
    LOBBY = "lobby"
    OPENING = "opening"
    TURN = "turn"
    IDLE = "idle"


_READY_PHASES = frozenset({Phase.LOBBY, Phase.IDLE})


@dataclass(slots=True)
class TalkState:
    """The connection's player, the NPCs there are, and the open encounter if any."""

    player_id: str
    npcs: list[NpcEntry] = field(default_factory=list[NpcEntry])
    hud: dict[str, JsonValue] | None = None
    encounter_id: str | None = None
    npc_name: str = ""
    opened: bool = False
    options: list[OptionItem] = field(default_factory=list[OptionItem])
    phase: Phase = Phase.HANDSHAKE
    fatal: str | None = None
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    _encounters_opened: int = 0

    def enter(self, phase: Phase) -> None:
        """Move to `phase`; input waits until the phase accepts it."""
        self.phase = phase
        if phase in _READY_PHASES:
            self.ready.set()
        else:
            self.ready.clear()

    def begin_encounter(self, npc_name: str) -> str:
        """Start opening a new encounter and return its fresh id."""
        self._encounters_opened += 1
        self.encounter_id = f"talk-{self._encounters_opened}"
        self.npc_name = npc_name
        self.opened = False
        self.options = []
        self.enter(Phase.OPENING)
        return self.encounter_id

    def end_encounter(self) -> None:
        """Forget the current encounter; input picks an NPC again."""
        self.encounter_id = None
        self.npc_name = ""
        self.opened = False
        self.options = []
        self.enter(Phase.LOBBY)

    def fail(self, reason: str) -> None:
        """The session cannot go on; the client ends with `reason`."""
        self.fatal = reason

    def here(self) -> str | None:
        """The player's location id from the HUD (`location: {id}`, `location` or `locationId`)."""
        hud = self.hud or {}
        place = hud.get("location", hud.get("locationId"))
        if isinstance(place, dict):
            place = place.get("id")
        return place if isinstance(place, str) and place else None

    def present(self) -> list[NpcEntry]:
        """The NPCs at the player's location (all of them when the HUD names no location)."""
        here = self.here()
        return [npc for npc in self.npcs if here is None or npc.location_id == here]

    def npc_names(self) -> dict[str, str]:
        """NPC id -> name, for words instead of ids."""
        return {npc.id: npc.name for npc in self.npcs}

    def npc_named(self, npc_id: str) -> str:
        """The display name of `npc_id` from `welcome`, or the id itself."""
        return next((npc.name for npc in self.npcs if npc.id == npc_id), npc_id)
