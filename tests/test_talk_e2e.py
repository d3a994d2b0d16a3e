"""`star-harness talk` completes a trade against a real `star-harness serve` process.

`serve` runs the sample game with its offline brain (no key: the mock LLM over real HTTP);
`talk` runs as a second process, driven through piped standard input. Piped input waits for
the harness: after a turn that timed out, after a refused say, and after `/tick` (whose
refusal is printed before the client leaves); those run the client in this process against a
real server whose model stalls on cue.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from rich.console import Console

from stack_support import start_runtime
from starharness.mockllm import ChatRequest, MockLlmServer, Stall, Step
from starharness.npc import ServerSettings, TurnSettings, start_server
from starharness.npc.client.terminal import TalkSettings, run_talk
from starharness.voyage import GAME, PLAYER_ID, open_game_world

SMUGGLER = "npc-karsk"
_TIMEOUT_S = 60


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["STAR_HARNESS_HOME"] = str(home)
    return env


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path, dict[str, str]]]:
    """A `serve` process on a free port with its own world file; yields (ws url, world, env)."""
    ready = tmp_path / "ready.json"
    world = tmp_path / "world.db"
    env = _env(tmp_path / "home")
    proc = subprocess.Popen(
        [sys.executable, "-m", "starharness.cli", "serve", "--port", "0", "--world", str(world),
         "--ready-file", str(ready)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + _TIMEOUT_S
        while not ready.exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                pytest.fail(f"serve did not start: {proc.communicate()[0]}")
            time.sleep(0.02)
        yield json.loads(ready.read_text())["ws"], world, env
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=30)
        assert proc.returncode == 0, out


def _talk_cli(
    url: str, env: dict[str, str], typed: str, *args: str
) -> subprocess.CompletedProcess[str]:
    """`star-harness talk --url URL ARGS` with `typed` piped to its standard input."""
    return subprocess.run(
        [sys.executable, "-m", "starharness.cli", "talk", "--url", url, *args],
        input=typed,
        env=env,
        capture_output=True,
        text=True,
        timeout=_TIMEOUT_S,
    )


def _credits(world_file: Path) -> int:
    world = open_game_world(world_file)
    try:
        return int(world.player_view(PLAYER_ID)["credits"])
    finally:
        world.close()


def test_a_scripted_talk_session_buys_from_the_smuggler(
    served: tuple[str, Path, dict[str, str]],
) -> None:
    url, world_file, env = served
    before = _credits(world_file)
    # "1" picks the first option the smuggler offers, which sells the player something.
    result = _talk_cli(url, env, "1\n", "--npc", SMUGGLER)
    after = _credits(world_file)
    text = result.stdout
    assert result.returncode == 0, f"{text}\n{result.stderr}"
    assert re.search(r"^— .+ notices you \(attitude -?\d+\) —$", text, re.MULTILINE)
    assert re.search(r"^  1\) .+$", text, re.MULTILINE), "no numbered options"
    assert re.search(r"^✔ \w+: .+$", text, re.MULTILINE), "no committed action shown"
    assert after < before, "the trade did not change the player's credits"
    assert f"HUD credits: {before} → {after}" in text
    assert text.rstrip().endswith("Bye.")


def test_leave_walks_away_and_who_is_here_lists_only_those_here(
    served: tuple[str, Path, dict[str, str]],
) -> None:
    url, _world, env = served
    # The greeting's fourth option is "Leave"; after the farewell the client walks away.
    result = _talk_cli(url, env, "4\n", "--npc", SMUGGLER)
    text = result.stdout
    assert result.returncode == 0, f"{text}\n{result.stderr}"
    assert "  4) Leave" in text
    farewell = text.index("Jonah Karsk: Safe travels")
    walked = text.index("You walk away from Jonah Karsk.")
    assert farewell < walked
    listing = text[walked:]
    assert "Who is here:" in listing and "Ilse Brandt" in listing
    here = listing.split("Who is here:", 1)[1].split("Elsewhere:", 1)[0]
    assert "Vex" not in here and "Nadia Okoro" not in here
    assert "Elsewhere: " in listing and "Vex (kessler-hollow)" in listing
    # The HUD in words: the place's name, not its id and a JSON object.
    assert "location Omega station" in text and "location.id" not in text
    assert "playerId" not in text


def test_a_refused_tick_is_printed_before_the_client_leaves(
    served: tuple[str, Path, dict[str, str]],
) -> None:
    url, _world, env = served
    # `serve` keeps the clock for the game: a player's tick is refused. The input ends right
    # after it; the refusal must still reach the terminal.
    result = _talk_cli(url, env, "/tick 2\n")
    text = result.stdout
    assert result.returncode == 0, f"{text}\n{result.stderr}"
    refusal = text.find("the world clock belongs to the game")
    assert refusal != -1, text
    assert refusal < text.rindex("Bye."), text
    assert "talk-fence" not in text and "already over" not in text


# -- in this process: the talk client against a real server whose model stalls on cue ----------

STALL_CUE = "tell me slowly"
"""Words that make the model stall past the turn's time limit."""
TURN_LIMIT_S = 1.0


