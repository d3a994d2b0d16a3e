"""Running an NPC server: bind, serve with uvicorn, announce readiness, stop cleanly."""

from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
import os
import socket
from functools import partial
from pathlib import Path

import httpx
import uvicorn
from uvicorn.protocols.http.auto import AutoHTTPProtocol

from ..._fastio.ws import websocket_protocol
from ..._fastio.ws_proxy_headers_first import ProxyHeadersFirst
from ...runtime.kernel import Context
from ...runtime.session.postgres import PostgresTarget
from ..game import Game
from ..world import World
from ..world_place import open_game_world
from .app import FRAME_PATH, build_app
from .engine import EmbeddedServer, until_started
from .fanout import Fanout, PostgresFanout
from .gate import GateSettings, GateState, gated_http, networks, trusted_proxies
from .hidden_from_sandbox import hide_own_files
from .log_limit import ServerLogs
from .npc_server import NpcServer
from .security import resolve_credentials
from .settings import LimitsSettings, ServerSettings

_log = logging.getLogger("starharness.npc.server")

_READY_ATTEMPTS = 100
_READY_PAUSE_S = 0.05
_SHUTDOWN_GRACE_S = 5
_BACKLOG = 256


class RunningServer:
    """A started server: its address, the NPC server, and `stop()`."""

    def __init__(
        self,
        server: NpcServer,
        engine: EmbeddedServer,
        task: asyncio.Task[None],
        host: str,
        port: int,
        owned_world: World | None,
        gate: GateState,
    ) -> None:
        self.server = server
        self.gate = gate
        """The sockets' gate: open sockets per address, and how many were shed and why."""
        self._logs = ServerLogs(_log)
        self._logs.install()
        self.host = host
        self.port = port
        self._engine = engine
        self._task = task
        self._owned_world = owned_world
        self._stopped = False
        self.ready_file: Path | None = None
        """The ready file announcing this server; removed when it stops."""

    @property
    def url(self) -> str:
        """`http://host:port` (IPv6 hosts in brackets)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def ws_url(self) -> str:
        """The frame endpoint, `ws://host:port/gh`."""
        return "ws" + self.url.removeprefix("http") + FRAME_PATH

    async def wait(self) -> None:
        """Until the server stops on its own (it normally runs until `stop`)."""
        await asyncio.shield(self._task)

    async def stop(self) -> None:
        """Close the listener and every connection, dispose every encounter, close the world."""
        if self._stopped:
            return
        self._stopped = True
        self._engine.should_exit = True
        try:
            await self._task
        except Exception:
            _log.exception("the web server failed while stopping")
        await self._logs.aclose()
        self.gate.limiter.flush()
        await self.server.aclose()
        if self.ready_file is not None:
            # A ready file that outlives the server sends scripts to a dead address.
            await asyncio.to_thread(_remove_ready_file, self.ready_file)
        world = self._owned_world
        close = getattr(world, "close", None)
        if callable(close):
            await asyncio.to_thread(close)


async def start_server(
    ctx: Context, game: Game, settings: ServerSettings, *, world: World | None = None
) -> RunningServer:
    """Open the world (unless given), bind, serve, and write the ready file if asked.

    Raises ExposureError for a non-loopback host without player tokens (or for a weak token),
    OSError when the address cannot be bound, GameDefinitionError for an unservable game, and
    StoreUnreachableError or StoreFormatError for a fan-out bus that cannot be used.
    """
    credentials = await resolve_credentials(settings)
    if settings.web_root is not None and not settings.web_root.is_dir():
        raise FileNotFoundError(f"web_root {str(settings.web_root)!r} is not a directory")
    owned = world is None
    place = settings.world_place()
    if world is None:
        world = await asyncio.to_thread(
            partial(open_game_world, connections=settings.world_connections), game, place
        )
    hide_own_files(ctx, place if isinstance(place, Path) else None)
    fanout: Fanout | None = None
    try:
        if settings.fanout is not None:
            target = PostgresTarget(settings.fanout.url, settings.fanout.password_env)
            fanout = await PostgresFanout.open(target)
        server = NpcServer(ctx, game, world, settings, credentials=credentials, fanout=fanout)
        await server.transcripts.load()
        await server.resident_transcripts.load()
        sock = await _bind(settings.host, settings.port)
        limit = settings.limits.max_frame_bytes
        app = build_app(server)
        # uvicorn's own protocol on the websockets library's sans-I/O core, or (on the
        # releases it was tested on) its lean subclass keeping less per idle connection.
        ws = websocket_protocol()
        lean = not isinstance(ws, str)
        config = uvicorn.Config(
            app,
            log_level="warning",
            access_log=False,
            lifespan="off",
            # Said rather than guessed: the outer app is a plain callable returning the
            # request's coroutine (no frame of its own per open WebSocket).
            interface="asgi3",
            ws=ws,
            # Frames up to 4x the limit still get a clear `limit` error; beyond, the socket closes.
            ws_max_size=max(4 * limit, 1 << 20),
            # A compressing socket keeps two zlib contexts for its whole life (about 50 KB
            # of an idle one's 68, bench/ws_heap.py); frames are small JSON.
            ws_per_message_deflate=settings.compress_frames,
            timeout_graceful_shutdown=_SHUTDOWN_GRACE_S,
            # What `_bind` listens with; asyncio also tries this many accepts each time the
            # listener is ready, each failure reported at the descriptor limit (2,048 by default).
            backlog=_BACKLOG,
            # X-Forwarded-* from the proxies FORWARDED_ALLOW_IPS trusts name the client: with
            # the lean protocol, uvicorn's own code runs before the app, not around it.
            proxy_headers=not lean,
        )
        if lean:
            config.app = ProxyHeadersFirst(app, config.forwarded_allow_ips)
        shed = server.metrics.shed
        gate = GateState(
            gate_settings(settings.limits, config.forwarded_allow_ips),
            on_shed=lambda reason: shed.labels(reason).inc(),
        )
        config.http = gated_http(AutoHTTPProtocol, gate.settings, gate)
        engine = EmbeddedServer(config)
        task = asyncio.get_running_loop().create_task(engine.serve(sockets=[sock]))
        port: int = sock.getsockname()[1]
        running = RunningServer(
            server, engine, task, settings.host, port, world if owned else None, gate
        )
        try:
            await until_started(engine, task, "the web server")
            server.start()
            if settings.ready_file is not None:
                await _announce(running, settings.ready_file)
                running.ready_file = settings.ready_file
        except BaseException:
            await running.stop()
            raise
    except BaseException:
        if fanout is not None:
            await fanout.aclose()
        if owned:
            close = getattr(world, "close", None)
            if callable(close):
                await asyncio.to_thread(close)
        raise
    return running


async def serve_game(
    ctx: Context, game: Game, settings: ServerSettings, *, world: World | None = None
) -> None:
    """Serve `game` until cancelled, then stop cleanly."""
    running = await start_server(ctx, game, settings, world=world)
    try:
        await running.wait()
    finally:
        await running.stop()


def gate_settings(
    limits: LimitsSettings, forwarded_allow_ips: list[str] | str | None
) -> GateSettings:
    """The gate's settings from the server's limits; the proxies uvicorn trusts go uncapped."""
    return GateSettings(
        header_timeout_s=limits.header_timeout_s,
        max_header_bytes=limits.max_header_bytes,
        connections_per_address=limits.connections_per_address,
        uncapped=networks(limits.uncapped_addresses) + trusted_proxies(forwarded_allow_ips),
    )


async def _bind(host: str, port: int) -> socket.socket:
    infos = await asyncio.get_running_loop().getaddrinfo(
        host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )
    if not infos:
        raise OSError(f"cannot resolve {host!r}")
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(_BACKLOG)
    except OSError as exc:
        sock.close()
        raise OSError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    return sock


def _remove_ready_file(path: Path) -> None:
    """Remove the ready file if it is still ours (another server may have replaced it)."""
    try:
        if json.loads(path.read_text(encoding="utf-8")).get("pid") == os.getpid():
            path.unlink()
    except (OSError, ValueError, AttributeError):
        pass


async def _announce(running: RunningServer, path: Path) -> None:
    """Write `{url, pid}` to `path` (atomically) once `/healthz` answers."""
    async with httpx.AsyncClient(timeout=2.0) as client:
        for _ in range(_READY_ATTEMPTS):
            try:
                response = await client.get(_probe_url(running) + "/healthz")
                if response.status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            await asyncio.sleep(_READY_PAUSE_S)
        else:
            raise RuntimeError(f"{running.url}/healthz did not answer; no ready file written")
    text = json.dumps({"url": running.url, "ws": running.ws_url, "pid": os.getpid()})
    await asyncio.to_thread(_write_atomically, path, text)


def _probe_url(running: RunningServer) -> str:
    # A wildcard address is not a name clients use (the Host allow-list refuses it).
    try:
        wildcard = ipaddress.ip_address(running.host.strip("[]")).is_unspecified
    except ValueError:
        wildcard = False
    if not wildcard:
        return running.url
    loopback = "[::1]" if ":" in running.host else "127.0.0.1"
    return f"http://{loopback}:{running.port}"


def _write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text + "\n", encoding="utf-8")
    partial.replace(path)
