"""What the terminal client knows: where the conversation is and what input means now."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from enum import Enum

from pydantic import JsonValue

from ...frames import NpcEntry, OptionItem, SceneNpc


class Phase(Enum):
    """Where the conversation is; input is read only in LOBBY and IDLE."""

    HANDSHAKE = "handshake"
    LOBBY = "lobby"
    OPENING = "opening"
    TURN = "turn"
    IDLE = "idle"
    SETTLING = "settling"
    """Waiting for the harness to answer a fence: everything it does for the frames sent
    before it (a refused say, a tick and its refusal) has then been sent."""


SHARED_SCENES_REVISION = 3
"""The protocol revision whose scenes several players share (`encounter.open` with `join`)."""

FENCE_PREFIX = "talk-fence-"
"""Fences are `encounter.close` frames for ids no encounter has; the harness answers each with
`unknown_encounter` after it has handled every frame sent before (it handles a connection's
frames one at a time), and nothing else happens."""


_READY_PHASES = frozenset({Phase.LOBBY, Phase.IDLE})


@dataclass(slots=True)
class TalkState:
    """The connection's player, the NPCs there are, and the open encounter if any."""

    player_id: str
    revision: int = 1
    """The harness's protocol revision (`welcome.revision`; absent: 1)."""
    npcs: list[NpcEntry] = field(default_factory=list[NpcEntry])
    hud: dict[str, JsonValue] | None = None
    encounter_id: str | None = None
    npc_name: str = ""
    opened: bool = False
    options: list[OptionItem] = field(default_factory=list[OptionItem])
    members: list[SceneNpc] = field(default_factory=list[SceneNpc])
    """In a scene: its NPCs, as `encounter.opened` named them (empty otherwise)."""
    speaker_id: str | None = None
    """In a scene: whose line is streaming (or was last)."""
    others: dict[str, str] = field(default_factory=dict[str, str])
    """In a shared scene: the other players heard in it, id -> name (`speakerName`)."""
    in_scene: dict[str, str] | None = None
    """In a shared scene: the other players in it, id -> name, as the latest `scene.players`
    said (None before the first)."""
    phase: Phase = Phase.HANDSHAKE
    fatal: str | None = None
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    fence_wanted: bool = False
    """Set by the view when only a fence can tell whether a turn is still running."""
    fence_id: str | None = None
    """The fence being waited for in SETTLING."""
    after_fence: Phase = Phase.IDLE
    fence_ends_on_idle: bool = False
    """Whether the current encounter's `encounter.idle` also ends the wait (a fence asked after
    a turn's error: the idle says that turn is over)."""
    _fences_sent: int = 0
    _encounters_opened: int = 0

    def enter(self, phase: Phase) -> None:
        """Move to `phase`; input waits until the phase accepts it."""
        self.phase = phase
        if phase in _READY_PHASES:
            self.ready.set()
        else:
            self.ready.clear()

    def begin_fence(self, then: Phase, *, ends_on_idle: bool) -> str:
        """Wait for a fence before reading input again; `then` is the phase after it. Returns
        the fence's id to send."""
        self._fences_sent += 1
        self.fence_wanted = False
        self.fence_id = f"{FENCE_PREFIX}{self._fences_sent}"
        self.after_fence = then
        self.fence_ends_on_idle = ends_on_idle
        self.enter(Phase.SETTLING)
        return self.fence_id

    def fence_answered(self, fence_id: str) -> None:
        """The harness answered `fence_id`: go on unless something else already moved on."""
        if self.phase is Phase.SETTLING and fence_id == self.fence_id:
            self.fence_id = None
            self.enter(self.after_fence)

    def begin_encounter(self, npc_name: str) -> str:
        """Start opening a new encounter and return its fresh id."""
        self._encounters_opened += 1
        self.encounter_id = f"talk-{self._encounters_opened}"
        self.npc_name = npc_name
        self.opened = False
        self.options = []
        self.members = []
        self.speaker_id = None
        self.others = {}
        self.in_scene = None
        self.enter(Phase.OPENING)
        return self.encounter_id

    def end_encounter(self) -> None:
        """Forget the current encounter; input picks an NPC again."""
        self.encounter_id = None
        self.npc_name = ""
        self.opened = False
        self.options = []
        self.members = []
        self.speaker_id = None
        self.others = {}
        self.in_scene = None
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

    @property
    def shares_scenes(self) -> bool:
        """Whether the harness seats players who talk to the same NPCs in one scene."""
        return self.revision >= SHARED_SCENES_REVISION

    def speaker_name(self, speaker_id: str | None) -> str:
        """Who speaks: a scene's NPC (or another player in it) by `speaker_id`, else the one
        NPC talked to."""
        if speaker_id is None:
            return self.npc_name
        for member in self.members:
            if member.id == speaker_id:
                return member.name
        if speaker_id in self.others:
            return self.others[speaker_id]
        return self.npc_named(speaker_id)

    def is_other_player(self, speaker_id: str | None) -> bool:
        """Whether `speaker_id` speaks in this scene without being one of its NPCs: another
        player of a shared scene."""
        if not self.members or speaker_id is None:
            return False
        return all(member.id != speaker_id for member in self.members)

    def member_called(self, who: str) -> SceneNpc | None:
        """The scene's NPC `who` names (its id, its name or a word of it), if exactly one."""
        wanted = who.casefold()
        found = [
            member
            for member in self.members
            if wanted in (member.id.casefold(), member.name.casefold())
            or wanted in member.name.casefold().split()
        ]
        return found[0] if len(found) == 1 else None

    def npc_named(self, npc_id: str) -> str:
        """The display name of `npc_id` from `welcome`, or the id itself."""
        return next((npc.name for npc in self.npcs if npc.id == npc_id), npc_id)
