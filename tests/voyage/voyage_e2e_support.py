"""Omega station served for real: the mock LLM with the offline brain over HTTP, the runtime,
the NPC server, and a WebSocket client speaking frames."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from stack_support import start_runtime
from starharness.mockllm import MockCapabilities, MockLlmServer
from starharness.mockllm.capabilities import FULL, LLAMA_CPP
from starharness.npc import Game, RunningServer, ServerSettings, start_server
from starharness.npc.client import FrameConnection, connect
from starharness.voyage import GAME, VoyageWorld
from world_support import WorldPlace

WAIT_S = 15.0
PLANS = [
    pytest.param(FULL, "openai-compatible", id="native"),
    pytest.param(LLAMA_CPP, "llama-cpp", id="decide-act-speak"),
]
"""Both turn plans, as (`plays`, `provider`) for `serving_voyage`."""
"""Generous: only a broken test waits this long."""

Frame = dict[str, Any]


@dataclass
class Stack:
    mock: MockLlmServer
    running: RunningServer

    @property
    def world(self) -> VoyageWorld:
        world = self.running.server.world
        assert isinstance(world, VoyageWorld)
        return world


@asynccontextmanager
async def serving_voyage(
    tmp_path: Path,
    *,
    plays: MockCapabilities = FULL,
    provider: str = "openai-compatible",
    game: Game = GAME,
    place: WorldPlace | None = None,
    world_connections: int | None = None,
    rows: Sequence[Mapping[str, Any]] = (),
) -> AsyncIterator[Stack]:
    """Omega station on a fresh world file, its NPCs played by the offline brain.

    `plays` is the kind of server the mock behaves as; `provider` the profile the harness
    believes it talks to (what it chooses the turn plan from). `place` puts the world in
    PostgreSQL (or another file); default: a file under tmp_path. `world_connections` is the
    server setting of that name (PostgreSQL only). `rows` are runtime patch rows.
    """
    if place is not None and place.target is not None:
        settings = ServerSettings(
            port=0, world=place.target.url, world_password_env=place.target.password_env
        )
        if world_connections is not None:
            settings = settings.model_copy(update={"world_connections": world_connections})
    else:
        path = place.path if place is not None and place.path else tmp_path / "world.db"
        settings = ServerSettings(port=0, world=path)
    async with MockLlmServer(responder=GAME.offline_responder, plays=plays) as mock:
        ctx = await start_runtime(
            mock.base_url,
            max_attempts=1,
            first_byte_s=WAIT_S,
            provider=provider,
            rows=[dict(row) for row in rows],
        )
        try:
            running = await start_server(ctx, game, settings)
            try:
                yield Stack(mock, running)
            finally:
                await running.stop()
        finally:
            await ctx.dispose()


class Player:
    """The frame client (`starharness.npc.client`) for one player, speaking frames as dicts."""

    def __init__(
        self, url: str, player_id: str, *, headers: Mapping[str, str] | None = None
    ) -> None:
        self._url = url
        self.player_id = player_id
        self._headers = dict(headers or {})
        self._exits = AsyncExitStack()
        self._connection: FrameConnection | None = None

    async def __aenter__(self) -> Player:
        opening = connect(self._url, open_timeout=WAIT_S, headers=self._headers)
        self._connection = await self._exits.enter_async_context(opening)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._exits.aclose()

    async def send(self, frame: Frame) -> None:
        assert self._connection is not None
        await self._connection.send_text(json.dumps(frame))

    async def recv(self) -> Frame:
        assert self._connection is not None
        frame: Frame = json.loads(await self._connection.receive_text(WAIT_S))
        return frame

    async def until(self, done: Callable[[Frame], bool]) -> list[Frame]:
        frames: list[Frame] = []
        async with asyncio.timeout(WAIT_S):
            while True:
                frames.append(await self.recv())
                if done(frames[-1]):
                    return frames

    async def hello(self) -> Frame:
        await self.send({"t": "hello", "playerId": self.player_id})
        return await self.recv()

    async def open(self, encounter_id: str, npc_id: str) -> list[Frame]:
        await self.send(
            {"t": "encounter.open", "id": encounter_id, "npcId": npc_id, "playerId": self.player_id}
        )
        return await self.until(lambda f: f["t"] in ("encounter.idle", "error"))

    async def say(self, encounter_id: str, text: str) -> list[Frame]:
        await self.send({"t": "encounter.say", "id": encounter_id, "text": text})
        return await self.until(lambda f: f["t"] == "encounter.idle")

    async def pick(self, encounter_id: str, option_id: str) -> list[Frame]:
        await self.send({"t": "encounter.say", "id": encounter_id, "optionId": option_id})
        return await self.until(lambda f: f["t"] == "encounter.idle")

    async def close(self, encounter_id: str) -> Frame:
        """Close, then wait until the server has finished closing (the game has been told).

        The server handles a connection's frames one at a time, so the error for a say to the
        closed encounter comes only after the close, `on_encounter_end` included, is done.
        """
        await self.send({"t": "encounter.close", "id": encounter_id})
        await self.send({"t": "encounter.say", "id": encounter_id, "text": "still there?"})
        return (await self.until(lambda f: f["t"] == "error"))[-1]


def line(frames: list[Frame]) -> str:
    return "".join(f["text"] for f in frames if f["t"] == "say.delta")


def mood(frames: list[Frame]) -> str:
    return next(f["mood"] for f in frames if f["t"] == "say.end")


def options(frames: list[Frame]) -> list[str]:
    return [item["id"] for item in next(f["items"] for f in frames if f["t"] == "options")]


def offers(frames: list[Frame]) -> list[Frame]:
    """The offer items of the last `options` frame: what the player may accept."""
    last = [f for f in frames if f["t"] == "options"][-1]
    return [item for item in last["items"] if "offer" in item]


def actions(frames: list[Frame]) -> list[tuple[str, bool]]:
    return [(f["name"], f["ok"]) for f in frames if f["t"] == "action"]
