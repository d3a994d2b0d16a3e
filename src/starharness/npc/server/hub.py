"""The NPC server's state: the game, its world, connections by player, and the encounters."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

from starlette.datastructures import Headers, QueryParams
from starlette.websockets import WebSocket

from ...runtime.kernel import Context
from ...runtime.loop import AGENTS, AgentOptions
from ...runtime.session import SESSIONS
from ..encounter import (
    ArchetypePreset,
    ArchetypePresets,
    Encounter,
    GameKit,
    PrefixWarmer,
    meet_together,
)
from ..frames import EncounterOpen, ErrorCode, ErrorFrame, FrameError, NpcEntry, Welcome, encode
from ..game import Game
from ..identity import SCOPE_METRICS
from ..residents import RESIDENT_KIND
from ..world import NpcCard, World, calls_inline, waits_on_network
from ..world_calls import WorldCalls
from .access import admit
from .clock import WorldClock, resident_runners
from .connection import POLICY_VIOLATION, Connection, FrameWebSocket
from .fanout import Fanout, LocalFanout
from .frame_fairness import PassBudget
from .log_limit import LogLimiter
from .metrics import ServerMetrics
from .outage import OutageRecords, WorldWatch, is_outage
from .player_connections import PlayerConnections
from .rate import TokenBucket
from .scene import Scene
from .security import Credentials, allowed_hosts
from .settings import ServerSettings
from .transcripts import TranscriptKeeper

_log = logging.getLogger("starharness.npc.server")
_READY_WORLD_S = 5.0


class NpcServer:
    """Serves one game to engine connections; implements what encounters need from a host."""

    def __init__(
        self,
        ctx: Context,
        game: Game,
        world: World,
        settings: ServerSettings,
        *,
        credentials: Credentials | None = None,
        fanout: Fanout | None = None,
    ) -> None:
        self._ctx = ctx
        self._kit = GameKit.of(game)
        self._world = world
        # A world on a network database is never called on the event loop, whatever the game says.
        inline = calls_inline(game.world_calls_inline, world)
        # A network world's calls get threads of their own, as many as it has connections: the
        # loop's default executor is small (cores + 4) and shared with file and process work.
        self._world_threads = (
            ThreadPoolExecutor(settings.world_connections, thread_name_prefix="world")
            if waits_on_network(world)
            else None
        )
        self._calls = WorldCalls(inline, self._world_threads)
        self.settings = settings
        self.credentials = credentials or Credentials(None, None)
        self.hosts = allowed_hosts(settings)
        self.metrics = ServerMetrics(settings.worker_name())
        self.frame_budget = PassBudget()
        """Shared by every connection: frames handled in one pass of the loop, in all."""
        self.world_watch = WorldWatch(self._probe_world, self._world_back, _log)
        """Whether the world's database answers; players hear a plain refusal while not."""
        self._outage_records = OutageRecords(self.world_watch, _log)
        watch = self.world_watch
        self.metrics.world_down.set_function(lambda: float(watch.down))
        self._log_limits = LogLimiter(_log)
        self.players = PlayerConnections(
            self._kit.protocol, world, self._calls, self.world_watch, self.metrics
        )
        self.connections = self.players.connections
        self.fanout: Fanout = fanout or LocalFanout()
        """How news and HUD changes reach every worker's connections (this process alone
        unless the server was given a shared bus)."""
        if fanout is None:
            # Alone, delivery needs no task: it works before `start`, as it always did.
            self.fanout.start(self.players)
        turn = settings.turn
        self._agent_options = replace(
            ctx.get(AGENTS).defaults, max_steps=turn.max_steps, turn_timeout_s=turn.timeout_s
        )
        self._presets = ArchetypePresets(
            ctx, self._kit, self._agent_options, hide_identity=settings.hide_harness_identity
        )
        self._owners: dict[Encounter, Connection] = {}
        self.prefix_warmer = PrefixWarmer(
            ctx, self._presets, self._agent_options, self._all_npcs, lambda: bool(self._owners)
        )
        """Evaluates every NPC's static prompt on a local model server before anyone talks."""
        self._scene_ends: set[asyncio.Task[None]] = set()
        """Scenes closing because one of their NPCs' encounters ended on its own."""
        self.transcripts = TranscriptKeeper(ctx.get(SESSIONS), settings.transcripts.keep)
        self._opens = TokenBucket(
            settings.limits.server_opens_per_second, settings.limits.server_open_burst
        )
        self.resident_transcripts = TranscriptKeeper(
            ctx.get(SESSIONS), settings.transcripts.keep, RESIDENT_KIND
        )
        self.clock = WorldClock(
            world,
            self._calls,
            self.fanout,
            self.world_watch,
            self.metrics,
            settings.ticks,
            settings.limits.max_tick_days,
            resident_runners(
                ctx,
                game,
                settings.residents,
                world,
                self._agent_options,
                self._calls,
                self.resident_transcripts.ended,
            ),
        )

    # -- what encounters see -----------------------------------------------------------------

    @property
    def ctx(self) -> Context:
        return self._ctx

    @property
    def kit(self) -> GameKit:
        return self._kit

    @property
    def game(self) -> Game:
        return self._kit.game

    @property
    def world(self) -> World:
        return self._world

    @property
    def world_calls(self) -> WorldCalls:
        return self._calls

    @property
    def agent_options(self) -> AgentOptions:
        return self._agent_options

    @property
    def hide_harness_identity(self) -> bool:
        return self.settings.hide_harness_identity

    def preset(self, archetype: str) -> ArchetypePreset:
        return self._presets.get(archetype)

    @property
    def encounters(self) -> list[Encounter]:
        """Every open encounter of every connection."""
        return list(self._owners)

    def push_hud(self, player_id: str) -> None:
        """The player's HUD changed (an action committed): every worker showing it re-reads it."""
        self.fanout.hud_changed(player_id)

    async def _probe_world(self) -> None:
        await self._calls.run(self._world.npcs)

    def _world_back(self) -> None:
        self.players.deliver_hud(None)

    def turn_done(self, seconds: float, reason: str) -> None:
        self.metrics.turn_seconds.labels(reason).observe(seconds)

    def usage(self, usage: Mapping[str, Any]) -> None:
        self.metrics.usage(usage)

    def encounter_ended(self, encounter: Encounter) -> None:
        connection = self._owners.pop(encounter, None)
        if connection is not None:
            connection.forget(encounter)
            self.metrics.open_encounters.dec()
            self.players.release(connection, encounter.player_id)
        if encounter.has_session:
            self.transcripts.ended(encounter.session_id)

    # -- what connections ask ----------------------------------------------------------------

    async def welcome(self, player_id: str) -> Welcome:
        """The `welcome` frame for a player; FrameError(unknown_player) if there is none."""
        world = self._world

        def read() -> tuple[Mapping[str, Any], list[NpcEntry]] | None:
            if not world.has_player(player_id):
                return None
            npcs = [NpcEntry(id=n.id, name=n.name, location_id=n.location_id) for n in world.npcs()]
            return world.player_view(player_id), npcs

        found = await self._calls.run(read)
        if found is None:
            raise FrameError(ErrorCode.UNKNOWN_PLAYER, f"there is no player {player_id!r}")
        hud, npcs = found
        return self._kit.protocol.welcome(hud=dict(hud), npcs=npcs)

    def attach(self, connection: Connection, player_id: str) -> None:
        """Count `connection` among the player's (for HUD frames) until released."""
        self.players.attach(connection, player_id)

    async def open_scene(self, connection: Connection, frame: EncounterOpen) -> Scene:
        """Open a scene of the NPCs `frame.npc_ids` names; raises FrameError saying why not."""
        npc_ids = frame.npc_ids
        assert npc_ids is not None
        self._admit_open(frame, len(npc_ids))
        cards = await self._calls.run(
            meet_together, self._world, frame.id, npc_ids, frame.player_id
        )
        scene = Scene(
            frame.id,
            frame.player_id,
            cards,
            self._kit.protocol,
            connection.send,
            self.settings.scene.max_npc_lines,
        )
        await scene.open(self, frame.npc_id, connection)
        return scene

    def scene_member(self, encounter: Encounter, owner: object) -> None:
        """A scene's NPC's encounter opened: counted as any encounter of `owner`'s."""
        assert isinstance(owner, Connection)
        self._owners[encounter] = owner
        self.metrics.open_encounters.inc()
        self.attach(owner, encounter.player_id)

    def end_scene(self, scene: Scene) -> None:
        """One NPC of `scene` left it (a deal took the player away): close the others."""
        task = asyncio.get_running_loop().create_task(scene.close(), name=f"end scene {scene.id}")
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
        self.metrics.open_encounters.inc()
        self.attach(connection, frame.player_id)
        return encounter

    @property
    def players_may_tick(self) -> bool:
        """Whether player connections may send `world.tick` (single-player by default)."""
        allowed = self.settings.ticks.players
        return self.credentials.players is None if allowed is None else allowed

    async def tick(self, days: int) -> None:
        """Advance the world and run its residents (`WorldClock.tick`)."""
        await self.clock.tick(days)

    async def not_ready(self) -> dict[str, str]:
        """What keeps this worker from serving new players fully, by part (`world`: the world
        or its database, `fanout`: the bus); empty when ready."""
        down: dict[str, str] = {}
        problem = self.world_watch.not_ready()
        if problem is None:
            problem = await self._read_world()
        if problem is not None:
            down["world"] = problem
        problem = self.fanout.not_ready()
        if problem is not None:
            down["fanout"] = problem
        return down

    async def _read_world(self) -> str | None:
        try:
            await asyncio.wait_for(self._calls.run(self._world.npcs), _READY_WORLD_S)
        except TimeoutError:
            return f"the world did not answer within {_READY_WORLD_S:g} s"
        except Exception as exc:
            if is_outage(exc):
                self.world_watch.failed(exc, "readiness")
                return self.world_watch.not_ready()
            self._log_limits.log(
                logging.WARNING,
                f"readiness:{type(exc).__name__}",
                "readiness: the world cannot be read: %s: %s",
                type(exc).__name__,
                exc,
            )
            return f"the world cannot be read ({type(exc).__name__}; see the server log)"
        return None

    def may_read_metrics(self, headers: Mapping[str, str], query: Mapping[str, str]) -> bool:
        """The server's token if one is set; else, with player tokens, one with `metrics`."""
        verdict = admit(self.credentials, headers, query)
        if isinstance(verdict, str):
            return False
        if self.credentials.server_token is not None or self.credentials.players is not None:
            return verdict.has_scope(SCOPE_METRICS)
        return True

    # -- connections -------------------------------------------------------------------------

    def connect(self, websocket: FrameWebSocket) -> Awaitable[None]:
        """Serve one WebSocket from handshake to disconnect (the awaitable doing it).

        The checks run here, at once; an admitted socket is served by its connection's own
        coroutine, with no frame of ours waiting on it for the socket's whole life.
        """
        # Read for the verdict only, not cached on the socket (Starlette keeps both for its life).
        scope = websocket.scope
        headers = Headers(scope=scope)
        if not self.hosts.allows_origin(headers.get("origin"), headers.get("host")):
            self.metrics.errors.labels(ErrorCode.UNAUTHORIZED.value).inc()
            return _refuse(websocket, f"origin {headers.get('origin')!r} is not allowed")
        verdict = admit(self.credentials, headers, QueryParams(scope["query_string"]))
        if isinstance(verdict, str):
            self.metrics.errors.labels(ErrorCode.UNAUTHORIZED.value).inc()
            return _refuse(websocket, verdict)
        return Connection(self, websocket, verdict).serve()

    def connected(self, connection: Connection) -> None:
        """`connection` was accepted: counted until `disconnected`."""
        self.players.connected(connection)

    def disconnected(self, connection: Connection) -> None:
        """`connection` ended (its encounters are closed): no longer counted or sent HUDs."""
        self.players.disconnected(connection)

    def start(self) -> None:
        """Start delivering the fan-out's news and the server-side schedule (if configured),
        and warming a local model server's cache with the NPCs' prompts."""
        self._outage_records.install()
        self.fanout.start(self.players)
        self.clock.start()
        self.prefix_warmer.start(self._presets.profile())

    async def _all_npcs(self) -> list[NpcCard]:
        return await self._calls.run(_npcs_of, self._world)

    async def aclose(self) -> None:
        """Close every encounter (disposing its agent) and stop the pending HUD reads."""
        await self.prefix_warmer.aclose()
        await self.clock.aclose()
        self._outage_records.uninstall()
        await self.world_watch.aclose()
        await self.fanout.aclose()
        await asyncio.gather(*self._scene_ends, return_exceptions=True)
        await asyncio.gather(*(e.close() for e in list(self._owners)), return_exceptions=True)
        await self._presets.aclose()
        await self.players.aclose()
        if self._world_threads is not None:
            # Every call was awaited above; a thread still running is one a cancel left behind.
            await asyncio.to_thread(self._world_threads.shutdown)


def _npcs_of(world: World) -> list[NpcCard]:
    return list(world.npcs())


async def _refuse(websocket: WebSocket, message: str) -> None:
    # Browsers cannot read a refused handshake's status, so the refusal is a frame.
    await websocket.accept()
    frame = ErrorFrame(code=ErrorCode.UNAUTHORIZED, message=message)
    try:
        await websocket.send_text(encode(frame))
        await websocket.close(POLICY_VIOLATION, "unauthorized")
    except Exception:
        _log.debug("a refused client left before hearing why")
