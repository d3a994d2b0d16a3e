"""Omega station served for lore tests: the offline brain behind the mock LLM over real HTTP,
the runtime with a session store on disk, the NPC server, and a WebSocket player."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer
from npc_support import Client
from typer.testing import CliRunner, Result

from stack_support import start_runtime
from starharness.cli import inspect_cmd
from starharness.mockllm import MockLlmServer
from starharness.mockllm.capabilities import FULL, LLAMA_CPP
from starharness.npc import Game, RunningServer, ServerSettings, start_server
from starharness.npc.lore import lore_lines
from starharness.runtime.session import SessionsConfig, SqliteStore, StoredSession
from starharness.runtime.session import event_types as ev
from starharness.voyage import GAME

Frame = dict[str, Any]


@dataclass
class LoreStack:
    mock: MockLlmServer
    running: RunningServer
    sessions: Path


@asynccontextmanager
async def serving_lore(
    tmp_path: Path,
    *,
    game: Game = GAME,
    world: str | Path | None = None,
    password_env: str | None = None,
    local: bool = False,
) -> AsyncIterator[LoreStack]:
    """`game` on a fresh world (a file under tmp_path unless `world` names a database), its
    sessions in an SQLite file `inspect` can read afterwards; `local`: through the `llama-cpp`
    provider, against a mock that plays llama-cpp-python's server."""
    sessions = tmp_path / "sessions.db"
    config = SessionsConfig(store="sqlite", path=sessions, max_write_delay_ms=0)
    place = world if world is not None else tmp_path / "world.db"
    settings = ServerSettings(port=0, world=place, world_password_env=password_env)
    plays = LLAMA_CPP if local else FULL
    async with MockLlmServer(responder=game.offline_responder, plays=plays) as mock:
        provider = "llama-cpp" if local else "openai-compatible"
        ctx = await start_runtime(mock.base_url, sessions=config, max_attempts=1, provider=provider)
        try:
            running = await start_server(ctx, game, settings)
            try:
                yield LoreStack(mock, running, sessions)
            finally:
                await running.stop()
        finally:
            await ctx.dispose()


class Player(Client):
    """npc_support's frame client as one player: says hello on entering."""

    def __init__(self, url: str, player_id: str) -> None:
        super().__init__(url)
        self.player_id = player_id

    async def __aenter__(self) -> Player:
        await super().__aenter__()
        await self.send({"t": "hello", "playerId": self.player_id})
        await self.until(lambda f: f["t"] == "welcome")
        return self

    async def meet(self, encounter_id: str, npc_id: str) -> list[Frame]:
        """Open an encounter with `npc_id` as this player; its frames up to the first idle."""
        return await self.open(encounter_id, npc_id, self.player_id)

    async def close(self, encounter_id: str) -> None:
        """Close, and wait until the server has finished closing (its next frame answers)."""
        await self.send({"t": "encounter.close", "id": encounter_id})
        await self.send({"t": "encounter.say", "id": encounter_id, "text": "still there?"})
        await self.until(lambda f: f["t"] == "error")


async def stored_session(sessions: Path, session_id: str) -> StoredSession:
    store = await SqliteStore.open(sessions)
    try:
        stored = await store.load(session_id)
    finally:
        await store.aclose()
    assert stored is not None
    return stored


def logged_contexts(stored: StoredSession) -> list[str]:
    """The dynamic context texts the log holds, in order (the runtime logs each change)."""
    found: list[str] = []
    for event in stored.events:
        if event.type == ev.USER_MESSAGE:
            data = ev.payload(event, ev.USER_MESSAGE)
            if data.get("source") == "context":
                found.append(str(data["content"]))
    return found


def inspect(*args: str) -> Result:
    """`star-harness inspect ...` (call in a thread: it runs its own event loop)."""
    app = typer.Typer()
    inspect_cmd.register(app)
    app.command("unused")(lambda: None)  # keeps `inspect` a subcommand
    return CliRunner().invoke(app, ["inspect", *args])


def given_lore(stored: StoredSession) -> list[str]:
    """The lore entries' texts the model was given, in order: in the dynamic context, or
    where the model runs locally, in the context a decision to only talk added."""
    found: list[str] = []
    for event in stored.events:
        if event.type == ev.USER_MESSAGE:
            data = ev.payload(event, ev.USER_MESSAGE)
            if data.get("source") in ("context", "tool"):
                found.extend(lore_lines(str(data["content"])))
    return found
