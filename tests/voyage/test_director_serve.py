"""`play --resident director` as a real process: the offline brain plays the director after a
tick, and a resident the game does not have is a one-line error."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from starharness.npc.client import connect

_START_TIMEOUT_S = 60


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["STAR_HARNESS_HOME"] = str(home)
    return env


def test_play_with_the_director_runs_it_after_a_tick(tmp_path: Path) -> None:
    ready = tmp_path / "ready.json"
    world = tmp_path / "world.db"
    command = [
        sys.executable, "-m", "starharness.cli", "play", "--port", "0", "--ready-file",
        str(ready), "--world", str(world), "--resident", "director",
    ]  # fmt: skip
    proc = subprocess.Popen(
        command,
        env=_env(tmp_path / "home"),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        started = time.perf_counter()
        while not ready.exists():
            if proc.poll() is not None:
                pytest.fail(f"play exited early: {proc.stdout.read() if proc.stdout else ''}")
            assert time.perf_counter() - started < _START_TIMEOUT_S, "play did not become ready"
            time.sleep(0.02)
        frames = asyncio.run(_frames_of_a_tick(json.loads(ready.read_text())["ws"]))
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0, out
    assert "Traceback" not in out
    with sqlite3.connect(world) as conn:
        posted = conn.execute(
            "SELECT json_extract(args, '$.headline') FROM audit "
            "WHERE actor_id = 'director' AND action = 'post_headline' AND ok = 1"
        ).fetchall()
    assert posted, (out, frames)
    heard = {f.get("headline") for f in frames if f["t"] == "world.event"}
    assert {row[0] for row in posted} <= heard


async def _frames_of_a_tick(url: str) -> list[dict[str, object]]:
    """What a player hears from a one-day tick (the director's turn included), up to the
    `welcome` answering a `hello` sent after it."""
    async with connect(url, open_timeout=15) as ws:
        await ws.hello("player-1")
        assert json.loads(await ws.receive_text(15))["t"] == "welcome"
        await ws.tick(1)
        await ws.hello("player-1")
        frames: list[dict[str, object]] = []
        while not frames or frames[-1]["t"] != "welcome":
            frames.append(json.loads(await ws.receive_text(30)))
        return frames


def test_an_unknown_resident_is_one_line(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "starharness.cli", "serve", "--port", "0", "--resident", "mayor",
         "--world", str(tmp_path / "world.db")],
        env=_env(tmp_path / "home"),
        capture_output=True,
        text=True,
        timeout=60,
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    assert "--resident" in result.stderr and "'mayor'" in result.stderr
    assert "'director'" in result.stderr
