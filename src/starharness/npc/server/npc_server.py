"""The NPC server: one game served to engine connections, composed of the parts it owns."""

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
from ...runtime.loop import AGENTS
from ...runtime.session import SESSIONS
from ..encounter import Encounter, GameKit
from ..frames import EncounterOpen, ErrorCode, ErrorFrame, FrameError, NpcEntry, Welcome, encode
from ..game import Game
from ..identity import SCOPE_METRICS
from ..residents import RESIDENT_KIND
from ..world import World, calls_inline, waits_on_network
from ..world_calls import WorldCalls
from .access import admit
from .clock import WorldClock, resident_runners
from .connection import POLICY_VIOLATION, Connection, FrameWebSocket
from .fanout import Fanout, LocalFanout
from .frame_fairness import PassBudget
from .log_limit import LogLimiter
from .metrics import ServerMetrics
from .open_encounters import OpenEncounters
from .outage import OutageRecords, WorldWatch, is_outage
from .player_connections import PlayerConnections
from .scene import SceneSeat
from .security import Credentials, allowed_hosts
from .settings import ServerSettings
from .transcripts import TranscriptKeeper

_log = logging.getLogger("starharness.npc.server")
_READY_WORLD_S = 5.0


class NpcServer:
    """Serves one game to engine connections: admits each WebSocket and answers what its
    connection asks (`ConnectionHost`), readiness and metrics access for the routes.

    It owns the world's calls (threads of their own for a network world) and the watch on its
    database, and composes the parts: `players` (the connections and the players they show,
    where the fan-out delivers), `open_encounters` (the encounters and scenes, and the host
    they see) and `clock` (ticks and the residents after them).
    """

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
        self.open_encounters = OpenEncounters(
            ctx,
            self._kit,
            world,
            self._calls,
            self._agent_options,
            settings,
            metrics=self.metrics,
            fanout=self.fanout,
            players=self.players,
        )
        self.transcripts = self.open_encounters.transcripts
        self.prefix_warmer = self.open_encounters.prefix_warmer
        """Evaluates every NPC's static prompt on a local model server before anyone talks."""
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

    # -- the game, its world and what is open ---------------------------------------------

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
    def encounters(self) -> list[Encounter]:
        """Every open encounter of every connection."""
        return self.open_encounters.encounters

    async def _probe_world(self) -> None:
        await self._calls.run(self._world.npcs)

    def _world_back(self) -> None:
        self.players.deliver_hud(None)

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

    async def open_scene(self, connection: Connection, frame: EncounterOpen) -> SceneSeat:
        """Seat `connection`'s player in a scene (`OpenEncounters.open_scene`)."""
        return await self.open_encounters.open_scene(connection, frame)

    def end_scene(self, seat: SceneSeat) -> None:
        """One of `seat`'s encounters ended on its own: its player leaves the scene
        (`OpenEncounters.end_scene`)."""
        self.open_encounters.end_scene(seat)

    async def open_encounter(self, connection: Connection, frame: EncounterOpen) -> Encounter:
        """Open an encounter for `connection` (`OpenEncounters.open_encounter`)."""
        return await self.open_encounters.open_encounter(connection, frame)

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
        self.open_encounters.start_warming()

    async def aclose(self) -> None:
        """Close every encounter (disposing its agent) and stop the pending HUD reads."""
        await self.prefix_warmer.aclose()
        await self.clock.aclose()
        self._outage_records.uninstall()
        await self.world_watch.aclose()
        await self.fanout.aclose()
        await self.open_encounters.aclose()
        await self.players.aclose()
        if self._world_threads is not None:
            # Every call was awaited above; a thread still running is one a cancel left behind.
            await asyncio.to_thread(self._world_threads.shutdown)


async def _refuse(websocket: WebSocket, message: str) -> None:
    # Browsers cannot read a refused handshake's status, so the refusal is a frame.
    await websocket.accept()
    frame = ErrorFrame(code=ErrorCode.UNAUTHORIZED, message=message)
    try:
        await websocket.send_text(encode(frame))
        await websocket.close(POLICY_VIOLATION, "unauthorized")
    except Exception:
        _log.debug("a refused client left before hearing why")
