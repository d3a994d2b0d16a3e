"""Running the web UI: check exposure, bind, serve with uvicorn, stop cleanly."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Generator, Sequence
from dataclasses import dataclass, field

import uvicorn

from ..npc.server.security import MIN_TOKEN_CHARS, ExposureError, is_loopback
from ..runtime.credentials import Secret, aget_secret
from ..runtime.kernel import Context
from ..runtime.protocol import HostInfo
from .access import Access
from .server import WebUi

DEFAULT_PORT = 3080


@dataclass(frozen=True, slots=True)
class WebSettings:
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    auth_token_env: str | None = None
    """Variable holding the token a browser must present; required for a non-loopback host."""
    allow_hosts: Sequence[str] = field(default_factory=tuple[str, ...])
    """More Host names to accept (behind a proxy); loopback names are always accepted."""
    allow_origins: Sequence[str] = field(default_factory=tuple[str, ...])


class _Uvicorn(uvicorn.Server):
    """uvicorn without its signal handlers: the command that runs us owns Ctrl-C."""

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None]:
        yield


class RunningWeb:
    def __init__(self, ui: WebUi, engine: _Uvicorn, task: asyncio.Task[None], host: str, port: int):
        self.ui = ui
        self.host = host
        self.port = port
        self._engine = engine
        self._task = task

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
    )
    engine = _Uvicorn(config)
    task = asyncio.get_running_loop().create_task(engine.serve(sockets=[sock]))
    running = RunningWeb(ui, engine, task, settings.host, port)
    while not engine.started:
        if task.done():
            task.result()
            raise RuntimeError("the web UI stopped while starting")
        await asyncio.sleep(0.005)
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
        sock.listen(128)
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
