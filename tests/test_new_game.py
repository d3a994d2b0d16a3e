"""`star-harness new-game NAME` makes a game that its own tests pass and `play --game` serves.

Everything runs as real processes from a fresh folder, the way a newcomer would type it: the
scaffold, the game's tests, `play --game ./NAME:GAME` (offline brain, no key), an encounter over
a real WebSocket, and every frame checked against `star-harness schema --game` for that game.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from websockets.sync.client import ClientConnection, connect

NAME = "tea_stall"
START_S = 60.0


def _cli(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "starharness.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    clean["STAR_HARNESS_HOME"] = str(tmp_path / "home")
    return clean


@pytest.fixture
def made(tmp_path: Path, env: dict[str, str]) -> Path:
    result = _cli("new-game", NAME, cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    assert f"star-harness play --game ./{NAME}:GAME" in result.stdout
    return tmp_path / NAME


@pytest.fixture
def playing(made: Path, env: dict[str, str]) -> Iterator[dict[str, Any]]:
    ready = made.parent / "ready.json"
    command = [sys.executable, "-m", "starharness.cli", "play", "--game", f"./{NAME}:GAME"]
    proc = subprocess.Popen(
        [*command, "--port", "0", "--ready-file", str(ready)],
        cwd=made.parent,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        started = time.monotonic()
        while not ready.exists():
            if proc.poll() is not None:
                pytest.fail(f"play exited: {proc.stdout.read() if proc.stdout else ''}")
            if time.monotonic() - started > START_S:
                pytest.fail("play did not become ready")
            time.sleep(0.05)
        yield json.loads(ready.read_text())
    finally:
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=30)
        assert proc.returncode == 0, out
        assert "Traceback" not in out


def test_the_scaffold_passes_its_own_tests(made: Path, env: dict[str, str]) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pytest", NAME, "-q", "-p", "no:cacheprovider"],
        cwd=made.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 passed" in result.stdout


def test_a_second_game_of_the_same_name_is_refused(made: Path, env: dict[str, str]) -> None:
    result = _cli("new-game", NAME, cwd=made.parent, env=env)
    assert result.returncode == 2
    assert "already exists" in result.stderr
    bad = _cli("new-game", "Tea-Stall", cwd=made.parent, env=env)
    assert bad.returncode == 2 and "not a usable package name" in bad.stderr


def _turn(ws: ClientConnection, seen: list[dict[str, Any]]) -> list[dict[str, Any]]:
    frames: list[dict[str, Any]] = []
    while True:
        frame = json.loads(ws.recv(timeout=30))
        frames.append(frame)
        seen.append(frame)
        if frame["t"] in ("encounter.idle", "error"):
            return frames


def test_play_serves_the_new_game_over_a_real_websocket(
    playing: dict[str, Any], made: Path, env: dict[str, str]
) -> None:
    schema = _cli("schema", "--game", f"./{NAME}:GAME", cwd=made.parent, env=env)
    assert schema.returncode == 0, schema.stderr
    validator = Draft202012Validator(json.loads(schema.stdout))
    seen: list[dict[str, Any]] = []
    sent: list[dict[str, Any]] = []
    with connect(playing["ws"], proxy=None) as ws:

        def send(frame: dict[str, Any]) -> None:
            sent.append(frame)
            ws.send(json.dumps(frame))

        send({"t": "hello", "playerId": "player-1"})
        welcome = json.loads(ws.recv(timeout=30))
        seen.append(welcome)
        assert welcome["hud"]["coins"] == 20
        assert [npc["name"] for npc in welcome["npcs"]] == ["Mira"]

        send({"t": "encounter.open", "id": "e1", "npcId": "npc-mira", "playerId": "player-1"})
        greeting = _turn(ws, seen)
        assert greeting[0]["t"] == "encounter.opened"
        options = next(f["items"] for f in greeting if f["t"] == "options")
        three = next(item for item in options if item["id"] == "tea:3")

        send({"t": "encounter.say", "id": "e1", "optionId": three["id"]})
        offered = _turn(ws, seen)
        # Selling takes the customer's coins: Mira offers, nothing moves until they accept.
        assert [f for f in offered if f["t"] == "action"] == []
        offer = next(
            item for f in offered if f["t"] == "options" for item in f["items"] if "offer" in item
        )
        assert (offer["label"], offer["offer"]) == (
            "3 cups of tea",
            {"action": "sell_tea", "cost": "9 coins"},
        )
        send({"t": "encounter.say", "id": "e1", "optionId": offer["id"]})
        bought = _turn(ws, seen)
        assert [(f["name"], f["ok"]) for f in bought if f["t"] == "action"] == [("sell_tea", True)]
        assert [f["data"]["coins"] for f in bought if f["t"] == "hud"] == [11]

        send({"t": "encounter.say", "id": "e1", "text": "10 cups please"})
        refused = _turn(ws, seen)
        card = next(f for f in refused if f["t"] == "action")
        assert card["ok"] is False and card["summary"] == "Only 9 cups are left in the pot."

        send({"t": "encounter.say", "id": "e1", "optionId": "bye"})
        farewell = _turn(ws, seen)
        assert farewell[-1]["t"] == "encounter.idle"
        send({"t": "encounter.close", "id": "e1"})
        send({"t": "world.tick", "days": 1})
        while seen[-1]["t"] != "hud":
            seen.append(json.loads(ws.recv(timeout=30)))
    for frame in sent + seen:
        errors = [error.message for error in validator.iter_errors(frame)]
        assert not errors, f"{frame}: {errors[:3]}"
