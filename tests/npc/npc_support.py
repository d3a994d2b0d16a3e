"""Test support: a runtime wired to the mock LLM over HTTP, an NPC server, a WebSocket client."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection

from stack_support import start_runtime
from starharness.mockllm import MockLlmServer
from starharness.npc import Game, RunningServer, ServerSettings, start_server
from starharness.npc.client import FrameConnection, connect
from starharness.runtime.kernel import Context
from starharness.runtime.session import SessionsConfig

WAIT_S = 15.0
"""Generous: only a broken test waits this long."""


@dataclass
class Stack:
    """A mock LLM, a runtime and a running NPC server for one game."""

    mock: MockLlmServer
    ctx: Context
    running: RunningServer

    @property
    def world(self) -> Any:
        return self.running.server.world

    @property
    def ws_url(self) -> str:
        return self.running.ws_url

    def client(self, **kwargs: Any) -> Client:
        return Client(self.ws_url, **kwargs)


@asynccontextmanager
async def serving(
    game: Game,
    tmp_path: Path,
    settings: ServerSettings | None = None,
    *,
    responder: Callable[..., Any] | None = None,
    sessions: SessionsConfig | None = None,
    max_attempts: int = 2,
) -> AsyncIterator[Stack]:
    """Serve `game` (a fresh world file under `tmp_path`) with a mock LLM over real HTTP."""
    config = settings or ServerSettings(port=0)
    if config.world is None:
        config = config.model_copy(update={"world": tmp_path / "world.db"})
    async with MockLlmServer(responder=responder) as mock:
        ctx = await start_runtime(mock.base_url, sessions=sessions, max_attempts=max_attempts)
        try:
            running = await start_server(ctx, game, config)
            try:
                yield Stack(mock, ctx, running)
            finally:
                await running.stop()
        finally:
            await ctx.dispose()


async def eventually(check: Callable[[], bool], wait_s: float = WAIT_S) -> None:
    """Poll `check` until it holds; fails after `wait_s` (only a broken test waits that long)."""
    async with asyncio.timeout(wait_s):
        while True:
            if check():
                return
            await asyncio.sleep(0.005)


class Client:
    """The frame client (`starharness.npc.client`) speaking frames as dicts; `options` are
    `connect`'s (headers, origin, compression, max_queue)."""

    def __init__(self, url: str, **options: Any) -> None:
        self._url = url
        self._options = {"open_timeout": WAIT_S, **options}
        self._exits = AsyncExitStack()
        self._connection: FrameConnection | None = None

    async def __aenter__(self) -> Client:
        self._connection = await self._exits.enter_async_context(
            connect(self._url, **self._options)
        )
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._exits.aclose()

    @property
    def connection(self) -> FrameConnection:
        assert self._connection is not None
        return self._connection

    @property
    def ws(self) -> ClientConnection:
        return self.connection.socket

    async def send(self, frame: dict[str, Any] | str | bytes) -> None:
        if isinstance(frame, bytes):
            await self.ws.send(frame)  # a binary frame, which the frame protocol has none of
        else:
            await self.connection.send_text(frame if isinstance(frame, str) else json.dumps(frame))

    async def recv(self, wait_s: float = WAIT_S) -> dict[str, Any]:
        frame: dict[str, Any] = json.loads(await self.connection.receive_text(wait_s))
        return frame

    async def until(
        self, done: Callable[[dict[str, Any]], bool], wait_s: float = WAIT_S
    ) -> list[dict[str, Any]]:
        """Frames up to and including the first one `done` accepts."""
        frames: list[dict[str, Any]] = []
        async with asyncio.timeout(wait_s):
            while True:
                frame = await self.recv()
                frames.append(frame)
                if done(frame):
                    return frames

    async def until_idle(self, encounter_id: str) -> list[dict[str, Any]]:
        return await self.until(lambda f: f["t"] == "encounter.idle" and f["id"] == encounter_id)

    async def open(self, encounter_id: str, npc_id: str, player_id: str) -> list[dict[str, Any]]:
        """Open an encounter and return its frames up to the first idle."""
        await self.send(
            {"t": "encounter.open", "id": encounter_id, "npcId": npc_id, "playerId": player_id}
        )
        return await self.until_idle(encounter_id)

    async def say(self, encounter_id: str, text: str) -> list[dict[str, Any]]:
        """One turn: say `text`, return the frames up to idle."""
        await self.send({"t": "encounter.say", "id": encounter_id, "text": text})
        return await self.until_idle(encounter_id)


def spoken(frames: list[dict[str, Any]]) -> str:
    """The text of every say.delta in `frames`, joined."""
    return "".join(f["text"] for f in frames if f["t"] == "say.delta")


def types(frames: list[dict[str, Any]]) -> list[str]:
    """The `t` of each frame, with consecutive say.delta frames folded into one."""
    out: list[str] = []
    for frame in frames:
        if frame["t"] == "say.delta" and out and out[-1] == "say.delta":
            continue
        out.append(frame["t"])
    return out


async def stalled_client(port: int) -> asyncio.StreamWriter:
    """A WebSocket client that completes the handshake and then never reads again.

    A tiny receive buffer makes the server's sends back up quickly. Close the writer to leave.
    """
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", port))
    reader, writer = await asyncio.open_connection(sock=sock)
    writer.write(
        f"GET /gh HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
        "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        "Sec-WebSocket-Version: 13\r\n\r\n".encode()
    )
    await writer.drain()
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), WAIT_S)
    assert b" 101 " in head.split(b"\r\n")[0], head
    return writer
