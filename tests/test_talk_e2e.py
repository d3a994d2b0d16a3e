"""`star-harness talk` completes a trade against the real NPC server and the sample game.

The server runs in the test with the sample game's offline brain behind the mock LLM over
real HTTP; `talk` runs as a real process, driven through piped standard input.
"""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from stack_support import start_runtime
from starharness.mockllm import MockLlmServer
from starharness.npc import RunningServer, ServerSettings, start_server
from starharness.voyage import GAME, PLAYER_ID

ROOT = Path(__file__).resolve().parents[1]
SMUGGLER = "npc-karsk"
_TIMEOUT_S = 60
# The lead wires `talk` into the command; until then this registers it the same way.
_LAUNCH = """
import sys
from starharness.cli import app, run_cli, talk
if not any(command.name == "talk" for command in app.registered_commands):
    talk.register(app)
sys.exit(run_cli(sys.argv[1:]))
"""


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[RunningServer]:
    settings = ServerSettings(port=0, world=tmp_path / "world.db")
    async with MockLlmServer(responder=GAME.offline_responder) as mock:
        ctx = await start_runtime(mock.base_url)
        try:
            running = await start_server(ctx, GAME, settings)
            try:
                yield running
            finally:
                await running.stop()
        finally:
            await ctx.dispose()


async def _credits(running: RunningServer) -> int:
    view = await asyncio.to_thread(running.server.world.player_view, PLAYER_ID)
    return int(view["credits"])


async def test_a_scripted_talk_session_buys_from_the_smuggler(server: RunningServer) -> None:
    before = await _credits(server)
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        _LAUNCH,
        "talk",
        "--url",
        server.ws_url,
        "--npc",
        SMUGGLER,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )
    # "1" picks the first option the smuggler offers, which sells the player something.
    async with asyncio.timeout(_TIMEOUT_S):
        out, err = await process.communicate(b"1\n")
    after = await _credits(server)

    text = out.decode()
    assert process.returncode == 0, f"{text}\n{err.decode()}"
    assert re.search(r"^— .+ notices you \(attitude -?\d+\) —$", text, re.MULTILINE)
    assert re.search(r"^  1\) .+$", text, re.MULTILINE), "no numbered options"
    assert re.search(r"^✔ \w+: .+$", text, re.MULTILINE), "no committed action shown"
    assert after < before, "the trade did not change the player's credits"
    assert f"HUD credits: {before} → {after}" in text
    assert text.rstrip().endswith("Bye.")