def _stalling(request: ChatRequest) -> Step:
    """The offline brain, except that the model stalls (sends nothing) on STALL_CUE."""
    last = request.last_message
    if last.role == "user" and STALL_CUE in (last.text or ""):
        return Stall(phase="before_headers", duration_ms=TURN_LIMIT_S * 5_000)
    responder = GAME.offline_responder
    assert responder is not None
    return responder(request)


@asynccontextmanager
async def _server(tmp_path: Path) -> AsyncIterator[str]:
    async with MockLlmServer(responder=_stalling) as mock:
        ctx = await start_runtime(mock.base_url, max_attempts=1, first_byte_s=30.0)
        try:
            settings = ServerSettings(
                port=0, world=tmp_path / "world.db", turn=TurnSettings(timeout_s=TURN_LIMIT_S)
            )
            running = await start_server(ctx, GAME, settings)
            try:
                yield running.ws_url
            finally:
                await running.stop()
        finally:
            await ctx.dispose()


async def _talk(url: str, lines: list[str]) -> tuple[int, str]:
    """Run the talk client with `lines` as piped input (all there at once); its exit code and
    what it printed."""

    async def piped() -> AsyncIterator[str]:
        for line in lines:
            yield line

    out = io.StringIO()
    console = Console(file=out, width=200, highlight=False, color_system=None)
    settings = TalkSettings(url=url, player_id=PLAYER_ID, npc_id=SMUGGLER, echo_input=True)
    status = await run_talk(settings, piped(), console)
    return status, out.getvalue()


def _answers(text: str) -> list[str]:
    """What followed each echoed input line, up to the next one."""
    return [part.split("\n> ", 1)[0] for part in text.split("\n> ")[1:]]


async def test_piped_input_waits_out_a_turn_that_timed_out(tmp_path: Path) -> None:
    lines = [STALL_CUE, "what are your prices?", "any rumours?", "what are your prices?"]
    async with _server(tmp_path) as url:
        status, text = await _talk(url, lines)
    assert status == 0, text
    assert "still answering" not in text, text  # no say reached a turn still running
    answers = _answers(text)
    assert [answer.split("\n", 1)[0] for answer in answers] == lines, text
    assert "too much at once" in answers[0] and "time limit" in answers[0], answers[0]
    for answer in answers[1:]:
        assert "Jonah Karsk: " in answer, answer  # each line answered, in its own turn
        assert not re.search(r"^! ", answer, re.MULTILINE), answer  # and no error


async def test_piped_input_goes_on_after_a_say_refused_before_any_turn(tmp_path: Path) -> None:
    # Longer than the harness takes: refused at once, no turn begins and no idle comes.
    lines = ["x" * 2_001, "what are your prices?"]
    async with _server(tmp_path) as url:
        status, text = await _talk(url, lines)
    assert status == 0, text
    answers = _answers(text)
    assert "too much at once" in answers[0] and "2001 characters" in answers[0], text
    assert "Jonah Karsk: " in answers[1], text
    assert text.rstrip().endswith("Bye."), text
