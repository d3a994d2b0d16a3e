"""What an encounter needs from the server that runs it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from ...runtime.kernel import Context
from ...runtime.loop import AgentOptions
from ..world import World
from ..world_calls import WorldCalls
from .game_tools import GameKit
from .presets import ArchetypePreset

if TYPE_CHECKING:
    from .encounter import Encounter
    from .prefix_warmer import PrefixWarmer


class EncounterHost(Protocol):
    """What an encounter needs from the server running it."""

    @property
    def ctx(self) -> Context: ...

    @property
    def kit(self) -> GameKit: ...

    @property
    def world(self) -> World: ...

    @property
    def world_calls(self) -> WorldCalls:
        """Where the world's calls run: on the event loop (see `npc.calls_inline`) or in threads."""
        ...

    @property
    def agent_options(self) -> AgentOptions: ...

    @property
    def prefix_warmer(self) -> PrefixWarmer:
        """Warms NPC prefixes on a local model server; a greeting waits for its request."""
        ...

    def preset(self, archetype: str) -> ArchetypePreset:
        """The shared layer of NPCs of `archetype` (built on first use, then reused)."""
        ...

    def push_hud(self, player_id: str) -> None:
        """Send the player's HUD to every connection of that player (after a commit)."""
        ...

    def turn_done(self, seconds: float, reason: str) -> None: ...

    def usage(self, usage: Mapping[str, Any]) -> None: ...

    def encounter_ended(self, encounter: Encounter) -> None:
        """The agent is disposed and the game told; the transcript may be pruned."""
        ...
