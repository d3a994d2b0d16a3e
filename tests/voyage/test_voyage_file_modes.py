"""The world and the session store hold every player's state and words: owner-only files."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from voyage_e2e_support import WAIT_S, Player

from stack_support import start_runtime
from starharness.mockllm import MockLlmServer
from starharness.npc import ServerSettings, start_server
from starharness.runtime.session import SessionsConfig
from starharness.voyage import GAME
from starharness.voyage.content import PLAYER_ID, SMUGGLER


@pytest.mark.skipif(os.name == "nt", reason="POSIX file modes")
async def test_the_world_and_session_files_are_created_owner_only(tmp_path: Path) -> None:
    old = os.umask(0o022)  # a usual umask: without care, files come out world-readable
    try:
        world, sessions = tmp_path / "world.db", tmp_path / "sessions.db"
        async with MockLlmServer(responder=GAME.offline_responder) as mock:
            ctx = await start_runtime(
                mock.base_url,
                sessions=SessionsConfig(store="sqlite", path=sessions, max_write_delay_ms=0),
                first_byte_s=WAIT_S,
            )
            running = await start_server(ctx, GAME, ServerSettings(port=0, world=world))
            try:
                async with Player(running.ws_url, PLAYER_ID) as me:
                    await me.hello()
                    await me.open("e1", SMUGGLER)
                    await me.say("e1", "I'll buy 1 fuel cells")
                    modes = _modes(tmp_path)
                    assert {"world.db", "world.db-wal", "sessions.db"} <= set(modes)
                    for name, mode in modes.items():
                        assert mode & 0o077 == 0, (name, oct(mode))
            finally:
                await running.stop()
                await ctx.dispose()
    finally:
        os.umask(old)


def _modes(folder: Path) -> dict[str, int]:
    return {path.name: stat.S_IMODE(path.stat().st_mode) for path in folder.iterdir()}
