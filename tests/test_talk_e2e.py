"""`star-harness talk` completes a trade against a real `star-harness serve` process.

`serve` runs the sample game with its offline brain (no key: the mock LLM over real HTTP);
`talk` runs as a second process, driven through piped standard input.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from starharness.voyage import PLAYER_ID, open_game_world

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
    result = subprocess.run(
        [sys.executable, "-m", "starharness.cli", "talk", "--url", url, "--npc", SMUGGLER],
        input="1\n",
        env=env,
        capture_output=True,
        text=True,
        timeout=_TIMEOUT_S,
    )
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
    result = subprocess.run(
        [sys.executable, "-m", "starharness.cli", "talk", "--url", url, "--npc", SMUGGLER],
        input="4\n",
        env=env,
        capture_output=True,
        text=True,
        timeout=_TIMEOUT_S,
    )
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
