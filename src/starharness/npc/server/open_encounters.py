"""The open encounters and scenes of a worker's connections, and what they see of the server."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from ...runtime.kernel import Context
from ...runtime.loop import AgentOptions
from ...runtime.session import SESSIONS
from ..encounter import (
    ArchetypePreset,
    ArchetypePresets,
    Encounter,
    GameKit,
    PrefixWarmer,
    meet_together,
)
from ..frames import EncounterOpen, ErrorCode, FrameError
from ..world import NpcCard, World, scene_opening
from ..world_calls import WorldCalls
from .connection import Connection
from .fanout import Fanout
from .metrics import ServerMetrics
from .player_connections import PlayerConnections
from .rate import TokenBucket
from .scene import Scene, SceneSeat
from .settings import ServerSettings
from .transcripts import TranscriptKeeper


class OpenEncounters:
    """Opens encounters and scenes for connections (within the server's limits), counts each
    until it ends, and is the host every encounter and scene sees."""

    def __init__(
        self,
        ctx: Context,
        kit: GameKit,
        world: World,
        calls: WorldCalls,
        agent_options: AgentOptions,
        settings: ServerSettings,
        *,
        metrics: ServerMetrics,
        fanout: Fanout,
        players: PlayerConnections,
    ) -> None:
        self._ctx = ctx
        self._kit = kit
        self._world = world
        self._calls = calls
        self._agent_options = agent_options
        self.settings = settings
        self._metrics = metrics
        self._fanout = fanout
        self._players = players
        self._presets = ArchetypePresets(
            ctx, kit, agent_options, hide_identity=settings.hide_harness_identity
        )
        self._owners: dict[Encounter, Connection] = {}
        self.prefix_warmer = PrefixWarmer(
            ctx,
            self._presets,
            agent_options,
            self._all_npcs,
            lambda: bool(self._owners),
            self._scene_opening,
        )
        """Evaluates every NPC's static prompt on a local model server before anyone talks."""
        self._scene_ends: set[asyncio.Task[None]] = set()
        """Players leaving scenes because one of their encounters there ended on its own."""
        self._shared: dict[tuple[str, frozenset[str]], Scene] = {}
        """Shared scenes open on this worker, by place and NPC set: what a `join` names."""
        self.transcripts = TranscriptKeeper(ctx.get(SESSIONS), settings.transcripts.keep)
        self._opens = TokenBucket(
            settings.limits.server_opens_per_second, settings.limits.server_open_burst
        )

    # -- what encounters see -----------------------------------------------------------------

    @property
    def ctx(self) -> Context:
        return self._ctx

    @property
    def kit(self) -> GameKit:
        return self._kit

    @property
    def world(self) -> World:
        return self._world

    @property
    def world_calls(self) -> WorldCalls:
        return self._calls

    @property
    def agent_options(self) -> AgentOptions:
        return self._agent_options

    def preset(self, archetype: str) -> ArchetypePreset:
        return self._presets.get(archetype)

    @property
    def encounters(self) -> list[Encounter]:
        """Every open encounter of every connection."""
        return list(self._owners)

    def push_hud(self, player_id: str) -> None:
        """The player's HUD changed (an action committed): every worker showing it re-reads it."""
        self._fanout.hud_changed(player_id)

    def turn_done(self, seconds: float, reason: str) -> None:
        self._metrics.turn_seconds.labels(reason).observe(seconds)

    def usage(self, usage: Mapping[str, Any]) -> None:
        self._metrics.usage(usage)

    def encounter_ended(self, encounter: Encounter) -> None:
        connection = self._owners.pop(encounter, None)
        if connection is not None:
            connection.forget(encounter)
            self._metrics.open_encounters.dec()
            self._players.release(connection, encounter.player_id)
        if encounter.has_session:
            self.transcripts.ended(encounter.session_id)

    # -- what connections ask ----------------------------------------------------------------

    async def open_scene(self, connection: Connection, frame: EncounterOpen) -> SceneSeat:
        """Seat the player in a scene of the NPCs `frame.npc_ids` names (with `join`, the
        shared one of them at the player's place, opened if there is none); raises
        FrameError saying why not."""
        npc_ids = frame.npc_ids
        assert npc_ids is not None
        self._admit_open(frame, len(npc_ids))
        # The player's meeting with each NPC is checked for a join too: a scene at another
        # place, or of NPCs this player cannot meet, is never joined.
        cards = await self._calls.run(
            meet_together, self._world, frame.id, npc_ids, frame.player_id
        )
        if not frame.join:
            scene = self._new_scene(cards)
            return await scene.seat(
                self, frame, cards, frame.player_id, connection.send, connection
            )
        name = await self._calls.run(_player_name, self._world, frame.player_id)
        key = (cards[0].location_id, frozenset(npc_ids))
        scene = self._shared.get(key)
        if scene is None or scene.closed:
            scene = self._new_scene(cards, shared=key)
            self._shared[key] = scene
        return await scene.seat(self, frame, cards, name, connection.send, connection)

    def _new_scene(
        self, cards: list[NpcCard], shared: tuple[str, frozenset[str]] | None = None
    ) -> Scene:
        def forget(scene: Scene) -> None:
            if shared is not None and self._shared.get(shared) is scene:
                del self._shared[shared]

        return Scene(
            cards,
            self._kit.protocol,
            self.settings.scene.max_npc_lines,
            mood=self._kit.style.default_mood,
            shared=shared is not None,
            on_empty=forget,
        )

    @property
    def shared_scenes(self) -> list[Scene]:
        """The shared scenes open on this worker."""
        return list(self._shared.values())

    def scene_member(self, encounter: Encounter, owner: object) -> None:
        """A scene's NPC's encounter opened: counted as any encounter of `owner`'s."""
        assert isinstance(owner, Connection)
        self._owners[encounter] = owner
        self._metrics.open_encounters.inc()
        self._players.attach(owner, encounter.player_id)

    def end_scene(self, seat: SceneSeat) -> None:
        """One of `seat`'s encounters ended on its own (a deal took the player away): the
        player leaves the scene."""
        task = asyncio.get_running_loop().create_task(seat.close(), name=f"leave scene {seat.id}")
        self._scene_ends.add(task)
        task.add_done_callback(self._scene_ends.discard)

    def _admit_open(self, frame: EncounterOpen, npcs: int) -> None:
        limits = self.settings.limits
        if len(self._owners) + npcs > limits.max_server_encounters:
            raise FrameError(
                ErrorCode.BUSY,
                f"the server is full ({limits.max_server_encounters} open encounters); "
                "try again shortly",
                frame.id,
            )
        if not self._opens.take():
            raise FrameError(
                ErrorCode.BUSY,
                "too many encounters are opening at once; try again shortly",
                frame.id,
            )

    async def open_encounter(self, connection: Connection, frame: EncounterOpen) -> Encounter:
        self._admit_open(frame, 1)
        encounter = await Encounter.open(self, frame, connection.send)
        self._owners[encounter] = connection
        self._metrics.open_encounters.inc()
        self._players.attach(connection, frame.player_id)
        return encounter

    def start_warming(self) -> None:
        """Start evaluating the NPCs' static prompts on a local model server (if one is used)."""
        self.prefix_warmer.start(self._presets.profile())

    async def _all_npcs(self) -> list[NpcCard]:
        return await self._calls.run(_npcs_of, self._world)

    async def _scene_opening(self, npc_id: str) -> str:
        return await self._calls.run(scene_opening, self._world, npc_id)

    async def aclose(self) -> None:
        """Close every encounter (disposing its agent) and the scenes ending on their own."""
        await asyncio.gather(*self._scene_ends, return_exceptions=True)
        await asyncio.gather(*(e.close() for e in list(self._owners)), return_exceptions=True)
        await self._presets.aclose()


def _npcs_of(world: World) -> list[NpcCard]:
    return list(world.npcs())


def _player_name(world: World, player_id: str) -> str:
    """What the others in a shared scene call the player: the HUD's `name` when the game's
    HUD has one, else the player's id."""
    name = world.player_view(player_id).get("name")
    return name if isinstance(name, str) and name.strip() else player_id
