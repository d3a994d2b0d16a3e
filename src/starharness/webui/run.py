"""Running the web UI: check exposure, bind, serve with uvicorn, stop cleanly."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Sequence
from dataclasses import dataclass, field

import uvicorn
from uvicorn.protocols.http.auto import AutoHTTPProtocol

from ..npc.server.engine import EmbeddedServer, until_started
from ..npc.server.gate import (
    DEFAULT_CONNECTIONS_PER_ADDRESS,
    DEFAULT_HEADER_TIMEOUT_S,
    DEFAULT_MAX_HEADER_BYTES,
    UNCAPPED_BY_DEFAULT,
    GateSettings,
    GateState,
    gated_http,
    networks,
    trusted_proxies,
)
from ..npc.server.log_limit import ServerLogs
from ..npc.server.security import MIN_TOKEN_CHARS, ExposureError
from ..runtime.credentials import Secret, aget_secret
from ..runtime.hostguard import is_loopback
from ..runtime.kernel import Context
from ..runtime.protocol import HostInfo
from ..runtime.protocol.jsonrpc import MAX_LINE
from .access import Access
from .server import WebUi

DEFAULT_PORT = 3080
_BACKLOG = 128
_log = logging.getLogger("starharness.webui")

_WS_SLACK = 1 << 20
"""How far past the line limit a WebSocket message is still read (and refused in JSON-RPC)."""


@dataclass(frozen=True, slots=True)
class WebSettings:
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    auth_token_env: str | None = None
    """Variable holding the token a browser must present; required for a non-loopback host."""
    allow_hosts: Sequence[str] = field(default_factory=tuple[str, ...])
    """More Host names to accept (behind a proxy); loopback names are always accepted."""
    allow_origins: Sequence[str] = field(default_factory=tuple[str, ...])
    header_timeout_s: float = DEFAULT_HEADER_TIMEOUT_S
    """A request not whole this long after its first byte (or the socket's opening) gets 408."""
    max_header_bytes: int = DEFAULT_MAX_HEADER_BYTES
    """A larger request head gets 431 (so do a line over 8 KiB and over 128 headers)."""
    connections_per_address: int | None = DEFAULT_CONNECTIONS_PER_ADDRESS
    """Sockets one client address may hold; one more gets 429. None: no cap."""
    uncapped_addresses: Sequence[str] = UNCAPPED_BY_DEFAULT
    """Addresses or CIDR blocks never capped (besides the proxies uvicorn trusts)."""


class RunningWeb:
    def __init__(
        self,
        ui: WebUi,
        engine: EmbeddedServer,
        task: asyncio.Task[None],
        host: str,
        port: int,
        gate: GateState,
    ):
        self.ui = ui
        self.host = host
        self.port = port
        self.gate = gate
        """The sockets' gate: open sockets per address, and how many were shed and why."""
        self._engine = engine
        self._task = task
        self._logs = ServerLogs(_log)
        self._logs.install()

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    async def wait(self) -> None:
        await asyncio.shield(self._task)

    async def stop(self) -> None:
        self._engine.should_exit = True
        with contextlib.suppress(Exception):
            await self._task
        await self._logs.aclose()
        self.gate.limiter.flush()
        self.ui.close()


async def start_web(ctx: Context, info: HostInfo, settings: WebSettings) -> RunningWeb:
    """Bind and serve; ExposureError for a non-loopback host without a token."""
    token = await _resolve_token(settings.host, settings.auth_token_env)
    sock = _bind(settings.host, settings.port)
    port: int = sock.getsockname()[1]
    access = Access.for_server(
        settings.host,
        port,
        extra_hosts=settings.allow_hosts,
        extra_origins=settings.allow_origins,
        token=token,
    )
    ui = WebUi(ctx, info)
    config = uvicorn.Config(
        ui.app(access),
        log_level="warning",
        access_log=False,
        lifespan="off",
        timeout_graceful_shutdown=3,
        # What `_bind` listens with; asyncio also tries this many accepts each time the
        # listener is ready, each failure reported at the descriptor limit (2,048 by default).
        backlog=_BACKLOG,
        # Above the session protocol's own line limit, so a message just past it gets the
        # JSON-RPC error the other transports answer, not WebSocket's bare 1009 close.
        ws_max_size=MAX_LINE + _WS_SLACK,
    )
    gate = GateState(
        GateSettings(
            header_timeout_s=settings.header_timeout_s,
            max_header_bytes=settings.max_header_bytes,
            connections_per_address=settings.connections_per_address,
            uncapped=networks(settings.uncapped_addresses)
            + trusted_proxies(config.forwarded_allow_ips),
        ),
        _log,
    )
    # uvicorn's documented `http=` takes a protocol class: its own, behind the gate.
    config.http = gated_http(AutoHTTPProtocol, gate.settings, gate)
    engine = EmbeddedServer(config)
    task = asyncio.get_running_loop().create_task(engine.serve(sockets=[sock]))
    running = RunningWeb(ui, engine, task, settings.host, port, gate)
    await until_started(engine, task, "the web UI")
    return running


async def serve_web(ctx: Context, info: HostInfo, settings: WebSettings) -> None:
    """Serve until cancelled, then stop."""
    running = await start_web(ctx, info, settings)
    try:
        await running.wait()
    finally:
        await running.stop()


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(_BACKLOG)
    except OSError as exc:
        sock.close()
        raise OSError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    return sock


async def _resolve_token(host: str, variable: str | None) -> Secret | None:
    """The token clients must present, or None; refuses a non-loopback host without one."""
    if variable is None:
        if not is_loopback(host):
            raise ExposureError(
                f"binding {host!r} exposes the server to other machines (remote code "
                "execution): name the variable holding an auth token with --auth-token-env NAME "
                "(or bind 127.0.0.1)"
            )
        return None
    secret = await aget_secret(variable)
    if secret is None or not secret.reveal().strip():
        raise ExposureError(f"{variable} is not set: it must hold the web UI's auth token")
    if len(secret.reveal().strip()) < MIN_TOKEN_CHARS:
        raise ExposureError(
            f"{variable} holds a token of {len(secret.reveal().strip())} characters; "
            f"at least {MIN_TOKEN_CHARS} are required"
        )
    return secret
